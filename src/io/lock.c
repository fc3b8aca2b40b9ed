/* Byte-range locks inside the node process. Atomic mode takes them for
 * every access (writes exclusive, reads shared); in non-atomic mode only
 * writes take them, shared, so that an independent data-sieving write
 * (exclusive: it rewrites the holes between its pieces) never overwrites
 * a concurrent write to a hole. The holder does file I/O only, so a
 * waiter blocks on a condition variable. */
#include "io.h"

static bool conflicts(const struct io_range *a, MPI_Offset lo, MPI_Offset hi, bool exclusive)
{
    return a->lo < hi && lo < a->hi && (exclusive || a->exclusive);
}

void range_lock(struct io_core *core, struct io_range *r, MPI_Offset lo, MPI_Offset hi, bool exclusive)
{
    *r = (struct io_range){ lo, hi, exclusive, NULL };
    pthread_mutex_lock(&core->lock_mutex);
    for (;;) {
        const struct io_range *h = core->held;
        while (h != NULL && !conflicts(h, lo, hi, exclusive))
            h = h->next;
        if (h == NULL)
            break;
        pthread_cond_wait(&core->lock_released, &core->lock_mutex);
    }
    r->next = core->held;
    core->held = r;
    pthread_mutex_unlock(&core->lock_mutex);
}

void range_unlock(struct io_core *core, struct io_range *r)
{
    pthread_mutex_lock(&core->lock_mutex);
    struct io_range **p = &core->held;
    while (*p != r)
        p = &(*p)->next;
    *p = r->next;
    pthread_cond_broadcast(&core->lock_released);
    pthread_mutex_unlock(&core->lock_mutex);
}
