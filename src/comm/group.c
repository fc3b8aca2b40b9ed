/* Groups (MPI-2.2 §6.3): ordered lists of ranks, owned by the rank that
 * made them. Every operation is linear in the sizes involved: membership
 * questions go through a small hash of one group. */
#include <stdlib.h>
#include <string.h>

#include "../util/quarantine.h"
#include "comm.h"

STRAND_EXPORT struct strand_group strand_group_empty = {
    .magic = GROUP_MAGIC, .size = 0, .self_rank = MPI_UNDEFINED, .predefined = true, .members = NULL,
};

struct strand_group *group_alloc(int size)
{
    struct strand_group *g = malloc(sizeof *g + (size_t)size * sizeof(struct rank *));
    if (g == NULL)
        return NULL;
    g->magic = GROUP_MAGIC;
    g->size = size;
    g->self_rank = MPI_UNDEFINED;
    g->predefined = false;
    g->members = (struct rank **)(g + 1);
    return g;
}

void group_find_self(struct strand_group *g)
{
    g->self_rank = MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        if (g->members[i] == strand_self) {
            g->self_rank = i;
            return;
        }
}

struct strand_group *group_from_members(struct rank **members, int size)
{
    if (size == 0)
        return MPI_GROUP_EMPTY;
    struct strand_group *g = group_alloc(size);
    if (g == NULL)
        return NULL;
    memcpy(g->members, members, (size_t)size * sizeof *members);
    group_find_self(g);
    return g;
}

struct strand_group *group_lookup(MPI_Group g)
{
    return g != MPI_GROUP_NULL && g->magic == GROUP_MAGIC ? g : NULL;
}

void group_destroy(struct strand_group *g)
{
    if (g == NULL || g->predefined)
        return;
    handle_magic_clear(&g->magic);
    quarantine_free(g);
}

/* --- rank -> position map: open addressing, at most half full */

struct rank_map {
    unsigned mask;
    struct rank **keys;
    int *values;
};

static unsigned rank_hash(const struct rank *r)
{
    uintptr_t x = (uintptr_t)r;
    x ^= x >> 17;
    x *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(x >> 32);
}

static bool rank_map_init(struct rank_map *m, struct rank **members, int n)
{
    unsigned cap = 16;
    while (cap < 2u * (unsigned)n)
        cap <<= 1;
    m->mask = cap - 1;
    m->keys = calloc(cap, sizeof *m->keys);
    m->values = malloc(cap * sizeof *m->values);
    if (m->keys == NULL || m->values == NULL) {
        free(m->keys);
        free(m->values);
        return false;
    }
    for (int i = 0; i < n; i++) {
        unsigned h = rank_hash(members[i]) & m->mask;
        while (m->keys[h] != NULL && m->keys[h] != members[i])
            h = (h + 1) & m->mask;
        if (m->keys[h] == NULL) {   /* first position wins (a group has no duplicates) */
            m->keys[h] = members[i];
            m->values[h] = i;
        }
    }
    return true;
}

static int rank_map_find(const struct rank_map *m, const struct rank *r)
{
    unsigned h = rank_hash(r) & m->mask;
    while (m->keys[h] != NULL) {
        if (m->keys[h] == r)
            return m->values[h];
        h = (h + 1) & m->mask;
    }
    return MPI_UNDEFINED;
}

static void rank_map_destroy(struct rank_map *m)
{
    free(m->keys);
    free(m->values);
}

int group_compare_members(struct rank **a, int na, struct rank **b, int nb)
{
    if (na != nb)
        return MPI_UNEQUAL;
    if (na == 0 || memcmp(a, b, (size_t)na * sizeof *a) == 0)
        return MPI_IDENT;
    struct rank_map m;
    if (!rank_map_init(&m, b, nb))
        return MPI_UNEQUAL;
    int result = MPI_SIMILAR;
    for (int i = 0; i < na && result == MPI_SIMILAR; i++)
        if (rank_map_find(&m, a[i]) == MPI_UNDEFINED)
            result = MPI_UNEQUAL;
    rank_map_destroy(&m);
    return result;
}

/* --- argument checks */

static struct strand_group *group_checked(MPI_Group group, const char *where, int *rc)
{
    *rc = error_check_initialized(where);
    if (*rc != MPI_SUCCESS)
        return NULL;
    struct strand_group *g = group_lookup(group);
    if (g == NULL)
        *rc = error_report(MPI_COMM_WORLD, MPI_ERR_GROUP, where, "invalid group");
    return g;
}

static int report_no_memory(const char *where)
{
    return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, where, "out of memory");
}

