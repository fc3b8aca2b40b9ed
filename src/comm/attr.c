/* Keyvals and attributes: the engine, the MPI_Comm_/MPI_Type_/MPI_Win_
 * keyval calls, the MPI-1 names and the predefined callbacks. */
#include <stdlib.h>
#include <string.h>

#include "../datatype/datatype.h"
#include "../util/lock.h"
#include "attr.h"
#include "comm.h"

/* Keyvals: ids 1..KEYVAL_LAST_PREDEFINED are the predefined attributes of
 * mpi.h; user keyvals take ids from KEYVAL_FIRST_USER, through a table of
 * chunks that never moves (lookups take no lock). An id is reused only
 * after its keyval is freed and no attribute refers to it any more. */
enum {
    KEYVAL_LAST_PREDEFINED = MPI_WIN_DISP_UNIT,
    KEYVAL_FIRST_USER = 16,
    KEYVAL_CHUNK = 256,
    KEYVAL_CHUNKS = 1024,
};

struct keyval {
    int id;
    enum attr_kind kind;
    bool predefined;
    bool freed;                     /* the user freed it; attributes may remain */
    union {
        MPI_Comm_copy_attr_function *comm;
        MPI_Type_copy_attr_function *type;
        MPI_Win_copy_attr_function *win;
    } copy;
    union {
        MPI_Comm_delete_attr_function *comm;
        MPI_Type_delete_attr_function *type;
        MPI_Win_delete_attr_function *win;
    } del;
    void *extra_state;
    atomic_int refs;                /* 1 until freed + 1 per attribute */
};

struct attribute {
    struct attribute *next;
    struct keyval *keyval;
    struct rank *owner;             /* shared objects (predefined types) hold several ranks' values */
    void *value;
};

static struct keyval predefined_keyvals[KEYVAL_LAST_PREDEFINED + 1];
static _Atomic(struct keyval *) *keyval_chunks[KEYVAL_CHUNKS];
static struct lite_lock keyval_lock = LITE_LOCK_INIT;   /* creation and final release */
static int keyval_next_id = KEYVAL_FIRST_USER;
static int *keyval_free_ids;
static int keyval_nfree, keyval_free_cap;
/* Guards the links of attribute lists that several ranks share (datatypes,
 * windows); communicator lists belong to one rank's handle. */
static struct lite_lock shared_list_lock = LITE_LOCK_INIT;

static _Atomic(struct keyval *) *keyval_slot(int id)
{
    int chunk = (id - KEYVAL_FIRST_USER) / KEYVAL_CHUNK;
    if (id < KEYVAL_FIRST_USER || chunk >= KEYVAL_CHUNKS || keyval_chunks[chunk] == NULL)
        return NULL;
    return &keyval_chunks[chunk][(id - KEYVAL_FIRST_USER) % KEYVAL_CHUNK];
}

static void predefined_keyvals_init(void)
{
    static atomic_bool done;
    if (atomic_load_explicit(&done, memory_order_acquire))
        return;
    for (int id = 1; id <= KEYVAL_LAST_PREDEFINED; id++) {
        struct keyval *kv = &predefined_keyvals[id];
        kv->id = id;
        kv->kind = id >= MPI_WIN_BASE ? ATTR_WIN : ATTR_COMM;
        kv->predefined = true;
        atomic_store(&kv->refs, 1);
    }
    atomic_store_explicit(&done, true, memory_order_release);
}

/* A live keyval (freed ones included when `allow_freed`), or NULL. */
static struct keyval *keyval_find(int id, bool allow_freed)
{
    if (id >= 1 && id <= KEYVAL_LAST_PREDEFINED) {
        predefined_keyvals_init();
        return &predefined_keyvals[id];
    }
    _Atomic(struct keyval *) *slot = keyval_slot(id);
    struct keyval *kv = slot == NULL ? NULL : atomic_load_explicit(slot, memory_order_acquire);
    if (kv == NULL || (kv->freed && !allow_freed))
        return NULL;
    return kv;
}

static int keyval_take_id(void)
{
    if (keyval_nfree > 0)
        return keyval_free_ids[--keyval_nfree];
    int id = keyval_next_id;
    int chunk = (id - KEYVAL_FIRST_USER) / KEYVAL_CHUNK;
    if (chunk >= KEYVAL_CHUNKS)
        return -1;
    if (keyval_chunks[chunk] == NULL) {
        keyval_chunks[chunk] = calloc(KEYVAL_CHUNK, sizeof *keyval_chunks[chunk]);
        if (keyval_chunks[chunk] == NULL)
            return -1;
    }
    keyval_next_id++;
    return id;
}

