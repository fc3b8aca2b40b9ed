#!/usr/bin/env bash
# MPI_File_sync flushes only what was written or resized through a node
# process's descriptor since its last flush: tests/mpi/io_sync (writes,
# three syncs, writes, a sync, rank 0's set_size, two syncs) under strace
# must make 3 fsync calls in one node process, and 3 + 2 over two (the
# node without rank 0 did not resize). Before, every sync was an fsync
# (6 and 12), each a disk round trip even for a clean file.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || skip "strace not installed"
case ${LD_PRELOAD:-} in
*libasan* | *libtsan*) skip "a sanitizer runtime is preloaded (LD_PRELOAD)" ;;
esac
program="$builddir/tests/mpi/io_sync"
[ -x "$program" ] || { echo "FAIL: $program not built"; exit 1; }

# count_fsyncs TRACE: "N N ..." the fsync calls of each traced process, sorted
count_fsyncs() {
    grep 'fsync(' "$1" | awk '{ print $1 }' | sort | uniq -c | awk '{ print $1 }' | sort -n | tr '\n' ' ' |
        sed 's/ $//'
}

run_traced() { # NAME EXPECTED MPIEXEC-ARGS...
    local name=$1 want=$2
    shift 2
    strace -f -qq -e trace=fsync -o "$name.trace" "$mpiexec" "$@" "$program" >"$name.log" 2>&1 ||
        fail "$name: mpiexec $* exited $?"
    expect_in "$name.log" '^ No Errors$' "$name: the program's checks"
    local got
    got=$(count_fsyncs "$name.trace")
    [ "$got" = "$want" ] || fail "$name: fsync calls per node process '$got', expected '$want'"
}

run_traced one-node 3 -n 4
run_traced two-nodes "2 3" -n 4 --nodes 2
[ "$errors" -eq 0 ] || exit 1
echo "fsync only after writes and resizes: 3 in one node process, 2 and 3 in two"
