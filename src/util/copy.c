/* Copying message data (copy.h). */
#include "copy.h"

#include "cache.h"

void copy_by_vectors(void *dst, const void *src, size_t n)
{
    char *to = dst;
    const char *from = src;
    size_t i = 0;
    /* Fixed-size moves the compiler turns into vector loads and stores
     * (two 16-byte pairs with SSE2), never a call or a string instruction. */
    for (; i + 32 <= n; i += 32)
        __builtin_memcpy(to + i, from + i, 32);
    if (i < n)
        copy_small(to + i, from + i, n - i);
}
