/* Info objects (MPI-2.2 §9): ordered (key, value) string pairs owned by
 * the rank that created them. Keys keep their insertion order, which
 * MPI_Info_get_nthkey exposes. */
#include <stdlib.h>
#include <string.h>

#include "../util/quarantine.h"
#include "comm.h"
#include "info.h"

#define INFO_MAGIC 0x53494e46u      /* "SINF" */

struct info_entry {
    struct info_entry *next;
    char *value;
    char key[];
};

struct strand_info {
    uint32_t magic;
    int nkeys;
    struct info_entry *head, *tail;
};

struct strand_info *info_lookup(MPI_Info info)
{
    return info != MPI_INFO_NULL && info->magic == INFO_MAGIC ? info : NULL;
}

static struct strand_info *info_checked(MPI_Info info, const char *where, int *rc)
{
    *rc = error_check_initialized(where);
    if (*rc != MPI_SUCCESS)
        return NULL;
    struct strand_info *i = info_lookup(info);
    if (i == NULL)
        *rc = error_report(MPI_COMM_WORLD, MPI_ERR_INFO, where, "invalid info object");
    return i;
}

static int key_check(const char *key, const char *where)
{
    if (key == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, where, "key must not be NULL");
    size_t n = strnlen(key, MPI_MAX_INFO_KEY + 1);
    if (n == 0 || n > MPI_MAX_INFO_KEY)
        return error_report(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, where, "a key has 1 to %d characters",
                            MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

static struct info_entry *entry_find(const struct strand_info *info, const char *key, struct info_entry **prev)
{
    struct info_entry *before = NULL;
    for (struct info_entry *e = info->head; e != NULL; before = e, e = e->next)
        if (strcmp(e->key, key) == 0) {
            if (prev != NULL)
                *prev = before;
            return e;
        }
    return NULL;
}

/* Sets key to value, keeping an existing key's position. */
static int info_put(struct strand_info *info, const char *key, const char *value)
{
    char *copy = strdup(value);
    if (copy == NULL)
        return MPI_ERR_NO_MEM;
    struct info_entry *e = entry_find(info, key, NULL);
    if (e != NULL) {
        free(e->value);
        e->value = copy;
        return MPI_SUCCESS;
    }
    size_t klen = strlen(key);
    e = malloc(sizeof *e + klen + 1);
    if (e == NULL) {
        free(copy);
        return MPI_ERR_NO_MEM;
    }
    memcpy(e->key, key, klen + 1);
    e->value = copy;
    e->next = NULL;
    if (info->tail != NULL)
        info->tail->next = e;
    else
        info->head = e;
    info->tail = e;
    info->nkeys++;
    return MPI_SUCCESS;
}

static struct strand_info *info_new(void)
{
    struct strand_info *info = calloc(1, sizeof *info);
    if (info != NULL)
        info->magic = INFO_MAGIC;
    return info;
}

static void info_destroy(struct strand_info *info)
{
    for (struct info_entry *e = info->head, *next; e != NULL; e = next) {
        next = e->next;
        free(e->value);
        free(e);
    }
    handle_magic_clear(&info->magic);
    quarantine_free(info);
}

const char *info_value(MPI_Info info, const char *key)
{
    struct strand_info *i = info_lookup(info);
    struct info_entry *e = i != NULL ? entry_find(i, key, NULL) : NULL;
    return e != NULL ? e->value : NULL;
}

void info_visit(MPI_Info info, void (*fn)(const char *key, const char *value, void *arg), void *arg)
{
    struct strand_info *i = info_lookup(info);
    for (struct info_entry *e = i != NULL ? i->head : NULL; e != NULL; e = e->next)
        fn(e->key, e->value, arg);
}

MPI_Info info_build(const char *const *keys, const char *const *values, int n)
{
    struct strand_info *info = info_new();
    for (int i = 0; i < n && info != NULL; i++)
        if (info_put(info, keys[i], values[i]) != MPI_SUCCESS) {
            info_destroy(info);
            info = NULL;
        }
    return info;
}

int PMPI_Info_create(MPI_Info *info)
{
    int rc = error_check_initialized("MPI_Info_create");
    if (rc != MPI_SUCCESS)
        return rc;
    if (info == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_create", "info must not be NULL");
    *info = info_new();
    if (*info == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_create", "out of memory");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Info_create);

int PMPI_Info_set(MPI_Info info, char *key, char *value)
{
    int rc;
    struct strand_info *i = info_checked(info, "MPI_Info_set", &rc);
    if (i == NULL)
        return rc;
    if ((rc = key_check(key, "MPI_Info_set")) != MPI_SUCCESS)
        return rc;
    if (value == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, "MPI_Info_set", "value must not be NULL");
    size_t n = strnlen(value, MPI_MAX_INFO_VAL + 1);
    if (n == 0 || n > MPI_MAX_INFO_VAL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, "MPI_Info_set", "a value has 1 to %d characters",
                            MPI_MAX_INFO_VAL);
    if (info_put(i, key, value) != MPI_SUCCESS)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_set", "out of memory");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Info_set);

int PMPI_Info_delete(MPI_Info info, char *key)
{
    int rc;
    struct strand_info *i = info_checked(info, "MPI_Info_delete", &rc);
    if (i == NULL)
        return rc;
    if ((rc = key_check(key, "MPI_Info_delete")) != MPI_SUCCESS)
        return rc;
    struct info_entry *prev = NULL, *e = entry_find(i, key, &prev);
    if (e == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "no key \"%s\"", key);
    if (prev != NULL)
        prev->next = e->next;
    else
        i->head = e->next;
    if (i->tail == e)
        i->tail = prev;
    i->nkeys--;
    free(e->value);
    free(e);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Info_delete);

int PMPI_Info_get(MPI_Info info, char *key, int valuelen, char *value, int *flag)
{
    int rc;
    struct strand_info *i = info_checked(info, "MPI_Info_get", &rc);
    if (i == NULL)
        return rc;
    if ((rc = key_check(key, "MPI_Info_get")) != MPI_SUCCESS)
        return rc;
    if (valuelen < 0)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get", "negative valuelen %d", valuelen);
    if (value == NULL || flag == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get", "value and flag must not be NULL");
    struct info_entry *e = entry_find(i, key, NULL);
    *flag = e != NULL;
    if (e != NULL) {
        /* At most valuelen characters, then the terminator. */
        size_t n = strnlen(e->value, (size_t)valuelen);
        memcpy(value, e->value, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Info_get);

int PMPI_Info_get_valuelen(MPI_Info info, char *key, int *valuelen, int *flag)
{
    int rc;
    struct strand_info *i = info_checked(info, "MPI_Info_get_valuelen", &rc);
    if (i == NULL)
        return rc;
    if ((rc = key_check(key, "MPI_Info_get_valuelen")) != MPI_SUCCESS)
        return rc;
    if (valuelen == NULL || flag == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_valuelen",
                            "valuelen and flag must not be NULL");
    struct info_entry *e = entry_find(i, key, NULL);
    *flag = e != NULL;
    if (e != NULL)
        *valuelen = (int)strlen(e->value);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Info_get_valuelen);

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    int rc;
    struct strand_info *i = info_checked(info, "MPI_Info_get_nkeys", &rc);
    if (i == NULL)
        return rc;
    if (nkeys == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_nkeys", "nkeys must not be NULL");
    *nkeys = i->nkeys;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Info_get_nkeys);

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    int rc;
    struct strand_info *i = info_checked(info, "MPI_Info_get_nthkey", &rc);
    if (i == NULL)
        return rc;
    if (key == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_nthkey", "key must not be NULL");
    if (n < 0 || n >= i->nkeys)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_nthkey", "n = %d, but there are %d keys",
                            n, i->nkeys);
    struct info_entry *e = i->head;
    while (n-- > 0)
        e = e->next;
    strcpy(key, e->key);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Info_get_nthkey);

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    int rc;
    struct strand_info *i = info_checked(info, "MPI_Info_dup", &rc);
    if (i == NULL)
        return rc;
    if (newinfo == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_dup", "newinfo must not be NULL");
    struct strand_info *copy = info_new();
    for (struct info_entry *e = i->head; copy != NULL && e != NULL; e = e->next)
        if (info_put(copy, e->key, e->value) != MPI_SUCCESS) {
            info_destroy(copy);
            copy = NULL;
        }
    if (copy == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_dup", "out of memory");
    *newinfo = copy;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Info_dup);

int PMPI_Info_free(MPI_Info *info)
{
    int rc = error_check_initialized("MPI_Info_free");
    if (rc != MPI_SUCCESS)
        return rc;
    if (info == NULL || info_lookup(*info) == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_INFO, "MPI_Info_free", "invalid info object");
    info_destroy(*info);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Info_free);
