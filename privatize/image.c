/* Per-rank program copies: DESIGN §4.
 *
 * program_image_open opens the program file (the master) and checks it.  program_image_load_copy writes the bytes the dynamic loader
 * needs into a fresh memfd, dlopens it through /proc/self/fd, then
 *   - re-maps the copy's read-only segments (headers, text, rodata) from the
 *     master (or, past COPIES_PER_SOURCE copies, from a memfd holding the
 *     same bytes), so copies share those pages;
 *   - makes sure no page of its writable segments still maps the copy's
 *     file (pages the relocations did not write are copied on write, or for
 *     read-only RELRO pages, mapped from the master too);
 *   - punches the whole memfd empty and closes it.
 * Under gdb or valgrind, none of this (see copy_reader).
 * What stays per copy: the writable pages and the loader's bookkeeping. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "image.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define NATIVE_MACHINE EM_AARCH64
#else
#error "privatize/image.c: add this architecture's ELF machine number"
#endif

#if __ELF_NATIVE_CLASS == 64
#define NATIVE_CLASS ELFCLASS64
#define ELF_ST_BIND ELF64_ST_BIND
#else
#define NATIVE_CLASS ELFCLASS32
#define ELF_ST_BIND ELF32_ST_BIND
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

/* How many copies map their read-only pages from one source: the program
 * file for the first ones, then a memfd holding the same bytes for each
 * further group.  A hypervisor that shadows the guest's page tables (KVM
 * without EPT or NPT, as under nested virtualization) drops all mappings
 * of a guest page once it has more than 1000 (RMAP_RECYCLE_THRESHOLD in
 * KVM's mmu.c).  With more copies than that sharing a page, a rank's first
 * touch of its code after a switch went to the hypervisor every time
 * (doc/performance.md §29).  The price of a group: the program file once
 * more in memory. */
#define COPIES_PER_SOURCE 512

/* glibc's ld.so reads this many bytes of a file's head in one go. */
#define LOADER_HEAD_BYTES 832

/* Who reads the copies' files besides ld.so (see copy_reader). */
enum copy_reader { READ_BY_LOADER, READ_BY_DEBUGGER, READ_BY_VALGRIND };

struct program_image {
    char *path;
    int master_fd;
    const unsigned char *bytes; /* the master, mapped read-only */
    size_t size;
    const ElfW(Phdr) *phdrs;
    size_t phnum;
    uintptr_t relro_start, relro_end; /* page-rounded as ld.so protects it */
    ElfW(Addr) fini_array;
    size_t fini_array_count;
    ElfW(Addr) dynamic;     /* the dynamic section's address and entry count */
    size_t dynamic_count;
    int static_tls;       /* DF_STATIC_TLS: initial-exec TLS */
    int unique_symbols;   /* STB_GNU_UNIQUE definitions */
    int text_relocations; /* DT_TEXTREL: ld.so writes into "read-only" pages */
    int pagemap_fd;       /* /proc/self/pagemap, or -1 */
    enum copy_reader reader; /* decided once, when the job starts */
    sem_t load_slots;     /* copies being loaded at once (see program_image_load_copy) */
    atomic_ulong copies_started;
    atomic_ulong copies_shared; /* numbers copies into groups (COPIES_PER_SOURCE) */
    pthread_mutex_t sources_lock;
    int *extra_sources;         /* group g > 0 maps from extra_sources[g - 1], or -1 */
    size_t extra_source_count;
};

/* Serial numbers that make every copy's path string unique (see copy_path). */
static atomic_ulong copy_serial;

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static uintptr_t page_down(uintptr_t x) { return x & ~(uintptr_t)(page_size() - 1); }
static uintptr_t page_up(uintptr_t x) { return page_down(x + page_size() - 1); }

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- vm.max_map_count (trap 7) ---------------------------------------- */

/* These run when mmap has just failed: plain read(2) into stack buffers,
 * nothing that could need a new mapping. */
static long read_long_from(const char *path)
{
    char buf[32];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

static long count_memory_mappings(void)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    char buf[16384];
    long lines = 0;
    ssize_t n;
    if (fd < 0)
        return -1;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
    close(fd);
    return lines;
}

