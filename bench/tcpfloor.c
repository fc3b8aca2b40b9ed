/*
 * tcpfloor.c - the floor of a TCP ping-pong on the loopback (not an MPI
 * program): what any MPI's one-way latency between two processes over
 * TCP can at best approach on this machine.
 *
 * Two processes (a fork) hold one TCP connection on 127.0.0.1 (TCP_NODELAY)
 * and pass a message of --bytes (56 by default: a Strand frame header of 48
 * bytes and an 8-byte payload) back and forth; each side busy-polls its
 * non-blocking socket with recv(MSG_DONTWAIT) and answers with one send().
 * Every message carries its round's number, checked on both sides.
 *
 * With --stream B, the ceiling of a stream instead, to set beside
 * `bandwidth` over TCP: one process sends windows of 64 messages of B
 * bytes, each from its own buffer, with blocking send() calls; the other
 * takes each into its own buffer with one blocking recv(MSG_WAITALL) and
 * answers every window with one byte (bandwidth.c's pattern with the
 * fewest system calls and wake-ups a socket allows). The last window
 * lands in cleared buffers, checked.
 *
 * Output: "tcpfloor BYTES MICROSECONDS us" (one-way, median of --reps
 * runs), or "tcpstream BYTES MB_PER_S MB/s" (10^6 B/s, median).
 * Build:  cc -O2 -o bench/tcpfloor bench/tcpfloor.c (make bench-build)
 * Run:    bench/tcpfloor [--reps N] [--iters N] [--bytes B | --stream B]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_BYTES = 4096, WARMUP = 1000, WINDOW = 64, STREAM_WARMUP = 4 };

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* Busy-polls until `len` bytes are in. */
static void receive(int fd, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = recv(fd, buf + got, len - got, MSG_DONTWAIT);
        if (n > 0)
            got += (size_t)n;
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            die("recv");
    }
}

static void transmit(int fd, const char *buf, size_t len)
{
    if (send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
        die("send");
}

/* Round i's message: its number in the first bytes, the rest a pattern. */
static void fill(char *buf, size_t len, long i)
{
    for (size_t k = 0; k < len; k++)
        buf[k] = (char)(i + (long)k);
}

static void check(const char *buf, size_t len, long i)
{
    for (size_t k = 0; k < len; k++)
        if (buf[k] != (char)(i + (long)k)) {
            fprintf(stderr, "tcpfloor: round %ld: wrong byte %zu\n", i, k);
            exit(1);
        }
}

static void set_nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        die("TCP_NODELAY");
}

/* The child's side of a run: `rounds` messages (or windows) of `len`. */
typedef void peer_fn(int fd, size_t len, long rounds);

/* A TCP connection on the loopback to a forked child that runs `peer` on
 * its end and exits; the parent's end is returned. */
static int start_pair(peer_fn *peer, size_t len, long rounds, pid_t *child)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof addr;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 1) != 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &alen) != 0)
        die("listen");
    *child = fork();
    if (*child < 0)
        die("fork");
    if (*child == 0) {
        close(lfd);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
            die("connect");
        set_nodelay(fd);
        peer(fd, len, rounds);
        close(fd);
        _exit(0);
    }
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        die("accept");
    close(lfd);
    set_nodelay(fd);
    return fd;
}

static void end_pair(int fd, pid_t child)
{
    close(fd);
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "tcpfloor: the other process failed\n");
        exit(1);
    }
}

/* Echoes `rounds` messages. */
static void echo(int fd, size_t len, long rounds)
{
    char buf[MAX_BYTES];
    for (long i = 0; i < rounds; i++) {
        receive(fd, buf, len);
        check(buf, len, i);
        fill(buf, len, i + 1);
        transmit(fd, buf, len);
    }
}