static struct keyval *keyval_create(enum attr_kind kind, void *extra_state)
{
    struct keyval *kv = calloc(1, sizeof *kv);
    if (kv == NULL)
        return NULL;
    kv->kind = kind;
    kv->extra_state = extra_state;
    atomic_store(&kv->refs, 1);
    lite_lock(&keyval_lock);
    kv->id = keyval_take_id();
    if (kv->id > 0)
        atomic_store_explicit(keyval_slot(kv->id), kv, memory_order_release);
    lite_unlock(&keyval_lock);
    if (kv->id < 0) {
        free(kv);
        return NULL;
    }
    return kv;
}

static void keyval_release(struct keyval *kv)
{
    if (kv->predefined || atomic_fetch_sub_explicit(&kv->refs, 1, memory_order_acq_rel) != 1)
        return;
    lite_lock(&keyval_lock);
    atomic_store_explicit(keyval_slot(kv->id), NULL, memory_order_relaxed);
    if (keyval_nfree == keyval_free_cap) {
        int cap = keyval_free_cap ? 2 * keyval_free_cap : 64;
        int *ids = realloc(keyval_free_ids, (size_t)cap * sizeof *ids);
        if (ids != NULL) {
            keyval_free_ids = ids;
            keyval_free_cap = cap;
        }
    }
    if (keyval_nfree < keyval_free_cap)
        keyval_free_ids[keyval_nfree++] = kv->id;
    lite_unlock(&keyval_lock);
    free(kv);
}

/* --- callbacks, by object kind */

static int call_copy(const struct keyval *kv, void *handle, void *in, void **out, int *flag)
{
    *flag = 0;
    switch (kv->kind) {
    case ATTR_COMM:
        return kv->copy.comm ? kv->copy.comm(handle, kv->id, kv->extra_state, in, out, flag) : MPI_SUCCESS;
    case ATTR_TYPE:
        return kv->copy.type ? kv->copy.type(handle, kv->id, kv->extra_state, in, out, flag) : MPI_SUCCESS;
    case ATTR_WIN:
        return kv->copy.win ? kv->copy.win(handle, kv->id, kv->extra_state, in, out, flag) : MPI_SUCCESS;
    }
    return MPI_ERR_INTERN;
}

static int call_delete(const struct keyval *kv, void *handle, void *value)
{
    switch (kv->kind) {
    case ATTR_COMM:
        return kv->del.comm ? kv->del.comm(handle, kv->id, value, kv->extra_state) : MPI_SUCCESS;
    case ATTR_TYPE:
        return kv->del.type ? kv->del.type(handle, kv->id, value, kv->extra_state) : MPI_SUCCESS;
    case ATTR_WIN:
        return kv->del.win ? kv->del.win(handle, kv->id, value, kv->extra_state) : MPI_SUCCESS;
    }
    return MPI_ERR_INTERN;
}

/* --- lists. Only the owning rank adds, changes or removes its entries;
 * the lock (shared objects only) protects the links against other ranks. */

static void list_lock(const struct attr_host *h)
{
    if (h->kind != ATTR_COMM)
        lite_lock(&shared_list_lock);
}

static void list_unlock(const struct attr_host *h)
{
    if (h->kind != ATTR_COMM)
        lite_unlock(&shared_list_lock);
}

/* A communicator handle belongs to one rank; a shared object's list holds
 * entries of several ranks, each seeing only its own. */
static bool owned(const struct attr_host *h, const struct attribute *a)
{
    return h->kind == ATTR_COMM || a->owner == strand_self;
}

static struct attribute *list_find(const struct attr_host *h, const struct keyval *kv)
{
    list_lock(h);
    struct attribute *a = *h->list;
    while (a != NULL && !(a->keyval == kv && owned(h, a)))
        a = a->next;
    list_unlock(h);
    return a;
}

static void list_unlink(const struct attr_host *h, struct attribute *victim)
{
    list_lock(h);
    for (struct attribute **p = h->list; *p != NULL; p = &(*p)->next)
        if (*p == victim) {
            *p = victim->next;
            break;
        }
    list_unlock(h);
    keyval_release(victim->keyval);
    free(victim);
}

static int list_push(const struct attr_host *h, struct keyval *kv, void *value)
{
    struct attribute *a = malloc(sizeof *a);
    if (a == NULL)
        return MPI_ERR_NO_MEM;
    a->keyval = kv;
    a->owner = strand_self;
    a->value = value;
    if (!kv->predefined)
        atomic_fetch_add_explicit(&kv->refs, 1, memory_order_relaxed);
    list_lock(h);
    a->next = *h->list;
    *h->list = a;
    list_unlock(h);
    return MPI_SUCCESS;
}

