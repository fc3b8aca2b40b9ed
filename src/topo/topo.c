/* Topology objects, MPI_Topo_test and MPI_Dims_create. */
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "topo_internal.h"

struct topo *topo_alloc(int kind, size_t nints)
{
    struct topo *t = calloc(1, sizeof *t + (nints > 0 ? nints : 1) * sizeof(int));
    if (t == NULL)
        return NULL;
    t->kind = kind;
    t->refs = 1;
    return t;
}

void topo_retain(struct topo *t)
{
    t->refs++;
}

void topo_release(struct topo *t)
{
    if (--t->refs == 0)
        free(t);
}

struct strand_comm *topo_comm_checked(MPI_Comm comm, const char *where, int kind, int *rc)
{
    struct strand_comm *c = comm_checked(comm, where, rc);
    if (c == NULL)
        return NULL;
    if (kind != 0 && (c->topo == NULL || c->topo->kind != kind)) {
        *rc = error_report(comm, MPI_ERR_TOPOLOGY, where, "the communicator has no %s topology",
                           kind == MPI_CART ? "Cartesian" : kind == MPI_GRAPH ? "graph" : "distributed graph");
        return NULL;
    }
    return c;
}

int topo_comm_create(MPI_Comm comm, const char *where, struct strand_comm *parent, int color, int key,
                     int error, struct topo *t, MPI_Comm *newcomm)
{
    struct build_request req = { .error = error, .color = color, .key = key, .expect_size = -1 };
    if (t == NULL && error == MPI_SUCCESS)
        req.error = MPI_ERR_NO_MEM;
    if (req.error != MPI_SUCCESS)
        req.color = MPI_UNDEFINED;
    int rc = comm_construct(comm, where, parent, BUILD_SPLIT, &req, false, newcomm);
    if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL)
        (*newcomm)->topo = t;
    else if (t != NULL)
        topo_release(t);
    return rc;
}

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    int rc;
    struct strand_comm *c = topo_comm_checked(comm, "MPI_Topo_test", 0, &rc);
    if (c == NULL)
        return rc;
    if (status == NULL)
        return error_report(comm, MPI_ERR_ARG, "MPI_Topo_test", "status must not be NULL");
    *status = c->topo != NULL ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Topo_test);

/* --- MPI_Dims_create: the factorization of m into k factors, in
 * non-increasing order, whose largest and smallest differ least; among
 * those, the one whose smallest factor is largest, then the next smallest,
 * and so on (the same choice as MPICH, so that a program's decomposition
 * does not change when it moves between the two). An exact
 * search over m's divisors: the largest factor ascends from m^(1/k), and
 * stops once even a perfect split of the rest could not beat the best. */

struct dims_search {
    int k;
    const int *divisors;            /* of m, ascending */
    int ndivisors;
    int *current, *best;
    int best_spread;
};

/* base^exp > limit, without overflow (base >= 1). */
static bool power_exceeds(long long base, int exp, long long limit)
{
    long long p = 1;
    for (int i = 0; i < exp; i++) {
        p *= base;
        if (p > limit)
            return true;
    }
    return false;
}

/* Factors in non-increasing order: compare from the smallest up. */
static bool smaller_factors_larger(const int *a, const int *b, int k)
{
    for (int i = k - 1; i >= 0; i--)
        if (a[i] != b[i])
            return a[i] > b[i];
    return false;
}

static void dims_search(struct dims_search *s, int depth, int remaining, int ceiling)
{
    int left = s->k - depth;
    if (left == 1) {
        if (remaining > ceiling)
            return;
        s->current[depth] = remaining;
        int spread = s->current[0] - remaining;
        if (s->best_spread < 0 || spread < s->best_spread ||
            (spread == s->best_spread && smaller_factors_larger(s->current, s->best, s->k))) {
            s->best_spread = spread;
            memcpy(s->best, s->current, (size_t)s->k * sizeof *s->best);
        }
        return;
    }
    for (int i = 0; i < s->ndivisors; i++) {
        int f = s->divisors[i];
        if (f > ceiling || f > remaining)
            break;
        /* The factors from here on are all <= f, so f^left >= remaining. */
        if (!power_exceeds(f, left, remaining - 1) || remaining % f != 0)
            continue;
        /* The smallest factor is at most (remaining/f)^(1/(left-1)); stop
         * once the spread f - smallest must exceed the best. */
        long long x = (long long)f - s->best_spread;
        if (depth == 0 && s->best_spread >= 0 && x > 0 && power_exceeds(x, left - 1, remaining / f))
            break;
        s->current[depth] = f;
        dims_search(s, depth + 1, remaining / f, f);
    }
}

/* No int has more than 1600 divisors. */
enum { MAX_DIVISORS = 1600 };

/* `out` has room for 2 * MAX_DIVISORS: the large ones are staged at its end. */
static int divisors_of(int m, int *out)
{
    int n = 0, high = 0;
    int *big = out + MAX_DIVISORS;  /* m / d for small d, appended reversed */
    for (int d = 1; (long long)d * d <= m; d++)
        if (m % d == 0) {
            out[n++] = d;
            if (d != m / d)
                big[high++] = m / d;
        }
    while (high > 0)
        out[n++] = big[--high];
    return n;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    const char *where = "MPI_Dims_create";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (nnodes <= 0 || ndims < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "nnodes (%d) must be positive, ndims (%d) not negative",
                            nnodes, ndims);
    if (ndims > 0 && dims == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "dims must not be NULL");
    int fixed = 1, free_dims = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return error_report(MPI_COMM_WORLD, MPI_ERR_DIMS, where, "dims[%d] = %d is negative", i, dims[i]);
        if (dims[i] == 0)
            free_dims++;
        else
            fixed *= dims[i];
    }
    if (nnodes % fixed != 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_DIMS, where,
                            "the given dimensions (product %d) do not divide %d", fixed, nnodes);
    if (free_dims == 0) {
        if (fixed != nnodes)
            return error_report(MPI_COMM_WORLD, MPI_ERR_DIMS, where, "the dimensions multiply to %d, not %d",
                                fixed, nnodes);
        return MPI_SUCCESS;
    }
    int *work = malloc((2 * (size_t)free_dims + 2 * MAX_DIVISORS) * sizeof *work);
    if (work == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, where, "out of memory");
    int m = nnodes / fixed;
    int *divisors = work + 2 * free_dims;
    struct dims_search s = { free_dims, divisors, divisors_of(m, divisors), work, work + free_dims, -1 };
    dims_search(&s, 0, m, m);
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = s.best[j++];
    free(work);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Dims_create);
