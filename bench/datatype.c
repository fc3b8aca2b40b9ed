/*
 * datatype.c - derived datatype throughput (Strand benchmark suite).
 *
 * Ping-pong between ranks 0 and 1 (blocking MPI_Send/MPI_Recv, rank 1
 * echoes what it received, with the same datatype) of:
 *   contig  1 MiB of doubles, MPI_DOUBLE (baseline for the two below)
 *   vector  1 MiB of doubles as MPI_Type_vector(count, 1, 2, MPI_DOUBLE):
 *           every other double of a 2 MiB array
 *   struct  an array of struct { int; double; char } described with
 *           MPI_Type_create_struct + MPI_Type_create_resized, with about
 *           1 MiB of payload (13 bytes per element, the padding excluded)
 * Reported value: payload megabytes (10^6 bytes) per second of one-way
 * transfer (payload / half the median round trip).  The size column is the
 * payload in bytes.  After timing, one more round trip into buffers filled
 * with a marker checks the data and that the gaps (odd doubles, struct
 * padding) were left untouched.
 *
 * Output: "contig|vector|struct PAYLOAD_BYTES MB_PER_S MB/s".
 * Run:    mpiexec -n 2 ./datatype [--time S] [--reps N]
 */
#include "bench.h"

#include <stddef.h>

#define DT_TAG 31
#define DT_GAP_BYTE 0xA5 /* marker of bytes no receive may touch */

typedef struct {
    int i;
    double d;
    char c;
} dt_elem;

#define DT_ELEM_PAYLOAD (sizeof(int) + sizeof(double) + sizeof(char))

typedef struct {
    const char *name;
    MPI_Comm comm;
    int rank;
    MPI_Datatype type;   /* committed type of one send */
    int count;           /* elements of `type` per message */
    int elements;        /* data elements (doubles / structs) per message */
    long payload;        /* bytes of data per message */
    size_t span;         /* bytes of buffer a message covers */
    unsigned char *send_buf;
    unsigned char *recv_buf;
    /* writes `elements` data elements into buf, leaving the gaps alone */
    void (*fill)(unsigned char *buf, int elements);
    /* checks buf against fill(); gaps must still hold DT_GAP_BYTE */
    void (*check)(MPI_Comm comm, const unsigned char *buf, int elements);
} dt_case;

/* ---- data for each layout ----------------------------------------------- */

static double dt_value(int k)
{
    return (double)k * 0.5 + 1.0; /* exact in binary */
}

static void dt_gap_check(MPI_Comm comm, const char *what,
                         const unsigned char *p, size_t n, long where)
{
    for (size_t b = 0; b < n; b++)
        if (p[b] != DT_GAP_BYTE)
            bench_fail(comm, "%s: gap byte written in element %ld", what,
                       where);
}

static void contig_fill(unsigned char *buf, int n)
{
    double *a = (double *)buf;
    for (int k = 0; k < n; k++)
        a[k] = dt_value(k);
}

static void contig_check(MPI_Comm comm, const unsigned char *buf, int n)
{
    const double *a = (const double *)buf;
    for (int k = 0; k < n; k++)
        if (a[k] != dt_value(k))
            bench_fail(comm, "contig: double %d is %g, want %g", k, a[k],
                       dt_value(k));
}

/* vector: element k of the message is double 2k of the array */
static void vector_fill(unsigned char *buf, int n)
{
    double *a = (double *)buf;
    for (int k = 0; k < n; k++)
        a[2 * k] = dt_value(k);
}

static void vector_check(MPI_Comm comm, const unsigned char *buf, int n)
{
    const double *a = (const double *)buf;
    for (int k = 0; k < n; k++) {
        if (a[2 * k] != dt_value(k))
            bench_fail(comm, "vector: double %d is %g, want %g", 2 * k,
                       a[2 * k], dt_value(k));
        dt_gap_check(comm, "vector", (const unsigned char *)&a[2 * k + 1],
                     sizeof(double), 2 * k + 1);
    }
}

static void struct_fill(unsigned char *buf, int n)
{
    dt_elem *e = (dt_elem *)buf;
    for (int k = 0; k < n; k++) {
        e[k].i = 3 * k + 1;
        e[k].d = dt_value(k);
        e[k].c = (char)(k % 101);
    }
}

static void struct_check(MPI_Comm comm, const unsigned char *buf, int n)
{
    const dt_elem *e = (const dt_elem *)buf;
    const size_t after_i = offsetof(dt_elem, i) + sizeof(int);
    const size_t after_c = offsetof(dt_elem, c) + sizeof(char);
    for (int k = 0; k < n; k++) {
        const unsigned char *raw = (const unsigned char *)&e[k];
        if (e[k].i != 3 * k + 1 || e[k].d != dt_value(k) ||
            e[k].c != (char)(k % 101))
            bench_fail(comm, "struct: element %d is {%d, %g, %d}", k, e[k].i,
                       e[k].d, e[k].c);
        dt_gap_check(comm, "struct", raw + after_i,
                     offsetof(dt_elem, d) - after_i, k);
        dt_gap_check(comm, "struct", raw + after_c,
                     sizeof(dt_elem) - after_c, k);
    }
}