/* Hands a built group to the user: the empty group is MPI_GROUP_EMPTY. */
static int group_deliver(struct strand_group *g, MPI_Group *newgroup, const char *where)
{
    if (g == NULL)
        return report_no_memory(where);
    if (g != MPI_GROUP_EMPTY && g->size == 0) {
        group_destroy(g);
        g = MPI_GROUP_EMPTY;
    }
    if (g != MPI_GROUP_EMPTY)
        group_find_self(g);
    *newgroup = g;
    return MPI_SUCCESS;
}

/* --- queries */

int PMPI_Group_size(MPI_Group group, int *size)
{
    int rc;
    struct strand_group *g = group_checked(group, "MPI_Group_size", &rc);
    if (g == NULL)
        return rc;
    if (size == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_size", "size must not be NULL");
    *size = g->size;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Group_size);

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    int rc;
    struct strand_group *g = group_checked(group, "MPI_Group_rank", &rc);
    if (g == NULL)
        return rc;
    if (rank == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_rank", "rank must not be NULL");
    *rank = g->self_rank;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Group_rank);

int PMPI_Group_translate_ranks(MPI_Group group1, int n, int ranks1[], MPI_Group group2, int ranks2[])
{
    const char *where = "MPI_Group_translate_ranks";
    int rc;
    struct strand_group *g1 = group_checked(group1, where, &rc);
    if (g1 == NULL)
        return rc;
    struct strand_group *g2 = group_checked(group2, where, &rc);
    if (g2 == NULL)
        return rc;
    if (n < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "negative count %d", n);
    if (n > 0 && (ranks1 == NULL || ranks2 == NULL))
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "rank arrays must not be NULL");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size))
            return error_report(MPI_COMM_WORLD, MPI_ERR_RANK, where, "rank %d is not in group1 (size %d)",
                                ranks1[i], g1->size);
    struct rank_map m;
    if (!rank_map_init(&m, g2->members, g2->size))
        return report_no_memory(where);
    for (int i = 0; i < n; i++)
        ranks2[i] = ranks1[i] == MPI_PROC_NULL ? MPI_PROC_NULL : rank_map_find(&m, g1->members[ranks1[i]]);
    rank_map_destroy(&m);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Group_translate_ranks);

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    int rc;
    struct strand_group *g1 = group_checked(group1, "MPI_Group_compare", &rc);
    if (g1 == NULL)
        return rc;
    struct strand_group *g2 = group_checked(group2, "MPI_Group_compare", &rc);
    if (g2 == NULL)
        return rc;
    if (result == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_compare", "result must not be NULL");
    *result = group_compare_members(g1->members, g1->size, g2->members, g2->size);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Group_compare);

int PMPI_Group_free(MPI_Group *group)
{
    int rc = error_check_initialized("MPI_Group_free");
    if (rc != MPI_SUCCESS)
        return rc;
    if (group == NULL || group_lookup(*group) == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_GROUP, "MPI_Group_free", "invalid group");
    group_destroy(*group);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Group_free);

/* --- set operations: one engine. Each member of the first group (and for
 * a union, of the second) is kept or dropped by its membership in the
 * other group. */

enum set_op { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE };

static int group_set_op(const char *where, enum set_op op, MPI_Group group1, MPI_Group group2,
                        MPI_Group *newgroup)
{
    int rc;
    struct strand_group *g1 = group_checked(group1, where, &rc);
    if (g1 == NULL)
        return rc;
    struct strand_group *g2 = group_checked(group2, where, &rc);
    if (g2 == NULL)
        return rc;
    if (newgroup == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "newgroup must not be NULL");
    struct strand_group *g = group_alloc(g1->size + (op == SET_UNION ? g2->size : 0));
    struct rank_map in1, in2;
    if (g == NULL || !rank_map_init(&in2, g2->members, g2->size)) {
        free(g);
        return report_no_memory(where);
    }
    int n = 0;
    for (int i = 0; i < g1->size; i++) {
        bool in_other = rank_map_find(&in2, g1->members[i]) != MPI_UNDEFINED;
        if (op == SET_UNION || (op == SET_INTERSECTION) == in_other)
            g->members[n++] = g1->members[i];
    }
    rank_map_destroy(&in2);
    if (op == SET_UNION) {
        if (!rank_map_init(&in1, g1->members, g1->size)) {
            free(g);
            return report_no_memory(where);
        }
        for (int i = 0; i < g2->size; i++)
            if (rank_map_find(&in1, g2->members[i]) == MPI_UNDEFINED)
                g->members[n++] = g2->members[i];
        rank_map_destroy(&in1);
    }
    g->size = n;
    return group_deliver(g, newgroup, where);
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_set_op("MPI_Group_union", SET_UNION, group1, group2, newgroup);
}
STRAND_MPI_ALIAS(MPI_Group_union);

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_set_op("MPI_Group_intersection", SET_INTERSECTION, group1, group2, newgroup);
}
STRAND_MPI_ALIAS(MPI_Group_intersection);

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_set_op("MPI_Group_difference", SET_DIFFERENCE, group1, group2, newgroup);
}
STRAND_MPI_ALIAS(MPI_Group_difference);

