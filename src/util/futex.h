/* Thin wrappers over the futex system call: the one place where a waiting
 * thread goes to sleep and is woken. Private futexes (process-local) are
 * enough because every rank of a node lives in one process. */
#ifndef STRAND_UTIL_FUTEX_H
#define STRAND_UTIL_FUTEX_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Sleeps while *word == expected; returns on wake, signal or mismatch. */
static inline void futex_wait(atomic_uint *word, unsigned expected)
{
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static inline void futex_wake_all(atomic_uint *word)
{
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static inline void futex_wake_one(atomic_uint *word)
{
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif
