/* Views (MPI-2.2 §13.3): the filetype flattened once into runs of one
 * tile; stream positions mapped to file extents; file pointers. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../comm/info.h"
#include "../datatype/datatype.h"
#include "io.h"

/* --- extents */

void extents_free(struct io_extents *e)
{
    free(e->v);
    *e = (struct io_extents){ 0 };
}

static int extents_add(struct io_extents *e, MPI_Offset off, size_t len)
{
    if (len == 0)
        return MPI_SUCCESS;
    if (e->n > 0 && e->v[e->n - 1].off + (MPI_Offset)e->v[e->n - 1].len == off) {
        e->v[e->n - 1].len += len;
        return MPI_SUCCESS;
    }
    void *grown = io_grow(e->v, e->n, &e->cap, sizeof *e->v);
    if (grown == NULL)
        return MPI_ERR_NO_MEM;
    e->v = grown;
    e->v[e->n++] = (struct io_extent){ off, len };
    return MPI_SUCCESS;
}

/* --- flattening */

struct flatten {
    uintptr_t base;
    struct io_layout layout;        /* how the type lies in the file (datarep_layout) */
    struct io_run *runs;
    size_t n, cap;
    size_t bytes;
    bool decreasing, overlapping, negative;
};

static int flatten_add(struct flatten *fl, MPI_Offset off, size_t len)
{
    if (len == 0)
        return 0;
    fl->negative |= off < 0;
    if (fl->n > 0) {
        struct io_run *last = &fl->runs[fl->n - 1];
        if (off < last->off)
            fl->decreasing = true;
        else if (off < last->off + (MPI_Offset)last->len)
            fl->overlapping = true;
        if (last->off + (MPI_Offset)last->len == off) {
            last->len += len;
            fl->bytes += len;
            return 0;
        }
    }
    void *grown = io_grow(fl->runs, fl->n, &fl->cap, sizeof *fl->runs);
    if (grown == NULL)
        return 1;
    fl->runs = grown;
    fl->runs[fl->n++] = (struct io_run){ off, len, fl->bytes };
    fl->bytes += len;
    return 0;
}

/* dt_visit callback: `n` consecutive elements of one predefined type. */
static int flatten_visit(MPI_Datatype named, char *addr, size_t n, void *arg)
{
    struct flatten *fl = arg;
    MPI_Offset off = (MPI_Offset)((uintptr_t)addr - fl->base);
    if (named->size == 0)
        return 0;
    const struct io_layout *l = &fl->layout;
    if (l->file != l->memory) {
        /* One padding-free predefined type whose size changes in the file. */
        MPI_Offset at = l->scaled ? off / (MPI_Offset)l->memory * (MPI_Offset)l->file : off;
        return flatten_add(fl, at, n * l->file);
    }
    if (named->contiguous)
        return flatten_add(fl, off + named->lb, n * named->size);
    /* Pair types with padding: every block of every element. */
    MPI_Aint extent = dt_extent(named);
    for (size_t e = 0; e < n; e++)
        for (uint32_t i = 0; i < named->layout.ntop; i++) {
            const struct dt_op *op = &named->layout.ops[i];
            for (size_t k = 0; k < op->count; k++)
                if (flatten_add(fl, off + (MPI_Offset)e * extent + op->disp + (MPI_Aint)k * op->stride, op->len))
                    return 1;
        }
    return 0;
}

/* Runs of one element of `t`, in typemap order. MPI_ERR_IO when the
 * typemap is not a valid etype or filetype (MPI-2.2 §13.3: displacements
 * non-negative and monotonically non-decreasing; no overlaps in a file
 * opened for writing). */
static int type_flatten(MPI_Datatype t, const struct io_datarep *rep, bool writable, struct flatten *fl)
{
    *fl = (struct flatten){ .base = (uintptr_t)1 << 46 };
    int rc = datarep_layout(rep, t, &fl->layout);
    if (rc != MPI_SUCCESS)
        return rc;
    if (dt_visit(t, (char *)fl->base, 1, flatten_visit, fl) != 0) {
        free(fl->runs);
        return MPI_ERR_NO_MEM;
    }
    if (fl->negative || fl->decreasing || (writable && fl->overlapping)) {
        free(fl->runs);
        return MPI_ERR_IO;
    }
    return MPI_SUCCESS;
}

