/* Multi-producer LIFO where the consumer detaches the whole list at once.
 * Pushing is a CAS loop; taking is one exchange, so there is no ABA hazard.
 * Objects embed a `next` pointer at a caller-chosen offset. */
#ifndef STRAND_UTIL_ATOMIC_STACK_H
#define STRAND_UTIL_ATOMIC_STACK_H

#include <stdatomic.h>
#include <stddef.h>

struct atomic_stack_node {
    struct atomic_stack_node *next;
};

struct atomic_stack {
    _Atomic(struct atomic_stack_node *) head;
};

static inline void atomic_stack_push(struct atomic_stack *s, struct atomic_stack_node *node)
{
    struct atomic_stack_node *old = atomic_load_explicit(&s->head, memory_order_relaxed);
    do {
        node->next = old;
    } while (!atomic_compare_exchange_weak_explicit(&s->head, &old, node,
                                                    memory_order_release, memory_order_relaxed));
}

static inline struct atomic_stack_node *atomic_stack_take_all(struct atomic_stack *s)
{
    if (atomic_load_explicit(&s->head, memory_order_relaxed) == NULL)
        return NULL;
    return atomic_exchange_explicit(&s->head, NULL, memory_order_acquire);
}

#endif
