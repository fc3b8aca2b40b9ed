/* libc_glue.o: what glibc's own getopt, random, strtok, localtime/gmtime
 * and hsearch objects (taken from the system's static libc.a into
 * libstrand_libc.a, see privatize/libc-state.sh) need from the rest of
 * libc, in a form a shared object can use: libc.a reaches libc's other parts through hidden
 * references and a few glibc-internal functions, and getopt reads stderr
 * PC-relatively.  libc-state.sh renames each such reference NAME to
 * strand_libc_NAME (leading underscores dropped), defined here.
 *
 * Everything here is hidden: it belongs to the program copy that links it,
 * like the glibc objects that call it, and the program depends on no
 * GLIBC_PRIVATE symbol. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <libintl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <search.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

#define GLUE __attribute__((visibility("hidden")))

/* glibc's getopt prints its diagnostics with __fxprintf_nocancel(stderr,
 * ...).  Its references to `stderr` are PC-relative loads (the object is
 * built for static PIEs, where stderr is a local variable), which a shared
 * object cannot make against libc.so's stderr; they are redirected to this
 * null pointer, and a null stream means stderr, as in glibc's
 * __fxprintf_nocancel.  So the message goes to the stderr of the moment. */
GLUE FILE *const strand_libc_stderr = NULL;

/* The text domain of glibc's messages, for dcgettext (glibc's own string
 * is not reachable PC-relatively from a shared object either). */
GLUE const char strand_libc_libc_intl_domainname[] = "libc";

/* glibc's __fxprintf_nocancel: print to fp (stderr if null), converting to
 * wide characters if the stream is wide-oriented, with cancellation off
 * (a diagnostic is no cancellation point). */
GLUE int strand_libc_fxprintf_nocancel(FILE *fp, const char *format, ...)
{
    int cancel_state, n;
    va_list ap;
    if (fp == NULL)
        fp = stderr;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    va_start(ap, format);
    if (fwide(fp, 0) > 0) {
        char *text = NULL;
        n = vasprintf(&text, format, ap);
        if (n >= 0)
            n = fwprintf(fp, L"%s", text);
        free(text);
    } else {
        n = vfprintf(fp, format, ap);
    }
    va_end(ap);
    pthread_setcancelstate(cancel_state, NULL);
    return n;
}

/* glibc's __libc_alloca_cutoff: may `size` bytes go on the stack?  getopt
 * asks before listing the candidates of an ambiguous long option; the
 * answer only chooses between alloca and malloc, never what is printed.
 * glibc allows a quarter of the thread's stack, at most 64 KiB; a rank's
 * stack is at least 64 KiB, hence the smaller bound. */
GLUE int strand_libc_libc_alloca_cutoff(size_t size)
{
    return size <= 16384;
}

/* glibc's private low-level lock (nptl/lowlevellock.c), which random.o
 * takes around its state: 0 free, 1 taken, 2 taken with waiters.  The
 * fast paths are inlined in random.o; these are the slow ones. */
GLUE void strand_libc_lll_lock_wait_private(int *futex)
{
    _Atomic int *word = (_Atomic int *)futex;
    if (atomic_load_explicit(word, memory_order_relaxed) == 2)
        syscall(SYS_futex, futex, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    while (atomic_exchange_explicit(word, 2, memory_order_acquire) != 0)
        syscall(SYS_futex, futex, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

GLUE void strand_libc_lll_lock_wake_private(int *futex)
{
    syscall(SYS_futex, futex, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* libc's public functions, for the objects' hidden references. */
GLUE size_t strand_libc_strlen(const char *s)
{
    return strlen(s);
}

GLUE char *strand_libc_strchr(const char *s, int c)
{
    return strchr(s, c);
}

GLUE int strand_libc_strncmp(const char *a, const char *b, size_t n)
{
    return strncmp(a, b, n);
}

GLUE char *strand_libc_getenv(const char *name)
{
    return getenv(name);
}

GLUE char *strand_libc_dcgettext(const char *domain, const char *text, int category)
{
    return dcgettext(domain, text, category);
}

GLUE char *strand_libc_strtok_r(char *s, const char *delimiters, char **save)
{
    return strtok_r(s, delimiters, save);
}

GLUE int strand_libc_random_r(struct random_data *buf, int32_t *result)
{
    return random_r(buf, result);
}

GLUE int strand_libc_srandom_r(unsigned seed, struct random_data *buf)
{
    return srandom_r(seed, buf);
}

GLUE int strand_libc_initstate_r(unsigned seed, char *state, size_t n, struct random_data *buf)
{
    return initstate_r(seed, state, n, buf);
}

GLUE int strand_libc_setstate_r(char *state, struct random_data *buf)
{
    return setstate_r(state, buf);
}

/* glibc's __tz_convert, behind localtime, localtime_r, gmtime and gmtime_r:
 * the time zone is looked up again (TZ may have changed) only for
 * localtime's own result buffer, as glibc does. */
extern struct tm _tmbuf __attribute__((weak, visibility("hidden")));

GLUE struct tm *strand_libc_tz_convert(time_t t, int use_localtime, struct tm *tp)
{
    if (!use_localtime)
        return gmtime_r(&t, tp);
    if (tp == &_tmbuf)
        tzset();
    return localtime_r(&t, tp);
}

GLUE int strand_libc_hsearch_r(ENTRY item, ACTION action, ENTRY **found, struct hsearch_data *table)
{
    return hsearch_r(item, action, found, table);
}

GLUE int strand_libc_hcreate_r(size_t n, struct hsearch_data *table)
{
    return hcreate_r(n, table);
}

GLUE void strand_libc_hdestroy_r(struct hsearch_data *table)
{
    hdestroy_r(table);
}
