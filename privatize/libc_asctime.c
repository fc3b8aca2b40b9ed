/* libc_asctime.o (in libstrand_libc.a): asctime with its result buffer in
 * the program, so per rank; glibc's ctime.o (asctime(localtime(t))) comes
 * with it.  glibc's asctime.o cannot be used (it sets errno through an
 * initial-exec TLS reference, which no per-rank copy may make), so this is
 * glibc's asctime rewritten: the same format, the C locale's names, "???"
 * for an out-of-range weekday or month, and its result buffer, which is
 * larger than asctime_r's 26 bytes (so years past 9999 still print).
 * tests/privatize/libc_state compares it with glibc's.
 *
 * Its own archive member: only a program calling asctime or ctime gets it
 * (a program defining its own asctime keeps linking). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>

static const char day_names[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char month_names[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

__attribute__((visibility("hidden"))) char *asctime(const struct tm *tp)
{
    static char result[3 + 1 + 3 + 1 + 20 + 1 + 20 + 1 + 20 + 1 + 20 + 1 + 20 + 1 + 1];
    if (tp == NULL) {
        errno = EINVAL;
        return NULL;
    }
    if (tp->tm_year > INT_MAX - 1900) {
        errno = EOVERFLOW;
        return NULL;
    }
    int n = snprintf(result, sizeof result, "%.3s %.3s%3d %.2d:%.2d:%.2d %d\n",
                     tp->tm_wday < 0 || tp->tm_wday >= 7 ? "???" : day_names[tp->tm_wday],
                     tp->tm_mon < 0 || tp->tm_mon >= 12 ? "???" : month_names[tp->tm_mon],
                     tp->tm_mday, tp->tm_hour, tp->tm_min, tp->tm_sec, 1900 + tp->tm_year);
    if (n < 0)
        return NULL;
    if ((size_t)n >= sizeof result) {
        errno = EOVERFLOW;
        return NULL;
    }
    return result;
}