size_t privatize_map_count_note(char *buf, size_t len)
{
    /* Each rank costs about 8 mappings (its copy's segments, its stack and
     * guard page); within this margin of the limit, ENOMEM is the limit. */
    const long margin = 256;
    long limit = read_long_from("/proc/sys/vm/max_map_count");
    long used = count_memory_mappings();
    int n = 0;
    if (len > 0)
        buf[0] = '\0';
    if (limit > 0 && used >= 0 && used + margin >= limit && len > 0)
        n = snprintf(buf, len,
                     "the process has %ld memory mappings and the kernel allows %ld "
                     "(vm.max_map_count); each rank needs about 8, so raise the limit, "
                     "e.g. sysctl -w vm.max_map_count=%ld",
                     used, limit, limit < 262144 ? 262144L : 4 * limit);
    return n > 0 ? (size_t)n : 0;
}

static int fail_with_map_note(char *err, size_t errlen, const char *what)
{
    char note[256];
    if (privatize_map_count_note(note, sizeof note) > 0)
        return fail(err, errlen, "%s; %s", what, note);
    return fail(err, errlen, "%s", what);
}

/* ---- reading and checking the program --------------------------------- */

/* The master is the program's own file, opened once: every copy's read-only
 * pages are mapped from it, so /proc/PID/maps, perf and valgrind name the
 * program (and read its symbols and line tables from it) instead of an
 * anonymous memfd.  The kernel refuses writes to a running executable
 * (ETXTBSY) and linkers write a new file instead of rewriting the old one,
 * so these pages do not change under a running job; a program rewritten
 * in place (cat > app) would. */
static int open_master(struct program_image *img, const char *path, char *err, size_t errlen)
{
    struct stat st;
    img->master_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (img->master_fd < 0)
        return fail(err, errlen, "cannot open %s: %s", img->path, strerror(errno));
    if (fstat(img->master_fd, &st) != 0)
        return fail(err, errlen, "cannot stat %s: %s", img->path, strerror(errno));
    img->size = (size_t)st.st_size;
    if (img->size < sizeof(ElfW(Ehdr)))
        return fail(err, errlen, "%s is not an ELF file (too short)", img->path);
    void *map = mmap(NULL, img->size, PROT_READ, MAP_PRIVATE, img->master_fd, 0);
    if (map == MAP_FAILED)
        return fail_with_map_note(err, errlen, "cannot map the program");
    img->bytes = map;
    return 0;
}

static int range_in_file(const struct program_image *img, uint64_t offset, uint64_t length)
{
    return offset <= img->size && length <= img->size - offset;
}

static int check_elf_header(struct program_image *img, char *err, size_t errlen)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)img->bytes;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
        return fail(err, errlen, "%s is not an ELF file", img->path);
    if (eh->e_ident[EI_CLASS] != NATIVE_CLASS || eh->e_ident[EI_DATA] != NATIVE_DATA ||
        eh->e_machine != NATIVE_MACHINE)
        return fail(err, errlen, "%s is built for another kind of machine", img->path);
    if (eh->e_type == ET_EXEC)
        return fail(err, errlen,
                    "%s is a position-dependent executable, not a Strand program: "
                    "build it with Strand's mpicc, which links programs as shared objects "
                    "so that each rank can get its own copy",
                    img->path);
    if (eh->e_type != ET_DYN)
        return fail(err, errlen, "%s is not an executable or shared object (ELF type %u)",
                    img->path, (unsigned)eh->e_type);
    if (eh->e_phentsize != sizeof(ElfW(Phdr)) ||
        !range_in_file(img, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr))) ||
        eh->e_phoff % _Alignof(ElfW(Phdr)) != 0)
        return fail(err, errlen, "%s has a damaged program header table", img->path);
    img->phdrs = (const ElfW(Phdr) *)(img->bytes + eh->e_phoff);
    img->phnum = eh->e_phnum;
    return 0;
}

static int read_dynamic_section(struct program_image *img, const ElfW(Phdr) *dyn, char *err,
                                size_t errlen)
{
    int pie = 0;
    if (!range_in_file(img, dyn->p_offset, dyn->p_filesz) ||
        dyn->p_offset % _Alignof(ElfW(Dyn)) != 0)
        return fail(err, errlen, "%s has a damaged dynamic section", img->path);
    const ElfW(Dyn) *d = (const ElfW(Dyn) *)(img->bytes + dyn->p_offset);
    size_t n = dyn->p_filesz / sizeof *d;
    img->dynamic = dyn->p_vaddr;
    img->dynamic_count = n;
    for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++) {
        switch (d[i].d_tag) {
        case DT_FLAGS:
            img->static_tls |= (d[i].d_un.d_val & DF_STATIC_TLS) != 0;
            img->text_relocations |= (d[i].d_un.d_val & DF_TEXTREL) != 0;
            break;
        case DT_FLAGS_1:
            pie |= (d[i].d_un.d_val & DF_1_PIE) != 0;
            break;
        case DT_TEXTREL:
            img->text_relocations = 1;
            break;
        case DT_FINI_ARRAY:
            img->fini_array = d[i].d_un.d_ptr;
            break;
        case DT_FINI_ARRAYSZ:
            img->fini_array_count = d[i].d_un.d_val / sizeof(ElfW(Addr));
            break;
        default:
            break;
        }
    }
    if (pie)
        return fail(err, errlen,
                    "%s is a position-independent executable (PIE), not a Strand program: "
                    "glibc cannot load a PIE once per rank; build it with Strand's mpicc, "
                    "which links programs as shared objects",
                    img->path);
    return 0;
}