static int view_flatten(struct io_view *v, bool writable)
{
    struct flatten fl;
    int rc = type_flatten(v->etype, v->rep, writable, &fl);
    if (rc != MPI_SUCCESS)
        return rc;
    free(fl.runs);
    MPI_Datatype t = v->filetype;
    struct io_layout l;
    if ((rc = datarep_layout(v->rep, t, &l)) != MPI_SUCCESS)
        return rc;
    /* external32: a portable filetype's extent scales with its elements. */
    v->tile_extent = l.scaled ? dt_extent(t) / (MPI_Aint)l.memory * (MPI_Aint)l.file : dt_extent(t);
    if (t->contiguous && t->lb == 0 && (l.file == l.memory || l.scaled)) {
        size_t bytes = t->size / l.memory * l.file;
        v->runs = malloc(sizeof *v->runs);
        if (v->runs == NULL)
            return MPI_ERR_NO_MEM;
        v->runs[0] = (struct io_run){ 0, bytes, 0 };
        v->nruns = bytes > 0;
        v->tile_bytes = bytes;
        return MPI_SUCCESS;
    }
    if ((rc = type_flatten(t, v->rep, writable, &fl)) != MPI_SUCCESS)
        return rc;
    v->runs = fl.runs;
    v->nruns = fl.n;
    v->tile_bytes = fl.bytes;
    return MPI_SUCCESS;
}

void view_set_default(struct io_view *v)
{
    /* No runs: the identity view (byte k of the stream is byte k of the file). */
    *v = (struct io_view){ .disp = 0, .etype = MPI_BYTE, .filetype = MPI_BYTE, .esize = 1, .runs = NULL,
                           .nruns = 1, .tile_bytes = 1, .tile_extent = 1 };
    strcpy(v->datarep, "native");
}

void view_clear(struct io_view *v)
{
    dt_release(v->etype);
    dt_release(v->filetype);
    free(v->runs);
    v->runs = NULL;
}

/* The default view (bytes from 0) has no run array: the stream is the file. */
static bool view_is_identity(const struct io_view *v)
{
    return v->runs == NULL || (v->disp == 0 && v->nruns == 1 && v->runs[0].off == 0 &&
                               (MPI_Aint)v->tile_bytes == v->tile_extent);
}

