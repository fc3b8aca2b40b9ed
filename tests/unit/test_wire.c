/* The frame decoder of the network layer (src/net/wire.c) against hostile
 * input: random bytes and mutated valid frames must give a clean verdict
 * (WIRE_OK with every field inside the receiver's limits, or WIRE_ERROR
 * with a reason), never a crash or a read past the bytes given. Each input
 * sits in a heap block of exactly its length, so an AddressSanitizer build
 * (configure --enable-sanitizers) reports any over-read. */
#include <stdlib.h>
#include <string.h>

#include "net/wire.h"
#include "unit_support.h"

enum { ROUNDS = 200000 };

/* One window (id 7) of 6 members; members 2 and 3 are in this node
 * process, with 4096 and 0 bytes of window memory. */
enum { WINDOW_ID = 7, WINDOW_SIZE = 6, WINDOW_BYTES = 4096, ELEMENT_CODES = 3, OP_CODES = 13 };

static bool member_local(uint32_t m) { return m == 2 || m == 3; }

static bool fake_window(uint64_t id, uint32_t dest, uint32_t source, struct wire_window *out)
{
    if (id != WINDOW_ID || dest >= WINDOW_SIZE || source >= WINDOW_SIZE)
        return false;
    *out = (struct wire_window){ WINDOW_SIZE, member_local(dest), !member_local(source),
                                 dest == 2 ? WINDOW_BYTES : 0 };
    return true;
}

/* Element codes 0..2: int, double, a padded pair (extent 16, data up to 12). */
static const struct wire_element elements[ELEMENT_CODES] = { { 4, 4 }, { 8, 8 }, { 16, 12 } };

static bool fake_element(uint32_t op, uint32_t element, struct wire_element *out)
{
    if (op >= OP_CODES || element >= ELEMENT_CODES)
        return false;
    *out = elements[element];
    return true;
}

/* Besides the launched world (id 0: ranks 8..11 here), world OTHER_WORLD
 * has its ranks 0 and 1 in this node process. */
enum { OTHER_WORLD = 0x5eed };

/* This node process runs the odd ranks 1 to 11 of world 0 (a cyclic
 * layout, not a block) and ranks 0 and 1 of OTHER_WORLD. */
static bool rank_here(uint64_t world, uint32_t rank)
{
    return world == 0 ? rank % 2 == 1 && rank <= 11 : world == OTHER_WORLD && rank < 2;
}

static bool dest_ok(const struct wire_frame *f) { return rank_here(f->c, f->dest); }