/* STB_GNU_UNIQUE symbols (C++ inline and template statics, as g++ emits them)
 * are bound once per process by glibc: every copy would use the first copy's
 * object.  Found through the section headers; a stripped-of-sections file
 * is not checked. */
static void find_unique_symbols(struct program_image *img)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)img->bytes;
    if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
        !range_in_file(img, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr))) ||
        eh->e_shoff % _Alignof(ElfW(Shdr)) != 0)
        return;
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(img->bytes + eh->e_shoff);
    for (size_t s = 0; s < eh->e_shnum; s++) {
        if (sh[s].sh_type != SHT_DYNSYM || !range_in_file(img, sh[s].sh_offset, sh[s].sh_size) ||
            sh[s].sh_offset % _Alignof(ElfW(Sym)) != 0)
            continue;
        const ElfW(Sym) *sym = (const ElfW(Sym) *)(img->bytes + sh[s].sh_offset);
        for (size_t i = 0; i < sh[s].sh_size / sizeof *sym; i++)
            if (ELF_ST_BIND(sym[i].st_info) == STB_GNU_UNIQUE && sym[i].st_shndx != SHN_UNDEF)
                img->unique_symbols = 1;
    }
}

static int check_segments(struct program_image *img, char *err, size_t errlen)
{
    const ElfW(Phdr) *dynamic = NULL;
    for (size_t i = 0; i < img->phnum; i++) {
        const ElfW(Phdr) *ph = &img->phdrs[i];
        if (ph->p_type == PT_DYNAMIC)
            dynamic = ph;
        else if (ph->p_type == PT_GNU_RELRO) {
            img->relro_start = page_down(ph->p_vaddr);
            img->relro_end = page_down(ph->p_vaddr + ph->p_memsz);
        } else if (ph->p_type == PT_LOAD && !range_in_file(img, ph->p_offset, ph->p_filesz))
            return fail(err, errlen, "%s is truncated (a segment lies past its end)", img->path);
    }
    if (dynamic == NULL)
        return fail(err, errlen,
                    "%s has no dynamic section (statically linked?): build it with Strand's "
                    "mpicc",
                    img->path);
    return read_dynamic_section(img, dynamic, err, errlen);
}

/* The name messages use: for /proc/self/exe, the file it links to. */
static char *display_name(const char *path)
{
    char target[4096];
    ssize_t n;
    if (strcmp(path, "/proc/self/exe") == 0 &&
        (n = readlink(path, target, sizeof target - 1)) > 0) {
        target[n] = '\0';
        return strdup(target);
    }
    return strdup(path);
}

/* Who reads the copies' files besides ld.so.  gdb reads a copy's symbols,
 * and later its line tables, from the file dlopen named, when the loader
 * reports the copy (before open_copy can rename it); valgrind reads them
 * when the copy is mapped, from the file name behind the descriptor (a
 * memfd's cannot be opened).  Both lose what they read if the read-only
 * pages are re-mapped afterwards (gdb its breakpoints too).  So under gdb
 * each copy's memfd keeps the whole program and stays open until the
 * process exits, under valgrind the copy is a real file in $TMPDIR, removed
 * once loaded; neither is slimmed: a program-sized copy (and under gdb a
 * descriptor) per rank, only while debugging.  A debugger that attaches
 * later reads the renamed copies from the program file itself.  Decided
 * when the job starts (program_image_open). */

