/*
 * send_modes: the four blocking send modes.
 *   MPI_Send, MPI_Ssend, MPI_Rsend (the receive is posted first: the
 *   receiver posts MPI_Irecv, then sends a zero-byte "ready" message, and
 *   only then does the sender call MPI_Rsend) and MPI_Bsend with
 *   MPI_Buffer_attach / MPI_Buffer_detach (detach must give back the same
 *   buffer and size).  Message sizes 0, 1, 100, 64 KiB and 1 MiB + 3 bytes
 *   (rounded up to whole elements), for MPI_CHAR, MPI_INT, MPI_DOUBLE,
 *   MPI_LONG_LONG, MPI_BYTE, MPI_C_DOUBLE_COMPLEX and MPI_2INT, in both
 *   directions.  Received data, source, tag and count are checked, and the
 *   bytes after the message in the receive buffer must stay untouched.
 *   Finally several MPI_Bsend messages share one attached buffer.
 *
 * Ranks pair up as (2k, 2k+1); the 1 MiB messages are exchanged only by
 * ranks 0-3; with an odd rank count the last rank idles.  Minimum ranks: 2.
 */
#include "testutil.h"
#include <complex.h>

enum { M_SEND, M_SSEND, M_RSEND, M_BSEND, NMODES };
static const char *const mode_name[NMODES] = {"MPI_Send", "MPI_Ssend",
                                              "MPI_Rsend", "MPI_Bsend"};

#define NSIZES 5
static const size_t size_bytes[NSIZES] = {0, 1, 100, 65536, 1048579};
#define BIG_SIZE_INDEX 4
#define SLACK 64 /* extra receive-buffer bytes that must stay untouched */

#define TAG_READY 1000
#define TAG_MULTI 2000

struct type_info {
    MPI_Datatype type;
    const char *name;
    size_t size;
};

typedef struct {
    int a, b;
} int_pair;

static int one_message(int sender, int me, int peer, int mode,
                       const struct type_info *ti, size_t nbytes_req,
                       int tag, unsigned char *sbuf, unsigned char *rbuf)
{
    int errs = 0;
    int count = (int)((nbytes_req + ti->size - 1) / ti->size);
    size_t nbytes = (size_t)count * ti->size;
    unsigned seed = (unsigned)tag * 2u + (unsigned)sender;
    char what[128];

    snprintf(what, sizeof what, "%s of %d x %s (tag %d)", mode_name[mode],
             count, ti->name, tag);
    if (me == sender) {
        tu_fill(sbuf, nbytes, seed);
        switch (mode) {
        case M_SEND:
            CHECK_RC(MPI_Send(sbuf, count, ti->type, peer, tag,
                              MPI_COMM_WORLD));
            break;
        case M_SSEND:
            CHECK_RC(MPI_Ssend(sbuf, count, ti->type, peer, tag,
                               MPI_COMM_WORLD));
            break;
        case M_RSEND:
            CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_READY,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_RC(MPI_Rsend(sbuf, count, ti->type, peer, tag,
                               MPI_COMM_WORLD));
            break;
        case M_BSEND: {
            int bsize = (int)nbytes + MPI_BSEND_OVERHEAD;
            void *bbuf = tu_malloc((size_t)bsize), *dbuf = NULL;
            int dsize = -1;
            CHECK_RC(MPI_Buffer_attach(bbuf, bsize));
            CHECK_RC(MPI_Bsend(sbuf, count, ti->type, peer, tag,
                               MPI_COMM_WORLD));
            /* The data was copied: scribbling on it must not matter. */
            memset(sbuf, 0, nbytes);
            CHECK_RC(MPI_Buffer_detach(&dbuf, &dsize));
            CHECK(dbuf == bbuf, "%s: MPI_Buffer_detach gave %p, attached %p",
                  what, dbuf, bbuf);
            CHECK_INT("MPI_Buffer_detach size", bsize, dsize);
            free(bbuf);
            break;
        }
        }
    } else {
        MPI_Status st;
        MPI_Request req;
        int capacity = count + (int)(SLACK / ti->size);
        tu_guard(rbuf, (size_t)capacity * ti->size);
        if (mode == M_RSEND) {
            CHECK_RC(MPI_Irecv(rbuf, capacity, ti->type, peer, tag,
                               MPI_COMM_WORLD, &req));
            CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_READY,
                              MPI_COMM_WORLD));
            CHECK_RC(MPI_Wait(&req, &st));
            CHECK(req == MPI_REQUEST_NULL, "%s: request not freed by Wait",
                  what);
        } else {
            CHECK_RC(MPI_Recv(rbuf, capacity, ti->type, peer, tag,
                              MPI_COMM_WORLD, &st));
        }
        errs += tu_check_status(&st, peer, tag, ti->type, count, what);
        errs += tu_check_data(rbuf, nbytes, (size_t)capacity * ti->size,
                              seed, what);
    }
    return errs;
}