/* ---- datatypes ---------------------------------------------------------- */

static MPI_Datatype dt_struct_type(void)
{
    int lengths[3] = {1, 1, 1};
    MPI_Aint displs[3] = {offsetof(dt_elem, i), offsetof(dt_elem, d),
                          offsetof(dt_elem, c)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype raw, resized;

    MPI_Type_create_struct(3, lengths, displs, types, &raw);
    MPI_Type_create_resized(raw, 0, (MPI_Aint)sizeof(dt_elem), &resized);
    MPI_Type_free(&raw);
    MPI_Type_commit(&resized);
    return resized;
}

static MPI_Datatype dt_vector_type(int count)
{
    MPI_Datatype t;
    MPI_Type_vector(count, 1, 2, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

static MPI_Datatype dt_contig_type(void)
{
    MPI_Datatype t;
    MPI_Type_dup(MPI_DOUBLE, &t); /* a handle that may be freed */
    return t;
}

/* ---- ping-pong ---------------------------------------------------------- */

static void dt_kernel(void *arg, long iters)
{
    dt_case *c = arg;
    for (long i = 0; i < iters; i++) {
        if (c->rank == 0) {
            MPI_Send(c->send_buf, c->count, c->type, 1, DT_TAG, c->comm);
            MPI_Recv(c->recv_buf, c->count, c->type, 1, DT_TAG, c->comm,
                     MPI_STATUS_IGNORE);
        } else if (c->rank == 1) {
            MPI_Recv(c->recv_buf, c->count, c->type, 0, DT_TAG, c->comm,
                     MPI_STATUS_IGNORE);
            MPI_Send(c->recv_buf, c->count, c->type, 0, DT_TAG, c->comm);
        }
    }
}

static void dt_mark_gaps(dt_case *c)
{
    memset(c->recv_buf, DT_GAP_BYTE, c->span);
}

static void dt_verify(dt_case *c)
{
    dt_mark_gaps(c);
    dt_kernel(c, 1);
    if (c->rank <= 1)
        c->check(c->comm, c->recv_buf, c->elements);
}

static void dt_run(dt_case *c, const bench_opts *o)
{
    double per_iter;

    c->send_buf = bench_malloc(c->comm, c->span);
    c->recv_buf = bench_malloc(c->comm, c->span);
    memset(c->send_buf, DT_GAP_BYTE, c->span);
    c->fill(c->send_buf, c->elements);
    dt_mark_gaps(c);
    per_iter = bench_measure(c->comm, dt_kernel, c, o,
                             bench_warmup_for(o, c->payload));
    dt_verify(c);
    bench_report(c->comm, c->name, c->payload,
                 (double)c->payload / (per_iter / 2.0) / 1e6, "MB/s");
    free(c->send_buf);
    free(c->recv_buf);
    MPI_Type_free(&c->type);
}

static void dt_init_case(dt_case *c, MPI_Comm comm, const char *name)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    c->comm = comm;
    c->rank = bench_rank(comm);
}

int main(int argc, char **argv)
{
    const int doubles = (int)(BENCH_MIB / (long)sizeof(double));
    const int elems = (int)(BENCH_MIB / (long)DT_ELEM_PAYLOAD);
    MPI_Comm comm = MPI_COMM_WORLD;
    bench_opts opts;
    dt_case c;
    int status;

    MPI_Init(&argc, &argv);
    status = bench_parse_args(comm, argc, argv, &opts, "", NULL, NULL);
    if (status == 0 && bench_nprocs(comm) < 2) {
        if (bench_rank(comm) == 0)
            fprintf(stderr, "datatype needs at least 2 ranks\n");
        status = -1;
    }
    if (status != 0) {
        MPI_Finalize();
        return status < 0 ? 1 : 0;
    }
    bench_header(comm, "datatype: ping-pong payload MB/s (1e6 B/s, one way)"
                 " of derived datatypes, ranks 0 and 1", &opts);

    dt_init_case(&c, comm, "contig");
    c.type = dt_contig_type();
    c.count = doubles;
    c.elements = doubles;
    c.payload = (long)doubles * (long)sizeof(double);
    c.span = (size_t)c.payload;
    c.fill = contig_fill;
    c.check = contig_check;
    dt_run(&c, &opts);

    dt_init_case(&c, comm, "vector");
    c.type = dt_vector_type(doubles);
    c.count = 1;
    c.elements = doubles;
    c.payload = (long)doubles * (long)sizeof(double);
    c.span = 2 * (size_t)c.payload;
    c.fill = vector_fill;
    c.check = vector_check;
    dt_run(&c, &opts);

    dt_init_case(&c, comm, "struct");
    c.type = dt_struct_type();
    c.count = elems;
    c.elements = elems;
    c.payload = (long)elems * (long)DT_ELEM_PAYLOAD;
    c.span = (size_t)elems * sizeof(dt_elem);
    c.fill = struct_fill;
    c.check = struct_check;
    dt_run(&c, &opts);

    MPI_Finalize();
    return 0;
}