static enum copy_reader copy_reader(void)
{
    char buf[4096];
    const char *preload = getenv("LD_PRELOAD");
    if (preload != NULL && strstr(preload, "vgpreload") != NULL)
        return READ_BY_VALGRIND;
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return READ_BY_LOADER;
    buf[n] = '\0';
    const char *tracer = strstr(buf, "TracerPid:");
    return tracer != NULL && strtol(tracer + strlen("TracerPid:"), NULL, 10) != 0
               ? READ_BY_DEBUGGER
               : READ_BY_LOADER;
}

int program_image_open(const char *path, struct program_image **out, char *err, size_t errlen)
{
    struct program_image *img = calloc(1, sizeof *img);
    *out = NULL;
    if (img == NULL)
        return fail(err, errlen, "out of memory");
    img->master_fd = -1;
    img->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    img->path = display_name(path);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    sem_init(&img->load_slots, 0, cpus < 2 ? 2 : cpus > 8 ? 8 : (unsigned)cpus);
    pthread_mutex_init(&img->sources_lock, NULL);
    if (img->path == NULL || open_master(img, path, err, errlen) != 0 ||
        check_elf_header(img, err, errlen) != 0 || check_segments(img, err, errlen) != 0) {
        if (img->path == NULL)
            fail(err, errlen, "out of memory");
        program_image_close(img);
        return -1;
    }
    find_unique_symbols(img);
    img->reader = copy_reader();
    *out = img;
    return 0;
}

void program_image_close(struct program_image *img)
{
    if (img == NULL)
        return;
    if (img->bytes != NULL)
        munmap((void *)img->bytes, img->size);
    if (img->master_fd >= 0)
        close(img->master_fd);
    for (size_t i = 0; i < img->extra_source_count; i++)
        if (img->extra_sources[i] >= 0)
            close(img->extra_sources[i]);
    free(img->extra_sources);
    pthread_mutex_destroy(&img->sources_lock);
    if (img->pagemap_fd >= 0)
        close(img->pagemap_fd);
    sem_destroy(&img->load_slots);
    free(img->path);
    free(img);
}

/* ---- loading a copy ---------------------------------------------------- */

/* Refuses a second copy of programs that cannot have more than one. */
static int check_copy_allowed(struct program_image *img, char *err, size_t errlen)
{
    if (atomic_fetch_add(&img->copies_started, 1) == 0)
        return 0;
    if (img->static_tls)
        return fail(err, errlen,
                    "%s was built with initial-exec TLS (DF_STATIC_TLS: __thread variables "
                    "compiled without -fPIC, or -ftls-model=initial-exec): each copy takes "
                    "part of glibc's small static TLS reserve, so it cannot run more than "
                    "one rank per process; rebuild with mpicc (-fPIC)",
                    img->path);
    if (img->unique_symbols)
        return fail(err, errlen,
                    "%s defines STB_GNU_UNIQUE symbols (C++ inline or template statics), "
                    "which glibc would share between all ranks; rebuild with mpicxx, or add "
                    "-fno-gnu-unique when compiling",
                    img->path);
    return 0;
}

static int write_all_at(int fd, const unsigned char *data, size_t len, off_t offset)
{
    while (len > 0) {
        ssize_t w = pwrite(fd, data, len, offset);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        data += w;
        len -= (size_t)w;
        offset += w;
    }
    return 0;
}

/* Writes what ld.so reads or maps, in one go: the file up to the end of its
 * last segment.  Section headers, symbol tables and debug info come after
 * that and stay out, unless a debugger will read them (whole). */
static int write_copy_file(const struct program_image *img, int fd, int whole, char *err,
                           size_t errlen)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)img->bytes;
    uint64_t end = eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr));
    if (end < LOADER_HEAD_BYTES)
        end = LOADER_HEAD_BYTES;
    for (size_t i = 0; i < img->phnum; i++)
        if (img->phdrs[i].p_offset + img->phdrs[i].p_filesz > end)
            end = img->phdrs[i].p_offset + img->phdrs[i].p_filesz;
    end = page_up(end);
    if (end > img->size || whole)
        end = img->size;
    if (write_all_at(fd, img->bytes, end, 0) == 0)
        return 0;
    if (errno == ENOMEM || errno == ENOSPC)
        return fail(err, errlen, "no memory for a copy of %s (%zu bytes)", img->path, img->size);
    return fail(err, errlen, "cannot write a copy of %s: %s", img->path, strerror(errno));
}

