/* Two jobs started by two separate mpiexec commands meet through a port
 * (MPI-2.2 §10.4); run by tests/tools/dpm-jobs.sh.
 *
 *   dpm_jobs server WHERE   rank 0 opens a port and makes it known, the job accepts
 *   dpm_jobs client WHERE   rank 0 learns the port, the job connects
 *
 * WHERE is file:PATH (rank 0 writes the port name there, or reads it once
 * it is there) or name:SERVICE (published, or looked up until found,
 * through the name service). Both jobs then check, values included:
 * point-to-point between every pair of ranks (eager, a 1 MiB rendezvous,
 * MPI_Ssend, MPI_ANY_SOURCE), every intercommunicator collective
 * (inter_checks.h), MPI_Comm_dup and MPI_Comm_split of the
 * intercommunicator, MPI_Intercomm_merge (the server's ranks first) and a
 * window on the merged communicator (put and accumulate in a fence epoch,
 * get under a shared lock), then MPI_Comm_disconnect; the server
 * unpublishes the name and closes the port.
 *
 *   dpm_jobs widen server|client WHERE
 *                                only rank 0 of each job accepts or
 *                                connects (MPI_COMM_SELF); the two merge,
 *                                and MPI_Intercomm_create over that peer
 *                                communicator joins the whole worlds, so
 *                                node processes that took no part in the
 *                                accept or connect are named to the other
 *                                job: point-to-point between every pair and
 *                                the intercommunicator collectives, checked
 *   dpm_jobs badport NAME MAX_S [MARK]
 *                                MPI_Comm_connect to NAME fails with
 *                                MPI_ERR_PORT (under MPI_ERRORS_RETURN,
 *                                MPI_COMM_NULL) within MAX_S seconds;
 *                                creates the file MARK just before
 *                                connecting
 *   dpm_jobs closedport PATH     opens a port, writes its name to PATH,
 *                                closes it, waits for PATH.done
 *   dpm_jobs dyingport PATH      opens a port, writes its name to PATH,
 *                                never accepts: once PATH.connecting
 *                                exists (a connector's MARK) and the
 *                                request had half a second to arrive, its
 *                                node process is killed (SIGKILL)
 *   dpm_jobs names SERVICE       publish/lookup/unpublish and their errors
 *                                through the name service (MPI_ERR_NAME,
 *                                MPI_ERR_SERVICE), on rank 0
 *   dpm_jobs nonames SERVICE     the name server cannot be reached: lookup
 *                                fails with MPI_ERR_NAME, publish with
 *                                MPI_ERR_SERVICE, both at once
 *   dpm_jobs join listen|connect PATH
 *                                rank 0 of each job holds one end of a TCP
 *                                connection (the listener writes its port
 *                                to PATH) and calls MPI_Comm_join on it;
 *                                a message each way, then disconnect
 *   dpm_jobs survivor WHERE after|before|killed
 *   dpm_jobs aborter WHERE after|before|killed
 *                                the two connect (survivor accepts); after:
 *                                they disconnect, the aborter's rank 0 calls
 *                                MPI_Abort(MPI_COMM_WORLD, 3), the survivor
 *                                goes on and ends normally; before: the
 *                                aborter aborts while connected and the
 *                                survivor, blocked receiving from it, must
 *                                end (not hang) naming the lost process;
 *                                killed: the same, but the aborter's node
 *                                process is killed (SIGKILL) instead
 *
 * Every rank prints nothing but failures; rank 0 of each job prints
 * " No Errors" when all of its job's checks passed. */
#include <arpa/inet.h>
#include <signal.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inter_checks.h"

