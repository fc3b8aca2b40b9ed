/* Reductions beyond the op/type table: long vectors (split among ranks),
 * MPI_IN_PLACE, non-commutative user operations in rank order (reduce,
 * allreduce, reduce_scatter(_block), scan, exscan), Reduce_local and
 * Op_commutative. */
#include <stdlib.h>
#include <string.h>
#include "coll_util.h"

enum { P = 10007 };

/* An affine map x -> a x + b (mod P), as an MPI_2INT element. Composition
 * is associative but not commutative. */
struct affine { int a, b; };

static struct affine compose(struct affine f, struct affine g)   /* f then g */
{
    return (struct affine){ (int)((long)g.a * f.a % P), (int)(((long)g.a * f.b + g.b) % P) };
}

static void affine_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    struct affine *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = compose(x[i], y[i]);
}

static void int_sum_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] += x[i];
}

static struct affine input(int rank, int i)
{
    return (struct affine){ (rank * 31 + i * 7) % (P - 1) + 1, (rank * 17 + i) % P };
}

/* x_lo then ... then x_hi, element i. */
static struct affine fold(int lo, int hi, int i)
{
    struct affine acc = input(lo, i);
    for (int r = lo + 1; r <= hi; r++)
        acc = compose(acc, input(r, i));
    return acc;
}

