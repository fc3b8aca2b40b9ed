/* Per-rank output: with STRAND_PREFIX_OUTPUT=1 (mpiexec -l), stdout and
 * stderr become streams that write whole lines, each prefixed with "[r] "
 * (r: rank in MPI_COMM_WORLD), one write(2) per line, so lines of different
 * ranks never mix.  Without it, stdio is left as it is.
 *
 * The new streams are unbuffered fopencookie streams: stdio then hands every
 * printf to rank_stream_write in the writing thread, with the stream's lock
 * held, and the rank is known there.  Each rank has a pending (unfinished)
 * line per stream, found by its struct rank in a small hash table; all of a
 * stream's table is guarded by that stream's lock. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PENDING_BUCKETS 1024
/* A longer unfinished line is written out in pieces, to bound memory. */
#define PENDING_LINE_MAX 65536

struct pending_line {
    struct rank *rank;
    struct pending_line *next;
    size_t prefix_len; /* text starts with "[r] " */
    size_t len, cap;
    char *text;
};

struct rank_stream {
    int fd;
    FILE *file;
    struct pending_line *buckets[PENDING_BUCKETS];
};

static struct rank_stream rank_stdout, rank_stderr;

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

static struct pending_line **bucket_of(struct rank_stream *s, const struct rank *rank)
{
    uintptr_t h = (uintptr_t)rank >> 4;
    h ^= h >> 17;
    return &s->buckets[(h * 0x9E3779B1u) % PENDING_BUCKETS];
}

static struct pending_line *new_pending_line(struct rank *rank)
{
    struct pending_line *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->cap = 128;
    p->text = malloc(p->cap);
    if (p->text == NULL) {
        free(p);
        return NULL;
    }
    p->rank = rank;
    p->prefix_len = (size_t)snprintf(p->text, p->cap, "[%d] ", strand_rank_world_number(rank));
    p->len = p->prefix_len;
    return p;
}

static struct pending_line *pending_line_of(struct rank_stream *s, struct rank *rank)
{
    struct pending_line **b = bucket_of(s, rank);
    for (struct pending_line *p = *b; p != NULL; p = p->next)
        if (p->rank == rank)
            return p;
    struct pending_line *p = new_pending_line(rank);
    if (p != NULL) {
        p->next = *b;
        *b = p;
    }
    return p;
}

static int append(struct pending_line *p, const char *data, size_t n)
{
    if (p->len + n > p->cap) {
        size_t cap = p->cap;
        while (cap < p->len + n)
            cap *= 2;
        char *text = realloc(p->text, cap);
        if (text == NULL)
            return -1;
        p->text = text;
        p->cap = cap;
    }
    memcpy(p->text + p->len, data, n);
    p->len += n;
    return 0;
}

/* Writes the pending text (prefix included) and starts a new line. */
static int emit(struct rank_stream *s, struct pending_line *p)
{
    int rc = write_all(s->fd, p->text, p->len);
    p->len = p->prefix_len;
    return rc;
}

static ssize_t rank_stream_write(void *cookie, const char *data, size_t size)
{
    struct rank_stream *s = cookie;
    struct rank *rank = strand_current_rank();
    struct pending_line *p = rank != NULL ? pending_line_of(s, rank) : NULL;
    if (p == NULL) /* not a rank (or no memory): as it comes */
        return write_all(s->fd, data, size) == 0 ? (ssize_t)size : -1;
    for (size_t left = size; left > 0;) {
        const char *newline = memchr(data, '\n', left);
        size_t take = newline != NULL ? (size_t)(newline - data) + 1 : left;
        if (append(p, data, take) != 0)
            return -1;
        if ((newline != NULL || p->len >= PENDING_LINE_MAX) && emit(s, p) != 0)
            return -1;
        data += take;
        left -= take;
    }
    return (ssize_t)size;
}

/* Ends an unfinished line with a newline, so the next rank's line starts
 * on a line of its own. */
static void finish_line(struct rank_stream *s, struct pending_line *p)
{
    if (p->len > p->prefix_len && append(p, "\n", 1) == 0)
        emit(s, p);
}

static void free_pending_line(struct pending_line *p)
{
    free(p->text);
    free(p);
}

static FILE *open_rank_stream(struct rank_stream *s, FILE *old)
{
    cookie_io_functions_t io = {.write = rank_stream_write};
    fflush(old);
    s->fd = fileno(old);
    if (s->fd < 0)
        return NULL;
    s->file = fopencookie(s, "w", io);
    if (s->file != NULL)
        setvbuf(s->file, NULL, _IONBF, 0);
    return s->file;
}

void output_setup_from_environment(void)
{
    const char *setting = getenv("STRAND_PREFIX_OUTPUT");
    FILE *f;
    if (setting == NULL || setting[0] == '\0' || strcmp(setting, "0") == 0)
        return;
    if ((f = open_rank_stream(&rank_stdout, stdout)) != NULL)
        stdout = f;
    if ((f = open_rank_stream(&rank_stderr, stderr)) != NULL)
        stderr = f;
}

static void end_rank_in(struct rank_stream *s, struct rank *rank)
{
    if (s->file == NULL)
        return;
    flockfile(s->file);
    for (struct pending_line **link = bucket_of(s, rank); *link != NULL; link = &(*link)->next) {
        struct pending_line *p = *link;
        if (p->rank == rank) {
            finish_line(s, p);
            *link = p->next;
            free_pending_line(p);
            break;
        }
    }
    funlockfile(s->file);
}

void output_rank_end(struct rank *rank)
{
    if (rank == NULL)
        return;
    end_rank_in(&rank_stdout, rank);
    end_rank_in(&rank_stderr, rank);
}

static void finish_all_in(struct rank_stream *s)
{
    if (s->file == NULL)
        return;
    flockfile(s->file);
    for (size_t b = 0; b < PENDING_BUCKETS; b++) {
        while (s->buckets[b] != NULL) {
            struct pending_line *p = s->buckets[b];
            finish_line(s, p);
            s->buckets[b] = p->next;
            free_pending_line(p);
        }
    }
    funlockfile(s->file);
}

void output_finish(void)
{
    finish_all_in(&rank_stdout);
    finish_all_in(&rank_stderr);
}