enum { BIG = 1 << 20, WAIT_S = 30 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define TU_ABORT_JOBS(what) (fprintf(stderr, "dpm_jobs: %s\n", (what)), MPI_Abort(MPI_COMM_WORLD, 2))
#define TU_FAIL_JOBS(what) (fprintf(stderr, "dpm_jobs: %s\n", (what)), 1)

static int error_class(int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* Rank 0: the port name, from a file (written by the other job's rank 0,
 * renamed into place whole) or from the name service. */
static void port_learn(const char *where, char *port)
{
    double give_up = now_s() + WAIT_S;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (;;) {
        if (strncmp(where, "name:", 5) == 0) {
            if (MPI_Lookup_name((char *)where + 5, MPI_INFO_NULL, port) == MPI_SUCCESS)
                break;
        } else {
            FILE *f = fopen(where + 5, "r");
            if (f != NULL) {
                int ok = fgets(port, MPI_MAX_PORT_NAME, f) != NULL;
                fclose(f);
                if (ok) {
                    port[strcspn(port, "\n")] = '\0';
                    break;
                }
            }
        }
        if (now_s() > give_up) {
            fprintf(stderr, "dpm_jobs: no port name at %s after %d s\n", where, WAIT_S);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        usleep(20000);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void port_tell(const char *where, const char *port)
{
    if (strncmp(where, "name:", 5) == 0) {
        MPI_Publish_name((char *)where + 5, MPI_INFO_NULL, (char *)port);
        return;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", where + 5);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%s\n", port) < 0 || fclose(f) != 0 || rename(tmp, where + 5) != 0) {
        perror("dpm_jobs: writing the port name");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static unsigned char pattern(int seed, size_t i) { return (unsigned char)((i * 131 + (size_t)seed * 7) ^ (i >> 9)); }

/* Every pair of ranks, a rendezvous between the ranks 0, a synchronous
 * send and MPI_ANY_SOURCE. */
static int pt2pt_checks(MPI_Comm inter, int g)
{
    int errs = 0, rank, lsize, rsize, other = 1 - g;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    int *out = calloc((size_t)rsize, sizeof *out), *in = calloc((size_t)rsize, sizeof *in);
    MPI_Request *reqs = calloc(2 * (size_t)rsize, sizeof *reqs);
    for (int r = 0; r < rsize; r++) {
        out[r] = g * 1000000 + rank * 1000 + r;
        in[r] = -1;
        MPI_Irecv(&in[r], 1, MPI_INT, r, 5, inter, &reqs[r]);
        MPI_Isend(&out[r], 1, MPI_INT, r, 5, inter, &reqs[rsize + r]);
    }
    MPI_Waitall(2 * rsize, reqs, MPI_STATUSES_IGNORE);
    for (int r = 0; r < rsize; r++)
        CHECK(&errs, in[r] == other * 1000000 + r * 1000 + rank, "from remote %d: %d", r, in[r]);
    if (rank == 0) {
        unsigned char *big = malloc(BIG);
        MPI_Status st;
        for (int turn = 0; turn < 2; turn++) {
            if (turn == g) {
                for (size_t i = 0; i < BIG; i++)
                    big[i] = pattern(g, i);
                MPI_Send(big, BIG, MPI_BYTE, 0, 6, inter);
            } else {
                memset(big, 0, BIG);
                MPI_Recv(big, BIG, MPI_BYTE, 0, 6, inter, &st);
                int n = -1;
                MPI_Get_count(&st, MPI_BYTE, &n);
                CHECK(&errs, n == BIG && st.MPI_SOURCE == 0 && st.MPI_TAG == 6, "1 MiB: count %d source %d", n,
                      st.MPI_SOURCE);
                size_t bad = 0;
                while (bad < BIG && big[bad] == pattern(other, bad))
                    bad++;
                CHECK(&errs, bad == BIG, "1 MiB message differs at byte %zu", bad);
            }
        }
        free(big);
    }
    /* The client's ranks each Ssend one int to the server's rank 0, which
     * takes them with MPI_ANY_SOURCE. */
    if (g == 1) {
        int v = 7000 + rank;
        MPI_Ssend(&v, 1, MPI_INT, 0, 7, inter);
    } else if (rank == 0) {
        int *seen = calloc((size_t)rsize, sizeof *seen);
        for (int k = 0; k < rsize; k++) {
            int v = -1;
            MPI_Status st;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, inter, &st);
            CHECK(&errs, st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && v == 7000 + st.MPI_SOURCE &&
                             !seen[st.MPI_SOURCE]++,
                  "any-source: %d from %d", v, st.MPI_SOURCE);
        }
        free(seen);
    }
    free(out);
    free(in);
    free(reqs);
    return errs;
}

/* Dup, split and merge of the intercommunicator; a window on the merged one. */
static int constructor_checks(MPI_Comm inter, int g)
{
    int errs = 0, rank, lsize, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm dup;
    MPI_Comm_dup(inter, &dup);
    int v = g * 10 + rank, w = -1;
    if (rank == 0) {
        MPI_Sendrecv(&v, 1, MPI_INT, 0, 8, &w, 1, MPI_INT, 0, 8, dup, MPI_STATUS_IGNORE);
        CHECK(&errs, w == (1 - g) * 10, "dup: got %d", w);
    }
    MPI_Comm_free(&dup);
    /* split by parity: a member's remote group is the other job's ranks of its parity */
    MPI_Comm half;
    MPI_Comm_split(inter, rank % 2, rank, &half);
    int want_remote = (rsize + 1 - rank % 2) / 2;
    if (want_remote == 0) {
        CHECK(&errs, half == MPI_COMM_NULL, "split without a partner group must give MPI_COMM_NULL");
    } else {
        int hr = -1, sum = -1, want = 0;
        MPI_Comm_remote_size(half, &hr);
        CHECK(&errs, hr == want_remote, "split: remote size %d, expected %d", hr, want_remote);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
        for (int r = rank % 2; r < rsize; r += 2)
            want += r;
        CHECK(&errs, sum == want, "split: allreduce %d, expected %d", sum, want);
        MPI_Comm_free(&half);
    }
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, g, &merged);     /* the server (g = 0) first */
    int mrank = -1, msize = -1, total = -1;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(&errs, msize == lsize + rsize && mrank == (g == 0 ? rank : rsize + rank), "merge: rank %d of %d", mrank,
          msize);
    MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK(&errs, total == msize * (msize - 1) / 2, "merged allreduce %d", total);
    /* slot k of rank t: written by rank k... through put (k = t - 1) and
     * accumulate (slot msize of rank 0 counts everyone) */
    int *mem = calloc((size_t)msize + 1, sizeof *mem);
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)(msize + 1) * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, merged, &win);
    int one = 1, target = (mrank + 1) % msize;
    MPI_Win_fence(0, win);
    MPI_Put(&mrank, 1, MPI_INT, target, mrank, 1, MPI_INT, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, msize, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    int from = (mrank + msize - 1) % msize;
    CHECK(&errs, mem[from] == from, "window: slot %d holds %d", from, mem[from]);
    if (mrank == 0)
        CHECK(&errs, mem[msize] == msize, "window: accumulated %d, expected %d", mem[msize], msize);
    int back = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    MPI_Get(&back, 1, MPI_INT, target, mrank, 1, MPI_INT, win);
    MPI_Win_unlock(target, win);
    CHECK(&errs, back == mrank, "window: get from %d gave %d", target, back);
    MPI_Win_free(&win);
    free(mem);
    MPI_Comm_free(&merged);
    return errs;
}

/* The two jobs meet over `comm` (each job's): the accepting one's rank 0
 * opens the port (its name into `port`) and makes it known at `where`,
 * the other's learns it. */
static MPI_Comm jobs_meet_over(MPI_Comm comm, int accepting, const char *where, char *port)
{
    int rank;
    MPI_Comm inter;
    MPI_Comm_rank(comm, &rank);
    if (accepting) {
        if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            port_tell(where, port);
        }
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, comm, &inter);
    } else {
        if (rank == 0)
            port_learn(where, port);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, comm, &inter);
    }
    return inter;
}