/* Several MPI_Bsend messages held in one attached buffer at once. */
static int multi_bsend(int sender, int me, int peer)
{
    enum { N = 8, LEN = 300 };
    int errs = 0, i, j;
    if (me == sender) {
        int bsize = N * (LEN * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
        void *bbuf = tu_malloc((size_t)bsize), *dbuf = NULL;
        int dsize = -1, data[LEN];
        CHECK_RC(MPI_Buffer_attach(bbuf, bsize));
        for (i = 0; i < N; i++) {
            for (j = 0; j < LEN; j++)
                data[j] = i * 1000 + j;
            CHECK_RC(MPI_Bsend(data, LEN, MPI_INT, peer, TAG_MULTI + i,
                               MPI_COMM_WORLD));
        }
        CHECK_RC(MPI_Buffer_detach(&dbuf, &dsize));
        CHECK(dbuf == bbuf, "multi Bsend: detach gave %p, attached %p", dbuf,
              bbuf);
        CHECK_INT("multi Bsend: detach size", bsize, dsize);
        free(bbuf);
    } else {
        int data[LEN];
        MPI_Status st;
        /* receive in reverse order: all N are held by the sender's buffer */
        for (i = N - 1; i >= 0; i--) {
            CHECK_RC(MPI_Recv(data, LEN, MPI_INT, peer, TAG_MULTI + i,
                              MPI_COMM_WORLD, &st));
            errs += tu_check_status(&st, peer, TAG_MULTI + i, MPI_INT, LEN,
                                    "multi Bsend");
            for (j = 0; j < LEN; j++)
                if (data[j] != i * 1000 + j) {
                    errs += TU_FAIL("multi Bsend message %d element %d: "
                                    "expected %d, got %d",
                                    i, j, i * 1000 + j, data[j]);
                    break;
                }
        }
    }
    return errs;
}

int main(int argc, char **argv)
{
    const struct type_info types[] = {
        {MPI_CHAR, "MPI_CHAR", sizeof(char)},
        {MPI_INT, "MPI_INT", sizeof(int)},
        {MPI_DOUBLE, "MPI_DOUBLE", sizeof(double)},
        {MPI_LONG_LONG, "MPI_LONG_LONG", sizeof(long long)},
        {MPI_BYTE, "MPI_BYTE", 1},
        {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX",
         sizeof(double _Complex)},
        {MPI_2INT, "MPI_2INT", sizeof(int_pair)},
    };
    const int ntypes = (int)(sizeof types / sizeof types[0]);
    int errs = 0, rank, size, peer, dir, t, s, m, nsizes;
    unsigned char *sbuf, *rbuf;
    size_t bufsize;

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();
    peer = rank ^ 1;
    if (peer < size) {
        nsizes = tu_big_ok(rank, peer) ? NSIZES : BIG_SIZE_INDEX;
        bufsize = size_bytes[nsizes - 1] + 32 + SLACK;
        sbuf = (unsigned char *)tu_malloc(bufsize);
        rbuf = (unsigned char *)tu_malloc(bufsize);
        for (dir = 0; dir < 2; dir++) {
            int sender = (rank & ~1) + dir;
            for (t = 0; t < ntypes; t++)
                for (s = 0; s < nsizes; s++)
                    for (m = 0; m < NMODES; m++) {
                        int tag = 1 + (t * NSIZES + s) * NMODES + m;
                        errs += one_message(sender, rank, peer, m, &types[t],
                                            size_bytes[s], tag, sbuf, rbuf);
                    }
            errs += multi_bsend(sender, rank, peer);
        }
        free(sbuf);
        free(rbuf);
    }
    return tu_finish(errs);
}
