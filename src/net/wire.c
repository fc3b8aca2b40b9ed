/* Frame headers: encoding, and a decoder that checks every field before
 * anyone uses it (wire.h). Pure functions: fuzzed by tests/unit/test_wire. */
#include "wire.h"

static void put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void wire_encode_header(unsigned char *out, const struct wire_frame *f)
{
    put16(out, WIRE_MAGIC);
    out[2] = WIRE_VERSION;
    out[3] = (unsigned char)f->type;
    put32(out + 4, f->payload_len);
    put32(out + 8, f->context_id);
    put32(out + 12, (uint32_t)f->source);
    put32(out + 16, (uint32_t)f->tag);
    put32(out + 20, f->dest);
    put64(out + 24, f->a);
    put64(out + 32, f->b);
    put64(out + 40, f->c);
}

/* A destination rank (EAGER, RTS, CANCEL): in this node process. */
static const char *check_destination(const struct wire_frame *f, const struct wire_limits *lim)
{
    if (lim->world_rank == NULL || !lim->world_rank(f->c, f->dest))
        return "destination is not a rank of a world in this node process";
    return NULL;
}

/* The envelope of a message (EAGER, RTS): who it is for and from. */
static const char *check_envelope(const struct wire_frame *f, const struct wire_limits *lim)
{
    const char *problem = check_destination(f, lim);
    if (problem != NULL)
        return problem;
    if (f->source < 0)
        return "negative source rank";
    if (f->tag < 0 || f->tag > lim->tag_ub)
        return "tag out of range";
    return NULL;
}

/* Every one-sided frame: a window this node process knows, addressed to
 * one of its members here, from a member elsewhere. */
static const char *check_rma_window(const struct wire_frame *f, const struct wire_limits *lim, struct wire_window *w)
{
    if (lim->window == NULL)
        return "one-sided frame, but this node process serves no windows";
    if (f->source < 0 || !lim->window(f->a, f->dest, (uint32_t)f->source, w))
        return "one-sided frame for an unknown window or a rank outside it";
    if (!w->dest_local)
        return "one-sided frame for a window member that is not in this node process";
    if (!w->source_remote)
        return "one-sided frame from a window member that is in this node process";
    return NULL;
}

/* PUT, ACC, GET: the block count and the sizes the payload must have. */
static const char *check_rma_data(const struct wire_frame *f, const struct wire_limits *lim)
{
    if (f->b == 0 || f->b > WIRE_RMA_MAX_BLOCKS)
        return "one-sided frame with no blocks or too many";
    uint64_t list = f->b * WIRE_RMA_BLOCK_BYTES;
    if (f->type == WIRE_RMA_GET) {
        if (f->payload_len != list)
            return "GET payload is not its block list";
        return f->c == 0 ? "GET without a cookie" : NULL;
    }
    if (f->c > WIRE_RMA_MAX_DATA || f->payload_len != list + f->c)
        return "one-sided data size differs from its payload";
    if (f->type == WIRE_RMA_PUT)
        return f->context_id != 0 ? "PUT with flags" : NULL;
    struct wire_element e;
    if (f->context_id > 1)
        return "ACC with unknown flags";
    if (f->tag < 0 || lim->acc_element == NULL || !lim->acc_element((uint32_t)f->tag & 0xff, (uint32_t)f->tag >> 8, &e))
        return "ACC with an unknown operation or element type";
    return NULL;
}

static const char *check_rma(const struct wire_frame *f, const struct wire_limits *lim)
{
    struct wire_window w;
    const char *problem = check_rma_window(f, lim, &w);
    if (problem != NULL)
        return problem;
    switch (f->type) {
    case WIRE_RMA_PUT:
    case WIRE_RMA_ACC:
    case WIRE_RMA_GET:
        return check_rma_data(f, lim);
    case WIRE_RMA_GET_REPLY:
        if (f->payload_len > WIRE_RMA_MAX_DATA || f->b != 0 || f->c == 0)
            return "malformed GET_REPLY";
        return NULL;
    case WIRE_RMA_LOCK:
    case WIRE_RMA_UNLOCK:
        return f->payload_len != 0 || f->context_id > 1 || f->b != 0 || f->c != 0 ? "malformed LOCK or UNLOCK" : NULL;
    case WIRE_RMA_COMPLETE:
    case WIRE_RMA_POST:
        return f->payload_len != 0 || f->context_id != 0 || f->b != 0 || f->c != 0 ? "malformed COMPLETE or POST"
                                                                                       : NULL;
    default: /* WIRE_RMA_ACK */
        if (f->payload_len != 0 || f->b != 0 || f->c != 0)
            return "malformed ACK";
        if (f->context_id < WIRE_RMA_PUT || f->context_id > WIRE_RMA_POST || f->context_id == WIRE_RMA_GET ||
            f->context_id == WIRE_RMA_GET_REPLY)
            return "ACK of something that is not acknowledged";
        return NULL;
    }
}

void wire_block(const unsigned char *blocks, uint64_t i, uint64_t *offset, uint64_t *len)
{
    *offset = get64(blocks + i * WIRE_RMA_BLOCK_BYTES);
    *len = get64(blocks + i * WIRE_RMA_BLOCK_BYTES + 8);
}

void wire_encode_block(unsigned char *out, uint64_t offset, uint64_t len)
{
    put64(out, offset);
    put64(out + 8, len);
}

