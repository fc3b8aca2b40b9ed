/* The wire format between node processes: every frame is a fixed 48-byte
 * header, optionally followed by `payload_len` bytes of data.
 *
 * All integers are little-endian on the wire (encoded and decoded byte by
 * byte, so the format does not depend on the host). Nothing a frame says
 * is used before wire_decode_header() has checked it against the limits
 * of the receiving node process: an out-of-range rank, an unknown type, a
 * payload that does not fit the frame's kind all give WIRE_ERROR with a
 * reason, never an access out of bounds. Cookies (handles of rendezvous
 * state) are opaque numbers to the wire code; the transport looks them up
 * in a table and rejects unknown ones (it never turns one into a pointer).
 *
 *  offset size field
 *   0     2    magic 0x5354 ("ST")
 *   2     1    version (WIRE_VERSION)
 *   3     1    type (enum wire_type)
 *   4     4    payload_len   bytes after the header
 *   8     4    context_id    EAGER, RTS: matching context
 *  12     4    source        EAGER, RTS: sender's rank in the communicator
 *  16     4    tag           EAGER, RTS
 *  20     4    dest          EAGER, RTS: receiving rank in its world
 *  24     8    a             see below
 *  32     8    b
 *  40     8    c
 *
 *  type    a                 b                  c          payload
 *  HELLO   job id            sender node index  node count its contact "PORT HOST" (may be
 *                                                          empty from the receiver's own job)
 *  HELLO_ACK job id          receiver node index node count none (the answer: who took the call)
 *  EAGER   message bytes     0                  dest world the message (== a bytes)
 *  RTS     message bytes     sender cookie      dest world none
 *  CTS     sender cookie     receiver cookie    bytes wanted none
 *  DATA    receiver cookie   offset             0          the next pulled bytes
 *
 * A CTS may ask for more than one DATA payload carries (4 GiB - 1): the
 * sender answers with DATA frames in order, each starting where the last
 * ended (`offset`, from 0), until the bytes wanted are sent; only a
 * message of 0 bytes is answered by an empty frame. The receiver checks
 * every offset and length against its pull.
 *  BYE     0, or 1: answer   0                  0          none
 *  CANCEL  sender cookie     0                  dest world none (dest: the receiving rank)
 *  CANCELLED sender cookie   1 withdrawn, 0 not 0          none
 *  DPM     (context_id: the dynamic-process message kind; a, b, c and the
 *          payload are src/dpm's, which checks them: port requests,
 *          spawn requests and their answers)
 *
 * A world is named by its 64-bit id (the launched world's is its job id),
 * so a frame may address any rank of any world hosted by the receiving
 * node process, whichever job sent it.
 *
 * BYE with a = 1 answers a BYE: the UCX module closes its endpoints only
 * once every peer it said goodbye to has answered (src/net/ucx.c); the tcp
 * module sends a = 0 only.
 *
 * One-sided frames (RMA): the window is named by its id (`a`, agreed by
 * its members at MPI_Win_create) and two window ranks: `source`, the rank
 * that sent the request (or, in a reply, the rank that answers), and `dest`,
 * the member of the receiving node process it is for. Targets are
 * addressed by byte offsets from their window's base, never by address.
 * A block list is `b` pairs (offset, length) of little-endian u64; for
 * ACC the length counts elements of the frame's element type.
 *
 *  type       context_id        a       b            c            payload
 *  RMA_PUT    0                 window  blocks       data bytes   blocks, data
 *  RMA_ACC    1 = exclusive     window  blocks       data bytes   blocks, data (tag: op | element << 8)
 *  RMA_GET    chunk index       window  blocks       cookie       blocks
 *  RMA_GET_REPLY chunk index    window  0            cookie       the data
 *  RMA_LOCK   1 = exclusive     window  0            0            none
 *  RMA_UNLOCK 1 = exclusive     window  0            0            none
 *  RMA_COMPLETE 0               window  0            0            none (source closed its access epoch to dest)
 *  RMA_POST   0                 window  0            0            none (source exposes itself to dest)
 *  RMA_ACK    what is answered  window  0            0            none (a request of dest is done; a lock granted)
 */
#ifndef STRAND_NET_WIRE_H
#define STRAND_NET_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { WIRE_HEADER_BYTES = 48, WIRE_MAGIC = 0x5354, WIRE_VERSION = 2 };

