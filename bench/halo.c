/*
 * halo.c - halo exchange on a periodic 2-D grid (Strand benchmark suite).
 *
 * The ranks form a px x py torus (the most square factorisation of np);
 * each iteration every rank posts MPI_Irecv from its 4 neighbours
 * (left, right, up, down), MPI_Isend to them, and MPI_Waitall on all 8.
 * Reported value: microseconds per exchange (median over repetitions),
 * for 8 B .. 4 KiB per neighbour. The configurations are 64 ranks
 * (oversubscribed on 2 cores) and 2 ranks (then the 4 neighbours are the
 * other rank twice and this rank twice).
 *
 * With --touch, every iteration first reads a word of each line of the
 * halos it received and writes one of each line of those it sends (the
 * same bytes), as a stencil code that uses its halos and computes the
 * next ones does. Without it nobody touches the data between exchanges,
 * which flatters whichever design leaves the lines where the last copy
 * put them (a receiver copying from a send buffer it read last time finds
 * it in its own cache).
 *
 * Checked: one exchange into cleared buffers after timing; every rank
 * checks each halo against the pattern of the neighbour and direction.
 *
 * Output: "halo SIZE US_PER_EXCHANGE us".
 * Run:    mpiexec -n 64 ./halo [--time S] [--touch]
 */
#include "bench.h"

#define HALO_TAG 27

typedef struct {
    MPI_Comm comm;
    int rank, bytes;
    int nbr[4];           /* left, right, down, up */
    int touch;            /* --touch */
    unsigned sink;        /* what --touch read */
    unsigned char *out;   /* 4 slots */
    unsigned char *in;    /* 4 slots */
    MPI_Request reqs[8];
    MPI_Status stats[8];
} halo_ctx;

/* What rank `from` sends in direction d. */
static uint32_t halo_seed(const halo_ctx *c, int from, int d)
{
    return (uint32_t)c->bytes * 613u + (uint32_t)from * 4u + (uint32_t)d;
}

static void halo_kernel(void *arg, long iters)
{
    halo_ctx *c = arg;
    size_t b = (size_t)c->bytes;
    for (long i = 0; i < iters; i++) {
        if (c->touch) {
            volatile unsigned char *in = c->in, *out = c->out;
            unsigned char sum = 0;
            for (size_t k = 0; k < 4 * b; k += 64)
                sum += in[k];
            for (size_t k = 0; k < 4 * b; k += 64)
                out[k] = out[k];
            c->sink += sum;
        }
        /* The message sent in direction d arrives from the opposite side:
         * receive slot d takes what neighbour d sent in direction d ^ 1,
         * with tag HALO_TAG + direction so that the two messages between
         * the same pair of ranks (np 2) are told apart. */
        for (int d = 0; d < 4; d++)
            MPI_Irecv(c->in + d * b, c->bytes, MPI_BYTE, c->nbr[d], HALO_TAG + (d ^ 1), c->comm, &c->reqs[d]);
        for (int d = 0; d < 4; d++)
            MPI_Isend(c->out + d * b, c->bytes, MPI_BYTE, c->nbr[d], HALO_TAG + d, c->comm, &c->reqs[4 + d]);
        MPI_Waitall(8, c->reqs, c->stats);
    }
}

static void halo_verify(halo_ctx *c)
{
    memset(c->in, 0, 4 * (size_t)c->bytes);
    halo_kernel(c, 1);
    for (int d = 0; d < 4; d++)
        bench_check(c->comm, "halo", c->in + d * (size_t)c->bytes, (size_t)c->bytes,
                    halo_seed(c, c->nbr[d], d ^ 1));
}

static int halo_parse(void *arg, int argc, char **argv, int *i)
{
    (void)argc;
    if (strcmp(argv[*i], "--touch"))
        return 0;
    *(int *)arg = 1;
    return 1;
}

int main(int argc, char **argv)
{
    const long sizes[] = {8, 64, 256, BENCH_KIB, 4 * BENCH_KIB};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    MPI_Comm comm = MPI_COMM_WORLD;
    bench_opts opts;
    halo_ctx c;

    bench_init(&argc, &argv);
    c.touch = 0;
    c.sink = 0;
    int status = bench_parse_args(comm, argc, argv, &opts,
                                  "  --touch         read the received halos' lines and write the outgoing ones'\n"
                                  "                  before each exchange\n",
                                  halo_parse, &c.touch);
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 1 : 0;
    }
    int np = bench_nprocs(comm), px = 1;
    for (int f = 1; f * f <= np; f++)
        if (np % f == 0)
            px = f;
    int py = np / px;
    bench_header(comm, "halo: us per exchange with 4 neighbours on a periodic 2-D grid"
                 " (MPI_Irecv x4, MPI_Isend x4, MPI_Waitall)", &opts);
    if (bench_rank(comm) == 0)
        printf("# grid=%dx%d\n", px, py);
    c.comm = comm;
    c.rank = bench_rank(comm);
    int x = c.rank % px, y = c.rank / px;
    c.nbr[0] = y * px + (x + px - 1) % px;
    c.nbr[1] = y * px + (x + 1) % px;
    c.nbr[2] = ((y + py - 1) % py) * px + x;
    c.nbr[3] = ((y + 1) % py) * px + x;
    long max = opts.max_size < 4 * BENCH_KIB ? opts.max_size : 4 * BENCH_KIB;
    c.out = bench_malloc(comm, 4 * (size_t)max);
    c.in = bench_malloc(comm, 4 * (size_t)max);
    for (int s = 0; s < nsizes && sizes[s] <= max; s++) {
        c.bytes = (int)sizes[s];
        for (int d = 0; d < 4; d++)
            bench_fill(c.out + d * (size_t)c.bytes, (size_t)c.bytes, halo_seed(&c, c.rank, d));
        double per_iter = bench_measure(comm, halo_kernel, &c, &opts, bench_warmup_for(&opts, c.bytes));
        halo_verify(&c);
        bench_report(comm, "halo", c.bytes, per_iter * 1e6, "us");
    }
    free(c.out);
    free(c.in);
    MPI_Finalize();
    return 0;
}
