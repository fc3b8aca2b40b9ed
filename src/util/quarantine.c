#include <stdatomic.h>
#include <stdlib.h>

#include "quarantine.h"

enum { QUARANTINE_SLOTS = 1024 };

static _Atomic(void *) slots[QUARANTINE_SLOTS];
static atomic_uint next_slot;

void quarantine_free(void *object)
{
    unsigned slot = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed) % QUARANTINE_SLOTS;
    free(atomic_exchange_explicit(&slots[slot], object, memory_order_acq_rel));
}
