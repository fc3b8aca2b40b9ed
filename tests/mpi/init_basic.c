/*
 * init_basic: environment calls.
 *   MPI_Initialized / MPI_Finalized before, during and after the MPI
 *   section; MPI_Get_version before MPI_Init, during and after finalize;
 *   MPI_Query_thread, MPI_Is_thread_main, MPI_Get_processor_name,
 *   MPI_Wtime (monotonic, advances across a sleep) and MPI_Wtick,
 *   MPI_Comm_size/rank on MPI_COMM_WORLD and MPI_COMM_SELF,
 *   MPI_Alloc_mem / MPI_Free_mem, MPI_Pcontrol.
 *   Rank 0 also gathers every rank's rank and size by messages and checks
 *   that the ranks are 0..n-1 and all agree on n.
 *
 * Minimum ranks: 1.
 */
#include "testutil.h"

int main(int argc, char **argv)
{
    int errs = 0, flag, version, subversion, rank, size, r, total;
    int provided, is_main, len, i;
    char name[MPI_MAX_PROCESSOR_NAME + 1];
    double t0, t1, tprev, tick;

    /* Before MPI_Init: only a few calls are allowed. */
    flag = -1;
    MPI_Initialized(&flag);
    if (flag != 0) {
        printf("before MPI_Init: MPI_Initialized expected 0, got %d\n", flag);
        errs++;
    }
    flag = -1;
    MPI_Finalized(&flag);
    if (flag != 0) {
        printf("before MPI_Init: MPI_Finalized expected 0, got %d\n", flag);
        errs++;
    }
    version = subversion = -1;
    MPI_Get_version(&version, &subversion);
    if (version != MPI_VERSION || subversion != MPI_SUBVERSION) {
        printf("before MPI_Init: MPI_Get_version gave %d.%d, mpi.h says "
               "%d.%d\n", version, subversion, MPI_VERSION, MPI_SUBVERSION);
        errs++;
    }

    MPI_Init(&argc, &argv);
    rank = tu_rank();
    size = tu_size();

    flag = -1;
    MPI_Initialized(&flag);
    CHECK_INT("MPI_Initialized after MPI_Init", 1, flag);
    flag = -1;
    MPI_Finalized(&flag);
    CHECK_INT("MPI_Finalized after MPI_Init", 0, flag);

    /* Version: consistent with mpi.h and at least 2.2. */
    version = subversion = -1;
    CHECK_RC(MPI_Get_version(&version, &subversion));
    CHECK_INT("MPI_Get_version version", MPI_VERSION, version);
    CHECK_INT("MPI_Get_version subversion", MPI_SUBVERSION, subversion);
    CHECK(version > 2 || (version == 2 && subversion >= 2),
          "MPI_Get_version: %d.%d is older than 2.2", version, subversion);

    /* Thread levels are ordered, and Query_thread gives one of them. */
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
              MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
              MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
          "thread level constants are not monotonic");
    provided = -1;
    CHECK_RC(MPI_Query_thread(&provided));
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
              provided == MPI_THREAD_SERIALIZED ||
              provided == MPI_THREAD_MULTIPLE,
          "MPI_Query_thread gave %d, not a thread level", provided);
    is_main = -1;
    CHECK_RC(MPI_Is_thread_main(&is_main));
    CHECK(is_main != 0 && is_main != -1,
          "MPI_Is_thread_main in main thread gave %d", is_main);

    /* Processor name: non-empty, NUL-terminated, length matches. */
    memset(name, 'x', sizeof name);
    len = -1;
    CHECK_RC(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME,
          "MPI_Get_processor_name length %d out of range", len);
    if (len > 0 && len < MPI_MAX_PROCESSOR_NAME)
        CHECK_INT("strlen of processor name vs resultlen", len,
                  (long long)strnlen(name, sizeof name));

    /* Wtime never goes backwards and advances across a sleep. */
    tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick < 1.0, "MPI_Wtick gave %g", tick);
    t0 = tprev = MPI_Wtime();
    for (i = 0; i < 10000; i++) {
        double t = MPI_Wtime();
        if (t < tprev) {
            errs += TU_FAIL("MPI_Wtime went backwards: %.9f then %.9f", tprev,
                            t);
            break;
        }
        tprev = t;
    }
    tu_sleep_ms(20);
    t1 = MPI_Wtime();
    CHECK(t1 - t0 >= 0.015 && t1 - t0 < 60.0,
          "MPI_Wtime advanced %.6f s across a 20 ms sleep", t1 - t0);

    /* COMM_WORLD and COMM_SELF. */
    CHECK(size >= 1, "MPI_COMM_WORLD size %d", size);
    CHECK(rank >= 0 && rank < size, "MPI_COMM_WORLD rank %d of %d", rank,
          size);
    {
        int ssize = -1, srank = -1;
        CHECK_RC(MPI_Comm_size(MPI_COMM_SELF, &ssize));
        CHECK_RC(MPI_Comm_rank(MPI_COMM_SELF, &srank));
        CHECK_INT("MPI_COMM_SELF size", 1, ssize);
        CHECK_INT("MPI_COMM_SELF rank", 0, srank);
    }

    /* Alloc_mem: usable memory, written and read back; one larger block. */
    {
        int *p = NULL;
        unsigned char *big = NULL;
        size_t bigsize = rank == 0 ? (1u << 20) : 8192;
        CHECK_RC(MPI_Alloc_mem(4096 * sizeof(int), MPI_INFO_NULL, &p));
        if (p) {
            for (i = 0; i < 4096; i++)
                p[i] = i * 3 + rank;
            for (i = 0; i < 4096; i++)
                if (p[i] != i * 3 + rank) {
                    errs += TU_FAIL("MPI_Alloc_mem block: p[%d] = %d", i,
                                    p[i]);
                    break;
                }
            CHECK_RC(MPI_Free_mem(p));
        } else
            errs += TU_FAIL("MPI_Alloc_mem returned NULL");
        CHECK_RC(MPI_Alloc_mem((MPI_Aint)bigsize, MPI_INFO_NULL, &big));
        if (big) {
            tu_fill(big, bigsize, 77);
            errs += tu_check_data(big, bigsize, bigsize, 77, "Alloc_mem");
            CHECK_RC(MPI_Free_mem(big));
        } else
            errs += TU_FAIL("MPI_Alloc_mem returned NULL");
    }

    /* Pcontrol: any level is accepted. */
    CHECK_RC(MPI_Pcontrol(0));
    CHECK_RC(MPI_Pcontrol(1));
    CHECK_RC(MPI_Pcontrol(2));
    CHECK_RC(MPI_Pcontrol(1));

    /* Rank 0 checks that the ranks are 0..n-1 and agree on the size. */
    if (rank == 0) {
        for (r = 1; r < size; r++) {
            int v[2] = {-1, -1};
            MPI_Status st;
            MPI_Recv(v, 2, MPI_INT, r, 1, MPI_COMM_WORLD, &st);
            CHECK_INT("rank reported by a peer", r, v[0]);
            CHECK_INT("size reported by a peer", size, v[1]);
            errs += tu_check_status(&st, r, 1, MPI_INT, 2, "rank gather");
        }
    } else {
        int v[2];
        v[0] = rank;
        v[1] = size;
        MPI_Send(v, 2, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }

    total = tu_collect(errs);
    MPI_Finalize();

    /* After MPI_Finalize (no MPI calls but these three). */
    flag = -1;
    MPI_Finalized(&flag);
    if (flag != 1) {
        printf("rank %d: MPI_Finalized after MPI_Finalize: expected 1, got "
               "%d\n", rank, flag);
        total++;
    }
    flag = -1;
    MPI_Initialized(&flag);
    if (flag != 1) {
        printf("rank %d: MPI_Initialized after MPI_Finalize: expected 1, got "
               "%d\n", rank, flag);
        total++;
    }
    version = subversion = -1;
    MPI_Get_version(&version, &subversion);
    if (version != MPI_VERSION || subversion != MPI_SUBVERSION) {
        printf("rank %d: MPI_Get_version after MPI_Finalize gave %d.%d\n",
               rank, version, subversion);
        total++;
    }
    if (rank == 0)
        tu_report(total);
    return total != 0;
}