/* --- the engine */

/* A freed keyval still reaches the attributes it keeps alive (get and
 * delete); only new attributes need a keyval the program has not freed. */
static struct keyval *keyval_for(const struct attr_host *h, int keyval, bool allow_freed)
{
    struct keyval *kv = keyval_find(keyval, allow_freed);
    return kv != NULL && kv->kind == h->kind ? kv : NULL;
}

static int set_value(const struct attr_host *h, struct keyval *kv, void *value)
{
    struct attribute *a = list_find(h, kv);
    if (a == NULL)
        return list_push(h, kv, value);
    /* Replacing a value deletes the old one first (MPI-2.2 §6.7.3). */
    int rc = call_delete(kv, h->handle, a->value);
    if (rc != MPI_SUCCESS)
        return rc;
    a->value = value;
    return MPI_SUCCESS;
}

int attr_set(const struct attr_host *h, int keyval, void *value)
{
    struct keyval *kv = keyval_for(h, keyval, false);
    if (kv == NULL || kv->predefined)
        return MPI_ERR_KEYVAL;
    return set_value(h, kv, value);
}

int attr_set_predefined(const struct attr_host *h, int keyval, void *value)
{
    struct keyval *kv = keyval_find(keyval, false);
    return kv != NULL && kv->predefined ? set_value(h, kv, value) : MPI_ERR_KEYVAL;
}

int attr_get(const struct attr_host *h, int keyval, void **value, int *flag)
{
    struct keyval *kv = keyval_for(h, keyval, true);
    if (kv == NULL)
        return MPI_ERR_KEYVAL;
    struct attribute *a = list_find(h, kv);
    *flag = a != NULL;
    if (a != NULL)
        *value = a->value;
    return MPI_SUCCESS;
}

static int delete_one(const struct attr_host *h, struct attribute *a)
{
    int rc = call_delete(a->keyval, h->handle, a->value);
    if (rc != MPI_SUCCESS)
        return rc;      /* the attribute stays (MPI-2.2 §6.7.3) */
    list_unlink(h, a);
    return MPI_SUCCESS;
}

int attr_delete(const struct attr_host *h, int keyval)
{
    struct keyval *kv = keyval_for(h, keyval, true);
    if (kv == NULL || kv->predefined)
        return MPI_ERR_KEYVAL;
    struct attribute *a = list_find(h, kv);
    return a == NULL ? MPI_SUCCESS : delete_one(h, a);
}

static struct attribute *first_owned(const struct attr_host *h)
{
    list_lock(h);
    struct attribute *a = *h->list;
    while (a != NULL && !owned(h, a))
        a = a->next;
    list_unlock(h);
    return a;
}

void attr_discard_all(const struct attr_host *h)
{
    struct attribute *a;
    while ((a = first_owned(h)) != NULL)
        list_unlink(h, a);
}

int attr_delete_all(const struct attr_host *h)
{
    struct attribute *a;
    while ((a = first_owned(h)) != NULL) {
        int rc = delete_one(h, a);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int attr_copy_all(const struct attr_host *from, const struct attr_host *to)
{
    /* Oldest first, so the copy keeps the original's order. */
    int n = 0;
    list_lock(from);
    for (struct attribute *a = *from->list; a != NULL; a = a->next)
        n += owned(from, a);
    struct attribute **mine = malloc(((size_t)n + 1) * sizeof *mine);
    if (mine != NULL) {
        int i = n;
        for (struct attribute *a = *from->list; a != NULL; a = a->next)
            if (owned(from, a))
                mine[--i] = a;
    }
    list_unlock(from);
    if (mine == NULL)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        struct keyval *kv = mine[i]->keyval;
        void *copy = NULL;
        int flag = 0;
        rc = call_copy(kv, from->handle, mine[i]->value, &copy, &flag);
        if (rc == MPI_SUCCESS && flag)
            rc = list_push(to, kv, copy);
    }
    free(mine);
    if (rc != MPI_SUCCESS)
        attr_delete_all(to);
    return rc;
}

/* --- datatypes (called by src/datatype) */

int attr_type_copy(MPI_Datatype oldtype, MPI_Datatype newtype)
{
    struct attr_host from = { ATTR_TYPE, oldtype, &oldtype->attrs };
    struct attr_host to = { ATTR_TYPE, newtype, &newtype->attrs };
    return attr_copy_all(&from, &to);
}

int attr_type_delete_all(MPI_Datatype type)
{
    struct attr_host h = { ATTR_TYPE, type, &type->attrs };
    return attr_delete_all(&h);
}

/* --- keyval calls */

static int keyval_create_call(const char *where, enum attr_kind kind, void (*copy)(void), void (*del)(void),
                              int *keyval, void *extra_state)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (keyval == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "keyval must not be NULL");
    struct keyval *kv = keyval_create(kind, extra_state);
    if (kv == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, where, "cannot create a keyval");
    /* The three kinds' callbacks differ only in the handle type. */
    kv->copy.comm = (MPI_Comm_copy_attr_function *)copy;
    kv->del.comm = (MPI_Comm_delete_attr_function *)del;
    *keyval = kv->id;
    return MPI_SUCCESS;
}

