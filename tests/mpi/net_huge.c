/*
 * net_huge: one message of more than 4 GiB between two node processes
 * (mpiexec -n 2 --nodes 2): a DATA payload holds at most 4 GiB - 1, so
 * the message travels in several DATA frames, with 64-bit sizes and
 * offsets throughout.
 *
 * The message is N = 2^29 + 3 words of 8 bytes (4 GiB + 24 B). The sender
 * keeps it small: its datatype is 4096 blocks of 2^17 words, each block
 * starting one word after the previous one (an overlapping send type, which
 * MPI allows), then 3 more words, all from one buffer of 2^17 + 4099 words
 * holding word w = w. So word m of the message is m / 2^17 + m % 2^17, and
 * a frame placed at a wrong offset shows. The receiver takes it into one
 * contiguous buffer of 4 GiB + 24 B and checks every word, the status and
 * the element count.
 *
 * The receiver needs 4 GiB: when the machine has less than 6 GiB
 * available (MemAvailable), both ranks print why and skip the message.
 * Exactly 2 ranks.
 */
#include <stdint.h>
#include <sys/mman.h>

#include "testutil.h"

enum { TAG_GO = 1, TAG_HUGE, BLOCK_WORDS = 1 << 17, BLOCKS = 4096, TAIL_WORDS = 3 };

static const uint64_t total_words = (uint64_t)BLOCKS * BLOCK_WORDS + TAIL_WORDS;

/* Bytes the kernel says are available for new allocations, or 0 if unknown. */
static unsigned long long mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kib = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib * 1024;
}

static int send_huge(int peer)
{
    int errs = 0;
    size_t words = BLOCK_WORDS + BLOCKS + TAIL_WORDS;
    uint64_t *src = (uint64_t *)tu_malloc(words * sizeof *src);
    for (size_t w = 0; w < words; w++)
        src[w] = w;
    MPI_Datatype blocks, type;
    CHECK_RC(MPI_Type_create_hvector(BLOCKS, BLOCK_WORDS, (MPI_Aint)sizeof(uint64_t), MPI_UINT64_T, &blocks));
    int lens[2] = { 1, TAIL_WORDS };
    MPI_Aint disps[2] = { 0, (MPI_Aint)(BLOCKS * sizeof(uint64_t)) };
    MPI_Datatype types[2] = { blocks, MPI_UINT64_T };
    CHECK_RC(MPI_Type_create_struct(2, lens, disps, types, &type));
    CHECK_RC(MPI_Type_commit(&type));
    int size;
    CHECK_RC(MPI_Type_size(type, &size));
    if (size != MPI_UNDEFINED)
        errs += tu_fail(__LINE__, "MPI_Type_size of a 4 GiB type is %d, not MPI_UNDEFINED", size);
    CHECK_RC(MPI_Send(src, 1, type, peer, TAG_HUGE, MPI_COMM_WORLD));
    MPI_Type_free(&type);
    MPI_Type_free(&blocks);
    free(src);
    return errs;
}

static int receive_huge(int peer)
{
    int errs = 0;
    /* Huge pages where the kernel offers them: first touching 4 GiB page
     * by page takes longer than moving it (about 20 s in some VMs). */
    size_t bytes = total_words * sizeof(uint64_t);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return tu_fail(__LINE__, "cannot allocate the receive buffer of 4 GiB");
    madvise(mem, bytes, MADV_HUGEPAGE);
    uint64_t *dst = mem;
    dst[total_words - 1] = ~(uint64_t)0;
    MPI_Status st;
    CHECK_RC(MPI_Recv(dst, (int)total_words, MPI_UINT64_T, peer, TAG_HUGE, MPI_COMM_WORLD, &st));
    /* (MPI_ERROR is not set by a call that completes one request, §3.2.5.) */
    if (st.MPI_SOURCE != peer || st.MPI_TAG != TAG_HUGE)
        errs += tu_fail(__LINE__, "status: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    int count = -1, elements = -1, byte_count = 0;
    CHECK_RC(MPI_Get_count(&st, MPI_UINT64_T, &count));
    CHECK_RC(MPI_Get_elements(&st, MPI_UINT64_T, &elements));
    CHECK_RC(MPI_Get_count(&st, MPI_BYTE, &byte_count));
    if (count != (int)total_words || elements != (int)total_words)
        errs += tu_fail(__LINE__, "count %d, elements %d, want %d", count, elements, (int)total_words);
    if (byte_count != MPI_UNDEFINED)
        errs += tu_fail(__LINE__, "count in bytes of 4 GiB is %d, not MPI_UNDEFINED", byte_count);
    uint64_t bad = 0, first_bad = 0, m = 0;
    for (uint64_t k = 0; k <= BLOCKS; k++)
        for (uint64_t j = 0; j < (k < BLOCKS ? BLOCK_WORDS : TAIL_WORDS); j++, m++)
            if (dst[m] != k + j && bad++ == 0)
                first_bad = m;
    if (bad > 0)
        errs += tu_fail(__LINE__, "%llu of %llu words wrong, the first at word %llu (%llu, want %llu)",
                        (unsigned long long)bad, (unsigned long long)total_words, (unsigned long long)first_bad,
                        (unsigned long long)dst[first_bad],
                        (unsigned long long)(first_bad / BLOCK_WORDS + first_bad % BLOCK_WORDS));
    munmap(mem, bytes);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        tu_abort(__LINE__, "run with exactly 2 ranks");
    /* The receiver decides whether there is room, and says so. */
    int go = 0;
    if (rank == 1) {
        unsigned long long avail = mem_available();
        go = avail >= (6ull << 30);
        if (!go)
            printf("net_huge: skipped: %.1f GiB available, the 4 GiB message needs 6\n", (double)avail / (1 << 30));
        CHECK_RC(MPI_Send(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD));
    } else {
        CHECK_RC(MPI_Recv(&go, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    if (go)
        errs += rank == 0 ? send_huge(1) : receive_huge(0);
    return tu_finish(errs);
}
