/* Attribute caching (MPI-2.2 §6.7) on communicators, datatypes and
 * windows. Keyvals are process-wide (shared by every rank of the node);
 * attribute values belong to the rank that set them. One engine serves the
 * three object kinds; the kind decides which callback signature applies.
 *
 * Other subsystems call:
 *   - datatype: attr_type_copy() from MPI_Type_dup, attr_type_delete_all()
 *     when the user frees a type (before the type goes away);
 *   - rma: attr_win_set/get/delete, attr_win_delete_all() from MPI_Win_free. */
#ifndef STRAND_COMM_ATTR_H
#define STRAND_COMM_ATTR_H

#include "mpi.h"

enum attr_kind { ATTR_COMM, ATTR_TYPE, ATTR_WIN };

struct attribute;

/* Where a list of attributes lives and which handle its callbacks get. */
struct attr_host {
    enum attr_kind kind;
    void *handle;                   /* MPI_Comm / MPI_Datatype / MPI_Win as the user holds it */
    struct attribute **list;
};

/* All return an MPI error class (MPI_ERR_KEYVAL for a keyval that is not of
 * this kind, a callback's own code when it fails); they report nothing. */
int attr_set(const struct attr_host *h, int keyval, void *value);
int attr_get(const struct attr_host *h, int keyval, void **value, int *flag);
int attr_delete(const struct attr_host *h, int keyval);
/* Deletes every attribute of the calling rank, newest first; stops at the
 * first failing delete callback and returns its code. */
int attr_delete_all(const struct attr_host *h);
/* Copies the calling rank's attributes through their copy callbacks; on
 * failure, `to` is emptied again and the callback's code returned. */
int attr_copy_all(const struct attr_host *from, const struct attr_host *to);

/* Frees the calling rank's attributes without calling back (node teardown). */
void attr_discard_all(const struct attr_host *h);

/* Predefined attributes (MPI_TAG_UB ...) on a rank's MPI_COMM_WORLD. */
int attr_set_predefined(const struct attr_host *h, int keyval, void *value);

int attr_type_copy(MPI_Datatype oldtype, MPI_Datatype newtype);
int attr_type_delete_all(MPI_Datatype type);

/* One entry for the set/get/delete calls of every object kind. */
enum attr_op { ATTR_OP_SET, ATTR_OP_GET, ATTR_OP_DELETE };
int attr_apply(const struct attr_host *h, enum attr_op op, int keyval, void *value, int *flag);

#endif
