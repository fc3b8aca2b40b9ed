/* MPI_Pack/MPI_Unpack through an MPI_PACKED message, MPI_Pack_size, and
 * MPI_Pack_external with the exact big-endian external32 bytes of every
 * predefined type (MPI-2.2 §13.5.2 sizes: long 4, wchar 2, long double 16). */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>
#include "mpi.h"

struct ext_case {
    const char *name;
    MPI_Datatype type;
    const void *value;
    int bytes;
    unsigned char want[32];
};

static int check_external(void)
{
    static const char c = 'A';
    static const short s = -2;
    static const unsigned short us = 0xabcd;
    static const int i = 0x01020304;
    static const unsigned u = 0xfffffffe;
    static const long l = -3;
    static const unsigned long ul = 0x89abcdefUL;
    static const long long ll = 0x0102030405060708LL;
    static const float f = 1.0f;
    static const double d = -2.0;
    static const long double ld = -1.0L;
    static const wchar_t w = 0x263a;
    static const bool b = true;
    static const int64_t i64 = -1;
    static const uint16_t u16 = 0x1234;
    static const MPI_Aint aint = 0x1122334455667788L;
    static const float _Complex fc = 1.0f + 2.0f * I;
    static const struct { double v; int i; } di = { 0.5, 7 };
    static const struct { short v; int i; } si = { 3, -1 };
    static const struct ext_case cases[] = {
        { "MPI_CHAR", MPI_CHAR, &c, 1, { 'A' } },
        { "MPI_SHORT", MPI_SHORT, &s, 2, { 0xff, 0xfe } },
        { "MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, &us, 2, { 0xab, 0xcd } },
        { "MPI_INT", MPI_INT, &i, 4, { 1, 2, 3, 4 } },
        { "MPI_UNSIGNED", MPI_UNSIGNED, &u, 4, { 0xff, 0xff, 0xff, 0xfe } },
        { "MPI_LONG", MPI_LONG, &l, 4, { 0xff, 0xff, 0xff, 0xfd } },
        { "MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, &ul, 4, { 0x89, 0xab, 0xcd, 0xef } },
        { "MPI_LONG_LONG_INT", MPI_LONG_LONG_INT, &ll, 8, { 1, 2, 3, 4, 5, 6, 7, 8 } },
        { "MPI_FLOAT", MPI_FLOAT, &f, 4, { 0x3f, 0x80, 0, 0 } },
        { "MPI_DOUBLE", MPI_DOUBLE, &d, 8, { 0xc0, 0, 0, 0, 0, 0, 0, 0 } },
        { "MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, &ld, 16, { 0xbf, 0xff } },
        { "MPI_WCHAR", MPI_WCHAR, &w, 2, { 0x26, 0x3a } },
        { "MPI_C_BOOL", MPI_C_BOOL, &b, 1, { 1 } },
        { "MPI_INT64_T", MPI_INT64_T, &i64, 8, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
        { "MPI_UINT16_T", MPI_UINT16_T, &u16, 2, { 0x12, 0x34 } },
        { "MPI_AINT", MPI_AINT, &aint, 8, { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 } },
        { "MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, &fc, 8, { 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0 } },
        { "MPI_DOUBLE_INT", MPI_DOUBLE_INT, &di, 12, { 0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 } },
        { "MPI_SHORT_INT", MPI_SHORT_INT, &si, 6, { 0, 3, 0xff, 0xff, 0xff, 0xff } },
        { "MPI_INTEGER", MPI_INTEGER, &i, 4, { 1, 2, 3, 4 } },
        { "MPI_REAL8", MPI_REAL8, &d, 8, { 0xc0, 0, 0, 0, 0, 0, 0, 0 } },
    };
    int errs = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const struct ext_case *e = &cases[k];
        unsigned char buf[32], back[32];
        MPI_Aint size, pos = 0;
        MPI_Pack_external_size("external32", 1, e->type, &size);
        memset(buf, 0x55, sizeof buf);
        MPI_Pack_external("external32", (void *)e->value, 1, e->type, buf, sizeof buf, &pos);
        if (size != e->bytes || pos != e->bytes || memcmp(buf, e->want, (size_t)e->bytes) != 0) {
            printf("%s: external32 size %ld, position %ld, bytes", e->name, (long)size, (long)pos);
            for (int j = 0; j < e->bytes; j++)
                printf(" %02x", buf[j]);
            printf("\n");
            errs++;
            continue;
        }
        MPI_Aint extent, lb;
        MPI_Type_get_extent(e->type, &lb, &extent);
        memset(back, 0, sizeof back);
        pos = 0;
        MPI_Unpack_external("external32", buf, size, &pos, back, 1, e->type);
        int tsize;
        MPI_Type_size(e->type, &tsize);
        /* compare data bytes only (pair types have padding) */
        bool same = e->type == MPI_DOUBLE_INT ? memcmp(back, e->value, 12) == 0
                  : e->type == MPI_SHORT_INT ? memcmp(back, e->value, 2) == 0 && memcmp(back + 4, (const char *)e->value + 4, 4) == 0
                  : e->type == MPI_LONG_DOUBLE ? *(long double *)back == ld
                  : memcmp(back, e->value, (size_t)tsize) == 0;
        if (!same)
            printf("%s: external32 round trip differs\n", e->name), errs++;
    }
    /* A vector of ints: big-endian, gaps skipped. */
    int v[6] = { 1, -1, 2, -1, 3, -1 };
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    unsigned char out[12];
    MPI_Aint pos = 0;
    MPI_Pack_external("external32", v, 1, vec, out, sizeof out, &pos);
    static const unsigned char want[12] = { 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3 };
    if (pos != 12 || memcmp(out, want, 12) != 0)
        printf("vector external32 differs\n"), errs++;
    MPI_Type_free(&vec);
    /* A long that does not fit 4 bytes is a conversion error, not truncation. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long big = 1L << 40;
    pos = 0;
    int rc = MPI_Pack_external("external32", &big, 1, MPI_LONG, out, sizeof out, &pos), cls;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_CONVERSION)
        printf("oversized long: class %d\n", cls), errs++;
    rc = MPI_Pack_external("native", v, 1, MPI_INT, out, sizeof out, &pos);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_ARG)
        printf("unknown datarep: class %d\n", cls), errs++;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return errs;
}

struct rec { int id; double x[3]; char tag; };

/* Rank 0 packs an int count, records as a struct type, and a vector; each
 * other rank receives MPI_PACKED and unpacks. */
static int check_pack(int rank, int size)
{
    int errs = 0, bl[3] = { 1, 3, 1 };
    MPI_Aint disp[3] = { offsetof(struct rec, id), offsetof(struct rec, x), offsetof(struct rec, tag) };
    MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, rt, vec;
    MPI_Type_create_struct(3, bl, disp, types, &rt);
    MPI_Type_commit(&rt);
    MPI_Type_vector(4, 1, 3, MPI_SHORT, &vec);
    MPI_Type_commit(&vec);
    int s1, s2, s3;
    MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s1);
    MPI_Pack_size(5, rt, MPI_COMM_WORLD, &s2);
    MPI_Pack_size(2, vec, MPI_COMM_WORLD, &s3);
    if (s2 != 5 * (int)(sizeof(int) + 3 * sizeof(double) + 1) || s3 != 16)
        printf("MPI_Pack_size: %d %d\n", s2, s3), errs++;
    int total = s1 + s2 + s3;
    char buf[512];
    if (rank == 0) {
        struct rec r[5];
        short sv[24];
        int n = 5, pos = 0;
        for (int k = 0; k < 5; k++) {
            r[k].id = k;
            r[k].x[0] = k; r[k].x[1] = -k; r[k].x[2] = k * 0.25;
            r[k].tag = (char)('p' + k);
        }
        for (int k = 0; k < 24; k++)
            sv[k] = (short)(k * 10);
        MPI_Pack(&n, 1, MPI_INT, buf, total, &pos, MPI_COMM_WORLD);
        MPI_Pack(r, 5, rt, buf, total, &pos, MPI_COMM_WORLD);
        MPI_Pack(sv, 2, vec, buf, total, &pos, MPI_COMM_WORLD);
        if (pos != total)
            printf("packed %d of %d bytes\n", pos, total), errs++;
        for (int dst = 1; dst < size; dst++)
            MPI_Send(buf, pos, MPI_PACKED, dst, 7, MPI_COMM_WORLD);
    } else {
        struct rec r[5];
        short sv[24];
        int n = 0, pos = 0;
        memset(r, 0, sizeof r);
        for (int k = 0; k < 24; k++)
            sv[k] = -1;
        MPI_Recv(buf, total, MPI_PACKED, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Unpack(buf, total, &pos, &n, 1, MPI_INT, MPI_COMM_WORLD);
        MPI_Unpack(buf, total, &pos, r, n, rt, MPI_COMM_WORLD);
        MPI_Unpack(buf, total, &pos, sv, 2, vec, MPI_COMM_WORLD);
        for (int k = 0; k < 5; k++)
            if (r[k].id != k || r[k].x[1] != -k || r[k].x[2] != k * 0.25 || r[k].tag != 'p' + k)
                printf("record %d differs\n", k), errs++;
        /* vec extent is 10 shorts: elements at 0,3,6,9 then 10,13,16,19 */
        for (int k = 0; k < 24; k++) {
            int want = (k < 10 ? k % 3 == 0 : k < 20 && (k - 10) % 3 == 0) ? k * 10 : -1;
            if (sv[k] != want)
                printf("short %d is %d, expected %d\n", k, sv[k], want), errs++;
        }
    }
    MPI_Type_free(&rt);
    MPI_Type_free(&vec);
    return errs;
}

int main(int argc, char **argv)
{
    int rank, size, errs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    errs = check_external() + check_pack(rank, size);
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            int e;
            MPI_Recv(&e, 1, MPI_INT, i, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
        printf(errs == 0 ? " No Errors\n" : " Found %d errors\n", errs);
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return errs != 0;
}