/* --- subsets by rank: the rank lists (explicit or as ranges) are expanded
 * into a list of distinct valid ranks, then included or excluded. */

/* Appends rank r to `list`, rejecting invalid and repeated ranks. */
static int rank_list_add(const char *where, const struct strand_group *g, bool *seen, int *list, int *n, int r)
{
    if (r < 0 || r >= g->size)
        return error_report(MPI_COMM_WORLD, MPI_ERR_RANK, where, "rank %d is not in the group (size %d)", r,
                            g->size);
    if (seen[r])
        return error_report(MPI_COMM_WORLD, MPI_ERR_RANK, where, "rank %d appears more than once", r);
    seen[r] = true;
    list[(*n)++] = r;
    return MPI_SUCCESS;
}

static int ranks_from_list(const char *where, const struct strand_group *g, int n, const int ranks[],
                           bool *seen, int *list, int *count)
{
    if (n > 0 && ranks == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "ranks must not be NULL");
    if (n > g->size)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "%d ranks for a group of %d", n, g->size);
    for (int i = 0; i < n; i++) {
        int rc = rank_list_add(where, g, seen, list, count, ranks[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int ranks_from_ranges(const char *where, const struct strand_group *g, int n, int ranges[][3],
                             bool *seen, int *list, int *count)
{
    if (n > 0 && ranges == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "ranges must not be NULL");
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "range %d has stride 0", i);
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return error_report(MPI_COMM_WORLD, MPI_ERR_RANK, where,
                                "range %d (%d..%d) leaves the group (size %d)", i, first, last, g->size);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            continue;   /* an empty range */
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            int rc = rank_list_add(where, g, seen, list, count, (int)r);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

static int group_subset(const char *where, bool include, MPI_Group group, int n, const int ranks[],
                        int (*ranges)[3], MPI_Group *newgroup)
{
    int rc;
    struct strand_group *g = group_checked(group, where, &rc);
    if (g == NULL)
        return rc;
    if (n < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "negative count %d", n);
    if (newgroup == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "newgroup must not be NULL");
    bool *seen = calloc((size_t)g->size + 1, sizeof *seen);
    int *list = malloc(((size_t)g->size + 1) * sizeof *list);
    if (seen == NULL || list == NULL) {
        free(seen);
        free(list);
        return report_no_memory(where);
    }
    int count = 0;
    rc = ranges != NULL ? ranks_from_ranges(where, g, n, ranges, seen, list, &count)
                        : ranks_from_list(where, g, n, ranks, seen, list, &count);
    struct strand_group *out = NULL;
    if (rc == MPI_SUCCESS) {
        out = group_alloc(include ? count : g->size - count);
        if (out != NULL && include)
            for (int i = 0; i < count; i++)
                out->members[i] = g->members[list[i]];
        else if (out != NULL)
            for (int i = 0, k = 0; i < g->size; i++)
                if (!seen[i])
                    out->members[k++] = g->members[i];
        rc = group_deliver(out, newgroup, where);
    }
    free(seen);
    free(list);
    return rc;
}

int PMPI_Group_incl(MPI_Group group, int n, int ranks[], MPI_Group *newgroup)
{
    return group_subset("MPI_Group_incl", true, group, n, ranks, NULL, newgroup);
}
STRAND_MPI_ALIAS(MPI_Group_incl);

int PMPI_Group_excl(MPI_Group group, int n, int ranks[], MPI_Group *newgroup)
{
    return group_subset("MPI_Group_excl", false, group, n, ranks, NULL, newgroup);
}
STRAND_MPI_ALIAS(MPI_Group_excl);

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return group_subset("MPI_Group_range_incl", true, group, n, NULL, ranges, newgroup);
}
STRAND_MPI_ALIAS(MPI_Group_range_incl);

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return group_subset("MPI_Group_range_excl", false, group, n, NULL, ranges, newgroup);
}
STRAND_MPI_ALIAS(MPI_Group_range_excl);
