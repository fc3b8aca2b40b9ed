/* Cache-line helpers. */
#ifndef STRAND_UTIL_CACHE_H
#define STRAND_UTIL_CACHE_H

#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

/* Asks for the line holding `p` in a writable state ahead of a store.
 * A line that another core has read must first be taken back from it;
 * stores leave the CPU in order, so a store that waits for that stalls
 * every later one. Asked for early, the transfer overlaps other work. */
static inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__)
    /* PREFETCHW: x86-64 compilers emit it only with -mprfchw; CPUs without
     * it treat the opcode as a no-op. */
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* Up to 64 bytes without a call into libc: overlapping fixed-size moves
 * from both ends (loads first, so overlap within one piece is harmless). */
static inline void copy_small(void *to, const void *from, size_t len)
{
    char *dst = to;
    const char *src = from;
    if (len >= 16) {
        char a[16], b[16], c[16], d[16];
        memcpy(a, src, 16);
        memcpy(b, src + len - 16, 16);
        if (len > 32) {
            memcpy(c, src + 16, 16);
            memcpy(d, src + len - 32, 16);
            memcpy(dst + 16, c, 16);
            memcpy(dst + len - 32, d, 16);
        }
        memcpy(dst, a, 16);
        memcpy(dst + len - 16, b, 16);
    } else if (len >= 8) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + len - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + len - 8, &b, 8);
    } else if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + len - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + len - 4, &b, 4);
    } else {
        for (size_t i = 0; i < len; i++)
            dst[i] = src[i];
    }
}

/* memcpy whose stores bypass the cache (x86-64: SSE2 non-temporal
 * stores; elsewhere plain memcpy). For copies whose destinations will be
 * evicted before anyone reads them: a normal store first reads the line
 * from memory, a streaming one does not, so such copies move half the
 * memory traffic. Ends with a store fence: the data is visible before
 * any later flag store. */
static inline void copy_streaming(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (n < head + 64) {
        memcpy(d, s, n);
        return;
    }
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, n);
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}

#endif
