/* Registries over liburcu's RCU hash table (registry.h). */
#include <pthread.h>

#include "registry.h"

enum { REGISTRY_BUCKETS = 256 };

static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned long key_hash(uint64_t k0, uint64_t k1)
{
    /* splitmix64's finalizer over both words */
    uint64_t x = k0 ^ (k1 * 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return (unsigned long)(x ^ (x >> 31));
}

static int key_match(struct cds_lfht_node *node, const void *key)
{
    const struct registry_node *n = caa_container_of(node, struct registry_node, lfht);
    const uint64_t *k = key;
    return n->key[0] == k[0] && n->key[1] == k[1];
}

static struct cds_lfht *table_of(struct registry *r, bool create)
{
    struct cds_lfht *t = __atomic_load_n(&r->table, __ATOMIC_ACQUIRE);
    if (t != NULL || !create)
        return t;
    pthread_mutex_lock(&create_lock);
    t = r->table;
    if (t == NULL) {
        t = cds_lfht_new_flavor(REGISTRY_BUCKETS, REGISTRY_BUCKETS, REGISTRY_BUCKETS, 0, &urcu_bp_flavor, NULL);
        __atomic_store_n(&r->table, t, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&create_lock);
    return t;
}

struct registry_node *registry_find(struct registry *r, uint64_t key0, uint64_t key1)
{
    struct cds_lfht *t = table_of(r, false);
    if (t == NULL)
        return NULL;
    uint64_t key[2] = { key0, key1 };
    struct cds_lfht_iter iter;
    cds_lfht_lookup(t, key_hash(key0, key1), key_match, key, &iter);
    struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);
    return node != NULL ? caa_container_of(node, struct registry_node, lfht) : NULL;
}

struct registry_node *registry_add(struct registry *r, struct registry_node *n)
{
    struct cds_lfht *t = table_of(r, true);
    if (t == NULL)
        return NULL;
    cds_lfht_node_init(&n->lfht);
    struct cds_lfht_node *in = cds_lfht_add_unique(t, key_hash(n->key[0], n->key[1]), key_match, n->key, &n->lfht);
    return caa_container_of(in, struct registry_node, lfht);
}

void registry_remove(struct registry *r, struct registry_node *n)
{
    struct cds_lfht *t = table_of(r, false);
    if (t != NULL)
        cds_lfht_del(t, &n->lfht);
}