static MPI_Comm jobs_meet(int accepting, const char *where, char *port)
{
    return jobs_meet_over(MPI_COMM_WORLD, accepting, where, port);
}

/* Widen: see the header. */
static int widen(const char *role, const char *where)
{
    int errs = 0, rank, server = strcmp(role, "server") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm first = MPI_COMM_NULL, pair = MPI_COMM_NULL, inter;
    if (rank == 0) {
        first = jobs_meet_over(MPI_COMM_SELF, server, where, port);
        MPI_Intercomm_merge(first, !server, &pair);     /* the server's rank 0 first */
    }
    /* peer_comm and remote_leader count at the leaders only. */
    MPI_Intercomm_create(MPI_COMM_WORLD, 0, rank == 0 ? pair : MPI_COMM_NULL, server ? 1 : 0, 77, &inter);
    int g = server ? 0 : 1;
    errs += pt2pt_checks(inter, g);
    errs += inter_collectives_check(inter, g);
    MPI_Comm_disconnect(&inter);
    if (rank == 0) {
        MPI_Comm_disconnect(&pair);
        MPI_Comm_disconnect(&first);
        if (server)
            MPI_Close_port(port);
    }
    return errs;
}

static int meet(const char *role, const char *where)
{
    int errs = 0, rank, server = strcmp(role, "server") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter = jobs_meet(server, where, port);
    int g = server ? 0 : 1, flag = 0;
    MPI_Comm_test_inter(inter, &flag);
    CHECK(&errs, flag, "accept/connect must give an intercommunicator");
    errs += pt2pt_checks(inter, g);
    errs += inter_collectives_check(inter, g);
    errs += constructor_checks(inter, g);
    MPI_Comm_disconnect(&inter);
    CHECK(&errs, inter == MPI_COMM_NULL, "disconnect must set MPI_COMM_NULL");
    if (server && rank == 0) {
        if (strncmp(where, "name:", 5) == 0)
            MPI_Unpublish_name((char *)where + 5, MPI_INFO_NULL, port);
        MPI_Close_port(port);
    }
    return errs;
}

