/* Data representations (MPI-2.2 §13.5): "native" and "internal" (the
 * memory form), "external32" (through the datatype engine's external32
 * code) and representations the program registers with conversion
 * functions.
 *
 * A representation may change the size of some types (external32:
 * MPI_LONG and MPI_UNSIGNED_LONG 4 bytes, MPI_WCHAR 2; a registered one:
 * whatever its extent function says for each predefined type): data is
 * converted to and from a stream of file-sized elements, and an etype or
 * filetype is laid out in
 * the file as §13.5.2 says: the displacements of a PORTABLE type (built
 * from one predefined type by contiguous, vector, indexed, indexed_block,
 * dup, subarray, darray) are scaled to the file sizes, those of other
 * types (byte displacements: hvector, hindexed, struct, resized) are taken
 * as they are. A view type must then be made of one predefined type
 * without padding (not MPI_LONG_INT...), and a registered representation
 * needs both conversion functions (no conversion cannot change a size). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../datatype/datatype.h"
#include "../util/lock.h"
#include "io.h"

struct io_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    bool external32;
    MPI_Datarep_conversion_function *read_fn, *write_fn;
    MPI_Datarep_extent_function *extent_fn;
    void *extra_state;
    struct io_datarep *next;
};

static const struct io_datarep external32 = { .name = "external32", .external32 = true };

/* Registered representations live until the process ends (the standard
 * has no way to unregister one). */
static struct lite_lock registry_lock = LITE_LOCK_INIT;
static struct io_datarep *registry;

int PMPI_CONVERSION_FN_NULL(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position,
                            void *extra_state)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra_state;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_CONVERSION_FN_NULL);

static bool is_native(const char *name)
{
    return strcmp(name, "native") == 0 || strcmp(name, "internal") == 0;
}

static struct io_datarep *registered(const char *name)
{
    lite_lock(&registry_lock);
    struct io_datarep *r = registry;
    while (r != NULL && strcmp(r->name, name) != 0)
        r = r->next;
    lite_unlock(&registry_lock);
    return r;
}

int datarep_find(const char *name, const struct io_datarep **rep)
{
    *rep = NULL;
    if (is_native(name))
        return MPI_SUCCESS;
    if (strcmp(name, "external32") == 0) {
        *rep = &external32;
        return MPI_SUCCESS;
    }
    *rep = registered(name);
    return *rep != NULL ? MPI_SUCCESS : MPI_ERR_UNSUPPORTED_DATAREP;
}

/* Bytes of one `named` (a predefined type) in the file, or -1 when the
 * representation's extent function fails. */
static MPI_Aint named_file_size(const struct io_datarep *rep, MPI_Datatype named)
{
    if (rep->external32)
        return (MPI_Aint)dt_external32_size(named);
    MPI_Aint extent = (MPI_Aint)named->size;
    return rep->extent_fn(named, &extent, rep->extra_state) == MPI_SUCCESS && extent >= 0 ? extent : -1;
}

/* One element of a type in the file: its size there, whether that differs
 * from its size in memory, whether the extent function failed. */
struct file_size {
    const struct io_datarep *rep;
    size_t bytes;
    bool differs, failed;
};

static int add_named(MPI_Datatype named, char *addr, size_t n, void *arg)
{
    (void)addr;
    struct file_size *fs = arg;
    if (named->size == 0)
        return 0;
    MPI_Aint each = named_file_size(fs->rep, named);
    fs->failed |= each < 0;
    fs->differs |= each != (MPI_Aint)named->size;
    fs->bytes += (size_t)each * n;
    return fs->failed;
}

static struct file_size file_size_of(const struct io_datarep *rep, MPI_Datatype t)
{
    struct file_size fs = { rep, 0, false, false };
    if (rep == NULL) {
        fs.bytes = t->size;
        return fs;
    }
    /* The walk only computes addresses: any base will do. */
    dt_visit(t, (char *)((uintptr_t)1 << 46), 1, add_named, &fs);
    return fs;
}

static bool sizes_differ(const struct io_datarep *rep, MPI_Datatype t)
{
    struct file_size fs = file_size_of(rep, t);
    return fs.differs || fs.failed;
}

int datarep_check_type(const struct io_datarep *rep, MPI_Datatype t, const char **why)
{
    struct file_size fs = file_size_of(rep, t);
    if (fs.failed) {
        *why = "the data representation's extent function failed for this type";
        return MPI_ERR_CONVERSION;
    }
    if (fs.differs && !rep->external32 &&
        (rep->read_fn == NULL || rep->read_fn == PMPI_CONVERSION_FN_NULL ||
         rep->read_fn == MPI_CONVERSION_FN_NULL || rep->write_fn == NULL ||
         rep->write_fn == PMPI_CONVERSION_FN_NULL || rep->write_fn == MPI_CONVERSION_FN_NULL)) {
        *why = "the data representation changes the size of this type but has no conversion function";
        return MPI_ERR_UNSUPPORTED_DATAREP;
    }
    return MPI_SUCCESS;
}