static int same(struct affine x, struct affine y) { return x.a == y.a && x.b == y.b; }

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Long vectors of doubles: split among ranks; in place too. */
    int big = 4000000 / size < 300000 ? 4000000 / size : 300000;
    double *dv = malloc(sizeof(double) * (size_t)big), *dr = malloc(sizeof(double) * (size_t)big);
    for (int i = 0; i < big; i++)
        dv[i] = rank + (i % 100);
    MPI_Allreduce(dv, dr, big, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double base = (double)size * (size - 1) / 2;
    for (int i = 0; i < big; i++)
        if (dr[i] != base + (double)size * (i % 100)) {
            CHECK(&errs, 0, "allreduce %d doubles: [%d] = %g", big, i, dr[i]);
            break;
        }
    MPI_Allreduce(MPI_IN_PLACE, dv, big, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < big; i++)
        if (dv[i] != size - 1 + (i % 100)) {
            CHECK(&errs, 0, "allreduce in place: [%d] = %g", i, dv[i]);
            break;
        }
    for (int root = 0; root < size; root += size > 4 ? size / 3 + 1 : 1) {
        for (int i = 0; i < big; i++)
            dv[i] = rank + (i % 100);
        if (rank == root)
            MPI_Reduce(MPI_IN_PLACE, dv, big, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
        else
            MPI_Reduce(dv, NULL, big, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int i = 0; i < big; i++)
                if (dv[i] != base + (double)size * (i % 100)) {
                    CHECK(&errs, 0, "reduce in place at %d: [%d] = %g", root, i, dv[i]);
                    break;
                }
    }
    free(dv);
    free(dr);

    /* Non-commutative user op, short and long vectors. */
    MPI_Op affine, usum;
    MPI_Op_create(affine_op, 0, &affine);
    MPI_Op_create(int_sum_op, 1, &usum);
    int commute = -1;
    MPI_Op_commutative(affine, &commute);
    CHECK(&errs, commute == 0, "MPI_Op_commutative says %d for a non-commutative op", commute);
    MPI_Op_commutative(MPI_SUM, &commute);
    CHECK(&errs, commute == 1, "MPI_Op_commutative says %d for MPI_SUM", commute);
    const int lens[] = { 1, 5, 5000 };
    for (int l = 0; l < (size <= 16 ? 3 : 2); l++) {
        int n = lens[l];
        struct affine *in = malloc(sizeof *in * (size_t)n * (size_t)size), *out = malloc(sizeof *out * (size_t)n * (size_t)size);
        for (int i = 0; i < n; i++)
            in[i] = input(rank, i);
        MPI_Allreduce(in, out, n, MPI_2INT, affine, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            CHECK(&errs, same(out[i], fold(0, size - 1, i)), "affine allreduce n=%d [%d]", n, i);
        memset(out, 0, sizeof *out * (size_t)n);
        MPI_Reduce(in, out, n, MPI_2INT, affine, size - 1, MPI_COMM_WORLD);
        if (rank == size - 1)
            for (int i = 0; i < n; i++)
                CHECK(&errs, same(out[i], fold(0, size - 1, i)), "affine reduce n=%d [%d]", n, i);
        MPI_Scan(in, out, n, MPI_2INT, affine, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            CHECK(&errs, same(out[i], fold(0, rank, i)), "affine scan n=%d [%d]", n, i);
        memcpy(out, in, sizeof *out * (size_t)n);
        MPI_Exscan(MPI_IN_PLACE, out, n, MPI_2INT, affine, MPI_COMM_WORLD);
        if (rank > 0)
            for (int i = 0; i < n; i++)
                CHECK(&errs, same(out[i], fold(0, rank - 1, i)), "affine exscan in place n=%d [%d]", n, i);
        /* reduce_scatter_block: every rank's input is n blocks... of n elements each. */
        for (int i = 0; i < n * size; i++)
            in[i] = input(rank, i);
        MPI_Reduce_scatter_block(in, out, n, MPI_2INT, affine, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            CHECK(&errs, same(out[i], fold(0, size - 1, rank * n + i)), "affine reduce_scatter_block n=%d [%d]", n, i);
        MPI_Reduce_scatter_block(MPI_IN_PLACE, in, n, MPI_2INT, affine, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            CHECK(&errs, same(in[i], fold(0, size - 1, rank * n + i)), "reduce_scatter_block in place n=%d [%d]", n, i);
        free(in);
        free(out);
    }

    /* Reduce_scatter with uneven blocks (some empty), predefined and user sum. */
    int *counts = malloc(sizeof(int) * (size_t)size), total = 0;
    for (int r = 0; r < size; r++)
        total += counts[r] = r % 3;
    int *iv = malloc(sizeof(int) * (size_t)(total + 1)), *ir = malloc(sizeof(int) * 4);
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < total; i++)
            iv[i] = rank * i + 1;
        if (pass < 2) {
            MPI_Reduce_scatter(iv, ir, counts, MPI_INT, pass ? usum : MPI_SUM, MPI_COMM_WORLD);
        } else {
            MPI_Reduce_scatter(MPI_IN_PLACE, iv, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            memcpy(ir, iv, sizeof(int) * (size_t)counts[rank]);
        }
        int start = 0;
        for (int r = 0; r < rank; r++)
            start += counts[r];
        for (int i = 0; i < counts[rank]; i++) {
            int g = start + i;
            CHECK(&errs, ir[i] == g * (size * (size - 1) / 2) + size, "reduce_scatter pass %d [%d] = %d", pass, i, ir[i]);
        }
    }
    free(counts);
    free(iv);
    free(ir);

    /* Scan and exscan with MPI_SUM, in place. */
    int v = rank + 1, s = -1;
    MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(&errs, s == (rank + 1) * (rank + 2) / 2, "scan sum = %d", s);
    s = rank + 1;
    MPI_Scan(MPI_IN_PLACE, &s, 1, MPI_INT, usum, MPI_COMM_WORLD);
    CHECK(&errs, s == (rank + 1) * (rank + 2) / 2, "scan in place with a user op = %d", s);
    s = -5;
    MPI_Exscan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(&errs, rank == 0 ? s == -5 : s == rank * (rank + 1) / 2, "exscan sum = %d", s);

    /* Derived types: a strided vector of doubles (predefined op applied to
     * its basic elements), a contiguous run of MPI_2INT pairs with MAXLOC,
     * and a user op on the vector type itself. */
    {
        MPI_Datatype vec, pairs;
        MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec);    /* elements 0, 2, 4 of 5 */
        MPI_Type_commit(&vec);
        MPI_Type_contiguous(2, MPI_2INT, &pairs);
        MPI_Type_commit(&pairs);
        double x[4 * 6], y[4 * 6];   /* 4 vectors; extent is 5 doubles */
        for (int i = 0; i < 24; i++) {
            x[i] = rank + i;
            y[i] = -1;
        }
        MPI_Allreduce(x, y, 4, vec, MPI_SUM, MPI_COMM_WORLD);
        for (int v = 0; v < 4; v++)
            for (int k = 0; k < 5; k++) {
                int i = v * 5 + k;
                double want = k % 2 == 0 ? (double)size * (size - 1) / 2 + (double)size * i : -1;
                CHECK(&errs, y[i] == want, "vector allreduce [%d] = %g, expected %g", i, y[i], want);
            }
        struct affine pin[4], pout[4];
        for (int i = 0; i < 4; i++) {
            pin[i].a = (rank * 7 + i * 3) % 5;
            pin[i].b = rank;
        }
        MPI_Allreduce(pin, pout, 2, pairs, MPI_MAXLOC, MPI_COMM_WORLD);
        for (int i = 0; i < 4; i++) {
            int best = -1, at = 0;
            for (int r = 0; r < size; r++)
                if ((r * 7 + i * 3) % 5 > best) {
                    best = (r * 7 + i * 3) % 5;
                    at = r;
                }
            CHECK(&errs, pout[i].a == best && pout[i].b == at, "maxloc on contiguous 2INT [%d]: (%d, %d)", i,
                  pout[i].a, pout[i].b);
        }
        MPI_Type_free(&vec);
        MPI_Type_free(&pairs);
    }

    /* Reduce_local. */
    struct affine a[3], b[3];
    for (int i = 0; i < 3; i++) {
        a[i] = input(1, i);
        b[i] = input(2, i);
    }
    MPI_Reduce_local(a, b, 3, MPI_2INT, affine);
    for (int i = 0; i < 3; i++)
        CHECK(&errs, same(b[i], fold(1, 2, i)), "reduce_local with a user op [%d]", i);
    long la[2] = { 5, -3 }, lb[2] = { 2, 9 };
    MPI_Reduce_local(la, lb, 2, MPI_LONG, MPI_PROD);
    CHECK(&errs, lb[0] == 10 && lb[1] == -27, "reduce_local prod gave %ld %ld", lb[0], lb[1]);
    MPI_Op_free(&affine);
    MPI_Op_free(&usum);
    CHECK(&errs, affine == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
    return coll_finish(errs);
}
