/* Collective access when the file's group spans node processes: one
 * aggregator per node process (fewer with cb_nodes).
 *
 * Each node process's leader gathers its members' pieces through memory
 * (their published parts) and exchanges them with the aggregators of the
 * other node processes: for every aggregator's domain a PLAN (the pieces,
 * per member, in file order) and for writes their DATA; an aggregator
 * moves its domain as within one node process (aggregate_domain, remote
 * pieces pointing into the received buffers) and returns the read data.
 * Messages are library-internal (span_send/span_recv), so no pointer
 * crosses a process. */
#include <stdlib.h>
#include <string.h>

#include "../pt2pt/pt2pt.h"
#include "io.h"

/* What a node process sends an aggregator: the header holds, per local
 * member, its number of pieces then (offset, length) pairs. */
struct plan {
    int64_t *head;
    size_t nhead;
    char *data;                     /* writes: the pieces' bytes, in header order */
    size_t bytes;
    int64_t sizes[2];               /* nhead, bytes: sent first */
    struct strand_request req[3];
    int nreq;
};

/* Calls `fn` on each piece of `p` inside [d0, d1), in file order. */
typedef void (*piece_fn)(void *arg, MPI_Offset off, size_t len, char *data);
static size_t domain_pieces(const struct coll_part *p, MPI_Offset d0, MPI_Offset d1, piece_fn fn, void *arg)
{
    size_t count = 0;
    for (size_t i = coll_part_first_after(p, d0); i < p->n && p->ext[i].off < d1; i++) {
        MPI_Offset lo = p->ext[i].off > d0 ? p->ext[i].off : d0;
        MPI_Offset end = p->ext[i].off + (MPI_Offset)p->ext[i].len, hi = end < d1 ? end : d1;
        if (fn != NULL)
            fn(arg, lo, (size_t)(hi - lo), p->stream + p->stream_at[i] + (lo - p->ext[i].off));
        count++;
    }
    return count;
}

struct plan_fill {
    struct plan *plan;
    bool with_data;
    size_t at;                      /* data bytes so far */
};

static void plan_piece(void *arg, MPI_Offset off, size_t len, char *data)
{
    struct plan_fill *w = arg;
    struct plan *pl = w->plan;
    pl->head[pl->nhead++] = off;
    pl->head[pl->nhead++] = (int64_t)len;
    if (w->with_data)
        memcpy(pl->data + w->at, data, len);
    w->at += len;
}

static void piece_bytes(void *arg, MPI_Offset off, size_t len, char *data)
{
    (void)off;
    (void)data;
    *(size_t *)arg += len;
}

/* Pieces from the reply of a read, in the plan's order. */
static void piece_scatter(void *arg, MPI_Offset off, size_t len, char *data)
{
    (void)off;
    char **from = arg;
    memcpy(data, *from, len);
    *from += len;
}

static void *span_alloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL)
        strand_job_abort(1, "Strand MPI: out of memory in a collective MPI-IO access\n");
    return p;
}

static void plan_build(struct coll_part **local, int nlocal, MPI_Offset d0, MPI_Offset d1, bool with_data,
                       struct plan *pl)
{
    size_t pieces = 0, bytes = 0;
    for (int m = 0; m < nlocal; m++) {
        pieces += domain_pieces(local[m], d0, d1, NULL, NULL);
        domain_pieces(local[m], d0, d1, piece_bytes, &bytes);
    }
    *pl = (struct plan){ .head = span_alloc((nlocal + 2 * pieces) * sizeof *pl->head), .bytes = bytes };
    pl->data = with_data ? span_alloc(bytes) : NULL;
    struct plan_fill w = { pl, with_data, 0 };
    for (int m = 0; m < nlocal; m++) {
        size_t count_at = pl->nhead++;
        pl->head[count_at] = (int64_t)domain_pieces(local[m], d0, d1, plan_piece, &w);
    }
    pl->sizes[0] = (int64_t)pl->nhead;
    pl->sizes[1] = (int64_t)pl->bytes;
}

