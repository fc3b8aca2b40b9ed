/* strand-dt-debug FILE: gives a program that mpicc linked a DT_DEBUG entry.
 *
 * mpicc links programs as shared objects (privatize/README.md), and the
 * linker writes DT_DEBUG only into executables.  At startup the dynamic
 * loader stores the address of its r_debug (the list of loaded objects) in
 * the main program's DT_DEBUG; gdb finds that list there, and without it
 * sees no library at all.  The linker leaves spare DT_NULL entries at the
 * end of the dynamic section: the first one becomes DT_DEBUG.  Dynamic
 * loaders ignore DT_DEBUG in objects they dlopen. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *file, const char *why)
{
    fprintf(stderr, "strand-dt-debug: %s: %s\n", file, why);
    return 1;
}

static int read_at(int fd, void *buf, size_t len, off_t offset)
{
    return pread(fd, buf, len, offset) == (ssize_t)len ? 0 : -1;
}

/* Finds the file range of the dynamic section. */
static int find_dynamic(int fd, const ElfW(Ehdr) *eh, ElfW(Phdr) *dynamic)
{
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        ElfW(Phdr) ph;
        if (read_at(fd, &ph, sizeof ph, (off_t)(eh->e_phoff + (ElfW(Off))i * sizeof ph)) != 0)
            return -1;
        if (ph.p_type == PT_DYNAMIC) {
            *dynamic = ph;
            return 0;
        }
    }
    return -1;
}

static int add_dt_debug(int fd, const char *file)
{
    ElfW(Ehdr) eh;
    ElfW(Phdr) dynamic;
    if (read_at(fd, &eh, sizeof eh, 0) != 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
        eh.e_phentsize != sizeof(ElfW(Phdr)))
        return fail(file, "not an ELF file of this machine");
    if (eh.e_type != ET_DYN || find_dynamic(fd, &eh, &dynamic) != 0)
        return fail(file, "not a dynamically linked shared object");
    size_t n = dynamic.p_filesz / sizeof(ElfW(Dyn));
    ElfW(Dyn) *entries = malloc(dynamic.p_filesz);
    if (entries == NULL || read_at(fd, entries, dynamic.p_filesz, (off_t)dynamic.p_offset) != 0)
        return fail(file, "cannot read its dynamic section");
    size_t end = 0;
    while (end < n && entries[end].d_tag != DT_NULL) {
        if (entries[end].d_tag == DT_DEBUG) {
            free(entries);
            return 0; /* already there */
        }
        end++;
    }
    free(entries);
    if (end + 1 >= n) /* the entry after it must stay DT_NULL, ending the table */
        return fail(file, "no spare entry in its dynamic section (link with "
                          "-Wl,--spare-dynamic-tags=2)");
    ElfW(Dyn) debug = {.d_tag = DT_DEBUG, .d_un = {.d_val = 0}};
    if (pwrite(fd, &debug, sizeof debug, (off_t)(dynamic.p_offset + end * sizeof debug)) !=
        (ssize_t)sizeof debug)
        return fail(file, strerror(errno));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: strand-dt-debug PROGRAM\n"
                        "Adds the DT_DEBUG entry debuggers need to a program linked by mpicc.\n");
        return 2;
    }
    int fd = open(argv[1], O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return fail(argv[1], strerror(errno));
    int rc = add_dt_debug(fd, argv[1]);
    if (close(fd) != 0 && rc == 0)
        return fail(argv[1], strerror(errno));
    return rc;
}