/* One run: the one-way latency in microseconds. */
static double run(size_t len, long iters)
{
    pid_t child;
    long rounds = WARMUP + iters;
    int fd = start_pair(echo, len, rounds, &child);
    char buf[MAX_BYTES];
    double start = 0;
    for (long i = 0; i < rounds; i++) {
        if (i == WARMUP)
            start = now_seconds();
        fill(buf, len, i);
        transmit(fd, buf, len);
        receive(fd, buf, len);
        check(buf, len, i + 1);
    }
    double elapsed = now_seconds() - start;
    end_pair(fd, child);
    return elapsed / (double)iters / 2 * 1e6;
}

static char *alloc_window(size_t len)
{
    char *slots = malloc(WINDOW * len);
    if (slots == NULL)
        die("malloc");
    return slots;
}

/* The receiving side of a stream: `windows` windows, the last one into
 * cleared buffers and checked (slot m carries pattern m). */
static void stream_receive(int fd, size_t len, long windows)
{
    char *slots = alloc_window(len);
    memset(slots, 0, WINDOW * len);
    char ack = 1;
    for (long w = 0; w < windows; w++) {
        if (w == windows - 1)
            memset(slots, 0, WINDOW * len);
        for (size_t m = 0; m < WINDOW; m++)
            if (recv(fd, slots + m * len, len, MSG_WAITALL) != (ssize_t)len)
                die("recv");
        transmit(fd, &ack, 1);
    }
    for (size_t m = 0; m < WINDOW; m++)
        check(slots + m * len, len, (long)m);
    free(slots);
}

/* One stream run: MB/s over `windows` windows after a warm-up. */
static double run_stream(size_t len, long windows)
{
    pid_t child;
    long rounds = STREAM_WARMUP + windows;
    int fd = start_pair(stream_receive, len, rounds, &child);
    char *slots = alloc_window(len);
    for (size_t m = 0; m < WINDOW; m++)
        fill(slots + m * len, len, (long)m);
    char ack;
    double start = 0;
    for (long w = 0; w < rounds; w++) {
        if (w == STREAM_WARMUP)
            start = now_seconds();
        for (size_t m = 0; m < WINDOW; m++)
            transmit(fd, slots + m * len, len);
        receive(fd, &ack, 1);
    }
    double elapsed = now_seconds() - start;
    end_pair(fd, child);
    free(slots);
    return (double)windows * WINDOW * (double)len / elapsed / 1e6;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* About 2 GB a run, at least 8 windows. */
static int main_stream(int reps, size_t len)
{
    long windows = (long)(2e9 / (double)(WINDOW * len));
    if (windows < 8)
        windows = 8;
    double rate[100];
    for (int r = 0; r < reps; r++)
        rate[r] = run_stream(len, windows);
    qsort(rate, (size_t)reps, sizeof rate[0], compare_doubles);
    printf("# tcpstream: windows of %d messages of %zu B with blocking send() and recv(MSG_WAITALL)"
           " on the loopback, median of %d runs of %ld windows\n", WINDOW, len, reps, windows);
    printf("tcpstream %zu %.1f MB/s\n", len, rate[reps / 2]);
    return 0;
}

int main(int argc, char **argv)
{
    int reps = 5;
    long iters = 200000;
    long bytes = 56, stream = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--iters") == 0)
            iters = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--bytes") == 0)
            bytes = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--stream") == 0)
            stream = atol(argv[i + 1]);
    }
    if (stream > 0 && stream <= (1L << 26) && reps >= 1 && reps <= 100)
        return main_stream(reps, (size_t)stream);
    if (reps < 1 || reps > 100 || iters < 1 || bytes < 1 || bytes > MAX_BYTES) {
        fprintf(stderr, "usage: tcpfloor [--reps 1..100] [--iters N] [--bytes 1..%d | --stream 1..64M]\n", MAX_BYTES);
        return 2;
    }
    double t[100];
    for (int r = 0; r < reps; r++)
        t[r] = run((size_t)bytes, iters);
    qsort(t, (size_t)reps, sizeof t[0], compare_doubles);
    printf("# tcpfloor: one-way latency of a busy-polling TCP ping-pong on the loopback, median of %d runs of %ld\n",
           reps, iters);
    printf("tcpfloor %ld %.3f us\n", bytes, t[reps / 2]);
    return 0;
}
