/* Combining accumulate data into target memory, element by element
 * atomically with respect to every other accumulate (MPI-2.2 11.7.1:
 * concurrent accumulates to one location behave as if done in some order).
 *
 * Which way an element goes depends only on its type and address, so two
 * accumulates on the same location always agree:
 *  - elements of 1, 2, 4 or 8 bytes at an aligned address: hardware
 *    atomics (fetch-add/and/or/xor and plain atomic stores for integers,
 *    a compare-and-swap loop around the op's kernel otherwise: MAX, MIN,
 *    PROD, logical ops, float, double, complex float, pair types of 8 bytes);
 *  - anything else (long double, 16-byte pairs, unaligned elements): the
 *    kernel under one of a fixed set of locks chosen by the address.
 * An origin holding an exclusive lock on the target is alone: it applies
 * the kernel to the whole run. */
#include <string.h>

#include "../util/lock.h"
#include "rma.h"

enum { STRIPES = 256 };

static struct {
    _Alignas(64) struct lite_lock lock;
} stripes[STRIPES];

static struct lite_lock *stripe_of(const void *addr)
{
    uint64_t x = (uint64_t)(uintptr_t)addr * 0x9e3779b97f4a7c15ull;
    return &stripes[x >> 56].lock;
}

static bool is_integer(enum dt_basic b)
{
    switch (b) {
    case DT_BASIC_CHAR: case DT_BASIC_SIGNED_CHAR: case DT_BASIC_UNSIGNED_CHAR: case DT_BASIC_BYTE:
    case DT_BASIC_SHORT: case DT_BASIC_UNSIGNED_SHORT: case DT_BASIC_INT: case DT_BASIC_UNSIGNED:
    case DT_BASIC_LONG: case DT_BASIC_UNSIGNED_LONG: case DT_BASIC_LONG_LONG:
    case DT_BASIC_UNSIGNED_LONG_LONG: case DT_BASIC_WCHAR: case DT_BASIC_INT8: case DT_BASIC_INT16:
    case DT_BASIC_INT32: case DT_BASIC_INT64: case DT_BASIC_UINT8: case DT_BASIC_UINT16:
    case DT_BASIC_UINT32: case DT_BASIC_UINT64:
        return true;
    default:
        return false;
    }
}

/* One element through the kernel (or a copy for MPI_REPLACE). */
static inline void combine(const struct op_plan *plan, void *dst, const void *src)
{
    if (plan->kernel != NULL)
        plan->kernel(src, dst, 1);
    else
        memcpy((char *)dst + plan->element->true_lb, (const char *)src + plan->element->true_lb,
               (size_t)(plan->element->true_ub - plan->element->true_lb));
}

/* Fetch-and-op when the op is one, else a compare-and-swap loop around the kernel. */
#define ATOMIC_ELEMENT(T)                                                                          \
    static void atomic_##T(const struct op_plan *plan, T *dst, const char *src, bool integer)      \
    {                                                                                              \
        T in;                                                                                      \
        memcpy(&in, src, sizeof in);                                                               \
        switch (integer ? plan->op->kind : OP_KINDS) {                                             \
        case OP_SUM: __atomic_fetch_add(dst, in, __ATOMIC_RELAXED); return;                        \
        case OP_BAND: __atomic_fetch_and(dst, in, __ATOMIC_RELAXED); return;                       \
        case OP_BOR: __atomic_fetch_or(dst, in, __ATOMIC_RELAXED); return;                         \
        case OP_BXOR: __atomic_fetch_xor(dst, in, __ATOMIC_RELAXED); return;                       \
        default: break;                                                                            \
        }                                                                                          \
        if (plan->op->kind == OP_REPLACE) {                                                        \
            __atomic_store_n(dst, in, __ATOMIC_RELAXED);                                           \
            return;                                                                                \
        }                                                                                          \
        T old = __atomic_load_n(dst, __ATOMIC_RELAXED), val;                                       \
        do {                                                                                       \
            val = old;                                                                             \
            plan->kernel(src, &val, 1);                                                            \
        } while (!__atomic_compare_exchange_n(dst, &old, val, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); \
    }

ATOMIC_ELEMENT(uint8_t)
ATOMIC_ELEMENT(uint16_t)
ATOMIC_ELEMENT(uint32_t)
ATOMIC_ELEMENT(uint64_t)

/* Hardware atomics apply: power-of-two size up to 8 with nothing but
 * data in it, at an aligned address. */
static bool atomic_capable(MPI_Datatype e, const void *dst)
{
    size_t size = e->size;
    if (size == 0 || size > 8 || (size & (size - 1)) != 0)
        return false;
    if (e->true_lb != 0 || (size_t)e->true_ub != size || (size_t)dt_extent(e) != size)
        return false;
    return ((uintptr_t)dst & (size - 1)) == 0;
}

static void apply_atomic(const struct op_plan *plan, char *dst, const char *src, size_t n)
{
    bool integer = is_integer(plan->element->basic);
    switch (plan->element->size) {
    case 1:
        for (size_t i = 0; i < n; i++)
            atomic_uint8_t(plan, (uint8_t *)dst + i, src + i, integer);
        return;
    case 2:
        for (size_t i = 0; i < n; i++)
            atomic_uint16_t(plan, (uint16_t *)dst + i, src + 2 * i, integer);
        return;
    case 4:
        for (size_t i = 0; i < n; i++)
            atomic_uint32_t(plan, (uint32_t *)dst + i, src + 4 * i, integer);
        return;
    default:
        for (size_t i = 0; i < n; i++)
            atomic_uint64_t(plan, (uint64_t *)dst + i, src + 8 * i, integer);
        return;
    }
}

static void apply_locked(const struct op_plan *plan, char *dst, const char *src, size_t n)
{
    MPI_Aint stride = dt_extent(plan->element);
    struct lite_lock *held = NULL;
    for (size_t i = 0; i < n; i++, dst += stride, src += stride) {
        struct lite_lock *lock = stripe_of(dst);
        if (lock != held) {
            if (held != NULL)
                lite_unlock(held);
            lite_lock(lock);
            held = lock;
        }
        combine(plan, dst, src);
    }
    if (held != NULL)
        lite_unlock(held);
}

void acc_apply(const struct op_plan *plan, void *dst, const void *src, size_t n, bool exclusive)
{
    if (n == 0)
        return;
    if (exclusive) {
        if (plan->kernel != NULL)
            plan->kernel(src, dst, n);
        else
            memmove(dst, src, n * (size_t)dt_extent(plan->element));
        return;
    }
    if (atomic_capable(plan->element, dst))
        apply_atomic(plan, dst, src, n);
    else
        apply_locked(plan, dst, src, n);
}
