/* Cache-line helpers. */
#ifndef STRAND_UTIL_CACHE_H
#define STRAND_UTIL_CACHE_H

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

#endif