static int keyval_free_call(const char *where, enum attr_kind kind, int *keyval)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (keyval == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "keyval must not be NULL");
    struct keyval *kv = keyval_find(*keyval, true);
    if (kv == NULL || kv->kind != kind || kv->predefined)
        return error_report(MPI_COMM_WORLD, MPI_ERR_KEYVAL, where, "invalid keyval %d", *keyval);
    /* A keyval freed again while attributes keep it alive: nothing more to do. */
    if (!kv->freed) {
        kv->freed = true;
        keyval_release(kv);
    }
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

#define KEYVAL_CALLS(Kind, KIND)                                                                   \
    int PMPI_##Kind##_create_keyval(MPI_##Kind##_copy_attr_function *copy_fn,                              \
                                    MPI_##Kind##_delete_attr_function *delete_fn, int *keyval,            \
                                    void *extra_state)                                                     \
    {                                                                                                      \
        return keyval_create_call("MPI_" #Kind "_create_keyval", KIND, (void (*)(void))copy_fn,           \
                                  (void (*)(void))delete_fn, keyval, extra_state);                         \
    }                                                                                                      \
    STRAND_MPI_ALIAS(MPI_##Kind##_create_keyval);                                                          \
    int PMPI_##Kind##_free_keyval(int *keyval)                                                             \
    {                                                                                                      \
        return keyval_free_call("MPI_" #Kind "_free_keyval", KIND, keyval);                               \
    }                                                                                                      \
    STRAND_MPI_ALIAS(MPI_##Kind##_free_keyval);

KEYVAL_CALLS(Comm, ATTR_COMM)
KEYVAL_CALLS(Type, ATTR_TYPE)
KEYVAL_CALLS(Win, ATTR_WIN)

int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return keyval_create_call("MPI_Keyval_create", ATTR_COMM, (void (*)(void))copy_fn,
                              (void (*)(void))delete_fn, keyval, extra_state);
}
STRAND_MPI_ALIAS(MPI_Keyval_create);

int PMPI_Keyval_free(int *keyval)
{
    return keyval_free_call("MPI_Keyval_free", ATTR_COMM, keyval);
}
STRAND_MPI_ALIAS(MPI_Keyval_free);

/* --- communicator attribute calls: one engine per operation */

int attr_apply(const struct attr_host *h, enum attr_op op, int keyval, void *value, int *flag)
{
    switch (op) {
    case ATTR_OP_SET: return attr_set(h, keyval, value);
    case ATTR_OP_GET: return attr_get(h, keyval, value, flag);
    case ATTR_OP_DELETE: return attr_delete(h, keyval);
    }
    return MPI_ERR_ARG;
}

static int attr_report(MPI_Comm comm, int rc, const char *where, int keyval)
{
    if (rc == MPI_SUCCESS)
        return rc;
    if (rc == MPI_ERR_KEYVAL)
        return error_report(comm, rc, where, "invalid keyval %d (or no such attribute)", keyval);
    return error_report(comm, rc, where, "an attribute callback failed with code %d", rc);
}

static int comm_attr_call(const char *where, enum attr_op op, MPI_Comm comm, int keyval, void *value, int *flag)
{
    int rc;
    struct strand_comm *c = comm_checked(comm, where, &rc);
    if (c == NULL)
        return rc;
    if (op == ATTR_OP_GET && (value == NULL || flag == NULL))
        return error_report(comm, MPI_ERR_ARG, where, "attribute_val and flag must not be NULL");
    struct attr_host h = { ATTR_COMM, c->public_handle, &c->attrs };
    return attr_report(comm, attr_apply(&h, op, keyval, value, flag), where, keyval);
}

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
    return comm_attr_call("MPI_Comm_set_attr", ATTR_OP_SET, comm, keyval, attribute_val, NULL);
}
STRAND_MPI_ALIAS(MPI_Comm_set_attr);

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return comm_attr_call("MPI_Comm_get_attr", ATTR_OP_GET, comm, keyval, attribute_val, flag);
}
STRAND_MPI_ALIAS(MPI_Comm_get_attr);

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    return comm_attr_call("MPI_Comm_delete_attr", ATTR_OP_DELETE, comm, keyval, NULL, NULL);
}
STRAND_MPI_ALIAS(MPI_Comm_delete_attr);

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return comm_attr_call("MPI_Attr_put", ATTR_OP_SET, comm, keyval, attribute_val, NULL);
}
STRAND_MPI_ALIAS(MPI_Attr_put);

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return comm_attr_call("MPI_Attr_get", ATTR_OP_GET, comm, keyval, attribute_val, flag);
}
STRAND_MPI_ALIAS(MPI_Attr_get);

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return comm_attr_call("MPI_Attr_delete", ATTR_OP_DELETE, comm, keyval, NULL, NULL);
}
STRAND_MPI_ALIAS(MPI_Attr_delete);

