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
 * Output: "tcpfloor BYTES MICROSECONDS us" (one-way, median of --reps runs).
 * Build:  cc -O2 -o bench/tcpfloor bench/tcpfloor.c (make bench-build)
 * Run:    bench/tcpfloor [--reps N] [--iters N] [--bytes B]
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

enum { MAX_BYTES = 4096, WARMUP = 1000 };

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

/* Echoes `rounds` messages. */
static void echo(struct sockaddr_in addr, size_t len, long rounds)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
        die("connect");
    set_nodelay(fd);
    char buf[MAX_BYTES];
    for (long i = 0; i < rounds; i++) {
        receive(fd, buf, len);
        check(buf, len, i);
        fill(buf, len, i + 1);
        transmit(fd, buf, len);
    }
    close(fd);
}

/* One run: the one-way latency in microseconds. */
static double run(size_t len, long iters)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof addr;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 1) != 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &alen) != 0)
        die("listen");
    long rounds = WARMUP + iters;
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        close(lfd);
        echo(addr, len, rounds);
        _exit(0);
    }
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        die("accept");
    close(lfd);
    set_nodelay(fd);
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
    close(fd);
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "tcpfloor: the echoing process failed\n");
        exit(1);
    }
    return elapsed / (double)iters / 2 * 1e6;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int reps = 5;
    long iters = 200000;
    long bytes = 56;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--iters") == 0)
            iters = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--bytes") == 0)
            bytes = atol(argv[i + 1]);
    }
    if (reps < 1 || reps > 100 || iters < 1 || bytes < 1 || bytes > MAX_BYTES) {
        fprintf(stderr, "usage: tcpfloor [--reps 1..100] [--iters N] [--bytes 1..%d]\n", MAX_BYTES);
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