/* dlopen matches a requested path against the names of loaded objects
 * before it opens anything (trap 1).  Once a copy's fd is closed its number
 * is reused, so "/proc/PID/fd/N" alone would name an older copy.  The serial
 * number is spelled into the path as a run of "/" (0) and "./" (1) after
 * /proc/PID/, lowest bit first, up to its highest set bit: the kernel ignores
 * them, dlopen sees a new name, and consecutive names differ right after the
 * shared prefix (dlopen compares the name with every loaded copy's).  (PID,
 * not "self": a debugger reading the name must not open its own fd N.) */
static void copy_path(char *buf, size_t len, unsigned long serial, int fd)
{
    size_t n = (size_t)snprintf(buf, len, "/proc/%d/", (int)getpid());
    for (; serial != 0 && n + 8 < len; serial >>= 1)
        n += (size_t)snprintf(buf + n, len - n, "%s", (serial & 1) ? "./" : "/");
    snprintf(buf + n, len - n, "fd/%d", fd);
}

static int ranges_overlap(uintptr_t a0, uintptr_t a1, uintptr_t b0, uintptr_t b1)
{
    return a0 < b1 && b0 < a1;
}

static int page_is_writable_segment(const struct program_image *img, uintptr_t page)
{
    for (size_t i = 0; i < img->phnum; i++) {
        const ElfW(Phdr) *ph = &img->phdrs[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) &&
            ranges_overlap(page, page + page_size(), page_down(ph->p_vaddr),
                           page_up(ph->p_vaddr + ph->p_memsz)))
            return 1;
    }
    return 0;
}

static int segment_protection(const ElfW(Phdr) *ph)
{
    return ((ph->p_flags & PF_R) ? PROT_READ : 0) | ((ph->p_flags & PF_W) ? PROT_WRITE : 0) |
           ((ph->p_flags & PF_X) ? PROT_EXEC : 0);
}

/* A memfd holding the program's bytes, sealed: a source for one more group
 * of copies.  -1 with errno set on failure. */