/* --- datatype attribute calls */

static int type_attr_call(const char *where, enum attr_op op, MPI_Datatype type, int keyval, void *value,
                          int *flag)
{
    int rc = dt_check_arg(where, type);
    if (rc != MPI_SUCCESS)
        return rc;
    if (op == ATTR_OP_GET && (value == NULL || flag == NULL))
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "attribute_val and flag must not be NULL");
    struct attr_host h = { ATTR_TYPE, type, &type->attrs };
    return attr_report(MPI_COMM_WORLD, attr_apply(&h, op, keyval, value, flag), where, keyval);
}

int PMPI_Type_set_attr(MPI_Datatype type, int keyval, void *attribute_val)
{
    return type_attr_call("MPI_Type_set_attr", ATTR_OP_SET, type, keyval, attribute_val, NULL);
}
STRAND_MPI_ALIAS(MPI_Type_set_attr);

int PMPI_Type_get_attr(MPI_Datatype type, int keyval, void *attribute_val, int *flag)
{
    return type_attr_call("MPI_Type_get_attr", ATTR_OP_GET, type, keyval, attribute_val, flag);
}
STRAND_MPI_ALIAS(MPI_Type_get_attr);

int PMPI_Type_delete_attr(MPI_Datatype type, int keyval)
{
    return type_attr_call("MPI_Type_delete_attr", ATTR_OP_DELETE, type, keyval, NULL, NULL);
}
STRAND_MPI_ALIAS(MPI_Type_delete_attr);

/* --- predefined callbacks: no copy, copy the value, delete nothing */

#define NULL_COPY_FN(name, Handle)                                                                        \
    int P##name(Handle old, int keyval, void *extra_state, void *in, void *out, int *flag)               \
    {                                                                                                     \
        *flag = 0;                                                                                        \
        return MPI_SUCCESS;                                                                               \
    }                                                                                                     \
    STRAND_MPI_ALIAS(name);
#define DUP_FN(name, Handle)                                                                              \
    int P##name(Handle old, int keyval, void *extra_state, void *in, void *out, int *flag)               \
    {                                                                                                     \
        *(void **)out = in;                                                                               \
        *flag = 1;                                                                                        \
        return MPI_SUCCESS;                                                                               \
    }                                                                                                     \
    STRAND_MPI_ALIAS(name);
#define NULL_DELETE_FN(name, Handle)                                                                      \
    int P##name(Handle object, int keyval, void *value, void *extra_state)                               \
    {                                                                                                     \
        return MPI_SUCCESS;                                                                               \
    }                                                                                                     \
    STRAND_MPI_ALIAS(name);

NULL_COPY_FN(MPI_NULL_COPY_FN, MPI_Comm)
DUP_FN(MPI_DUP_FN, MPI_Comm)
NULL_DELETE_FN(MPI_NULL_DELETE_FN, MPI_Comm)
NULL_COPY_FN(MPI_COMM_NULL_COPY_FN, MPI_Comm)
DUP_FN(MPI_COMM_DUP_FN, MPI_Comm)
NULL_DELETE_FN(MPI_COMM_NULL_DELETE_FN, MPI_Comm)
NULL_COPY_FN(MPI_TYPE_NULL_COPY_FN, MPI_Datatype)
DUP_FN(MPI_TYPE_DUP_FN, MPI_Datatype)
NULL_DELETE_FN(MPI_TYPE_NULL_DELETE_FN, MPI_Datatype)
NULL_COPY_FN(MPI_WIN_NULL_COPY_FN, MPI_Win)
DUP_FN(MPI_WIN_DUP_FN, MPI_Win)
NULL_DELETE_FN(MPI_WIN_NULL_DELETE_FN, MPI_Win)
