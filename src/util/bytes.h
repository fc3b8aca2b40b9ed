/* Little-endian byte strings for what travels between processes outside
 * the fixed frame header (rank identities, dynamic-process requests): a
 * growing output buffer and a bounds-checked reader.
 *
 * The writer never fails midway silently: an allocation failure sets
 * `failed` and later puts are ignored. The reader never reads past its
 * end: a short or malformed input sets `bad` and every later get returns
 * zero, so a decoder checks `bad` once at the end (and bounds every count
 * it reads by bytes_left before allocating for it). */
#ifndef STRAND_UTIL_BYTES_H
#define STRAND_UTIL_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bytes_out {
    unsigned char *data;            /* malloc'd; the caller frees it */
    size_t len, cap;
    bool failed;
};

struct bytes_in {
    const unsigned char *data;
    size_t len, pos;
    bool bad;
};

static inline void bytes_put(struct bytes_out *o, const void *p, size_t n)
{
    if (o->failed)
        return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap < 256 ? 256 : o->cap;
        while (cap < o->len + n)
            cap *= 2;
        unsigned char *d = realloc(o->data, cap);
        if (d == NULL) {
            o->failed = true;
            return;
        }
        o->data = d;
        o->cap = cap;
    }
    if (n > 0)
        memcpy(o->data + o->len, p, n);
    o->len += n;
}

/* The n low bytes of v, least significant first. */
static inline void bytes_put_le(struct bytes_out *o, uint64_t v, int n)
{
    unsigned char b[8];
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    bytes_put(o, b, (size_t)n);
}

static inline void bytes_put_u64(struct bytes_out *o, uint64_t v) { bytes_put_le(o, v, 8); }
static inline void bytes_put_u32(struct bytes_out *o, uint32_t v) { bytes_put_le(o, v, 4); }

/* A string of at most 65535 bytes: its length, then its bytes. */
static inline void bytes_put_str(struct bytes_out *o, const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    if (n > 0xffff) {
        o->failed = true;
        return;
    }
    bytes_put_le(o, n, 2);
    bytes_put(o, s, n);
}

static inline size_t bytes_left(const struct bytes_in *in) { return in->bad ? 0 : in->len - in->pos; }

static inline const unsigned char *bytes_take(struct bytes_in *in, size_t n)
{
    if (in->bad || in->len - in->pos < n) {
        in->bad = true;
        return NULL;
    }
    const unsigned char *p = in->data + in->pos;
    in->pos += n;
    return p;
}

/* n bytes, least significant first (0 when the input is short). */
static inline uint64_t bytes_get_le(struct bytes_in *in, int n)
{
    const unsigned char *p = bytes_take(in, (size_t)n);
    uint64_t v = 0;
    for (int i = n - 1; p != NULL && i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline uint64_t bytes_get_u64(struct bytes_in *in) { return bytes_get_le(in, 8); }
static inline uint32_t bytes_get_u32(struct bytes_in *in) { return (uint32_t)bytes_get_le(in, 4); }

/* The bytes of a string put by bytes_put_str, *n of them (NULL when bad). */
static inline const unsigned char *bytes_take_str(struct bytes_in *in, size_t *n)
{
    *n = (size_t)bytes_get_le(in, 2);
    return bytes_take(in, *n);
}

/* A string put by bytes_put_str, copied into out[cap] (NUL-terminated);
 * too long for `cap` makes the input bad. */
static inline void bytes_get_str(struct bytes_in *in, char *out, size_t cap)
{
    size_t n;
    const unsigned char *s = bytes_take_str(in, &n);
    if (s == NULL || n >= cap) {
        in->bad = true;
        if (cap > 0)
            out[0] = '\0';
        return;
    }
    memcpy(out, s, n);
    out[n] = '\0';
}

/* A string of any length up to the input's, malloc'd (NULL when bad or
 * out of memory, which also makes the input bad). */
static inline char *bytes_get_strdup(struct bytes_in *in)
{
    size_t n;
    const unsigned char *s = bytes_take_str(in, &n);
    char *out = s != NULL ? malloc(n + 1) : NULL;
    if (out == NULL) {
        in->bad = true;
        return NULL;
    }
    memcpy(out, s, n);
    out[n] = '\0';
    return out;
}

#endif