enum wire_type {
    WIRE_HELLO = 1,     /* first frame on a connection: who is calling */
    WIRE_EAGER,         /* envelope and data of a small message */
    WIRE_RTS,           /* envelope of a large or synchronous message: "ready to send" */
    WIRE_CTS,           /* the receiver matched an RTS: "clear to send" this many bytes */
    WIRE_DATA,          /* the bytes a CTS asked for */
    WIRE_BYE,           /* the sender's node process ended cleanly; nothing follows */
    WIRE_CANCEL,        /* the sender cancels an RTS: withdraw it if still unmatched */
    WIRE_CANCELLED,     /* the answer: withdrawn (b = 1) or already matched (b = 0) */
    WIRE_RMA_PUT,       /* one-sided: store blocks into a target's window */
    WIRE_RMA_ACC,       /* combine elements into a target's window */
    WIRE_RMA_GET,       /* read blocks of a target's window */
    WIRE_RMA_GET_REPLY, /* the bytes a GET asked for, in block order */
    WIRE_RMA_LOCK,      /* passive target: request a lock on dest */
    WIRE_RMA_UNLOCK,    /* release it */
    WIRE_RMA_COMPLETE,  /* active target: an access epoch to dest ended */
    WIRE_RMA_POST,      /* an exposure epoch of source to dest began */
    WIRE_RMA_ACK,       /* a request is done (and a lock granted) */
    WIRE_HELLO_ACK,     /* the answer to HELLO: the acceptor says who it is */
    WIRE_DPM,           /* dynamic processes: ports, spawns (src/dpm) */
    WIRE_TYPE_END
};

struct wire_frame {
    enum wire_type type;
    uint32_t payload_len;
    uint32_t context_id;
    int32_t source;
    int32_t tag;
    uint32_t dest;
    uint64_t a, b, c;
};

static inline bool wire_is_rma(enum wire_type t) { return t >= WIRE_RMA_PUT && t <= WIRE_RMA_ACK; }

/* The largest message an RTS may announce (an int count of the largest
 * type anyone builds; the receiver's capacity bounds what it asks for). */
#define WIRE_MESSAGE_MAX ((uint64_t)INT32_MAX * 8 * 1024)

/* Bounds of HELLO and DPM frames: node processes in a job, a contact
 * string, a dynamic-process message (a rank identity list of 4096 ranks
 * takes about 50 KiB). */
enum { WIRE_MAX_NODES = 1 << 20, WIRE_CONTACT_MAX = 300, WIRE_DPM_MAX = 16 << 20 };

/* Bounds of one-sided frames. */
enum {
    WIRE_RMA_MAX_DATA = 1 << 20,        /* data bytes in one PUT, ACC, GET_REPLY (larger operations are split) */
    WIRE_RMA_MAX_BLOCKS = 8192,         /* blocks in one PUT, ACC, GET */
    WIRE_RMA_BLOCK_BYTES = 16,
};

/* What the receiving node process knows of a window (wire_limits.window). */
struct wire_window {
    uint32_t size;                      /* members */
    bool dest_local;                    /* `dest` is a member in this node process */
    bool source_remote;                 /* `source` is a member in another one */
    uint64_t dest_bytes;                /* size of dest's window memory */
};

/* An accumulate element type (wire_limits.acc_element): its extent and
 * the end of its data in one element (true_ub; true_lb is 0). */
struct wire_element {
    uint64_t extent, true_ub;
};

/* What the receiving node process accepts. */
struct wire_limits {
    /* A destination: rank `rank` of world `world` (the launched world's
     * ranks or another's) runs in this node process (NULL: none does).
     * A node process's ranks need not be consecutive (srun -m cyclic). */
    bool (*world_rank)(uint64_t world, uint32_t rank);
    uint32_t nnodes;                    /* HELLO from this job: node index < nnodes, node count == nnodes */
    uint64_t job_id;                    /* this job's (HELLO from another job: any node index, contact given) */
    uint32_t max_eager;                 /* EAGER payload */
    uint32_t max_data;                  /* DATA payload */
    int32_t tag_ub;
    /* One-sided frames: the window `id` as seen from member `dest`, with
     * `source` the other member (false: no such window here, or a rank
     * outside it). NULL: RMA frames are refused. */
    bool (*window)(uint64_t id, uint32_t dest, uint32_t source, struct wire_window *out);
    /* Accumulate: false unless `op` and `element` codes name a predefined
     * operation defined on that predefined type. */
    bool (*acc_element)(uint32_t op, uint32_t element, struct wire_element *out);
};

enum wire_status { WIRE_OK, WIRE_NEED_MORE, WIRE_ERROR };

/* Decodes the header at `buf` (len bytes available). WIRE_OK: `*out` is a
 * valid frame (its payload, if any, follows the header); WIRE_NEED_MORE:
 * fewer than WIRE_HEADER_BYTES bytes; WIRE_ERROR: `*why` says what is
 * wrong (a static string) and the connection must be dropped. */
enum wire_status wire_decode_header(const unsigned char *buf, size_t len, const struct wire_limits *lim,
                                    struct wire_frame *out, const char **why);

/* Writes the header of `f` into out[WIRE_HEADER_BYTES]. */
void wire_encode_header(unsigned char *out, const struct wire_frame *f);

/* A PUT, ACC or GET payload (payload_len bytes, the header already
 * accepted): every block inside dest's window memory, lengths adding up
 * to the frame's data size. NULL when valid, else the reason. */
const char *wire_check_rma_blocks(const struct wire_frame *f, const unsigned char *payload,
                                  const struct wire_limits *lim);

/* Block i of a block list (checked by wire_check_rma_blocks). */
void wire_block(const unsigned char *blocks, uint64_t i, uint64_t *offset, uint64_t *len);
void wire_encode_block(unsigned char *out, uint64_t offset, uint64_t len);

#endif