static int bad_port(const char *name, double max_s, const char *mark)
{
    int errs = 0;
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    FILE *f = mark != NULL ? fopen(mark, "w") : NULL;
    if (mark != NULL && (f == NULL || fclose(f) != 0))
        return TU_FAIL_JOBS("cannot create the mark file");
    double t0 = now_s();
    int cls = error_class(MPI_Comm_connect((char *)name, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c));
    double took = now_s() - t0;
    CHECK(&errs, cls == MPI_ERR_PORT, "connect to %s: class %d, expected MPI_ERR_PORT", name, cls);
    CHECK(&errs, c == MPI_COMM_NULL, "a failed connect must give MPI_COMM_NULL");
    CHECK(&errs, took <= max_s, "connect to %s took %.1f s, more than %.1f", name, took, max_s);
    return errs;
}

/* Waits up to WAIT_S for the file `path`: true when it is there. */
static bool file_appears(const char *path)
{
    struct stat st;
    double give_up = now_s() + WAIT_S;
    while (stat(path, &st) != 0)
        if (now_s() > give_up)
            return false;
        else
            usleep(20000);
    return true;
}

static int closed_port(const char *path)
{
    char port[MPI_MAX_PORT_NAME], done[4096];
    MPI_Open_port(MPI_INFO_NULL, port);
    MPI_Close_port(port);
    port_tell(path, port);
    snprintf(done, sizeof done, "%s.done", path + 5);
    (void)file_appears(done);
    return 0;
}

static int dying_port(const char *path)
{
    char port[MPI_MAX_PORT_NAME], connecting[4096];
    MPI_Open_port(MPI_INFO_NULL, port);
    port_tell(path, port);
    snprintf(connecting, sizeof connecting, "%s.connecting", path + 5);
    if (!file_appears(connecting))
        return TU_FAIL_JOBS("no connector came");
    usleep(500000);
    kill(getpid(), SIGKILL);
    return TU_FAIL_JOBS("survived SIGKILL");
}

