/* Handle conversion (MPI-2.2 §16.3.4): MPI_Fint values for handles, which
 * are pointers in C. One process-wide table maps index -> object and a
 * hash maps object -> index; an object gets its index the first time it is
 * converted. Predefined objects sit at fixed small indices (0 is every
 * null handle; MPI_COMM_WORLD is 1 and MPI_COMM_SELF 2, like their C
 * values), so every rank converts them alike. Conversions are rare and take
 * one lock. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../comm/comm.h"
#include "../util/lock.h"
#include "core.h"

static const void *const predefined_objects[] = {
    NULL, MPI_COMM_WORLD, MPI_COMM_SELF, MPI_GROUP_EMPTY, MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN,
    &strand_dt_char, &strand_dt_signed_char, &strand_dt_unsigned_char, &strand_dt_wchar,
    &strand_dt_short, &strand_dt_unsigned_short, &strand_dt_int, &strand_dt_unsigned,
    &strand_dt_long, &strand_dt_unsigned_long, &strand_dt_long_long_int,
    &strand_dt_unsigned_long_long, &strand_dt_float, &strand_dt_double, &strand_dt_long_double,
    &strand_dt_c_bool, &strand_dt_int8_t, &strand_dt_int16_t, &strand_dt_int32_t,
    &strand_dt_int64_t, &strand_dt_uint8_t, &strand_dt_uint16_t, &strand_dt_uint32_t,
    &strand_dt_uint64_t, &strand_dt_c_float_complex, &strand_dt_c_double_complex,
    &strand_dt_c_long_double_complex, &strand_dt_byte, &strand_dt_packed, &strand_dt_aint,
    &strand_dt_offset, &strand_dt_float_int, &strand_dt_double_int, &strand_dt_long_int,
    &strand_dt_short_int, &strand_dt_2int, &strand_dt_long_double_int, &strand_dt_lb, &strand_dt_ub,
    &strand_dt_integer, &strand_dt_real, &strand_dt_double_precision, &strand_dt_complex,
    &strand_dt_double_complex, &strand_dt_logical, &strand_dt_character, &strand_dt_2real,
    &strand_dt_2double_precision, &strand_dt_2integer, &strand_dt_2complex,
    &strand_dt_2double_complex, &strand_dt_integer1, &strand_dt_integer2, &strand_dt_integer4,
    &strand_dt_integer8, &strand_dt_real4, &strand_dt_real8, &strand_dt_real16, &strand_dt_complex8,
    &strand_dt_complex16, &strand_dt_complex32, &strand_dt_count,
    /* strand_dt_integer16 joins when src/datatype defines it */
};
enum { PREDEFINED_COUNT = sizeof predefined_objects / sizeof predefined_objects[0] };

static struct lite_lock table_lock = LITE_LOCK_INIT;
static const void **objects;        /* index -> object */
static int count, capacity;
static int *slots;                  /* hash of object -> index + 1 (0 = empty) */
static unsigned slot_mask;

static unsigned pointer_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return (unsigned)(x >> 32);
}

static void hash_insert(int index)
{
    unsigned h = pointer_hash(objects[index]) & slot_mask;
    while (slots[h] != 0)
        h = (h + 1) & slot_mask;
    slots[h] = index + 1;
}

/* Keeps the hash at most half full; false when out of memory. */
static bool table_grow(void)
{
    int cap = capacity ? 2 * capacity : 256;
    const void **grown = realloc(objects, (size_t)cap * sizeof *grown);
    int *fresh = calloc(2 * (size_t)cap, sizeof *fresh);
    if (grown == NULL || fresh == NULL) {
        if (grown != NULL)
            objects = grown;
        free(fresh);
        return false;
    }
    objects = grown;
    capacity = cap;
    free(slots);
    slots = fresh;
    slot_mask = 2 * (unsigned)cap - 1;
    for (int i = 1; i < count; i++)
        hash_insert(i);
    return true;
}

static bool table_ready(void)
{
    if (objects != NULL)
        return true;
    if (!table_grow())
        return false;
    for (int i = 0; i < PREDEFINED_COUNT; i++) {
        objects[count++] = predefined_objects[i];
        if (i > 0)
            hash_insert(i);
    }
    return true;
}

static int index_find(const void *object)
{
    unsigned h = pointer_hash(object) & slot_mask;
    while (slots[h] != 0) {
        if (objects[slots[h] - 1] == object)
            return slots[h] - 1;
        h = (h + 1) & slot_mask;
    }
    return -1;
}

static MPI_Fint handle_to_int(const void *object)
{
    if (object == NULL)
        return 0;
    lite_lock(&table_lock);
    int index = -1;
    if (table_ready()) {
        index = index_find(object);
        if (index < 0 && (count < capacity || table_grow())) {
            index = count++;
            objects[index] = object;
            hash_insert(index);
        }
    }
    lite_unlock(&table_lock);
    return index < 0 ? 0 : index;   /* out of memory: the null handle */
}

static void *int_to_handle(MPI_Fint value)
{
    void *object = NULL;
    lite_lock(&table_lock);
    if (table_ready() && value > 0 && value < count)
        object = (void *)objects[value];
    lite_unlock(&table_lock);
    return object;
}

/* A rank's own MPI_COMM_WORLD/SELF handle converts like the constant. */
static const void *comm_public(MPI_Comm comm)
{
    struct strand_comm *c = comm_lookup(comm);
    return c != NULL ? (const void *)c->public_handle : (const void *)comm;
}

#define CONVERSIONS(Kind, Type, to_key)                                     \
    MPI_Fint PMPI_##Kind##_c2f(Type handle) { return handle_to_int(to_key); } \
    STRAND_MPI_ALIAS(MPI_##Kind##_c2f);                                     \
    Type PMPI_##Kind##_f2c(MPI_Fint value) { return (Type)int_to_handle(value); } \
    STRAND_MPI_ALIAS(MPI_##Kind##_f2c);

CONVERSIONS(Comm, MPI_Comm, comm_public(handle))
CONVERSIONS(Type, MPI_Datatype, handle)
CONVERSIONS(Group, MPI_Group, handle)
CONVERSIONS(Request, MPI_Request, handle)
CONVERSIONS(File, MPI_File, handle)
CONVERSIONS(Win, MPI_Win, handle)
CONVERSIONS(Op, MPI_Op, handle)
CONVERSIONS(Info, MPI_Info, handle)
CONVERSIONS(Errhandler, MPI_Errhandler, handle)

/* A Fortran status is the C status viewed as MPI_Fint words. */
int PMPI_Status_c2f(MPI_Status *c_status, MPI_Fint *f_status)
{
    if (c_status == NULL || c_status == MPI_STATUS_IGNORE || f_status == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_c2f", "invalid status argument");
    memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Status_c2f);

int PMPI_Status_f2c(MPI_Fint *f_status, MPI_Status *c_status)
{
    if (f_status == NULL || f_status == MPI_F_STATUS_IGNORE || c_status == NULL || c_status == MPI_STATUS_IGNORE)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_f2c", "invalid status argument");
    memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Status_f2c);