static void plan_send(struct strand_file *f, struct plan *pl, int dest, bool with_data)
{
    span_send(f, &pl->req[pl->nreq++], pl->sizes, 2, MPI_INT64_T, dest, SPAN_TAG_SIZES);
    span_send(f, &pl->req[pl->nreq++], pl->head, pl->nhead, MPI_INT64_T, dest, SPAN_TAG_PLAN);
    if (with_data && pl->bytes > 0)
        span_send(f, &pl->req[pl->nreq++], pl->data, pl->bytes, MPI_BYTE, dest, SPAN_TAG_DATA);
}

static void plan_wait(struct plan *pl)
{
    for (int i = 0; i < pl->nreq; i++)
        pt2pt_wait_internal(&pl->req[i]);
    pl->nreq = 0;
}

/* The parts of another node process's plan as the aggregator moves them:
 * one part per member there, streams in one buffer (its data, or room for
 * what a read returns). */
struct remote_plan {
    struct plan plan;
    int nparts;
    struct coll_part *parts;
    struct io_extent *ext;
    size_t *stream_at;
};

static void remote_plan_receive(struct strand_file *f, int source, bool writing, struct remote_plan *rp)
{
    struct plan *pl = &rp->plan;
    *rp = (struct remote_plan){ 0 };
    span_recv(f, pl->sizes, 2, MPI_INT64_T, source, SPAN_TAG_SIZES);
    pl->nhead = (size_t)pl->sizes[0];
    pl->bytes = (size_t)pl->sizes[1];
    pl->head = span_alloc(pl->nhead * sizeof *pl->head);
    pl->data = span_alloc(pl->bytes);
    span_recv(f, pl->head, pl->nhead, MPI_INT64_T, source, SPAN_TAG_PLAN);
    if (writing && pl->bytes > 0)
        span_recv(f, pl->data, pl->bytes, MPI_BYTE, source, SPAN_TAG_DATA);
    size_t members = 0, pieces = 0;
    for (size_t h = 0; h < pl->nhead; h += 1 + 2 * (size_t)pl->head[h], members++)
        pieces += (size_t)pl->head[h];
    rp->parts = span_alloc(members * sizeof *rp->parts);
    rp->ext = span_alloc(pieces * sizeof *rp->ext);
    size_t *stream_at = rp->stream_at = span_alloc(pieces * sizeof *stream_at);
    size_t h = 0, e = 0, at = 0;
    for (size_t m = 0; m < members; m++) {
        size_t n = (size_t)pl->head[h++];
        rp->parts[m] = (struct coll_part){ rp->ext + e, stream_at + e, n, pl->data, MPI_SUCCESS };
        for (size_t i = 0; i < n; i++, e++, h += 2) {
            rp->ext[e] = (struct io_extent){ pl->head[h], (size_t)pl->head[h + 1] };
            stream_at[e] = at;
            at += rp->ext[e].len;
        }
    }
    rp->nparts = (int)members;
}

static void remote_plan_free(struct remote_plan *rp)
{
    free(rp->stream_at);
    free(rp->parts);
    free(rp->ext);
    free(rp->plan.head);
    free(rp->plan.data);
}

/* Aggregator k of naggr sits in node slot k * nnodes / naggr. */
static int aggregator_node(int k, int naggr, int nnodes)
{
    return (int)((long)k * nnodes / naggr);
}

/* The windows the exchange moves one by one: an aggregator moves window
 * w of its domain while the plans of w + 1 are in flight. */
struct windows {
    MPI_Offset d0, d1, size;
    int n;
};

static struct windows windows_of(int k, int naggr, MPI_Offset lo, MPI_Offset hi, MPI_Offset size)
{
    struct windows w = { .size = size };
    io_domain(k, naggr, lo, hi, &w.d0, &w.d1);
    w.n = w.d0 < w.d1 ? (int)((w.d1 - w.d0 + size - 1) / size) : 0;
    return w;
}

static void window_bounds(const struct windows *w, int i, MPI_Offset *w0, MPI_Offset *w1)
{
    *w0 = w->d0 + (MPI_Offset)i * w->size;
    *w1 = w->d1 - *w0 < w->size ? w->d1 : *w0 + w->size;
}

