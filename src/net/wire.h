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
 *  20     4    dest          EAGER, RTS: receiving world rank
 *  24     8    a             see below
 *  32     8    b
 *  40     8    c
 *
 *  type    a                 b                  c          payload
 *  HELLO   job id            sender node index  node count none
 *  EAGER   message bytes     0                  0          the message (== a bytes)
 *  RTS     message bytes     sender cookie      0          none
 *  CTS     sender cookie     receiver cookie    bytes wanted none
 *  DATA    receiver cookie   0                  0          the pulled bytes
 *  BYE     0                 0                  0          none
 *  CANCEL  sender cookie     0                  0          none (dest: receiving world rank)
 *  CANCELLED sender cookie   1 withdrawn, 0 not 0          none
 */
#ifndef STRAND_NET_WIRE_H
#define STRAND_NET_WIRE_H

#include <stddef.h>
#include <stdint.h>

enum { WIRE_HEADER_BYTES = 48, WIRE_MAGIC = 0x5354, WIRE_VERSION = 1 };

enum wire_type {
    WIRE_HELLO = 1,     /* first frame on a connection: who is calling */
    WIRE_EAGER,         /* envelope and data of a small message */
    WIRE_RTS,           /* envelope of a large or synchronous message: "ready to send" */
    WIRE_CTS,           /* the receiver matched an RTS: "clear to send" this many bytes */
    WIRE_DATA,          /* the bytes a CTS asked for */
    WIRE_BYE,           /* the sender's node process ended cleanly; nothing follows */
    WIRE_CANCEL,        /* the sender cancels an RTS: withdraw it if still unmatched */
    WIRE_CANCELLED,     /* the answer: withdrawn (b = 1) or already matched (b = 0) */
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

/* What the receiving node process accepts. */
struct wire_limits {
    uint32_t first_rank, local_ranks;   /* dest must be in [first_rank, first_rank + local_ranks) */
    uint32_t nnodes;                    /* HELLO: node index < nnodes, node count == nnodes */
    uint64_t job_id;                    /* HELLO: must match */
    uint32_t max_eager;                 /* EAGER payload */
    uint32_t max_data;                  /* DATA payload */
    int32_t tag_ub;
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

#endif