static int new_extra_source(const struct program_image *img)
{
    int fd = memfd_create("strand-program-pages", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    if (write_all_at(fd, img->bytes, img->size, 0) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* The file the copy numbered `index` maps its read-only pages from (see
 * COPIES_PER_SOURCE): the master, or the extra source of its group, made
 * by the first copy that needs it.  -1 with errno set on failure. */
static int read_only_source(struct program_image *img, unsigned long index)
{
    size_t group = index / COPIES_PER_SOURCE;
    if (group == 0)
        return img->master_fd;
    pthread_mutex_lock(&img->sources_lock);
    if (group > img->extra_source_count) {
        int *grown = realloc(img->extra_sources, group * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&img->sources_lock);
            errno = ENOMEM;
            return -1;
        }
        for (size_t i = img->extra_source_count; i < group; i++)
            grown[i] = -1;
        img->extra_sources = grown;
        img->extra_source_count = group;
    }
    if (img->extra_sources[group - 1] < 0)
        img->extra_sources[group - 1] = new_extra_source(img);
    int fd = img->extra_sources[group - 1];
    pthread_mutex_unlock(&img->sources_lock);
    return fd;
}

static int map_from_source(int source, uintptr_t base, uintptr_t from, uintptr_t to,
                           uintptr_t file_offset, int prot)
{
    void *want = (void *)(base + from);
    void *got = mmap(want, to - from, prot, MAP_PRIVATE | MAP_FIXED, source, (off_t)file_offset);
    return got == want ? 0 : -1;
}

/* Replaces the copy's mapping of one read-only segment with the source's,
 * page run by page run, skipping pages a writable segment also uses. */
static int share_segment(const struct program_image *img, int source, uintptr_t base,
                         const ElfW(Phdr) *ph)
{
    uintptr_t start = page_down(ph->p_vaddr), end = page_up(ph->p_vaddr + ph->p_filesz);
    uintptr_t file_delta = page_down(ph->p_offset) - start;
    uintptr_t run = start;
    for (uintptr_t p = start; p <= end; p += page_size()) {
        if (p < end && !page_is_writable_segment(img, p))
            continue;
        if (run < p &&
            map_from_source(source, base, run, p, run + file_delta, segment_protection(ph)) != 0)
            return -1;
        run = p + page_size();
    }
    return 0;
}

/* Can the copy's read-only segments come from the master?  Not when ld.so
 * writes to them (text relocations) or they have zero-filled tails. */
static int read_only_segments_sharable(const struct program_image *img)
{
    if (img->text_relocations)
        return 0;
    for (size_t i = 0; i < img->phnum; i++) {
        const ElfW(Phdr) *ph = &img->phdrs[i];
        if (ph->p_type == PT_LOAD && !(ph->p_flags & PF_W) &&
            (ph->p_memsz != ph->p_filesz || (ph->p_offset - ph->p_vaddr) % page_size() != 0))
            return 0;
    }
    return 1;
}

static int share_read_only_segments(const struct program_image *img, int source, uintptr_t base)
{
    for (size_t i = 0; i < img->phnum; i++) {
        const ElfW(Phdr) *ph = &img->phdrs[i];
        if (ph->p_type == PT_LOAD && !(ph->p_flags & PF_W) &&
            share_segment(img, source, base, ph) != 0)
            return -1;
    }
    return 0;
}

/* An atomic add of zero writes the page (copy-on-write makes it the copy's
 * own) without racing with a thread a constructor may have started. */
static void touch_pages(uintptr_t from, uintptr_t to)
{
    for (uintptr_t p = from; p < to; p += page_size())
        __atomic_fetch_add((unsigned char *)p, 0, __ATOMIC_RELAXED);
}

/* /proc/self/pagemap: one 64-bit entry per page (see the kernel's
 * Documentation/admin-guide/mm/pagemap.rst). */
#define PAGEMAP_PRESENT (1ULL << 63)
#define PAGEMAP_FILE_OR_SHARED (1ULL << 61)

/* RELRO pages are read-only now.  ld.so's relocations have written (and so
 * copied) nearly all of them; a page it did not write still holds the file's
 * bytes, which are the source's: map that one from the source.  Without
 * pagemap, open the pages for writing, touch them, and close them again. */
static int own_relro_pages(const struct program_image *img, int source, uintptr_t base,
                           uintptr_t from, uintptr_t to, uintptr_t file_delta)
{
    uint64_t entry[256];
    size_t n = 0;
    if (img->pagemap_fd < 0) {
        if (mprotect((void *)(base + from), to - from, PROT_READ | PROT_WRITE) != 0)
            return -1;
        touch_pages(base + from, base + to);
        return mprotect((void *)(base + from), to - from, PROT_READ);
    }
    for (uintptr_t p = from; p < to; p += page_size(), n++) {
        if (n % 256 == 0) {
            size_t want = (to - p) / page_size() < 256 ? (to - p) / page_size() : 256;
            off_t at = (off_t)((base + p) / page_size() * sizeof entry[0]);
            if (pread(img->pagemap_fd, entry, want * sizeof entry[0], at) !=
                (ssize_t)(want * sizeof entry[0]))
                memset(entry, 0, sizeof entry); /* unknown: treat as not copied */
        }
        uint64_t e = entry[n % 256];
        int copied = (e & PAGEMAP_PRESENT) && !(e & PAGEMAP_FILE_OR_SHARED);
        if (!copied &&
            map_from_source(source, base, p, p + page_size(), p + file_delta, PROT_READ) != 0)
            return -1;
    }
    return 0;
}

/* Makes every file-backed page of the writable segments private to this
 * copy or the source's, so that nothing maps the copy's memfd any more. */
static int own_writable_pages(const struct program_image *img, int source, uintptr_t base)
{
    for (size_t i = 0; i < img->phnum; i++) {
        const ElfW(Phdr) *ph = &img->phdrs[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || ph->p_filesz == 0)
            continue;
        uintptr_t start = page_down(ph->p_vaddr), end = page_up(ph->p_vaddr + ph->p_filesz);
        uintptr_t file_delta = page_down(ph->p_offset) - start;
        uintptr_t rs = img->relro_start > start ? img->relro_start : start;
        uintptr_t re = img->relro_end < end ? img->relro_end : end;
        if (rs >= re) {
            touch_pages(base + start, base + end);
            continue;
        }
        touch_pages(base + start, base + rs);
        touch_pages(base + re, base + end);
        if (own_relro_pages(img, source, base, rs, re, file_delta) != 0)
            return -1;
    }
    return 0;
}

/* After loading: share read-only pages with the copy's group and empty the
 * copy's memfd.  A failure here leaves the copy unusable (its mappings may
 * be half replaced): the caller must not run or unload it. */
static int slim_copy(struct program_image *img, uintptr_t base, int fd, char *err,
                     size_t errlen)
{
    if (!read_only_segments_sharable(img))
        return 0; /* correct, only larger */
    int source = read_only_source(img, atomic_fetch_add(&img->copies_shared, 1));
    if (source < 0) {
        char what[512];
        snprintf(what, sizeof what, "cannot make a shared source of %s's read-only pages: %s",
                 img->path, strerror(errno));
        return fail_with_map_note(err, errlen, what);
    }
    if (share_read_only_segments(img, source, base) != 0 ||
        own_writable_pages(img, source, base) != 0) {
        char what[512];
        snprintf(what, sizeof what, "cannot re-map a copy of %s: %s", img->path,
                 strerror(errno));
        return fail_with_map_note(err, errlen, what);
    }
    /* The page cache of the copy's memfd now backs nothing.  An error here
     * (a kernel without hole punching) costs memory, not correctness. */
    (void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)img->size);
    return 0;
}

static int open_copy(struct program_image *img, const char *name, enum copy_reader reader,
                     struct program_copy *out, char *err, size_t errlen)
{
    struct link_map *lm = NULL;
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        char what[1024];
        snprintf(what, sizeof what, "cannot load a copy of %s: %s", img->path, dlerror());
        return fail_with_map_note(err, errlen, what);
    }
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || strcmp(lm->l_name, name) != 0) {
        /* dlopen handed back an object it had already: never a private copy */
        dlclose(handle);
        return fail(err, errlen, "dlopen returned an already loaded object for a copy of %s",
                    img->path);
    }
    out->handle = handle;
    out->base = lm->l_addr;
    /* strand_entry.o exports a pointer to main, which may itself be hidden;
     * a shared object built without it must export main */
    int (*const *entry_main)(int, char **, char **) = dlsym(handle, "strand_program_main");
    if (entry_main != NULL)
        out->main = *entry_main;
    else
        *(void **)&out->main = dlsym(handle, "main");
    if (out->main == NULL) {
        dlclose(handle);
        return fail(err, errlen,
                    "%s does not export main (was it linked with Strand's mpicc, and is "
                    "main visible?)",
                    img->path);
    }
    /* The loader's name for the copy is a closed fd; dladdr, backtraces and
     * a debugger that attaches later should see the program instead.  The
     * name dlopen matched stays in the loader's private alias list, so
     * dlopen still tells copies apart.  dlclose frees l_name.  Not under
     * gdb: it reads the copy from its memfd, which stays open, and would
     * take a renamed copy for another object at the same place (with its
     * breakpoints set twice). */
    char *program_name = reader == READ_BY_DEBUGGER ? NULL : strdup(img->path);
    if (program_name != NULL) {
        out->loader_name = lm->l_name;
        lm->l_name = program_name;
    }
    return 0;
}

