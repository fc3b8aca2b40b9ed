/* Property test: collective and independent access agree on random views
 * and memory types. Each trial assigns the int slots of a tile to random
 * ranks (a rank's filetype: its slots, resized to the tile), picks a random
 * displacement, memory layout (contiguous or strided), collective buffer
 * size and aggregator count; writes the same data collectively to one
 * file and independently to another; both must equal the expected file
 * byte for byte, and collective and independent reads into another random
 * memory layout must return the data. The seed is printed (argument 1
 * replays it). Minimum 1 rank. */
#include <time.h>
#include "io_util.h"

enum { TRIALS = 6, MAX_TILE = 48, MAX_TILES = 40 };

static unsigned next(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

static int value(int rank, int i, int trial) { return (trial << 24) ^ (rank << 14) ^ i; }

/* A memory type holding n ints, every `stride`-th int of the buffer. */
static MPI_Datatype memory_type(int n, int stride)
{
    MPI_Datatype t;
    if (stride == 1)
        MPI_Type_contiguous(n, MPI_INT, &t);
    else
        MPI_Type_vector(n, 1, stride, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static int trial(const char *dir, unsigned seed, int t)
{
    int errs = 0, rank = tu_rank(), size = tu_size();
    unsigned s = seed + (unsigned)t * 7919u;
    int tile = 1 + (int)(next(&s) % MAX_TILE), tiles = 1 + (int)(next(&s) % MAX_TILES);
    int owner[MAX_TILE], mine[MAX_TILE], nmine = 0;
    for (int k = 0; k < tile; k++) {
        owner[k] = (int)(next(&s) % (unsigned)size);
        if (owner[k] == rank)
            mine[nmine++] = k;
    }
    MPI_Offset disp = 4 * (MPI_Offset)(next(&s) % 64);
    int wstride = 1 + (int)(next(&s) % 3), rstride = 1 + (int)(next(&s) % 3);
    char cb[32], nodes[16];
    snprintf(cb, sizeof cb, "%d", 64 << (next(&s) % 12));
    snprintf(nodes, sizeof nodes, "%d", 1 + (int)(next(&s) % (unsigned)size));

    int blens[MAX_TILE], displs[MAX_TILE];
    for (int i = 0; i < nmine; i++) {
        blens[i] = 1;
        displs[i] = mine[i];
    }
    MPI_Datatype slots, filetype;
    MPI_Type_indexed(nmine, blens, displs, MPI_INT, &slots);
    MPI_Type_create_resized(slots, 0, (MPI_Aint)tile * sizeof(int), &filetype);
    MPI_Type_commit(&filetype);
    int n = nmine * tiles;
    int *out = calloc((size_t)(n * 3 + 1), sizeof(int)), *in = calloc((size_t)(n * 3 + 1), sizeof(int));
    for (int i = 0; i < n; i++)
        out[i * wstride] = value(rank, i, t);
    MPI_Datatype wtype = memory_type(n, wstride), rtype = memory_type(n, rstride);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", cb);
    MPI_Info_set(info, "cb_nodes", nodes);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    char coll[IO_PATH_MAX], ind[IO_PATH_MAX];
    io_path(coll, dir, "coll");
    io_path(ind, dir, "ind");
    MPI_File fc, fi;
    MPI_Status st;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, coll, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fc));
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, ind, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fi));
    CHECK_RC(MPI_File_set_size(fc, 0));
    CHECK_RC(MPI_File_set_size(fi, 0));
    CHECK_RC(MPI_File_set_view(fc, disp, MPI_INT, filetype, "native", info));
    CHECK_RC(MPI_File_set_view(fi, disp, MPI_INT, filetype, "native", info));
    CHECK_RC(MPI_File_write_all(fc, out, 1, wtype, &st));
    CHECK_RC(MPI_File_write(fi, out, 1, wtype, &st));
    CHECK_RC(MPI_File_sync(fc));
    CHECK_RC(MPI_File_sync(fi));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long bc, bi;
        int *a = (int *)io_slurp(coll, &bc), *b = (int *)io_slurp(ind, &bi);
        CHECK(bc == bi && memcmp(a, b, (size_t)bc) == 0, "seed %u trial %d: collective and independent files differ", seed, t);
        /* The expected file: tile slots in order, each owner's ints in sequence. */
        int *seq = calloc((size_t)size, sizeof *seq);
        for (int k = 0; k < tiles * tile; k++) {
            long at = disp / 4 + k;
            int o = owner[k % tile], expect = value(o, seq[o]++, t);
            if (at * 4 + 4 > bc || a[at] != expect) {
                errs += TU_FAIL("seed %u trial %d: int %ld: expected %d, got %d", seed, t, at, expect,
                                at * 4 + 4 <= bc ? a[at] : -1);
                break;
            }
        }
        free(seq);
        long want = disp / 4 + (long)tiles * tile;
        CHECK(bc == want * 4, "seed %u trial %d: file size %ld, expected %ld", seed, t, bc, want * 4);
        free(a);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_read_at_all(fc, 0, in, 1, rtype, &st));
    for (int i = 0; i < n; i++)
        if (in[i * rstride] != value(rank, i, t)) {
            errs += TU_FAIL("seed %u trial %d: collective read %d: expected %d, got %d", seed, t, i, value(rank, i, t),
                            in[i * rstride]);
            break;
        }
    memset(in, 0, (size_t)(n * 3 + 1) * sizeof(int));
    CHECK_RC(MPI_File_read_at(fi, 0, in, 1, rtype, &st));
    for (int i = 0; i < n; i++)
        if (in[i * rstride] != value(rank, i, t)) {
            errs += TU_FAIL("seed %u trial %d: independent read %d", seed, t, i);
            break;
        }
    CHECK_RC(MPI_File_close(&fc));
    CHECK_RC(MPI_File_close(&fi));
    MPI_Info_free(&info);
    MPI_Type_free(&wtype);
    MPI_Type_free(&rtype);
    MPI_Type_free(&filetype);
    MPI_Type_free(&slots);
    free(out);
    free(in);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    char dir[IO_PATH_MAX];
    MPI_Init(&argc, &argv);
    unsigned seed = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : (unsigned)time(NULL);
    MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
    if (tu_rank() == 0)
        printf("io_random seed %u\n", seed);
    io_tmpdir(dir);
    for (int t = 0; t < TRIALS; t++)
        errs += trial(dir, seed, t);
    io_tmpdir_remove(dir);
    return tu_finish(errs);
}