static int name_checks(const char *service)
{
    int errs = 0;
    char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME], other[MPI_MAX_PORT_NAME];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Open_port(MPI_INFO_NULL, port);
    MPI_Open_port(MPI_INFO_NULL, other);
    CHECK(&errs, MPI_Publish_name((char *)service, MPI_INFO_NULL, port) == MPI_SUCCESS, "publish");
    CHECK(&errs, error_class(MPI_Publish_name((char *)service, MPI_INFO_NULL, other)) == MPI_ERR_SERVICE,
          "publish twice: MPI_ERR_SERVICE");
    CHECK(&errs, MPI_Lookup_name((char *)service, MPI_INFO_NULL, found) == MPI_SUCCESS && strcmp(found, port) == 0,
          "lookup gave \"%s\"", found);
    CHECK(&errs, error_class(MPI_Unpublish_name((char *)service, MPI_INFO_NULL, other)) == MPI_ERR_SERVICE,
          "unpublish with another port: MPI_ERR_SERVICE");
    CHECK(&errs, MPI_Unpublish_name((char *)service, MPI_INFO_NULL, port) == MPI_SUCCESS, "unpublish");
    CHECK(&errs, error_class(MPI_Lookup_name((char *)service, MPI_INFO_NULL, found)) == MPI_ERR_NAME,
          "lookup after unpublish: MPI_ERR_NAME");
    CHECK(&errs, error_class(MPI_Unpublish_name((char *)service, MPI_INFO_NULL, port)) == MPI_ERR_SERVICE,
          "unpublish twice: MPI_ERR_SERVICE");
    /* names with spaces and punctuation, and several at once */
    const char *odd[] = { "two words", "100% sure", "colon:and=equal", "" };
    for (int i = 0; odd[i][0] != '\0'; i++)
        CHECK(&errs, MPI_Publish_name((char *)odd[i], MPI_INFO_NULL, i % 2 ? other : port) == MPI_SUCCESS,
              "publish \"%s\"", odd[i]);
    for (int i = 0; odd[i][0] != '\0'; i++) {
        found[0] = '\0';
        CHECK(&errs, MPI_Lookup_name((char *)odd[i], MPI_INFO_NULL, found) == MPI_SUCCESS &&
                         strcmp(found, i % 2 ? other : port) == 0,
              "lookup \"%s\" gave \"%s\"", odd[i], found);
        CHECK(&errs, MPI_Unpublish_name((char *)odd[i], MPI_INFO_NULL, i % 2 ? other : port) == MPI_SUCCESS,
              "unpublish \"%s\"", odd[i]);
    }
    MPI_Close_port(port);
    MPI_Close_port(other);
    return errs;
}

/* Rank 0 of each job: a TCP connection between them, then MPI_Comm_join. */
static int join_jobs(const char *side, const char *path)
{
    int errs = 0, fd = -1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (strcmp(side, "listen") == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
            getsockname(l, (struct sockaddr *)&a, &len) != 0)
            TU_ABORT_JOBS("listen");
        char text[32];
        snprintf(text, sizeof text, "%d", ntohs(a.sin_port));
        char where[4096];
        snprintf(where, sizeof where, "file:%s", path);
        port_tell(where, text);
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        char where[4096], text[MPI_MAX_PORT_NAME];
        snprintf(where, sizeof where, "file:%s", path);
        port_learn(where, text);
        a.sin_port = htons((uint16_t)atoi(text));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0)
        TU_ABORT_JOBS("no TCP connection between the jobs");
    MPI_Comm inter;
    MPI_Comm_join(fd, &inter);
    int rsize = 0, v = strcmp(side, "listen") == 0 ? 11 : 22, w = -1;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(&errs, rsize == 1, "join: remote size %d", rsize);
    MPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &w, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
    CHECK(&errs, w == 33 - v, "join: got %d", w);
    MPI_Comm_disconnect(&inter);
    close(fd);
    return errs;
}

