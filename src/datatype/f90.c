/* MPI_Type_create_f90_integer/real/complex and MPI_Type_match_size. An f90
 * type is a predefined type (never freed) that behaves exactly like the
 * fixed-size type it selects, but reports its own combiner and (p, r). The
 * same arguments always return the same handle. */
#include <float.h>
#include <pthread.h>
#include <stdlib.h>

#include "../core/core.h"
#include "datatype.h"

struct f90_entry {
    struct strand_datatype type;
    int ints[2];
    struct f90_entry *next;
};

static pthread_mutex_t f90_lock = PTHREAD_MUTEX_INITIALIZER;
static struct f90_entry *f90_types;

static MPI_Datatype f90_lookup_or_create(int combiner, int nints, int p, int r, MPI_Datatype base)
{
    pthread_mutex_lock(&f90_lock);
    struct f90_entry *e;
    for (e = f90_types; e != NULL; e = e->next)
        if (e->type.combiner == combiner && e->ints[0] == p && (nints == 1 || e->ints[1] == r))
            break;
    if (e == NULL && (e = calloc(1, sizeof *e)) != NULL) {
        e->type = *base;
        e->type.layout.ops = e->type.single_op;
        e->type.uniform = base;
        e->type.combiner = combiner;
        e->ints[0] = p;
        e->ints[1] = r;
        e->type.nints = nints;
        e->type.ints = e->ints;
        e->next = f90_types;
        f90_types = e;
    }
    pthread_mutex_unlock(&f90_lock);
    return e != NULL ? &e->type : MPI_DATATYPE_NULL;
}

static int f90_result(const char *where, MPI_Datatype t, MPI_Datatype *newtype)
{
    if (t == MPI_DATATYPE_NULL)
        return dt_error(MPI_ERR_NO_MEM, where, "out of memory");
    *newtype = t;
    return MPI_SUCCESS;
}

static int f90_check(const char *where, MPI_Datatype *newtype)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (newtype == NULL)
        return dt_error(MPI_ERR_ARG, where, "newtype is NULL");
    return MPI_SUCCESS;
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    const char *where = "MPI_Type_create_f90_integer";
    int rc = f90_check(where, newtype);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The smallest integer holding every value of r decimal digits. */
    MPI_Datatype base = r <= 2 ? MPI_INTEGER1 : r <= 4 ? MPI_INTEGER2 : r <= 9 ? MPI_INTEGER4
                      : r <= 18 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    if (r == MPI_UNDEFINED || base == MPI_DATATYPE_NULL)
        return dt_error(MPI_ERR_ARG, where, "no integer type has a decimal range of %d digits", r);
    return f90_result(where, f90_lookup_or_create(MPI_COMBINER_F90_INTEGER, 1, r, 0, base), newtype);
}
STRAND_MPI_ALIAS(MPI_Type_create_f90_integer);

/* 0, 1, 2 for single, double, long double precision; -1 when none fits.
 * MPI_UNDEFINED for p or r means no requirement. */
static int real_kind(int p, int r)
{
    static const int digits[3] = { FLT_DIG, DBL_DIG, LDBL_DIG };
    static const int range[3] = { FLT_MAX_10_EXP, DBL_MAX_10_EXP, LDBL_MAX_10_EXP };
    for (int k = 0; k < 3; k++)
        if ((p == MPI_UNDEFINED || p <= digits[k]) && (r == MPI_UNDEFINED || r <= range[k]))
            return k;
    return -1;
}

static int f90_float(const char *where, int combiner, int p, int r, const MPI_Datatype kinds[3],
                     MPI_Datatype *newtype)
{
    int rc = f90_check(where, newtype);
    if (rc != MPI_SUCCESS)
        return rc;
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return dt_error(MPI_ERR_ARG, where, "p and r cannot both be MPI_UNDEFINED");
    int k = real_kind(p, r);
    if (k < 0)
        return dt_error(MPI_ERR_ARG, where, "no floating-point type has precision %d and range %d", p, r);
    return f90_result(where, f90_lookup_or_create(combiner, 2, p, r, kinds[k]), newtype);
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    const MPI_Datatype kinds[3] = { MPI_REAL4, MPI_REAL8, MPI_REAL16 };
    return f90_float("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r, kinds, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_create_f90_real);

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    const MPI_Datatype kinds[3] = { MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32 };
    return f90_float("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p, r, kinds, newtype);
}
STRAND_MPI_ALIAS(MPI_Type_create_f90_complex);

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    const char *where = "MPI_Type_match_size";
    int rc = f90_check(where, datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    static const MPI_Datatype integers[] = { MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8 };
    static const MPI_Datatype reals[] = { MPI_REAL4, MPI_REAL8, MPI_REAL16 };
    static const MPI_Datatype complexes[] = { MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32 };
    const MPI_Datatype *list;
    size_t n;
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER: list = integers; n = 4; break;
    case MPI_TYPECLASS_REAL: list = reals; n = 3; break;
    case MPI_TYPECLASS_COMPLEX: list = complexes; n = 3; break;
    default:
        return dt_error(MPI_ERR_ARG, where, "unknown type class %d", typeclass);
    }
    for (size_t i = 0; i < n; i++)
        if (size >= 0 && list[i]->size == (size_t)size) {
            *datatype = list[i];
            return MPI_SUCCESS;
        }
    return dt_error(MPI_ERR_ARG, where, "no type of class %d has %d bytes", typeclass, size);
}
STRAND_MPI_ALIAS(MPI_Type_match_size);
