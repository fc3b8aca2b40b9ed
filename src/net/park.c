/* The progress thread's park (park.h). */
#include <poll.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "park.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int net_park_init(struct net_park *park, int wake_fd, void (*kick)(void), bool (*work_queued)(void))
{
    const char *grace = getenv("STRAND_NET_PARK_GRACE_US");
    long long us = grace != NULL ? atoll(grace) : PARK_GRACE_DEFAULT_US;
    if (us < 0 || us > 1000 * 1000)     /* (a second: a typo, not a choice) */
        us = PARK_GRACE_DEFAULT_US;
    park->grace_ns = (uint64_t)us * 1000u;
    park->wake_fd = wake_fd;
    park->kick = kick;
    park->work_queued = work_queued;
    park->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    return park->timer_fd < 0 ? -1 : 0;
}

void net_park_close(struct net_park *park)
{
    if (park->timer_fd >= 0)
        close(park->timer_fd);
    park->timer_fd = -1;
}

static void timer_set(struct net_park *park, uint64_t at_ns)
{
    atomic_store(&park->deadline, at_ns);
    struct itimerspec t = { .it_value = { (time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u) } };
    timerfd_settime(park->timer_fd, TFD_TIMER_ABSTIME, &t, NULL);
}

void net_park_end(struct net_park *park, bool sleeping)
{
    atomic_fetch_sub(&park->pollers, 1);
    /* A poller going to sleep needs the progress thread watching the
     * network now; one that got what it waited for lets it stay parked
     * a little (it is likely to wait again soon). */
    uint64_t now = sleeping ? 0 : now_ns();
    atomic_store(&park->poll_left, now);
    if ((sleeping && atomic_load(&park->parked)) || park->work_queued())
        park->kick();
    else if (!sleeping && atomic_load(&park->deadline) < now + park->grace_ns)
        timer_set(park, now + 2 * park->grace_ns);
}

static bool park_wanted(struct net_park *park)
{
    if (atomic_load(&park->pollers) > 0)
        return true;
    uint64_t left = atomic_load(&park->poll_left);
    return left != 0 && now_ns() - left < park->grace_ns;
}

bool net_park_announce(struct net_park *park)
{
    if (!park_wanted(park))
        return false;
    atomic_store(&park->parked, true);
    /* Announce, then look again: a poller going to sleep either sees
     * `parked` (and kicks) or we see it gone. */
    if (park_wanted(park))
        return true;
    atomic_store(&park->parked, false);
    return false;
}

void net_park_sleep(struct net_park *park, int timeout_ms)
{
    /* No poller now: the last one stopped less than a grace ago; look
     * again once its grace is over (leavers push it on). */
    if (atomic_load(&park->pollers) == 0 && atomic_load(&park->deadline) < atomic_load(&park->poll_left) + park->grace_ns)
        timer_set(park, atomic_load(&park->poll_left) + park->grace_ns);
    struct pollfd p[2] = { { .fd = park->wake_fd, .events = POLLIN }, { .fd = park->timer_fd, .events = POLLIN } };
    struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000 };
    ppoll(p, 2, timeout_ms >= 0 ? &ts : NULL, NULL);
    atomic_store(&park->parked, false);
    uint64_t count;
    if (p[0].revents & POLLIN)
        (void)!read(park->wake_fd, &count, sizeof count);
    if (p[1].revents & POLLIN)
        (void)!read(park->timer_fd, &count, sizeof count);
}