/* The run holding tile data byte `r` (binary search on `before`). */
static size_t run_at(const struct io_view *v, size_t r)
{
    size_t lo = 0, hi = v->nruns;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (v->runs[mid].before <= r)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

MPI_Offset view_byte_offset(const struct io_view *v, MPI_Offset pos)
{
    if (view_is_identity(v))
        return v->disp + pos;
    if (v->tile_bytes == 0)
        return v->disp;
    MPI_Offset tile = pos / (MPI_Offset)v->tile_bytes;
    size_t r = (size_t)(pos % (MPI_Offset)v->tile_bytes);
    const struct io_run *run = &v->runs[run_at(v, r)];
    return v->disp + tile * v->tile_extent + run->off + (MPI_Offset)(r - run->before);
}

int view_extents(const struct io_view *v, MPI_Offset pos, size_t bytes, struct io_extents *out)
{
    if (bytes == 0)
        return MPI_SUCCESS;
    if (view_is_identity(v))
        return extents_add(out, v->disp + pos, bytes);
    if (v->tile_bytes == 0)
        return MPI_ERR_ARG;
    MPI_Offset tile = pos / (MPI_Offset)v->tile_bytes;
    size_t r = (size_t)(pos % (MPI_Offset)v->tile_bytes);
    size_t i = run_at(v, r);
    while (bytes > 0) {
        const struct io_run *run = &v->runs[i];
        size_t skip = r - run->before;
        size_t len = run->len - skip < bytes ? run->len - skip : bytes;
        int rc = extents_add(out, v->disp + tile * v->tile_extent + run->off + (MPI_Offset)skip, len);
        if (rc != MPI_SUCCESS)
            return rc;
        bytes -= len;
        if (++i == v->nruns) {
            i = 0;
            tile++;
        }
        r = v->runs[i].before;
    }
    return MPI_SUCCESS;
}

/* --- MPI_File_set_view and friends */

static int view_arguments(struct strand_file *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                          const char *datarep, MPI_Info info, const struct io_datarep **rep, const char **why)
{
    const char *type_why;
    if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT) {
        *why = "negative displacement";
        return MPI_ERR_ARG;
    }
    if (disp == MPI_DISPLACEMENT_CURRENT && !(f->core->amode & MPI_MODE_SEQUENTIAL)) {
        *why = "MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL";
        return MPI_ERR_ARG;
    }
    if (dt_check_usable(etype, &type_why) != MPI_SUCCESS || dt_check_usable(filetype, &type_why) != MPI_SUCCESS) {
        *why = "etype and filetype must be committed datatypes";
        return MPI_ERR_TYPE;
    }
    if (etype->size == 0 || filetype->size % etype->size != 0) {
        *why = "the filetype is not built from the etype";
        return MPI_ERR_TYPE;
    }
    if (datarep == NULL) {
        *why = "datarep is NULL";
        return MPI_ERR_ARG;
    }
    if (info != MPI_INFO_NULL && info_lookup(info) == NULL) {
        *why = "invalid info object";
        return MPI_ERR_INFO;
    }
    int rc = datarep_find(datarep, rep);
    if (rc != MPI_SUCCESS) {
        *why = "unknown data representation";
        return rc;
    }
    struct io_layout l;
    rc = datarep_layout(*rep, etype, &l);
    if (rc == MPI_SUCCESS)
        rc = datarep_layout(*rep, filetype, &l);
    if (rc != MPI_SUCCESS)
        *why = "the data representation changes the size of these types, which are not made of one "
               "padding-free predefined type (or the representation is a user one): not supported";
    return rc;
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, char *datarep,
                       MPI_Info info)
{
    const char *where = "MPI_File_set_view";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    if (f->split.active)
        return file_error(f, MPI_ERR_OTHER, where, "a split collective is pending");
    const char *why = "";
    const struct io_datarep *rep = NULL;
    int error = view_arguments(f, disp, etype, filetype, datarep, info, &rep, &why);
    struct io_view v = { 0 };
    if (error == MPI_SUCCESS) {
        MPI_Offset shared = 0;
        if (disp == MPI_DISPLACEMENT_CURRENT && (error = shared_fp_access(f, 0, false, &shared)) != MPI_SUCCESS)
            why = "cannot read the shared file pointer";
        if (disp == MPI_DISPLACEMENT_CURRENT)
            disp = view_byte_offset(&f->view, shared * (MPI_Offset)f->view.esize);
        v = (struct io_view){ .disp = disp, .etype = etype, .filetype = filetype, .rep = rep,
                              .esize = datarep_size(rep, etype) };
        snprintf(v.datarep, sizeof v.datarep, "%s", datarep);
        error = view_flatten(&v, !(f->core->amode & MPI_MODE_RDONLY));
        if (error == MPI_ERR_IO)
            why = "the etype or filetype has negative, decreasing or overlapping displacements";
        else if (error != MPI_SUCCESS)
            why = "out of memory";
    }
    /* Every member is past its earlier shared-pointer accesses. */
    int agreed = io_agree_error(f, error);
    if (agreed != MPI_SUCCESS) {
        free(v.runs);
        if (error != MPI_SUCCESS)
            return file_error(f, error, where, "%s", why);
        return file_error(f, agreed, where, "another member passed an invalid view");
    }
    dt_retain(etype);
    dt_retain(filetype);
    view_clear(&f->view);
    f->view = v;
    f->fp = 0;
    MPI_Offset zero = 0;
    int error_fp = f->rank == 0 ? shared_fp_access(f, 0, true, &zero) : MPI_SUCCESS;
    if (f->rank == f->core->leader)
        hints_apply(&f->core->hints, info, f->core->spans ? f->core->nnodes : f->core->size);
    error_fp = io_agree_error(f, error_fp);
    if (error_fp != MPI_SUCCESS)
        return file_error(f, error_fp, where, "cannot reset the shared file pointer");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_set_view);

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep)
{
    const char *where = "MPI_File_get_view";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    if (disp == NULL || etype == NULL || filetype == NULL || datarep == NULL)
        return file_error(f, MPI_ERR_ARG, where, "output arguments must not be NULL");
    *disp = f->view.disp;
    /* Derived types come back as new handles the program frees. */
    dt_retain(f->view.etype);
    dt_retain(f->view.filetype);
    *etype = f->view.etype;
    *filetype = f->view.filetype;
    strcpy(datarep, f->view.datarep);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_view);

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    const char *where = "MPI_File_get_type_extent";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    const char *why;
    if (dt_check_usable(datatype, &why) != MPI_SUCCESS && !dt_valid(datatype))
        return file_error(f, MPI_ERR_TYPE, where, "invalid datatype");
    if (extent == NULL)
        return file_error(f, MPI_ERR_ARG, where, "extent is NULL");
    rc = datarep_type_extent(f->view.rep, datatype, extent);
    if (rc != MPI_SUCCESS)
        return file_error(f, rc, where, "the data representation gives no extent for this type");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_type_extent);

/* --- file pointers */

