/* The progress thread's park, shared by the network modules (tcp.c,
 * ucx.c): while rank threads run progress rounds themselves (net.h,
 * ops->poll_*), the progress thread must not sleep on the network too,
 * or every arrival would wake it as well (a wake-up per message and, on a
 * machine with few cores, a third thread to schedule). So while some rank
 * polls, and for a grace after the last one stopped (a rank that got what
 * it waited for usually waits again soon: STRAND_NET_PARK_GRACE_US,
 * default PARK_GRACE_DEFAULT_US), the progress thread "parks": it sleeps
 * on the module's wake eventfd and the park's timerfd alone.
 *
 * The timer: a poller that got what it waited for pushes it to 2 x grace
 * from now when less than a grace was left, so it is set at most once per
 * grace (timerfd_settime is a costly system call in a VM) and does not
 * fire while ranks keep coming back. A frame nobody polls for therefore
 * waits at most about 2 x grace for the progress thread. A poller that
 * stops spinning to sleep wakes the parked progress thread at once.
 *
 * Threads: net_park_begin/net_park_end on rank threads (any number);
 * net_park_announce/net_park_sleep/net_park_cancel on the progress thread
 * only. The module owns the wake eventfd and its kick (the park calls
 * `kick` and `work_queued`, both from rank threads). */
#ifndef STRAND_NET_PARK_H
#define STRAND_NET_PARK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum { PARK_GRACE_DEFAULT_US = 1000 };

struct net_park {
    atomic_int pollers;             /* rank threads spinning in a wait */
    atomic_bool parked;             /* the progress thread sleeps (or is about to) on wake_fd and timer_fd */
    _Atomic uint64_t poll_left;     /* when the last poller stopped (ns), 0: it went to sleep */
    _Atomic uint64_t deadline;      /* when timer_fd expires (ns) */
    uint64_t grace_ns;
    int timer_fd;
    int wake_fd;                    /* the module's eventfd: a write ends the park */
    /* Rank thread, a poller leaving: wake the progress thread (from its
     * park, or whatever sleep it is in). */
    void (*kick)(void);
    /* Rank thread, a poller leaving (after its count went down, seq_cst):
     * whether work waits that no poller will do, so the progress thread
     * must look now rather than when the park's timer fires. */
    bool (*work_queued)(void);
};

/* Main thread, at the module's init: the timer, the grace from the
 * environment. Returns -1 (errno set) when the timer cannot be made. */
int net_park_init(struct net_park *park, int wake_fd, void (*kick)(void), bool (*work_queued)(void));
void net_park_close(struct net_park *park);

/* Rank thread: a wait starts spinning (ops->poll_begin). */
static inline void net_park_begin(struct net_park *park)
{
    atomic_fetch_add(&park->pollers, 1);
}

/* Rank thread: the spinning ends (ops->poll_end), `sleeping` when the
 * thread now sleeps until woken. */
void net_park_end(struct net_park *park, bool sleeping);

/* Progress thread, before a sleep: true when it parks (announced: a
 * poller going to sleep from now on sees `parked` and kicks). Then it
 * must sleep with net_park_sleep, or undo it with net_park_cancel. */
bool net_park_announce(struct net_park *park);
/* Progress thread, after net_park_announce: sleeps until kicked, the
 * grace is over or timeout_ms (-1: none) passed; drains both fds. */
void net_park_sleep(struct net_park *park, int timeout_ms);
static inline void net_park_cancel(struct net_park *park)
{
    atomic_store(&park->parked, false);
}

#endif