static const struct wire_limits limits = {
    .world_rank = rank_here, .nnodes = 3, .job_id = 0x1234abcdULL,
    .max_eager = 16384, .max_data = 1u << 30, .tag_ub = 1 << 30,
    .window = fake_window, .acc_element = fake_element,
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* What any accepted one-sided frame must satisfy. */
static void check_accepted_rma(const struct wire_frame *f)
{
    CU_ASSERT(f->a == WINDOW_ID && member_local(f->dest) && f->source >= 0 && f->source < WINDOW_SIZE &&
              !member_local((uint32_t)f->source));
    if (f->type == WIRE_RMA_PUT || f->type == WIRE_RMA_ACC) {
        CU_ASSERT(f->b >= 1 && f->b <= WIRE_RMA_MAX_BLOCKS && f->c <= WIRE_RMA_MAX_DATA &&
                  f->payload_len == f->b * WIRE_RMA_BLOCK_BYTES + f->c);
    } else if (f->type == WIRE_RMA_GET) {
        CU_ASSERT(f->b >= 1 && f->b <= WIRE_RMA_MAX_BLOCKS && f->payload_len == f->b * WIRE_RMA_BLOCK_BYTES);
    } else if (f->type == WIRE_RMA_GET_REPLY) {
        CU_ASSERT(f->payload_len <= WIRE_RMA_MAX_DATA);
    } else {
        CU_ASSERT(f->payload_len == 0);
    }
    if (f->type == WIRE_RMA_ACC) {
        CU_ASSERT(f->tag >= 0 && (f->tag & 0xff) < OP_CODES && (f->tag >> 8) < ELEMENT_CODES);
    }
}

/* What any accepted frame must satisfy, whatever produced it. */
static void check_accepted(const struct wire_frame *f)
{
    CU_ASSERT_FATAL(f->type >= WIRE_HELLO && f->type < WIRE_TYPE_END);
    if (wire_is_rma(f->type)) {
        check_accepted_rma(f);
        return;
    }
    switch (f->type) {
    case WIRE_HELLO:
        CU_ASSERT(f->payload_len <= WIRE_CONTACT_MAX);
        if (f->a == limits.job_id) {
            CU_ASSERT(f->b < limits.nnodes && f->c == limits.nnodes);
        } else {
            CU_ASSERT(f->payload_len >= 3 && f->b < f->c && f->c <= WIRE_MAX_NODES);
        }
        break;
    case WIRE_HELLO_ACK:
        CU_ASSERT(f->payload_len == 0 && f->b < f->c && f->c <= WIRE_MAX_NODES);
        break;
    case WIRE_DPM:
        CU_ASSERT(f->payload_len <= WIRE_DPM_MAX);
        break;
    case WIRE_EAGER:
    case WIRE_RTS:
        CU_ASSERT(dest_ok(f));
        CU_ASSERT(f->source >= 0 && f->tag >= 0 && f->tag <= limits.tag_ub);
        if (f->type == WIRE_EAGER) {
            CU_ASSERT(f->payload_len <= limits.max_eager && f->a == f->payload_len);
        } else {
            CU_ASSERT(f->payload_len == 0);
        }
        break;
    case WIRE_CTS:
        CU_ASSERT(f->payload_len == 0 && f->c <= WIRE_MESSAGE_MAX);
        break;
    case WIRE_DATA:
        CU_ASSERT(f->payload_len <= limits.max_data);
        break;
    case WIRE_CANCEL:
        CU_ASSERT(f->payload_len == 0 && dest_ok(f));
        break;
    case WIRE_CANCELLED:
        CU_ASSERT(f->payload_len == 0 && f->b <= 1);
        break;
    default:
        CU_ASSERT(f->payload_len == 0);
        break;
    }
}

/* Decodes a copy of bytes[0..len) held in a block of exactly len bytes. */
static enum wire_status decode_exact(const unsigned char *bytes, size_t len, struct wire_frame *out)
{
    unsigned char *copy = malloc(len > 0 ? len : 1);
    memcpy(copy, bytes, len);
    const char *why = NULL;
    enum wire_status st = wire_decode_header(copy, len, &limits, out, &why);
    free(copy);
    if (st == WIRE_ERROR) {
        CU_ASSERT(why != NULL && why[0] != '\0');
    }
    if (st == WIRE_OK)
        check_accepted(out);
    if (len < WIRE_HEADER_BYTES) {
        CU_ASSERT(st == WIRE_NEED_MORE);
    }
    return st;
}

enum { VALID_FRAMES = 23 };

static struct wire_frame valid_frame(int which)
{
    switch (which % VALID_FRAMES) {
    case 8: return (struct wire_frame){ .type = WIRE_RMA_PUT, .payload_len = 2 * 16 + 100, .source = 4, .dest = 2,
                                        .a = WINDOW_ID, .b = 2, .c = 100 };
    case 9: return (struct wire_frame){ .type = WIRE_RMA_ACC, .payload_len = 16 + 64, .context_id = 1,
                                        .source = 0, .tag = 2 | 1 << 8, .dest = 2, .a = WINDOW_ID, .b = 1, .c = 64 };
    case 10: return (struct wire_frame){ .type = WIRE_RMA_GET, .payload_len = 3 * 16, .context_id = 5, .source = 5,
                                         .dest = 3, .a = WINDOW_ID, .b = 3, .c = 0x100000001ULL };
    case 11: return (struct wire_frame){ .type = WIRE_RMA_GET_REPLY, .payload_len = 512, .source = 1, .dest = 2,
                                         .a = WINDOW_ID, .c = 9 };
    case 12: return (struct wire_frame){ .type = WIRE_RMA_LOCK, .context_id = 1, .source = 1, .dest = 3,
                                         .a = WINDOW_ID };
    case 13: return (struct wire_frame){ .type = WIRE_RMA_UNLOCK, .source = 4, .dest = 2, .a = WINDOW_ID };
    case 14: return (struct wire_frame){ .type = WIRE_RMA_COMPLETE, .source = 0, .dest = 2, .a = WINDOW_ID };
    case 15: return (struct wire_frame){ .type = WIRE_RMA_POST, .source = 5, .dest = 3, .a = WINDOW_ID };
    case 16: return (struct wire_frame){ .type = WIRE_RMA_ACK, .context_id = WIRE_RMA_LOCK, .source = 1, .dest = 2,
                                         .a = WINDOW_ID };
    case 17: return (struct wire_frame){ .type = WIRE_HELLO, .payload_len = 15, .a = 0x77, .b = 0, .c = 1 };
    case 18: return (struct wire_frame){ .type = WIRE_HELLO_ACK, .a = 0x77, .b = 4, .c = 5 };
    case 19: return (struct wire_frame){ .type = WIRE_DPM, .payload_len = 1000, .context_id = 3, .a = 9 };
    case 20: return (struct wire_frame){ .type = WIRE_EAGER, .payload_len = 8, .context_id = 4, .source = 1,
                                         .tag = 7, .dest = 1, .a = 8, .c = OTHER_WORLD };
    case 21: return (struct wire_frame){ .type = WIRE_CANCEL, .dest = 0, .a = 77, .c = OTHER_WORLD };
    case 0: return (struct wire_frame){ .type = WIRE_HELLO, .a = limits.job_id, .b = 2, .c = 3 };
    case 1: return (struct wire_frame){ .type = WIRE_EAGER, .payload_len = 100, .context_id = 4, .source = 3,
                                        .tag = 7, .dest = 9, .a = 100 };
    case 2: return (struct wire_frame){ .type = WIRE_RTS, .context_id = 6, .source = 0, .tag = 0, .dest = 11,
                                        .a = 1 << 20, .b = (5ULL << 32) | 3 };
    case 3: return (struct wire_frame){ .type = WIRE_CTS, .a = 77, .b = 99, .c = 4096 };
    case 4: return (struct wire_frame){ .type = WIRE_DATA, .payload_len = 4096, .a = 99 };
    case 5: return (struct wire_frame){ .type = WIRE_CANCEL, .dest = 11, .a = 77 };
    case 6: return (struct wire_frame){ .type = WIRE_CANCELLED, .a = 77, .b = 1 };
    case 7: return (struct wire_frame){ .type = WIRE_BYE, .a = 1 };       /* the answer to a BYE */
    default: return (struct wire_frame){ .type = WIRE_BYE };
    }
}

static void test_round_trip(void)
{
    for (int i = 0; i < VALID_FRAMES; i++) {
        struct wire_frame in = valid_frame(i), out;
        unsigned char buf[WIRE_HEADER_BYTES];
        wire_encode_header(buf, &in);
        CU_ASSERT_EQUAL_FATAL(decode_exact(buf, sizeof buf, &out), WIRE_OK);
        CU_ASSERT(memcmp(&in, &out, sizeof in) == 0);
    }
}

static void test_short_input(void)
{
    unsigned char buf[WIRE_HEADER_BYTES];
    struct wire_frame in = valid_frame(1), out;
    wire_encode_header(buf, &in);
    for (size_t len = 0; len < WIRE_HEADER_BYTES; len++)
        CU_ASSERT_EQUAL(decode_exact(buf, len, &out), WIRE_NEED_MORE);
}

/* Fields that break one rule each: every one must be refused. */
static void test_each_rule(void)
{
    struct wire_frame bad[] = {
        { .type = WIRE_HELLO, .a = limits.job_id + 1, .b = 0, .c = 3 },          /* other job, no contact */
        { .type = WIRE_HELLO, .payload_len = 9, .a = limits.job_id + 1, .b = 3, .c = 3 },  /* node >= count */
        { .type = WIRE_HELLO, .payload_len = WIRE_CONTACT_MAX + 1, .a = 1, .b = 0, .c = 1 },
        { .type = WIRE_HELLO_ACK, .payload_len = 1, .a = 1, .b = 0, .c = 1 },
        { .type = WIRE_HELLO_ACK, .a = 1, .b = 1, .c = 1 },
        { .type = WIRE_DPM, .payload_len = WIRE_DPM_MAX + 1 },
        { .type = WIRE_EAGER, .payload_len = 0, .dest = 2, .c = OTHER_WORLD },     /* not here in that world */
        { .type = WIRE_EAGER, .payload_len = 0, .dest = 9, .c = OTHER_WORLD + 1 }, /* unknown world */
        { .type = WIRE_CANCEL, .dest = 5, .c = OTHER_WORLD },
        { .type = WIRE_HELLO, .a = limits.job_id, .b = 3, .c = 3 },              /* node index */
        { .type = WIRE_HELLO, .a = limits.job_id, .b = 0, .c = 4 },              /* node count */
        { .type = WIRE_EAGER, .payload_len = 20000, .dest = 9, .a = 20000 },     /* over eager limit */
        { .type = WIRE_EAGER, .payload_len = 10, .dest = 9, .a = 11 },           /* size mismatch */
        { .type = WIRE_EAGER, .payload_len = 0, .dest = 12 },                    /* dest not local */
        { .type = WIRE_EAGER, .payload_len = 0, .dest = 8 },                     /* between two local ranks */
        { .type = WIRE_EAGER, .payload_len = 0, .dest = 9, .source = -1 },
        { .type = WIRE_RTS, .dest = 9, .tag = -5 },
        { .type = WIRE_RTS, .dest = 9, .payload_len = 1 },
        { .type = WIRE_CTS, .payload_len = 8 },
        { .type = WIRE_CTS, .c = WIRE_MESSAGE_MAX + 1 },
        { .type = WIRE_RTS, .dest = 9, .a = WIRE_MESSAGE_MAX + 1 },
        { .type = WIRE_DATA, .payload_len = (1u << 30) + 1 },
        { .type = WIRE_BYE, .payload_len = 1 },
        { .type = WIRE_BYE, .a = 2 },                                            /* neither goodbye nor answer */
        { .type = WIRE_BYE, .b = 1 },
        { .type = WIRE_CANCEL, .dest = 2 },
        { .type = WIRE_CANCELLED, .b = 2 },
        { .type = WIRE_RMA_LOCK, .source = 1, .dest = 2, .a = WINDOW_ID + 1 },           /* unknown window */
        { .type = WIRE_RMA_LOCK, .source = 1, .dest = 4, .a = WINDOW_ID },               /* dest not here */
        { .type = WIRE_RMA_LOCK, .source = 3, .dest = 2, .a = WINDOW_ID },               /* source here */
        { .type = WIRE_RMA_LOCK, .source = 6, .dest = 2, .a = WINDOW_ID },               /* source outside */
        { .type = WIRE_RMA_LOCK, .source = -1, .dest = 2, .a = WINDOW_ID },
        { .type = WIRE_RMA_LOCK, .context_id = 2, .source = 1, .dest = 2, .a = WINDOW_ID },
        { .type = WIRE_RMA_POST, .payload_len = 1, .source = 1, .dest = 2, .a = WINDOW_ID },
        { .type = WIRE_RMA_PUT, .payload_len = 16 + 10, .source = 1, .dest = 2, .a = WINDOW_ID, .b = 1, .c = 11 },
        { .type = WIRE_RMA_PUT, .payload_len = 0, .source = 1, .dest = 2, .a = WINDOW_ID, .b = 0, .c = 0 },
        { .type = WIRE_RMA_PUT, .payload_len = 16 + WIRE_RMA_MAX_DATA + 1, .source = 1, .dest = 2, .a = WINDOW_ID,
          .b = 1, .c = WIRE_RMA_MAX_DATA + 1 },
        { .type = WIRE_RMA_ACC, .payload_len = 16 + 4, .source = 1, .dest = 2, .a = WINDOW_ID, .b = 1, .c = 4,
          .tag = OP_CODES },                                                              /* unknown op */
        { .type = WIRE_RMA_ACC, .payload_len = 16 + 4, .source = 1, .dest = 2, .a = WINDOW_ID, .b = 1, .c = 4,
          .tag = ELEMENT_CODES << 8 },                                                    /* unknown element */
        { .type = WIRE_RMA_GET, .payload_len = 16, .source = 1, .dest = 2, .a = WINDOW_ID, .b = 1, .c = 0 },
        { .type = WIRE_RMA_GET_REPLY, .payload_len = WIRE_RMA_MAX_DATA + 1, .source = 1, .dest = 2,
          .a = WINDOW_ID, .c = 1 },
        { .type = WIRE_RMA_ACK, .context_id = WIRE_RMA_GET, .source = 1, .dest = 2, .a = WINDOW_ID },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned char buf[WIRE_HEADER_BYTES];
        struct wire_frame out;
        wire_encode_header(buf, &bad[i]);
        CU_ASSERT_EQUAL(decode_exact(buf, sizeof buf, &out), WIRE_ERROR);
    }
    unsigned char buf[WIRE_HEADER_BYTES];
    struct wire_frame out, ok = valid_frame(7);
    wire_encode_header(buf, &ok);
    buf[0] ^= 1;    /* magic */
    CU_ASSERT_EQUAL(decode_exact(buf, sizeof buf, &out), WIRE_ERROR);
    wire_encode_header(buf, &ok);
    buf[2] = WIRE_VERSION + 1;
    CU_ASSERT_EQUAL(decode_exact(buf, sizeof buf, &out), WIRE_ERROR);
    wire_encode_header(buf, &ok);
    buf[3] = WIRE_TYPE_END;
    CU_ASSERT_EQUAL(decode_exact(buf, sizeof buf, &out), WIRE_ERROR);
}

static void test_random_bytes(void)
{
    unsigned char buf[WIRE_HEADER_BYTES + 16];
    struct wire_frame out;
    int accepted = 0;
    for (int i = 0; i < ROUNDS; i++) {
        size_t len = (size_t)(rng() % sizeof buf);
        for (size_t j = 0; j < len; j++)
            buf[j] = (unsigned char)rng();
        /* Half the time, a plausible prefix so the checks behind the magic run too. */
        if (len >= 4 && (i & 1)) {
            buf[0] = WIRE_MAGIC & 0xff;
            buf[1] = WIRE_MAGIC >> 8;
            buf[2] = WIRE_VERSION;
            buf[3] = (unsigned char)(WIRE_HELLO + rng() % (WIRE_TYPE_END - WIRE_HELLO));
        }
        accepted += decode_exact(buf, len, &out) == WIRE_OK;
    }
    CU_ASSERT(accepted > 0);    /* some random DATA/CTS frames are valid: the checks above ran */
}

static void test_mutated_frames(void)
{
    struct wire_frame out;
    int refused = 0;
    for (int i = 0; i < ROUNDS; i++) {
        unsigned char buf[WIRE_HEADER_BYTES];
        struct wire_frame in = valid_frame((int)(rng() % VALID_FRAMES));
        wire_encode_header(buf, &in);
        int flips = 1 + (int)(rng() % 4);
        for (int k = 0; k < flips; k++) {
            size_t at = (size_t)(rng() % sizeof buf);
            if (rng() & 1)
                buf[at] ^= (unsigned char)(1u << (rng() % 8));
            else
                buf[at] = (unsigned char)rng();
        }
        refused += decode_exact(buf, sizeof buf, &out) == WIRE_ERROR;
    }
    CU_ASSERT(refused > 0);
}

/* A block list that wire_check_rma_blocks accepted, checked again independently. */
static void check_blocks_inside(const struct wire_frame *f, const unsigned char *payload)
{
    uint64_t total = 0;
    const struct wire_element *e = f->type == WIRE_RMA_ACC ? &elements[f->tag >> 8] : NULL;
    for (uint64_t i = 0; i < f->b; i++) {
        uint64_t offset, len;
        wire_block(payload, i, &offset, &len);
        uint64_t last_byte = e != NULL ? offset + (len - 1) * e->extent + e->true_ub : offset + len;
        CU_ASSERT(len >= 1 && offset < WINDOW_BYTES && last_byte <= WINDOW_BYTES);
        total += e != NULL ? len * e->extent : len;
    }
    if (f->type != WIRE_RMA_GET) {
        CU_ASSERT(total == f->c);
    }
}

/* Valid PUT, ACC and GET payloads, mutated: every verdict clean, every
 * accepted block inside the window (payloads sit in exact-size heap blocks). */
static void test_rma_blocks(void)
{
    int accepted = 0, refused = 0;
    for (int i = 0; i < ROUNDS / 4; i++) {
        int kind = (int)(rng() % 3);
        uint32_t element = (uint32_t)(rng() % ELEMENT_CODES);
        uint64_t nblocks = 1 + rng() % 8;
        struct wire_frame f = { .type = kind == 0 ? WIRE_RMA_PUT : kind == 1 ? WIRE_RMA_ACC : WIRE_RMA_GET,
                                .source = 1, .dest = 2, .a = WINDOW_ID, .b = nblocks, .c = 1,
                                .tag = kind == 1 ? (int32_t)(element << 8) : 0 };
        uint64_t unit = kind == 1 ? elements[element].extent : 1;
        unsigned char list[8 * WIRE_RMA_BLOCK_BYTES];
        uint64_t data = 0;
        for (uint64_t b = 0; b < nblocks; b++) {
            uint64_t len = 1 + rng() % 8, offset = (rng() % 64) * 16;
            wire_encode_block(list + b * WIRE_RMA_BLOCK_BYTES, offset, len);
            data += len * unit;
        }
        if (kind != 2)
            f.c = data;
        size_t list_bytes = nblocks * WIRE_RMA_BLOCK_BYTES;
        int flips = (int)(rng() % 3);
        for (int k = 0; k < flips; k++)
            list[rng() % list_bytes] ^= (unsigned char)(1u << (rng() % 8));
        unsigned char *payload = malloc(list_bytes);
        memcpy(payload, list, list_bytes);
        const char *why = wire_check_rma_blocks(&f, payload, &limits);
        if (why == NULL) {
            check_blocks_inside(&f, payload);
            accepted++;
        } else {
            CU_ASSERT(why[0] != '\0');
            refused++;
        }
        free(payload);
    }
    CU_ASSERT(accepted > 0 && refused > 0);
    /* One block past the end, one that wraps around. */
    unsigned char bad[WIRE_RMA_BLOCK_BYTES];
    struct wire_frame f = { .type = WIRE_RMA_PUT, .source = 1, .dest = 2, .a = WINDOW_ID, .b = 1, .c = 16 };
    wire_encode_block(bad, WINDOW_BYTES - 8, 16);
    CU_ASSERT(wire_check_rma_blocks(&f, bad, &limits) != NULL);
    wire_encode_block(bad, UINT64_MAX - 4, 16);
    CU_ASSERT(wire_check_rma_blocks(&f, bad, &limits) != NULL);
    /* A padded pair ending exactly at the window's end is inside; one more element is not. */
    f = (struct wire_frame){ .type = WIRE_RMA_ACC, .source = 1, .dest = 2, .a = WINDOW_ID, .b = 1, .c = 32,
                             .tag = 2 << 8 };
    wire_encode_block(bad, WINDOW_BYTES - 16 - 12, 2);
    CU_ASSERT(wire_check_rma_blocks(&f, bad, &limits) == NULL);
    wire_encode_block(bad, WINDOW_BYTES - 16 - 11, 2);
    CU_ASSERT(wire_check_rma_blocks(&f, bad, &limits) != NULL);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("wire", NULL, NULL);
    CU_add_test(s, "round trip of every frame type", test_round_trip);
    CU_add_test(s, "short input needs more", test_short_input);
    CU_add_test(s, "each validation rule refuses", test_each_rule);
    CU_add_test(s, "random bytes: clean verdicts", test_random_bytes);
    CU_add_test(s, "mutated frames: clean verdicts", test_mutated_frames);
    CU_add_test(s, "one-sided block lists: inside the window or refused", test_rma_blocks);
    return unit_run_registry();
}
