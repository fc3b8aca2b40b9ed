/*
 * net_order_mix: the non-overtaking rule (MPI-2.2 3.5) when one sender's
 * messages of every size cross the network together.
 *
 * Over UCX, small eager frames travel as tagged messages and the others
 * (larger eager frames, rendezvous announcements) as active messages; UCX
 * keeps each kind in order but not one against the other, and a tagged
 * frame that finds none of the receiver's slots posted waits in UCX's
 * queue of unexpected tagged messages while later active messages go
 * ahead (src/net/ucx.c, frame_in_turn). This test sends long runs of
 * messages whose sizes cycle through both kinds (4 B to 200 KiB, around
 * the 1 KiB boundary between them), from every sender to a receiver in the
 * other half of the job (another node process when the job is split in
 * two), and checks that every message arrives in sending order, with its
 * tag, size and bytes:
 *   A. all sent (MPI_Isend) while the receiver sleeps, then received one
 *      by one with MPI_ANY_TAG: everything arrives unexpected, in floods
 *      that outrun the slots;
 *   B. all receives posted first (MPI_Irecv, MPI_ANY_TAG), then sent with
 *      MPI_Send;
 *   C. received as they come, MPI_ANY_SOURCE and MPI_ANY_TAG, while the
 *      sender streams them.
 * Ranks: an even number (rank r sends to r + size/2).
 */
#include "testutil.h"

#define NMSG 1400
#define NSIZES 9
#define MAX_BYTES (200 * 1024)
#define TAG_BASE 40
#define NTAGS 3
#define SLEEP_MS 300

static const size_t sizes[NSIZES] = { 4, 8, 200, 1000, 1024, 1100, 5000, 40000, MAX_BYTES };

static size_t msg_bytes(int k)
{
    /* Runs of small messages between the larger ones: several tagged
     * frames in a row, then an active message that may overtake them. */
    int cls = (k % 13 < 6) ? k % 3 : (k * 7) % NSIZES;
    return sizes[cls];
}

static int msg_tag(int k)
{
    return TAG_BASE + k % NTAGS;
}

/* Message k: its number in the first 4 bytes, pattern k after them. */
static void make_msg(unsigned char *buf, int k)
{
    size_t n = msg_bytes(k);
    tu_fill(buf, n, (unsigned)k);
    memcpy(buf, &k, sizeof k);
}

static unsigned char *expected;    /* MAX_BYTES, for check_msg */

static int check_msg(const unsigned char *buf, MPI_Status *st, int source, int k, const char *part)
{
    char what[64];
    int errs = 0, got = -1, count = -1;
    snprintf(what, sizeof what, "%s message %d", part, k);
    memcpy(&got, buf, sizeof got);
    if (got != k)
        return TU_FAIL("%s: message %d arrived in its place (overtaken)", what, got);
    MPI_Get_count(st, MPI_BYTE, &count);
    if (st->MPI_SOURCE != source || st->MPI_TAG != msg_tag(k) || count != (int)msg_bytes(k))
        errs += TU_FAIL("%s: source %d tag %d count %d, expected %d %d %zu", what, st->MPI_SOURCE, st->MPI_TAG,
                        count, source, msg_tag(k), msg_bytes(k));
    make_msg(expected, k);
    if (memcmp(buf + sizeof k, expected + sizeof k, msg_bytes(k) - sizeof k) != 0)
        errs += TU_FAIL("%s: data differs", what);
    return errs;
}

/* Where message k starts in a buffer holding all of them. */
static size_t offset[NMSG + 1];

static unsigned char *make_all(void)
{
    unsigned char *all = tu_malloc(offset[NMSG]);
    for (int k = 0; k < NMSG; k++)
        make_msg(all + offset[k], k);
    return all;
}

/* The receiving side of A and C: NMSG messages one at a time, from
 * `source` (maybe MPI_ANY_SOURCE), any tag, each checked against its
 * place. After 5 errors it keeps receiving, without checking, so that the
 * sender's sends complete. */
static int receive_in_turn(int source, int peer, const char *part)
{
    int errs = 0;
    unsigned char *buf = tu_malloc(MAX_BYTES);
    for (int k = 0; k < NMSG; k++) {
        MPI_Status st;
        MPI_Recv(buf, MAX_BYTES, MPI_BYTE, source, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        errs += errs < 5 ? check_msg(buf, &st, peer, k, part) : 0;
    }
    free(buf);
    return errs;
}

/* A: everything unexpected. */
static int part_a(int peer, int sender)
{
    if (!sender) {
        tu_sleep_ms(SLEEP_MS);
        return receive_in_turn(peer, peer, "A");
    }
    unsigned char *all = make_all();
    MPI_Request *reqs = tu_malloc(NMSG * sizeof *reqs);
    for (int k = 0; k < NMSG; k++)
        MPI_Isend(all + offset[k], (int)msg_bytes(k), MPI_BYTE, peer, msg_tag(k), MPI_COMM_WORLD, &reqs[k]);
    MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
    free(all);
    return 0;
}

/* B: every receive posted before the first send. */
static int part_b(int peer, int sender)
{
    int errs = 0;
    if (sender) {
        unsigned char *all = make_all();
        MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_BASE + NTAGS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < NMSG; k++)
            MPI_Send(all + offset[k], (int)msg_bytes(k), MPI_BYTE, peer, msg_tag(k), MPI_COMM_WORLD);
        free(all);
        return 0;
    }
    unsigned char *all = tu_malloc(offset[NMSG]);
    MPI_Request *reqs = tu_malloc(NMSG * sizeof *reqs);
    MPI_Status *sts = tu_malloc(NMSG * sizeof *sts);
    for (int k = 0; k < NMSG; k++)
        MPI_Irecv(all + offset[k], (int)msg_bytes(k), MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[k]);
    MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_BASE + NTAGS, MPI_COMM_WORLD);
    MPI_Waitall(NMSG, reqs, sts);
    for (int k = 0; k < NMSG && errs < 5; k++)
        errs += check_msg(all + offset[k], &sts[k], peer, k, "B");
    free(sts);
    free(reqs);
    free(all);
    return errs;
}

/* C: received as they come, from any source, while the sender streams. */
static int part_c(int peer, int sender)
{
    if (!sender)
        return receive_in_turn(MPI_ANY_SOURCE, peer, "C");
    unsigned char *buf = tu_malloc(MAX_BYTES);
    for (int k = 0; k < NMSG; k++) {
        make_msg(buf, k);
        MPI_Send(buf, (int)msg_bytes(k), MPI_BYTE, peer, msg_tag(k), MPI_COMM_WORLD);
    }
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = tu_rank(), size = tu_size(), errs = 0;
    if (size % 2 != 0)
        TU_ABORT("net_order_mix needs an even number of ranks");
    int half = size / 2, sender = rank < half, peer = sender ? rank + half : rank - half;
    for (int k = 0; k < NMSG; k++)
        offset[k + 1] = offset[k] + msg_bytes(k);
    expected = tu_malloc(MAX_BYTES);
    errs += part_a(peer, sender);
    tu_barrier();
    errs += part_b(peer, sender);
    tu_barrier();
    errs += part_c(peer, sender);
    free(expected);
    return tu_finish(errs);
}
