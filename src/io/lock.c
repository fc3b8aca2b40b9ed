/* Byte-range locks. Atomic mode takes them for every access (writes
 * exclusive, reads shared); in non-atomic mode only writes take them,
 * shared, so that an independent data-sieving write (exclusive: it
 * rewrites the holes between its pieces) never overwrites a concurrent
 * write to a hole.
 *
 * Within one node process: a table under a mutex; the holder does file
 * I/O only, so a waiter blocks on a condition variable. Across node
 * processes: open-file-description fcntl locks (F_OFD_SETLKW) on the
 * member's own descriptor of the file. Each member's descriptor is its
 * own lock owner, so the kernel orders members of one node process and of
 * different ones alike (classic POSIX locks belong to the whole process:
 * one thread's unlock would drop another's overlapping lock). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "io.h"

static bool conflicts(const struct io_range *a, MPI_Offset lo, MPI_Offset hi, bool exclusive)
{
    return a->lo < hi && lo < a->hi && (exclusive || a->exclusive);
}

static void table_lock(struct io_core *core, struct io_range *r)
{
    pthread_mutex_lock(&core->lock_mutex);
    for (;;) {
        const struct io_range *h = core->held;
        while (h != NULL && !conflicts(h, r->lo, r->hi, r->exclusive))
            h = h->next;
        if (h == NULL)
            break;
        pthread_cond_wait(&core->lock_released, &core->lock_mutex);
    }
    r->next = core->held;
    core->held = r;
    pthread_mutex_unlock(&core->lock_mutex);
}

static void table_unlock(struct io_core *core, struct io_range *r)
{
    pthread_mutex_lock(&core->lock_mutex);
    struct io_range **p = &core->held;
    while (*p != r)
        p = &(*p)->next;
    *p = r->next;
    pthread_cond_broadcast(&core->lock_released);
    pthread_mutex_unlock(&core->lock_mutex);
}

/* The member's own descriptor for locks, opened at its first lock. A
 * write-only file cannot be read-locked: its shared locks are exclusive. */
static int lock_descriptor(struct strand_file *f)
{
    if (__atomic_load_n(&f->lock_fd, __ATOMIC_ACQUIRE) >= 0)
        return MPI_SUCCESS;
    int amode = f->core->amode;
    int flags = (amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR) | O_CLOEXEC;
    /* The I/O thread (async.c) may open it at the same time as the rank. */
    int fd = open(f->core->path, flags), none = -1;
    if (fd < 0)
        return io_errno_class(errno);
    if (!__atomic_compare_exchange_n(&f->lock_fd, &none, fd, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        close(fd);
    return MPI_SUCCESS;
}

static int ofd_lock(struct strand_file *f, const struct io_range *r, short type)
{
    bool write_only = f->core->amode & MPI_MODE_WRONLY, read_only = f->core->amode & MPI_MODE_RDONLY;
    if (type == F_RDLCK && write_only)
        type = F_WRLCK;
    if (type == F_WRLCK && read_only)
        type = F_RDLCK;     /* a read-only member never writes: shared is enough */
    struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = r->lo, .l_len = r->hi - r->lo };
    while (fcntl(f->lock_fd, F_OFD_SETLKW, &fl) != 0)
        if (errno != EINTR)
            return io_errno_class(errno);
    return MPI_SUCCESS;
}

int range_lock(struct strand_file *f, struct io_range *r, MPI_Offset lo, MPI_Offset hi, bool exclusive)
{
    *r = (struct io_range){ lo, hi, exclusive, NULL };
    if (!f->core->spans) {
        table_lock(f->core, r);
        return MPI_SUCCESS;
    }
    if (hi <= lo)
        return MPI_SUCCESS;
    int rc = lock_descriptor(f);
    if (rc == MPI_SUCCESS)
        rc = ofd_lock(f, r, exclusive ? F_WRLCK : F_RDLCK);
    if (rc != MPI_SUCCESS)
        r->hi = r->lo;      /* nothing held: the unlock does nothing */
    return rc;
}

void range_unlock(struct strand_file *f, struct io_range *r)
{
    if (!f->core->spans)
        table_unlock(f->core, r);
    else if (r->hi > r->lo)
        ofd_lock(f, r, F_UNLCK);
}