/* A memfd, or for valgrind a named file (its name left in file_name). */
static int create_copy_file(enum copy_reader reader, char *file_name, size_t len)
{
    file_name[0] = '\0';
    if (reader != READ_BY_VALGRIND)
        return memfd_create("strand-copy", MFD_CLOEXEC);
    const char *dir = getenv("TMPDIR");
    snprintf(file_name, len, "%s/strand-copy-XXXXXX", dir != NULL && *dir ? dir : "/tmp");
    return mkostemp(file_name, O_CLOEXEC);
}

static int load_copy_in_slot(struct program_image *img, struct program_copy *out, char *err,
                            size_t errlen)
{
    char name[256], file_name[4096];
    struct stat st;
    enum copy_reader reader = img->reader;
    if (check_copy_allowed(img, err, errlen) != 0)
        return -1;
    int fd = create_copy_file(reader, file_name, sizeof file_name);
    if (fd < 0)
        return fail(err, errlen, "cannot create a file for a copy of %s: %s%s", img->path,
                    strerror(errno),
                    errno == EMFILE ? " (open file limit reached: raise ulimit -n)" : "");
    int rc = write_copy_file(img, fd, reader != READ_BY_LOADER, err, errlen);
    if (rc == 0) {
        copy_path(name, sizeof name, atomic_fetch_add(&copy_serial, 1) + 1, fd);
        /* the fd stays open until dlopen has mapped it (trap 1) */
        rc = open_copy(img, name, reader, out, err, errlen);
    }
    if (file_name[0] != '\0')
        unlink(file_name);
    if (rc == 0) {
        out->file_id = fstat(fd, &st) == 0 ? (unsigned long)st.st_ino : 0;
        out->image = img;
        if (reader == READ_BY_LOADER)
            rc = slim_copy(img, out->base, fd, err, errlen);
    }
    if (reader != READ_BY_DEBUGGER || rc != 0)
        close(fd);
    return rc;
}