size_t datarep_size(const struct io_datarep *rep, MPI_Datatype t)
{
    if (rep != NULL && rep->external32)
        return dt_external32_size(t);
    struct file_size fs = file_size_of(rep, t);
    return fs.failed ? t->size : fs.bytes;
}

static bool portable(MPI_Datatype t)
{
    switch (t->combiner) {
    case MPI_COMBINER_NAMED:
        return true;
    case MPI_COMBINER_CONTIGUOUS: case MPI_COMBINER_VECTOR: case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_INDEXED_BLOCK: case MPI_COMBINER_DUP: case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
        for (int i = 0; i < t->ntypes; i++)
            if (!portable(t->types[i]))
                return false;
        return true;
    default:
        return false;
    }
}

int datarep_layout(const struct io_datarep *rep, MPI_Datatype t, struct io_layout *out)
{
    *out = (struct io_layout){ .memory = 1, .file = 1, .scaled = false };
    if (!sizes_differ(rep, t))
        return MPI_SUCCESS;
    MPI_Datatype base = t->uniform;
    if (base == NULL || !base->contiguous || base->size == 0 || named_file_size(rep, base) <= 0)
        return MPI_ERR_UNSUPPORTED_DATAREP;
    out->memory = base->size;
    out->file = (size_t)named_file_size(rep, base);
    out->scaled = portable(t);
    return MPI_SUCCESS;
}

int datarep_convert(const struct io_datarep *rep, bool writing, void *user, int count, MPI_Datatype t, void *stream,
                    MPI_Offset position)
{
    const char *why;
    if (rep->external32)
        return dt_external32_convert(user, (size_t)count, t, stream, writing, &why);
    MPI_Datarep_conversion_function *fn = writing ? rep->write_fn : rep->read_fn;
    if (fn == NULL || fn == PMPI_CONVERSION_FN_NULL || fn == MPI_CONVERSION_FN_NULL) {
        if (writing)
            dt_pack(stream, user, (size_t)count, t);
        else
            dt_unpack(user, (size_t)count, t, stream, (size_t)count * t->size);
        return MPI_SUCCESS;
    }
    int rc = fn(user, t, count, stream, position, rep->extra_state);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_CONVERSION;
}

int datarep_type_extent(const struct io_datarep *rep, MPI_Datatype t, MPI_Aint *extent)
{
    *extent = dt_extent(t);
    if (rep == NULL)
        return MPI_SUCCESS;
    if (!t->predefined) {
        struct io_layout l;
        if (datarep_layout(rep, t, &l) == MPI_SUCCESS && l.scaled)
            *extent = *extent / (MPI_Aint)l.memory * (MPI_Aint)l.file;
        return MPI_SUCCESS;
    }
    MPI_Aint size = named_file_size(rep, t);
    if (size < 0)
        return MPI_ERR_CONVERSION;
    *extent = size;
    return MPI_SUCCESS;
}

int PMPI_Register_datarep(char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    const char *where = "MPI_Register_datarep";
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (datarep == NULL || datarep[0] == '\0' || strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return file_error(NULL, MPI_ERR_ARG, where, "invalid representation name");
    if (dtype_file_extent_fn == NULL)
        return file_error(NULL, MPI_ERR_ARG, where, "dtype_file_extent_fn must not be NULL");
    struct io_datarep *r = calloc(1, sizeof *r);
    if (r == NULL)
        return file_error(NULL, MPI_ERR_NO_MEM, where, "out of memory");
    strcpy(r->name, datarep);
    r->read_fn = read_conversion_fn;
    r->write_fn = write_conversion_fn;
    r->extent_fn = dtype_file_extent_fn;
    r->extra_state = extra_state;
    bool duplicate = is_native(datarep) || strcmp(datarep, "external32") == 0;
    lite_lock(&registry_lock);
    for (struct io_datarep *o = registry; o != NULL && !duplicate; o = o->next)
        duplicate = strcmp(o->name, datarep) == 0;
    if (!duplicate) {
        r->next = registry;
        registry = r;
    }
    lite_unlock(&registry_lock);
    if (duplicate) {
        free(r);
        return file_error(NULL, MPI_ERR_DUP_DATAREP, where, "\"%s\" is already defined", datarep);
    }
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Register_datarep);
