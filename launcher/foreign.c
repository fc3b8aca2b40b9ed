/* mpiexec: refuse a program built for another MPI before it runs.
 *
 * A program linked against another MPI's library (MPICH's libmpich, Open
 * MPI's libmpi.so.40, ...) knows nothing of Strand: under `mpiexec -n 4` it
 * would start once, find no launcher of its own MPI and run as "rank 0 of
 * 1", silently.  So mpiexec reads the program's ELF dynamic section first:
 * a program that needs an MPI library other than Strand's (and is not a
 * Strand program: those export strand_program_main) is refused with a
 * message saying what it is linked against.  Programs that cannot be read
 * as ELF (scripts, other architectures) run as before. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "foreign.h"

/* Strand's own libmpi (its soname); any other MPI library is foreign. */
#define STRAND_LIBMPI "libmpi.so.0"

struct elf_view {
    const unsigned char *data;
    size_t size;
};

static const void *at(const struct elf_view *v, uint64_t offset, uint64_t bytes)
{
    if (offset > v->size || bytes > v->size - offset)
        return NULL;
    return v->data + offset;
}

/* The file offset of virtual address `addr`, through the PT_LOAD headers. */
static bool file_offset(const struct elf_view *v, const Elf64_Ehdr *eh, uint64_t addr,
                        uint64_t *offset)
{
    for (int i = 0; i < eh->e_phnum; i++) {
        const Elf64_Phdr *ph = at(v, eh->e_phoff + (uint64_t)i * eh->e_phentsize, sizeof *ph);
        if (ph != NULL && ph->p_type == PT_LOAD && addr >= ph->p_vaddr &&
            addr < ph->p_vaddr + ph->p_filesz) {
            *offset = ph->p_offset + (addr - ph->p_vaddr);
            return true;
        }
    }
    return false;
}

static bool is_mpi_library(const char *name)
{
    return strncmp(name, "libmpi", 6) == 0 || strncmp(name, "libpmpi", 7) == 0;
}

/* Fills `library` with the first foreign MPI library the program needs. */
static bool needs_foreign_mpi(const struct elf_view *v, char *library, size_t size)
{
    const Elf64_Ehdr *eh = at(v, 0, sizeof *eh);
    if (eh == NULL || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64)
        return false;
    const Elf64_Dyn *dyn = NULL;
    size_t ndyn = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        const Elf64_Phdr *ph = at(v, eh->e_phoff + (uint64_t)i * eh->e_phentsize, sizeof *ph);
        if (ph != NULL && ph->p_type == PT_DYNAMIC) {
            dyn = at(v, ph->p_offset, ph->p_filesz);
            ndyn = ph->p_filesz / sizeof *dyn;
        }
    }
    uint64_t strtab = 0, strsz = 0, offset;
    for (size_t i = 0; dyn != NULL && i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
        if (dyn[i].d_tag == DT_STRTAB)
            strtab = dyn[i].d_un.d_ptr;
        else if (dyn[i].d_tag == DT_STRSZ)
            strsz = dyn[i].d_un.d_val;
    }
    if (dyn == NULL || !file_offset(v, eh, strtab, &offset))
        return false;
    const char *strings = at(v, offset, strsz);
    if (strings == NULL || strsz == 0 || strings[strsz - 1] != '\0')
        return false;
    /* a Strand program (mpicc) is never foreign, whatever else it needs */
    if (memmem(strings, strsz, "\0strand_program_main\0", 21) != NULL)
        return false;
    for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
        if (dyn[i].d_tag != DT_NEEDED || dyn[i].d_un.d_val >= strsz)
            continue;
        const char *name = strings + dyn[i].d_un.d_val;
        if (is_mpi_library(name) && strcmp(name, STRAND_LIBMPI) != 0) {
            snprintf(library, size, "%s", name);
            return true;
        }
    }
    return false;
}

/* The file execvp would run for `program`. */
static char *find_program(const char *program)
{
    if (strchr(program, '/') != NULL)
        return strdup(program);
    const char *path = getenv("PATH");
    if (path == NULL)
        return NULL;
    for (const char *p = path;;) {
        const char *end = strchrnul(p, ':');
        char *candidate;
        if (asprintf(&candidate, "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "", program) >= 0) {
            if (access(candidate, X_OK) == 0)
                return candidate;
            free(candidate);
        }
        if (*end == '\0')
            return NULL;
        p = end + 1;
    }
}

int foreign_mpi_check(const char *program, long nranks)
{
    if (nranks <= 1)
        return 0; /* one rank: any MPI's singleton mode gives the same run */
    char *file = find_program(program);
    if (file == NULL)
        return 0; /* exec will say why */
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char library[256];
    bool foreign = false;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (data != MAP_FAILED) {
            struct elf_view v = {data, (size_t)st.st_size};
            foreign = needs_foreign_mpi(&v, library, sizeof library);
            munmap(data, (size_t)st.st_size);
        }
    }
    if (fd >= 0)
        close(fd);
    if (foreign)
        fprintf(stderr,
                "mpiexec: %s was built for another MPI (it needs %s), not with Strand's mpicc: "
                "its %ld ranks would each run alone as rank 0 of 1.  Rebuild it with Strand's "
                "mpicc, or run it with the mpiexec of the MPI it was built with.\n",
                program, library, nranks);
    free(file);
    return foreign ? -1 : 0;
}