int program_image_load_copy(struct program_image *img, struct program_copy *out, char *err,
                            size_t errlen)
{
    memset(out, 0, sizeof *out);
    /* A few copies at a time (one per core, 2 to 8): dlopen serializes
     * itself, but one copy's file writing and re-mapping can overlap
     * another's dlopen, and the memory held by not-yet-emptied copy files
     * stays a few times the program's size even with thousands of ranks
     * starting together. */
    while (sem_wait(&img->load_slots) != 0 && errno == EINTR)
        ;
    int rc = load_copy_in_slot(img, out, err, errlen);
    sem_post(&img->load_slots);
    return rc;
}

void program_image_unload_copy(struct program_copy *c)
{
    if (c->handle != NULL)
        dlclose(c->handle);
    free(c->loader_name); /* after dlclose: nobody can read it any more */
    c->loader_name = NULL;
    c->handle = NULL;
    c->main = NULL;
}

/* ---- the kernel-loaded instance, finished copies ----------------------- */

static void destructor_disarmed(void) {}

void program_image_finish_copy(struct program_copy *c)
{
    const struct program_image *img = c->image;
    char err[256];
    if (img->fini_array == 0)
        return;
    /* what dlclose runs (glibc's _dl_call_fini): the array, last entry first;
     * crtbegin's entry in it calls __cxa_finalize, which runs the atexit
     * handlers registered by this copy */
    void (*const *fini)(void) = (void (*const *)(void))(c->base + img->fini_array);
    for (size_t i = img->fini_array_count; i-- > 0;)
        fini[i]();
    program_image_disarm_destructors(img, c->base, err, sizeof err);
}

/* Opens [from, to) of an instance loaded at base for writing. */
static int open_for_writing(const struct program_image *img, uintptr_t base, uintptr_t from,
                            uintptr_t to, const char *what, char *err, size_t errlen)
{
    from = page_down(from);
    to = page_up(to);
    if (mprotect((void *)(base + from), to - from, PROT_READ | PROT_WRITE) != 0)
        return fail(err, errlen, "cannot %s of %s: %s", what, img->path, strerror(errno));
    return 0;
}

/* Gives RELRO pages of [from, to) back their read-only protection; the
 * others were writable anyway. */
static void close_after_writing(const struct program_image *img, uintptr_t base, uintptr_t from,
                                uintptr_t to)
{
    for (uintptr_t p = page_down(from); p < page_up(to); p += page_size())
        if (p >= img->relro_start && p < img->relro_end)
            mprotect((void *)(base + p), page_size(), PROT_READ);
}

int program_image_disarm_destructors(const struct program_image *img, uintptr_t base, char *err,
                                     size_t errlen)
{
    if (img->fini_array == 0 || img->fini_array_count == 0)
        return 0;
    uintptr_t from = img->fini_array;
    uintptr_t to = img->fini_array + img->fini_array_count * sizeof(ElfW(Addr));
    if (open_for_writing(img, base, from, to, "disarm the destructors", err, errlen) != 0)
        return -1;
    void (**entry)(void) = (void (**)(void))(base + img->fini_array);
    for (size_t i = 0; i < img->fini_array_count; i++)
        entry[i] = destructor_disarmed;
    close_after_writing(img, base, from, to);
    return 0;
}

int program_image_show_debuggers_the_objects(const struct program_image *img, uintptr_t base,
                                             void *object_list, char *err, size_t errlen)
{
    ElfW(Dyn) *d = (ElfW(Dyn) *)(base + img->dynamic);
    size_t end = 0;
    while (end < img->dynamic_count && d[end].d_tag != DT_NULL) {
        if (d[end].d_tag == DT_DEBUG)
            return 0; /* the loader has filled it in */
        end++;
    }
    /* GNU ld leaves spare DT_NULL entries after the terminator; without one,
     * say so only to a debugger (who else would care) */
    if (end + 1 >= img->dynamic_count)
        return img->reader != READ_BY_DEBUGGER ? 0 : fail(err, errlen,
                    "%s has no spare dynamic entry for DT_DEBUG: gdb will not see its libraries",
                    img->path);
    uintptr_t from = img->dynamic + end * sizeof *d, to = from + sizeof *d;
    if (open_for_writing(img, base, from, to, "add DT_DEBUG to the dynamic section", err,
                         errlen) != 0)
        return -1;
    d[end].d_un.d_ptr = (ElfW(Addr))object_list;
    __atomic_store_n(&d[end].d_tag, (ElfW(Sxword))DT_DEBUG, __ATOMIC_RELEASE);
    close_after_writing(img, base, from, to);
    return 0;
}
