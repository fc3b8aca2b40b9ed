/* Program images and their private copies (DESIGN §4).
 *
 * A program_image is the master: the program file, opened once.  Each
 * program_copy is that program loaded again, from a memfd of its own, so it
 * has its own globals and statics; its read-only segments are then re-mapped
 * from the master (one group of copies) or from a sealed memfd holding the
 * same bytes (each further group), so code and constants are shared. */
#ifndef STRAND_PRIVATIZE_IMAGE_H
#define STRAND_PRIVATIZE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct program_image;

struct program_copy {
    void *handle;                           /* dlopen handle of this copy */
    int (*main)(int, char **, char **);     /* this copy's main */
    /* private to image.c */
    struct program_image *image;
    uintptr_t base;                         /* load bias (link map l_addr) */
    unsigned long file_id;                  /* inode of the memfd it was loaded from */
    char *loader_name;                      /* the name dlopen gave it (see image.c) */
};

/* Opens the program at path as the master and checks that it can be
 * loaded as a Strand program.  On failure returns -1 with a message in err. */
int program_image_open(const char *path, struct program_image **out, char *err, size_t errlen);

/* Loads one more private copy.  Thread-safe; copies are loaded one at a time.
 * Constructors of the copy run in the calling thread. */
int program_image_load_copy(struct program_image *img, struct program_copy *out, char *err,
                            size_t errlen);

/* dlclose: runs this copy's atexit handlers and destructors, then unmaps it. */
void program_image_unload_copy(struct program_copy *c);

/* Runs this copy's atexit handlers and destructors as dlclose would, but
 * leaves it mapped, for threads that may still run in it.  Its destructors
 * are then disarmed: the process's exit does not run them again.  (DT_FINI,
 * an empty function unless linked with -Wl,-fini, runs at process exit.) */
void program_image_finish_copy(struct program_copy *c);

/* Frees the master.  Copies still loaded stay valid (their mappings keep the
 * master file alive). */
void program_image_close(struct program_image *img);

/* Makes the ELF destructors (DT_FINI_ARRAY) of an instance of img loaded at
 * base do nothing.  Used on the instance the kernel loaded (./app itself):
 * its constructors never run, so neither may its destructors. */
int program_image_disarm_destructors(const struct program_image *img, uintptr_t base, char *err,
                                     size_t errlen);

/* Gives an instance of img loaded at base as the main program (./app) the
 * DT_DEBUG entry the linker writes into executables only, pointing at
 * object_list (the loader's r_debug).  gdb finds the list of loaded objects
 * through the main program's DT_DEBUG, read from memory; without it gdb
 * sees no library and no copy.  Does nothing when the entry exists. */
int program_image_show_debuggers_the_objects(const struct program_image *img, uintptr_t base,
                                             void *object_list, char *err, size_t errlen);

/* If the process is close to vm.max_map_count, writes a sentence saying so
 * (and how to raise it) into buf and returns its length; otherwise writes ""
 * and returns 0.  For reporting ENOMEM from mmap, dlopen or pthread_create. */
size_t privatize_map_count_note(char *buf, size_t len);

#endif
