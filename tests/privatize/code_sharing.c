/* Privatization shares each program copy's code and constants (DESIGN §4),
 * but no page among more than 512 copies (COPIES_PER_SOURCE in
 * privatize/image.c: a hypervisor that shadows page tables drops a page's
 * mappings once it has more than 1000).
 *
 * Every rank sends rank 0 the address of its copy's main and of a constant
 * string.  Rank 0 looks both up in /proc/self/maps and checks that
 *   - each lies in a read-only mapping of a file, the same file for both,
 *     which holds the same bytes as rank 0's copy;
 *   - ceil(size / 512) files serve all ranks, none more than 512 of them. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COPIES_PER_SOURCE = 512, CODE_BYTES_COMPARED = 64 };

static const char constant_text[] = "a constant every copy shares";

struct mapping {
    uintptr_t start, end;
    unsigned long inode;
    char device[16], perms[8];
};

struct source {
    char device[16];
    unsigned long inode;
    int ranks;
};

static size_t read_maps(struct mapping **out)
{
    FILE *f = fopen("/proc/self/maps", "r");
    size_t n = 0, cap = 1024;
    struct mapping *m = malloc(cap * sizeof *m);
    char line[4096];
    if (f == NULL || m == NULL) {
        printf("cannot read /proc/self/maps\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long start, end, offset;
        if (n == cap && (m = realloc(m, (cap *= 2) * sizeof *m)) == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (sscanf(line, "%lx-%lx %7s %lx %15s %lu", &start, &end, m[n].perms, &offset,
                   m[n].device, &m[n].inode) == 6) {
            m[n].start = start;
            m[n].end = end;
            n++;
        }
    }
    fclose(f);
    *out = m;
    return n;
}

static const struct mapping *mapping_of(const struct mapping *m, size_t n, uintptr_t address)
{
    for (size_t i = 0; i < n; i++)
        if (address >= m[i].start && address < m[i].end)
            return &m[i];
    return NULL;
}

/* Counts one more rank for the file behind mapping; returns its index. */
static int count_source(struct source *sources, int *count, const struct mapping *mapping)
{
    for (int i = 0; i < *count; i++)
        if (sources[i].inode == mapping->inode && strcmp(sources[i].device, mapping->device) == 0) {
            sources[i].ranks++;
            return i;
        }
    strcpy(sources[*count].device, mapping->device);
    sources[*count].inode = mapping->inode;
    sources[*count].ranks = 1;
    return (*count)++;
}

/* One rank's addresses; returns the number of errors found. */
static int check_rank(int r, const uintptr_t *addr, const uintptr_t *rank0,
                      const struct mapping *m, size_t n, struct source *sources, int *source_count)
{
    const struct mapping *code = mapping_of(m, n, addr[0]);
    const struct mapping *constant = mapping_of(m, n, addr[1]);
    if (code == NULL || constant == NULL || code->inode == 0 || constant->inode == 0 ||
        code->perms[1] == 'w' || constant->perms[1] == 'w') {
        printf("rank %d: main or its constant is not in a read-only file mapping\n", r);
        return 1;
    }
    if (code->inode != constant->inode || strcmp(code->device, constant->device) != 0) {
        printf("rank %d: main and its constant map different files (inodes %lu, %lu)\n", r,
               code->inode, constant->inode);
        return 1;
    }
    if (memcmp((const void *)addr[0], (const void *)rank0[0], CODE_BYTES_COMPARED) != 0 ||
        strcmp((const char *)addr[1], (const char *)rank0[1]) != 0) {
        printf("rank %d: its copy's code or constant differs from rank 0's\n", r);
        return 1;
    }
    count_source(sources, source_count, code);
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    uintptr_t mine[2] = {(uintptr_t)&main, (uintptr_t)constant_text};
    uintptr_t *all = rank == 0 ? malloc(2 * (size_t)size * sizeof *all) : NULL;
    MPI_Gather(mine, 2 * (int)sizeof(uintptr_t), MPI_BYTE, all, 2 * (int)sizeof(uintptr_t),
               MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        struct mapping *maps;
        size_t n = read_maps(&maps);
        struct source *sources = calloc((size_t)size, sizeof *sources);
        int source_count = 0, expected = (size + COPIES_PER_SOURCE - 1) / COPIES_PER_SOURCE;
        for (int r = 0; r < size && errors < 10; r++)
            errors += check_rank(r, &all[2 * r], all, maps, n, sources, &source_count);
        for (int i = 0; i < source_count; i++)
            if (sources[i].ranks > COPIES_PER_SOURCE) {
                printf("%d copies share the pages of one file (at most %d should)\n",
                       sources[i].ranks, COPIES_PER_SOURCE);
                errors++;
            }
        if (errors == 0 && source_count != expected) {
            printf("%d ranks' code comes from %d files, expected %d\n", size, source_count,
                   expected);
            errors++;
        }
        free(sources);
        free(maps);
        free(all);
    }
    MPI_Bcast(&errors, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0 && errors == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return errors != 0;
}