static int pointer_allowed(struct strand_file *f, const char *where)
{
    if (f->core->amode & MPI_MODE_SEQUENTIAL)
        return file_error(f, MPI_ERR_UNSUPPORTED_OPERATION, where,
                          "individual file pointers are not allowed with MPI_MODE_SEQUENTIAL");
    return MPI_SUCCESS;
}

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    const char *where = "MPI_File_get_byte_offset";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    if (offset < 0)
        return file_error(f, MPI_ERR_ARG, where, "negative offset %lld", offset);
    if (disp == NULL)
        return file_error(f, MPI_ERR_ARG, where, "disp is NULL");
    *disp = view_byte_offset(&f->view, offset * (MPI_Offset)f->view.esize);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_byte_offset);

/* The etypes in the view up to the end of the file (for MPI_SEEK_END). */
static MPI_Offset view_etypes_to_end(const struct io_view *v, MPI_Offset file_size)
{
    MPI_Offset bytes = file_size - v->disp;
    if (bytes <= 0)
        return 0;
    if (view_is_identity(v))
        return bytes / (MPI_Offset)v->esize;
    if (v->tile_bytes == 0)
        return 0;
    /* Whole tiles, then the tile data before the end within the last one. */
    MPI_Offset tiles = v->tile_extent > 0 ? bytes / v->tile_extent : 0;
    MPI_Offset rest = bytes - tiles * v->tile_extent, data = tiles * (MPI_Offset)v->tile_bytes;
    for (size_t i = 0; i < v->nruns && v->runs[i].off < rest; i++) {
        MPI_Offset end = v->runs[i].off + (MPI_Offset)v->runs[i].len;
        data += (end < rest ? end : rest) - v->runs[i].off;
    }
    return (data + (MPI_Offset)v->esize - 1) / (MPI_Offset)v->esize;
}

static int seek_target(struct strand_file *f, const char *where, MPI_Offset current, MPI_Offset offset, int whence,
                       MPI_Offset *target)
{
    MPI_Offset base;
    switch (whence) {
    case MPI_SEEK_SET: base = 0; break;
    case MPI_SEEK_CUR: base = current; break;
    case MPI_SEEK_END: {
        struct stat st;
        if (fstat(f->core->fd, &st) != 0)
            return file_error(f, io_errno_class(errno), where, "%s", strerror(errno));
        base = view_etypes_to_end(&f->view, st.st_size);
        break;
    }
    default:
        return file_error(f, MPI_ERR_ARG, where, "invalid whence %d", whence);
    }
    if (base + offset < 0)
        return file_error(f, MPI_ERR_ARG, where, "the position would be negative");
    *target = base + offset;
    return MPI_SUCCESS;
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *where = "MPI_File_seek";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    if ((rc = pointer_allowed(f, where)) != MPI_SUCCESS)
        return rc;
    return seek_target(f, where, f->fp, offset, whence, &f->fp);
}
STRAND_MPI_ALIAS(MPI_File_seek);

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    const char *where = "MPI_File_get_position";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    if ((rc = pointer_allowed(f, where)) != MPI_SUCCESS)
        return rc;
    if (offset == NULL)
        return file_error(f, MPI_ERR_ARG, where, "offset is NULL");
    *offset = f->fp;
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_position);

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *where = "MPI_File_seek_shared";
    int rc;
    struct strand_file *f = file_checked(fh, where, &rc);
    if (f == NULL)
        return rc;
    MPI_Offset target = 0, current = 0;
    int error = shared_fp_access(f, 0, false, &current);
    if (error != MPI_SUCCESS)
        error = file_error(f, error, where, "cannot read the shared file pointer");
    else
        error = seek_target(f, where, current, offset, whence, &target);
    int agreed = io_agree_error(f, error);
    if (agreed != MPI_SUCCESS)
        return error != MPI_SUCCESS ? error : file_error(f, agreed, where, "another member's seek failed");
    if (f->rank == 0)
        error = shared_fp_access(f, 0, true, &target);
    agreed = io_agree_error(f, error);
    if (agreed != MPI_SUCCESS)
        return file_error(f, agreed, where, "cannot move the shared file pointer");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_seek_shared);

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    const char *where = "MPI_File_get_position_shared";
    int rc;
    struct strand_file *f = file_query(fh, where, offset, &rc);
    if (f == NULL)
        return rc;
    rc = shared_fp_access(f, 0, false, offset);
    if (rc != MPI_SUCCESS)
        return file_error(f, rc, where, "cannot read the shared file pointer");
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_File_get_position_shared);
