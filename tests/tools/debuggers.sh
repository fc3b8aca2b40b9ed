#!/usr/bin/env bash
# Debuggers and profilers see the program's own code in every rank: gdb
# (breakpoint before run, backtraces in two ranks, thread names), valgrind
# memcheck (file:line and rank of an error), perf (samples in the program's
# functions).  A missing tool skips its part, saying so.
. "$(dirname "$0")/lib.sh"
ran=0
# Under the sanitizer recipe (a preloaded ASan/TSan runtime, README) gdb,
# valgrind and perf would run with that runtime too: nothing to learn.
case ${LD_PRELOAD:-} in
*libasan* | *libtsan*) skip "a sanitizer runtime is preloaded (LD_PRELOAD); debuggers are checked in a normal run" ;;
esac

cat >dbg.c <<'SRC'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile double sink;

__attribute__((noinline)) int compute_in_rank(int rank)
{
    int *scratch = malloc(4 * sizeof *scratch);
    int result = rank * 10;
    if (getenv("DBG_UNINIT") != NULL && scratch[rank % 4] == 12345) /* line 13 */
        result++;
    free(scratch);
    return result;
}

__attribute__((noinline)) void spin_in_rank(long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)i * 0.5;
    sink = s;
}

__attribute__((noinline)) void wait_in_rank(const char *file)
{
    while (access(file, F_OK) != 0)
        usleep(10000);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (compute_in_rank(rank) != rank * 10)
        printf("wrong\n");
    if (argc > 2 && strcmp(argv[1], "wait") == 0)
        wait_in_rank(argv[2]);
    else if (argc > 1)
        spin_in_rank(atol(argv[1]));
    MPI_Finalize();
    return 0;
}
SRC
"$mpicc" -g -O0 -o dbg dbg.c || { fail "mpicc -g"; finish; }

# check_gdb_breakpoint PROG: a breakpoint set before run stops in both
# ranks of PROG, with backtraces naming the program's functions and lines.
check_gdb_breakpoint() {
    local log=gdb-$1.log
    STRAND_NRANKS=2 timeout 120 gdb -batch -nx -ex 'break compute_in_rank' -ex run \
        -ex bt -ex 'info threads' -ex continue -ex bt -ex continue --args "./$1" >"$log" 2>&1
    [ "$(grep -c 'hit Breakpoint .*compute_in_rank' "$log")" -eq 2 ] ||
        fail "gdb $1: the breakpoint was not hit in both ranks"
    expect_in "$log" 'Thread [0-9]+ "rank 0" hit Breakpoint' "gdb $1: rank 0 stops"
    expect_in "$log" 'Thread [0-9]+ "rank 1" hit Breakpoint' "gdb $1: rank 1 stops"
    expect_in "$log" '#0 +compute_in_rank \(rank=0\) at dbg.c:[0-9]+' "gdb $1: rank 0 backtrace"
    expect_in "$log" '#0 +compute_in_rank \(rank=1\) at dbg.c:[0-9]+' "gdb $1: rank 1 backtrace"
    expect_in "$log" '#1 +0x[0-9a-f]+ in main \(.*\) at dbg.c:[0-9]+' "gdb $1: main's frame"
    expect_in "$log" '"rank 1" ' "gdb $1: info threads names the rank threads"
}

if command -v gdb >/dev/null; then
    ran=1
    check_gdb_breakpoint dbg
    # linked without mpicc (pkg-config here; CMake's FindMPI links alike)
    if command -v pkg-config >/dev/null; then
        # shellcheck disable=SC2046
        cc -g -O0 -o dbg_pc dbg.c $(PKG_CONFIG_PATH="$builddir/launcher" pkg-config --cflags --libs mpi) ||
            fail "cc \$(pkg-config --cflags --libs mpi) -g"
        check_gdb_breakpoint dbg_pc
    fi

    # gdb -p: attach to a running 2-rank job, a backtrace of every rank.
    STRAND_NRANKS=2 ./dbg wait release >attach-run.log 2>&1 &
    job=$!
    sleep 1
    timeout 120 gdb -batch -nx -p "$job" -ex 'thread apply all bt' >attach.log 2>&1
    touch release
    wait "$job" || fail "the job gdb attached to failed"
    for r in 0 1; do
        grep -A12 "\"rank $r\"" attach.log | grep -Eq 'wait_in_rank \(file=.*\) at dbg.c:[0-9]+' ||
            { fail "gdb -p: no wait_in_rank at dbg.c:N in rank $r"; sed 's/^/  | /' attach.log | head -60; }
    done
else
    echo "gdb not installed: gdb checks skipped (apt-get install gdb)"
fi

if command -v valgrind >/dev/null; then
    ran=1
    DBG_UNINIT=1 timeout 300 "$mpiexec" -n 2 valgrind -q ./dbg >valgrind.log 2>&1
    expect_in valgrind.log 'Thread [0-9]+ rank [01]:' "valgrind: the error names its rank"
    expect_in valgrind.log 'compute_in_rank \(dbg.c:13\)' "valgrind: the program's file:line"
    [ "$(grep -c 'compute_in_rank (dbg.c:13)' valgrind.log)" -ge 2 ] ||
        fail "valgrind: the error is not reported in both ranks"
else
    echo "valgrind not installed: valgrind checks skipped (apt-get install valgrind)"
fi

if command -v perf >/dev/null && perf record -q -o probe.data true >/dev/null 2>&1; then
    ran=1
    perf record -q -o perf.data "$mpiexec" -n 2 ./dbg 100000000 >perf-record.log 2>&1 ||
        fail "perf record"
    perf report -i perf.data --stdio --sort comm,dso,sym >perf.log 2>&1
    expect_in perf.log 'rank [01] +dbg +\[\.\] spin_in_rank' "perf: samples in the program's function per rank"
else
    echo "perf not usable here: perf checks skipped (linux-perf, kernel.perf_event_paranoid)"
fi

[ "$ran" -eq 1 ] || skip "none of gdb, valgrind, perf is usable"
finish
