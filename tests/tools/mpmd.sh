#!/usr/bin/env bash
# mpiexec with several programs in one job (MPI-2.2 §8.8, MPMD):
#   mpiexec -n 2 mpmd LAYOUT index : -n 3 mpmd_peer LAYOUT index "a b" ""
# tests/mpi/mpmd.h checks, in every rank, that it runs the program the
# layout gives its world rank, its MPI_APPNUM and its exact arguments, and
# exchanges with the other programs' ranks. In one node process, across 2
# and 3 node processes (a node whose first rank is the second program),
# with the programs three times on the command line, and at 64 ranks
# (oversubscribed). Then bad command lines: a ':' with no program after
# it, an option other than -n after ':', a program that does not exist,
# one that is not executable, one that is not a Strand program, and a node
# process that ends before Strand starts in it.
# Run by make check as `mpmd.sh BUILDDIR SRCDIR`.
. "$(dirname "$0")/lib.sh"

a="$builddir/tests/mpi/mpmd"
b="$builddir/tests/mpi/mpmd_peer"
[ -x "$a" ] && [ -x "$b" ] || skip "tests/mpi/mpmd and mpmd_peer are not built (make mpi-programs)"

# job NAME WANT_EXIT REGEX mpiexec-arguments...
job() {
    local name=$1 want=$2 regex=$3
    shift 3
    timeout -k 5 60 "$mpiexec" "$@" >"$name.log" 2>&1
    local rc=$?
    [ "$rc" -eq "$want" ] || { fail "$name: exit $rc, expected $want"; sed 's/^/  | /' "$name.log" | head -20; }
    expect_in "$name.log" "$regex" "$name"
}

L=mpmd:2,mpmd_peer:3
job one_process 0 "^ No Errors$" -n 2 "$a" $L index : -n 3 "$b" $L index "a b" ""
job two_nodes 0 "^ No Errors$" --nodes 2 -n 2 "$a" $L index : -n 3 "$b" $L index "a b" ""
job three_nodes 0 "^ No Errors$" --nodes 3 -n 2 "$a" $L index : -n 3 "$b" $L index "a b" ""
# The first node process's first rank runs the second program.
L=mpmd_peer:1,mpmd:4
job peer_first 0 "^ No Errors$" --nodes 2 -n 1 "$b" $L index "a b" "" : -np 4 "$a" $L index
L=mpmd:1,mpmd_peer:30,mpmd:33
job three_apps_64 0 "^ No Errors$" -n 1 "$a" $L index : -n 30 "$b" $L index "a b" "" : -n 33 "$a" $L index
job three_apps_64_nodes 0 "^ No Errors$" --nodes 3 -n 1 "$a" $L index : -n 30 "$b" $L index "a b" "" : -n 33 "$a" $L index
# The second program's rank count defaults to 1, like the first's.
L=mpmd:1,mpmd_peer:1
job default_count 0 "^ No Errors$" "$a" $L index : "$b" $L index "a b" ""

job no_program 2 "no program after ':'" -n 2 "$a" x index :
job option_after_colon 2 "after ':', only -n N" -n 2 "$a" x index : --bind none "$b"
job missing 127 "cannot run $builddir/tests/mpi/no_such_program: No such file" -n 1 "$a" x index : \
    -n 1 "$builddir/tests/mpi/no_such_program"
job not_executable 126 "cannot run .*mpmd.c: Permission denied" -n 1 "$a" x index : -n 1 "$srcdir/tests/mpi/mpmd.c"
job not_strand 1 "cannot read its program /bin/true: .*not a Strand program" -n 1 "$a" x index : -n 1 /bin/true

# A node process that ends before Strand starts in it (here the second
# node's program is /bin/false; a library that does not load would do the
# same): the first node, waiting to connect to it, learns from mpiexec's
# store that it ended and ends the job within seconds, not the connect
# timeout (60 s).
nets=tcp
grep -q 'HAVE_UCX=1' "$builddir/config.status" 2>/dev/null && nets="tcp ucx"
for net in $nets; do
    started=$SECONDS
    UCX_NET_DEVICES=lo job "node_never_starts_$net" 1 \
        "node 0 lost node 1 \(ranks 2-3\): .*its node process ended \(exit status 1\)" \
        --net "$net" --nodes 2 -n 2 "$builddir/tests/mpi/coll_bcast" : -n 2 /bin/false
    [ $((SECONDS - started)) -le 15 ] || fail "node_never_starts_$net: took $((SECONDS - started)) s"
done

finish