const char *wire_check_rma_blocks(const struct wire_frame *f, const unsigned char *payload,
                                  const struct wire_limits *lim)
{
    struct wire_window w;
    struct wire_element e = { 1, 1 };
    if (lim->window == NULL || !lim->window(f->a, f->dest, (uint32_t)f->source, &w))
        return "one-sided frame for an unknown window";
    if (f->type == WIRE_RMA_ACC && !lim->acc_element((uint32_t)f->tag & 0xff, (uint32_t)f->tag >> 8, &e))
        return "ACC with an unknown operation or element type";
    uint64_t total = 0;
    for (uint64_t i = 0; i < f->b; i++) {
        uint64_t offset, len;
        wire_block(payload, i, &offset, &len);
        if (len == 0 || len > WIRE_RMA_MAX_DATA)
            return "empty or oversized block";
        /* Bytes the block touches: whole elements for ACC (the last one up to its data's end). */
        uint64_t span = f->type == WIRE_RMA_ACC ? (len - 1) * e.extent + e.true_ub : len;
        if (offset > w.dest_bytes || span > w.dest_bytes - offset)
            return "block outside the target's window";
        total += f->type == WIRE_RMA_ACC ? len * e.extent : len;
    }
    if (f->type == WIRE_RMA_GET)
        return total > WIRE_RMA_MAX_DATA ? "GET asks for more than one reply may carry" : NULL;
    return total != f->c ? "block lengths differ from the data size" : NULL;
}

static const char *check_frame(const struct wire_frame *f, const struct wire_limits *lim)
{
    if (wire_is_rma(f->type))
        return check_rma(f, lim);
    switch (f->type) {
    case WIRE_HELLO:
        if (f->payload_len > WIRE_CONTACT_MAX)
            return "HELLO with an overlong contact";
        if (f->a != lim->job_id) {
            if (f->c == 0 || f->c > WIRE_MAX_NODES || f->b >= f->c)
                return "HELLO with a node index or count out of range";
            return f->payload_len < 3 ? "HELLO from another job without a contact" : NULL;
        }
        if (f->b >= lim->nnodes || f->c != lim->nnodes)
            return "HELLO with a node index or count that does not fit this job";
        return NULL;
    case WIRE_HELLO_ACK:
        if (f->payload_len != 0)
            return "HELLO_ACK with a payload";
        if (f->c == 0 || f->c > WIRE_MAX_NODES || f->b >= f->c)
            return "HELLO_ACK with a node index or count out of range";
        return NULL;
    case WIRE_DPM:
        return f->payload_len > WIRE_DPM_MAX ? "dynamic-process frame longer than the limit" : NULL;
    case WIRE_EAGER:
        if (f->payload_len > lim->max_eager)
            return "eager message longer than the eager limit";
        if (f->a != f->payload_len)
            return "eager message size differs from its payload";
        return check_envelope(f, lim);
    case WIRE_RTS:
        if (f->payload_len != 0)
            return "RTS with a payload";
        if (f->a > WIRE_MESSAGE_MAX)
            return "RTS size beyond any MPI message";
        return check_envelope(f, lim);
    case WIRE_CTS:
        if (f->payload_len != 0)
            return "CTS with a payload";
        if (f->c > WIRE_MESSAGE_MAX)
            return "CTS asks for more than any MPI message holds";
        return NULL;
    case WIRE_DATA:
        if (f->payload_len > lim->max_data)
            return "DATA frame longer than the limit";
        return NULL;
    case WIRE_BYE:
        return f->payload_len != 0 || f->a > 1 || f->b != 0 || f->c != 0 ? "malformed BYE" : NULL;
    case WIRE_CANCEL:
        if (f->payload_len != 0)
            return "CANCEL with a payload";
        return check_destination(f, lim);
    case WIRE_CANCELLED:
        return f->payload_len != 0 || f->b > 1 ? "malformed CANCELLED" : NULL;
    default:
        return "unknown frame type";
    }
}

enum wire_status wire_decode_header(const unsigned char *buf, size_t len, const struct wire_limits *lim,
                                    struct wire_frame *out, const char **why)
{
    if (len < WIRE_HEADER_BYTES)
        return WIRE_NEED_MORE;
    if (get16(buf) != WIRE_MAGIC) {
        *why = "bad magic (not a Strand frame, or the stream lost its place)";
        return WIRE_ERROR;
    }
    if (buf[2] != WIRE_VERSION) {
        *why = "unsupported wire version";
        return WIRE_ERROR;
    }
    if (buf[3] < WIRE_HELLO || buf[3] >= WIRE_TYPE_END) {
        *why = "unknown frame type";
        return WIRE_ERROR;
    }
    struct wire_frame f = {
        .type = (enum wire_type)buf[3],
        .payload_len = get32(buf + 4),
        .context_id = get32(buf + 8),
        .source = (int32_t)get32(buf + 12),
        .tag = (int32_t)get32(buf + 16),
        .dest = get32(buf + 20),
        .a = get64(buf + 24),
        .b = get64(buf + 32),
        .c = get64(buf + 40),
    };
    const char *problem = check_frame(&f, lim);
    if (problem != NULL) {
        *why = problem;
        return WIRE_ERROR;
    }
    *out = f;
    return WIRE_OK;
}