/* The aggregator's side: window by window, the plans of every other node
 * process, then the window moved (and, for reads, the replies posted;
 * kept in `kept` until every reply was taken). */
static int serve_domain(struct strand_file *f, struct coll_part **local, const struct windows *dom, bool writing,
                        struct remote_plan *kept)
{
    struct io_core *core = f->core;
    struct remote_plan *scratch = span_alloc((size_t)core->nnodes * sizeof *scratch);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < dom->n; i++) {
        MPI_Offset w0, w1;
        window_bounds(dom, i, &w0, &w1);
        /* A reply's request lives in its plan: read plans stay in place. */
        struct remote_plan *in = writing ? scratch : kept + (size_t)i * (size_t)core->nnodes;
        int nparts = core->nlocal;
        for (int j = 0; j < core->nnodes; j++)
            if (j != core->my_node) {
                remote_plan_receive(f, core->node_leader[j], writing, &in[j]);
                nparts += in[j].nparts;
            }
        struct coll_part **parts = span_alloc((size_t)nparts * sizeof *parts);
        int p = 0;
        for (int m = 0; m < core->nlocal; m++)
            parts[p++] = local[m];
        for (int j = 0; j < core->nnodes; j++)
            for (int m = 0; j != core->my_node && m < in[j].nparts; m++)
                parts[p++] = &in[j].parts[m];
        int window_rc = aggregate_domain(f, parts, nparts, writing, w0, w1);
        if (rc == MPI_SUCCESS)
            rc = window_rc;
        free(parts);
        for (int j = 0; j < core->nnodes; j++) {
            if (j == core->my_node)
                continue;
            struct plan *pl = &in[j].plan;
            if (writing)
                remote_plan_free(&in[j]);
            else if (pl->bytes > 0)
                span_send(f, &pl->req[pl->nreq++], pl->data, pl->bytes, MPI_BYTE, core->node_leader[j],
                          SPAN_TAG_REPLY);
        }
    }
    free(scratch);
    return rc;
}

/* The leader's part: plans to every other aggregator (all windows,
 * nonblocking), its own domain served, then the replies of reads taken
 * and scattered into the members' streams. Returns its I/O error (all
 * members agree afterwards). */
static int span_aggregate(struct strand_file *f, bool writing, MPI_Offset lo, MPI_Offset hi, MPI_Offset window)
{
    struct io_core *core = f->core;
    int nnodes = core->nnodes, naggr = core->hints.cb_nodes < nnodes ? core->hints.cb_nodes : nnodes;
    if (naggr < 1)
        naggr = 1;
    struct coll_part **local = span_alloc((size_t)core->nlocal * sizeof *local);
    for (int r = 0, m = 0; r < core->size; r++)
        if (core->node_of[r] == core->my_node)
            local[m++] = core->slots[r];
    struct windows *doms = span_alloc((size_t)naggr * sizeof *doms);
    size_t nout = 0;
    int mine = -1;
    for (int k = 0; k < naggr; k++) {
        doms[k] = windows_of(k, naggr, lo, hi, window);
        if (aggregator_node(k, naggr, nnodes) == core->my_node)
            mine = k;
        else
            nout += (size_t)doms[k].n;
    }
    struct plan *out = span_alloc(nout * sizeof *out), *pl = out;
    for (int k = 0; k < naggr; k++)
        for (int i = 0; k != mine && i < doms[k].n; i++, pl++) {
            MPI_Offset w0, w1;
            window_bounds(&doms[k], i, &w0, &w1);
            plan_build(local, core->nlocal, w0, w1, writing, pl);
            plan_send(f, pl, core->node_leader[aggregator_node(k, naggr, nnodes)], writing);
        }
    int rc = MPI_SUCCESS;
    /* Replies to other node processes complete only once they took them:
     * they are waited for after this node's own replies arrived. */
    size_t nkept = mine >= 0 && !writing ? (size_t)doms[mine].n * (size_t)nnodes : 0;
    struct remote_plan *kept = span_alloc(nkept * sizeof *kept);
    for (size_t i = 0; i < nkept; i++)
        kept[i] = (struct remote_plan){ 0 };
    if (mine >= 0)
        rc = serve_domain(f, local, &doms[mine], writing, kept);
    pl = out;
    for (int k = 0; k < naggr; k++)
        for (int i = 0; k != mine && i < doms[k].n; i++, pl++) {
            plan_wait(pl);
            if (!writing && pl->bytes > 0) {
                char *reply = span_alloc(pl->bytes), *from = reply;
                MPI_Offset w0, w1;
                window_bounds(&doms[k], i, &w0, &w1);
                span_recv(f, reply, pl->bytes, MPI_BYTE, core->node_leader[aggregator_node(k, naggr, nnodes)],
                          SPAN_TAG_REPLY);
                for (int m = 0; m < core->nlocal; m++)
                    domain_pieces(local[m], w0, w1, piece_scatter, &from);
                free(reply);
            }
            free(pl->head);
            free(pl->data);
        }
    for (size_t i = 0; i < nkept; i++) {
        plan_wait(&kept[i].plan);
        remote_plan_free(&kept[i]);
    }
    free(kept);
    free(out);
    free(doms);
    free(local);
    return rc;
}

