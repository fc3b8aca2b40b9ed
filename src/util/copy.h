/* Copying message data. */
#ifndef STRAND_UTIL_COPY_H
#define STRAND_UTIL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Below this glibc's memcpy never takes its `rep movsb` path (it does from
 * 2 KiB or more, by CPU; glibc.cpu.x86_rep_movsb_threshold). */
enum { COPY_STRING_MIN_BYTES = 2048 };

/* Copies without `rep movsb` (32-byte moves); out of line. */
void copy_by_vectors(void *dst, const void *src, size_t n);

/* memcpy for message data (no overlap). Where the destination lies 1 to
 * 63 bytes ahead of the source modulo 4 KiB, glibc 2.36's `rep movsb`
 * (Debian 12) is several times slower than vector moves once the
 * source's lines come from another core's cache, and buffers placed so
 * are common (two malloc'd page-sized blocks, 16 bytes apart modulo
 * 4 KiB). Those copies take copy_by_vectors (doc/performance.md §32 has
 * the figures). */
static inline void copy_bulk(void *dst, const void *src, size_t n)
{
    uintptr_t ahead = ((uintptr_t)dst - (uintptr_t)src) & 4095;
    if (n >= COPY_STRING_MIN_BYTES && ahead != 0 && ahead < 64)
        copy_by_vectors(dst, src, n);
    else
        memcpy(dst, src, n);
}

#endif
