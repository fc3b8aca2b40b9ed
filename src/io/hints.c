/* File hints (MPI-2.2 §13.2.8): the ones that steer this implementation
 * (collective buffering, data sieving) are parsed; all others are kept
 * as given, and MPI_File_get_info reports every hint in use. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../comm/info.h"
#include "io.h"

enum { DEFAULT_CB_BUFFER = 16 << 20, DEFAULT_SIEVE_BUFFER = 4 << 20, MAX_DEFAULT_AGGREGATORS = 8 };

void hints_default(struct io_hints *h, int members)
{
    memset(h, 0, sizeof *h);
    h->cb_buffer_size = DEFAULT_CB_BUFFER;
    int aggregators = strand_node.ncores > 1 ? strand_node.ncores : 2;
    if (aggregators > MAX_DEFAULT_AGGREGATORS)
        aggregators = MAX_DEFAULT_AGGREGATORS;
    h->cb_nodes = members < aggregators ? members : aggregators;
    h->ind_rd_buffer_size = DEFAULT_SIEVE_BUFFER;
}

void hints_free(struct io_hints *h)
{
    for (int i = 0; i < h->nextra; i++) {
        free(h->extra_key[i]);
        free(h->extra_value[i]);
    }
    h->nextra = 0;
}

static bool parse_switch(const char *value, enum io_switch *out)
{
    if (strcmp(value, "enable") == 0)
        *out = IO_ENABLE;
    else if (strcmp(value, "disable") == 0)
        *out = IO_DISABLE;
    else if (strcmp(value, "automatic") == 0)
        *out = IO_AUTOMATIC;
    else
        return false;
    return true;
}

static const char *switch_name(enum io_switch s)
{
    return s == IO_ENABLE ? "enable" : s == IO_DISABLE ? "disable" : "automatic";
}

/* A positive number, or false (the hint is then ignored, as the standard allows). */
static bool parse_positive(const char *value, long *out)
{
    char *end;
    long v = strtol(value, &end, 10);
    if (end == value || *end != '\0' || v <= 0)
        return false;
    *out = v;
    return true;
}

static void keep_extra(struct io_hints *h, const char *key, const char *value)
{
    for (int i = 0; i < h->nextra; i++)
        if (strcmp(h->extra_key[i], key) == 0) {
            char *v = strdup(value);
            if (v != NULL) {
                free(h->extra_value[i]);
                h->extra_value[i] = v;
            }
            return;
        }
    if (h->nextra == IO_EXTRA_HINTS)
        return;
    char *k = strdup(key), *v = strdup(value);
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return;
    }
    h->extra_key[h->nextra] = k;
    h->extra_value[h->nextra++] = v;
}

static void apply_one(const char *key, const char *value, void *arg)
{
    struct io_hints *h = arg;
    long n;
    if (strcmp(key, "cb_buffer_size") == 0) {
        if (parse_positive(value, &n))
            h->cb_buffer_size = n;
    } else if (strcmp(key, "cb_nodes") == 0) {
        if (parse_positive(value, &n))
            h->cb_nodes = n > INT32_MAX ? INT32_MAX : (int)n;
    } else if (strcmp(key, "romio_cb_write") == 0) {
        parse_switch(value, &h->cb_write);
    } else if (strcmp(key, "romio_cb_read") == 0) {
        parse_switch(value, &h->cb_read);
    } else if (strcmp(key, "romio_ds_read") == 0) {
        parse_switch(value, &h->ds_read);
    } else if (strcmp(key, "ind_rd_buffer_size") == 0) {
        if (parse_positive(value, &n))
            h->ind_rd_buffer_size = n;
    } else if (strcmp(key, "striping_unit") == 0) {
        if (parse_positive(value, &n))
            h->striping_unit = n;
    } else if (strcmp(key, "striping_factor") == 0) {
        if (parse_positive(value, &n) && n <= INT32_MAX)
            h->striping_factor = (int)n;
    } else {
        keep_extra(h, key, value);
    }
}

void hints_apply(struct io_hints *h, MPI_Info info, int members)
{
    info_visit(info, apply_one, h);
    if (h->cb_nodes > members)
        h->cb_nodes = members;      /* reported as used */
}

int hints_to_info(const struct io_hints *h, MPI_Info *info)
{
    enum { FIXED = 8 };
    const char *keys[FIXED + IO_EXTRA_HINTS], *values[FIXED + IO_EXTRA_HINTS];
    char numbers[5][24];
    int n = 0;
    snprintf(numbers[0], sizeof numbers[0], "%ld", h->cb_buffer_size);
    snprintf(numbers[1], sizeof numbers[1], "%d", h->cb_nodes);
    snprintf(numbers[2], sizeof numbers[2], "%ld", h->ind_rd_buffer_size);
    keys[n] = "cb_buffer_size", values[n++] = numbers[0];
    keys[n] = "cb_nodes", values[n++] = numbers[1];
    keys[n] = "romio_cb_read", values[n++] = switch_name(h->cb_read);
    keys[n] = "romio_cb_write", values[n++] = switch_name(h->cb_write);
    keys[n] = "romio_ds_read", values[n++] = switch_name(h->ds_read);
    keys[n] = "ind_rd_buffer_size", values[n++] = numbers[2];
    if (h->striping_unit > 0) {
        snprintf(numbers[3], sizeof numbers[3], "%ld", h->striping_unit);
        keys[n] = "striping_unit", values[n++] = numbers[3];
    }
    if (h->striping_factor > 0) {
        snprintf(numbers[4], sizeof numbers[4], "%d", h->striping_factor);
        keys[n] = "striping_factor", values[n++] = numbers[4];
    }
    for (int i = 0; i < h->nextra; i++)
        keys[n] = h->extra_key[i], values[n++] = h->extra_value[i];
    *info = info_build(keys, values, n);
    return *info != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}
