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

static const struct wire_limits limits = {
    .first_rank = 8, .local_ranks = 4, .nnodes = 3, .job_id = 0x1234abcdULL,
    .max_eager = 16384, .max_data = 1u << 30, .tag_ub = 1 << 30,
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* What any accepted frame must satisfy, whatever produced it. */
static void check_accepted(const struct wire_frame *f)
{
    CU_ASSERT_FATAL(f->type >= WIRE_HELLO && f->type < WIRE_TYPE_END);
    switch (f->type) {
    case WIRE_HELLO:
        CU_ASSERT(f->payload_len == 0 && f->a == limits.job_id && f->b < limits.nnodes);
        break;
    case WIRE_EAGER:
    case WIRE_RTS:
        CU_ASSERT(f->dest >= limits.first_rank && f->dest < limits.first_rank + limits.local_ranks);
        CU_ASSERT(f->source >= 0 && f->tag >= 0 && f->tag <= limits.tag_ub);
        if (f->type == WIRE_EAGER) {
            CU_ASSERT(f->payload_len <= limits.max_eager && f->a == f->payload_len);
        } else {
            CU_ASSERT(f->payload_len == 0);
        }
        break;
    case WIRE_CTS:
        CU_ASSERT(f->payload_len == 0 && f->c <= limits.max_data);
        break;
    case WIRE_DATA:
        CU_ASSERT(f->payload_len <= limits.max_data);
        break;
    case WIRE_CANCEL:
        CU_ASSERT(f->payload_len == 0 && f->dest >= limits.first_rank &&
                  f->dest < limits.first_rank + limits.local_ranks);
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

static struct wire_frame valid_frame(int which)
{
    switch (which % 8) {
    case 0: return (struct wire_frame){ .type = WIRE_HELLO, .a = limits.job_id, .b = 2, .c = 3 };
    case 1: return (struct wire_frame){ .type = WIRE_EAGER, .payload_len = 100, .context_id = 4, .source = 3,
                                        .tag = 7, .dest = 9, .a = 100 };
    case 2: return (struct wire_frame){ .type = WIRE_RTS, .context_id = 6, .source = 0, .tag = 0, .dest = 11,
                                        .a = 1 << 20, .b = (5ULL << 32) | 3 };
    case 3: return (struct wire_frame){ .type = WIRE_CTS, .a = 77, .b = 99, .c = 4096 };
    case 4: return (struct wire_frame){ .type = WIRE_DATA, .payload_len = 4096, .a = 99 };
    case 5: return (struct wire_frame){ .type = WIRE_CANCEL, .dest = 10, .a = 77 };
    case 6: return (struct wire_frame){ .type = WIRE_CANCELLED, .a = 77, .b = 1 };
    default: return (struct wire_frame){ .type = WIRE_BYE };
    }
}

static void test_round_trip(void)
{
    for (int i = 0; i < 8; i++) {
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
        { .type = WIRE_HELLO, .a = limits.job_id + 1, .b = 0, .c = 3 },          /* other job */
        { .type = WIRE_HELLO, .a = limits.job_id, .b = 3, .c = 3 },              /* node index */
        { .type = WIRE_HELLO, .a = limits.job_id, .b = 0, .c = 4 },              /* node count */
        { .type = WIRE_EAGER, .payload_len = 20000, .dest = 9, .a = 20000 },     /* over eager limit */
        { .type = WIRE_EAGER, .payload_len = 10, .dest = 9, .a = 11 },           /* size mismatch */
        { .type = WIRE_EAGER, .payload_len = 0, .dest = 12 },                    /* dest not local */
        { .type = WIRE_EAGER, .payload_len = 0, .dest = 7 },
        { .type = WIRE_EAGER, .payload_len = 0, .dest = 9, .source = -1 },
        { .type = WIRE_RTS, .dest = 9, .tag = -5 },
        { .type = WIRE_RTS, .dest = 9, .payload_len = 1 },
        { .type = WIRE_CTS, .payload_len = 8 },
        { .type = WIRE_DATA, .payload_len = (1u << 30) + 1 },
        { .type = WIRE_BYE, .payload_len = 1 },
        { .type = WIRE_CANCEL, .dest = 3 },
        { .type = WIRE_CANCELLED, .b = 2 },
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
        struct wire_frame in = valid_frame((int)(rng() % 8));
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

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("wire", NULL, NULL);
    CU_add_test(s, "round trip of every frame type", test_round_trip);
    CU_add_test(s, "short input needs more", test_short_input);
    CU_add_test(s, "each validation rule refuses", test_each_rule);
    CU_add_test(s, "random bytes: clean verdicts", test_random_bytes);
    CU_add_test(s, "mutated frames: clean verdicts", test_mutated_frames);
    return unit_run_registry();
}