/* Abort isolation: see the header. */
static int isolation(const char *role, const char *where, const char *when)
{
    int errs = 0, rank, survivor = strcmp(role, "survivor") == 0, after = strcmp(when, "after") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter = jobs_meet(survivor, where, port);
    int v = 5, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter);
    if (after)
        MPI_Comm_disconnect(&inter);
    if (!survivor) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0 && strcmp(when, "killed") == 0)
            kill(getpid(), SIGKILL);
        if (rank == 0)
            MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_Barrier(MPI_COMM_WORLD);    /* never passed: the job ends */
        return 1;
    }
    if (!after) {
        /* Never satisfied: the aborter's death ends this job. */
        MPI_Recv(&v, 1, MPI_INT, 0, 1, inter, MPI_STATUS_IGNORE);
        return TU_FAIL_JOBS("the receive from an aborted job returned");
    }
    /* The other job is gone; this one still works and ends normally. */
    sleep(2);
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(&errs, sum == 5 * size, "after the other job aborted: allreduce %d", sum);
    if (rank == 0)
        MPI_Close_port(port);
    return errs;
}

static int no_name_server(const char *service)
{
    int errs = 0;
    char port[MPI_MAX_PORT_NAME] = "strand-port:nowhere:1:1:0:1";
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double t0 = now_s();
    CHECK(&errs, error_class(MPI_Lookup_name((char *)service, MPI_INFO_NULL, port)) == MPI_ERR_NAME,
          "lookup without a name server: MPI_ERR_NAME");
    CHECK(&errs, error_class(MPI_Publish_name((char *)service, MPI_INFO_NULL, port)) == MPI_ERR_SERVICE,
          "publish without a name server: MPI_ERR_SERVICE");
    CHECK(&errs, now_s() - t0 < 5, "the name server's absence took %.1f s to notice", now_s() - t0);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "";
    if ((strcmp(mode, "server") == 0 || strcmp(mode, "client") == 0) && argc > 2 &&
        (strncmp(argv[2], "file:", 5) == 0 || strncmp(argv[2], "name:", 5) == 0)) {
        errs = meet(mode, argv[2]);
    } else if (strcmp(mode, "widen") == 0 && argc > 3 &&
               (strcmp(argv[2], "server") == 0 || strcmp(argv[2], "client") == 0)) {
        errs = widen(argv[2], argv[3]);
    } else if (strcmp(mode, "badport") == 0 && argc > 3) {
        if (rank == 0)
            errs = bad_port(argv[2], atof(argv[3]), argc > 4 ? argv[4] : NULL);
    } else if (strcmp(mode, "closedport") == 0 && argc > 2 && strncmp(argv[2], "file:", 5) == 0) {
        if (rank == 0)
            errs = closed_port(argv[2]);
    } else if (strcmp(mode, "dyingport") == 0 && argc > 2 && strncmp(argv[2], "file:", 5) == 0) {
        if (rank == 0)
            errs = dying_port(argv[2]);
    } else if (strcmp(mode, "names") == 0 && argc > 2) {
        if (rank == 0)
            errs = name_checks(argv[2]);
    } else if (strcmp(mode, "join") == 0 && argc > 3) {
        if (rank == 0)
            errs = join_jobs(argv[2], argv[3]);
    } else if ((strcmp(mode, "survivor") == 0 || strcmp(mode, "aborter") == 0) && argc > 3) {
        errs = isolation(mode, argv[2], argv[3]);
    } else if (strcmp(mode, "nonames") == 0 && argc > 2) {
        if (rank == 0)
            errs = no_name_server(argv[2]);
    } else {
        if (rank == 0)
            fprintf(stderr, "usage: dpm_jobs server|client file:PATH|name:SERVICE, widen server|client WHERE, badport NAME MAX_S [MARK], "
                            "closedport|dyingport file:PATH, names|nonames SERVICE, join listen|connect PATH, "
                            "survivor|aborter WHERE after|before|killed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return coll_finish(errs);
}