/* What every member tells the others before a collective access moves
 * data: its error, its range, whether it has several extents. */
enum { SUMMARY_ERROR, SUMMARY_LO, SUMMARY_HI, SUMMARY_SPLIT, SUMMARY_WINDOW, SUMMARY_FIELDS };

/* The window is the smallest cb_buffer_size of the node processes, so
 * that all count the same windows. */
static void summary_of(const struct strand_file *f, const struct coll_part *p, int64_t *s)
{
    s[SUMMARY_WINDOW] = f->core->hints.cb_buffer_size;
    s[SUMMARY_ERROR] = p->error;
    s[SUMMARY_LO] = p->n > 0 ? p->ext[0].off : -1;
    s[SUMMARY_HI] = p->n > 0 ? p->ext[p->n - 1].off + (MPI_Offset)p->ext[p->n - 1].len : -1;
    s[SUMMARY_SPLIT] = p->n > 1;
}

/* The spanning collective: returns the member's error before agreement. */
int span_collective(struct strand_file *f, struct io_access *a, struct coll_part *me, size_t *moved)
{
    struct io_core *core = f->core;
    int n = core->size;
    int64_t mine[SUMMARY_FIELDS], *all = span_alloc((size_t)n * SUMMARY_FIELDS * sizeof *all);
    summary_of(f, me, mine);
    io_allgather(f, mine, SUMMARY_FIELDS, all);
    int error = MPI_SUCCESS;
    bool split = false;
    MPI_Offset lo = -1, hi = -1, window = all[SUMMARY_WINDOW];
    for (int r = 0; r < n; r++) {
        const int64_t *s = all + (size_t)r * SUMMARY_FIELDS;
        if (s[SUMMARY_WINDOW] < window)
            window = s[SUMMARY_WINDOW];
        if (error == MPI_SUCCESS)
            error = (int)s[SUMMARY_ERROR];
        split |= s[SUMMARY_SPLIT] != 0;
        if (s[SUMMARY_LO] >= 0 && (lo < 0 || s[SUMMARY_LO] < lo))
            lo = s[SUMMARY_LO];
        if (s[SUMMARY_HI] > hi)
            hi = s[SUMMARY_HI];
    }
    free(all);
    enum io_switch cb = a->writing ? core->hints.cb_write : core->hints.cb_read;
    if (error != MPI_SUCCESS)
        return error;
    if (cb == IO_DISABLE || (cb == IO_AUTOMATIC && !split))
        return access_independent(f, a, moved);
    *moved = a->bytes;
    /* The local members' parts stay published until the leader is done:
     * the agreement that follows is their barrier. */
    if (f->rank == core->leader && lo >= 0)
        return span_aggregate(f, a->writing, lo, hi, window);
    return MPI_SUCCESS;
}

