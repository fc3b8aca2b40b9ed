/* Breadth-first exploration of a model's state graph (see explore.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "explore.h"

enum { NO_PARENT = UINT32_MAX };

struct graph {
    const struct model *m;
    unsigned char *states;          /* state i at states + i * size */
    uint32_t *parent;               /* the state it was reached from */
    unsigned char *mover;           /* the process that moved */
    size_t count, capacity;
    uint32_t *table;                /* open addressing: index + 1, 0 = empty */
    size_t table_size;
};

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (q == NULL) {
        fprintf(stderr, "model: out of memory\n");
        exit(2);
    }
    return q;
}

static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static unsigned char *state_at(const struct graph *g, size_t i)
{
    return g->states + i * g->m->state_size;
}

static void table_grow(struct graph *g)
{
    size_t size = g->table_size ? g->table_size * 2 : 1 << 16;
    uint32_t *table = calloc(size, sizeof *table);
    if (table == NULL) {
        fprintf(stderr, "model: out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < g->count; i++) {
        size_t slot = hash_bytes(state_at(g, i), g->m->state_size) & (size - 1);
        while (table[slot] != 0)
            slot = (slot + 1) & (size - 1);
        table[slot] = (uint32_t)(i + 1);
    }
    free(g->table);
    g->table = table;
    g->table_size = size;
}

/* Adds the state unless seen; true if it is new. */
static bool add_state(struct graph *g, const unsigned char *s, uint32_t parent, int mover)
{
    if (2 * (g->count + 1) > g->table_size)
        table_grow(g);
    size_t size = g->m->state_size;
    size_t slot = hash_bytes(s, size) & (g->table_size - 1);
    for (; g->table[slot] != 0; slot = (slot + 1) & (g->table_size - 1))
        if (memcmp(state_at(g, g->table[slot] - 1), s, size) == 0)
            return false;
    if (g->count == g->capacity) {
        g->capacity = g->capacity ? g->capacity * 2 : 1 << 14;
        g->states = xrealloc(g->states, g->capacity * size);
        g->parent = xrealloc(g->parent, g->capacity * sizeof *g->parent);
        g->mover = xrealloc(g->mover, g->capacity);
    }
    memcpy(state_at(g, g->count), s, size);
    g->parent[g->count] = parent;
    g->mover[g->count] = (unsigned char)mover;
    g->table[slot] = (uint32_t)(g->count + 1);
    g->count++;
    return true;
}

static void print_trace(const struct graph *g, size_t i, FILE *out)
{
    size_t depth = 0;
    for (size_t j = i; g->parent[j] != NO_PARENT; j = g->parent[j])
        depth++;
    size_t *path = malloc((depth + 1) * sizeof *path);
    size_t n = 0;
    for (size_t j = i;; j = g->parent[j]) {
        path[n++] = j;
        if (g->parent[j] == NO_PARENT)
            break;
    }
    fprintf(out, "trace (%zu steps):\n", depth);
    for (size_t k = n; k-- > 0;) {
        if (g->parent[path[k]] == NO_PARENT)
            fprintf(out, "  init      ");
        else
            fprintf(out, "  p%d moves: ", g->mover[path[k]]);
        g->m->show(state_at(g, path[k]), out);
        fputc('\n', out);
    }
    free(path);
}

static bool fail(const struct graph *g, size_t i, const char *what, FILE *out)
{
    fprintf(out, "%s: %s\n", g->m->name, what);
    print_trace(g, i, out);
    return false;
}

static bool explore_graph(struct graph *g, struct explore_stats *stats, FILE *out)
{
    const struct model *m = g->m;
    unsigned char *next = calloc(1, m->state_size);
    unsigned char *init = calloc(1, m->state_size);
    m->init(init);
    add_state(g, init, NO_PARENT, 0);
    free(init);
    for (size_t i = 0; i < g->count; i++) {
        bool moved = false;
        for (int p = 0; p < m->nprocs; p++) {
            memcpy(next, state_at(g, i), m->state_size);
            if (!m->step(next, p))
                continue;
            moved = true;
            stats->transitions++;
            if (!add_state(g, next, (uint32_t)i, p))
                continue;
            const char *bad = m->violation(next);
            if (bad != NULL) {
                free(next);
                return fail(g, g->count - 1, bad, out);
            }
        }
        if (moved)
            continue;
        const unsigned char *s = state_at(g, i);
        for (int p = 0; p < m->nprocs; p++)
            if (!m->finished(s, p)) {
                free(next);
                return fail(g, i, "deadlock: no process can move and not all have finished", out);
            }
        const char *bad = m->final_violation(s);
        if (bad != NULL) {
            free(next);
            return fail(g, i, bad, out);
        }
        stats->finals++;
    }
    free(next);
    return true;
}

bool explore(const struct model *m, struct explore_stats *stats, FILE *out)
{
    struct graph g = { .m = m };
    bool ok = explore_graph(&g, stats, out);
    stats->states += g.count;
    free(g.states);
    free(g.parent);
    free(g.mover);
    free(g.table);
    return ok;
}
