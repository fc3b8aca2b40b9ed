#!/usr/bin/env bash
# romio-suite.sh - runs ROMIO's own MPI-IO tests (src/mpi/romio/test of
# pmodels/mpich; never committed here) under Strand, or under MPICH to
# compare. Not part of `make check`: the sources come from outside.
#
# usage: tests/tools/romio-suite.sh --src DIR [--mpi strand|mpich] [--nodes K] [--out DIR]
#   --src    ROMIO's test directory, e.g. after
#              fetch github:pmodels/mpich (the tool), then
#              git --git-dir=<mirror> archive HEAD src/mpi/romio/test | tar x -C /tmp/romio
#            --src /tmp/romio/src/mpi/romio/test
#   --nodes  node processes for Strand (mpiexec --nodes K); default 1
#   --out    where binaries, outputs and test files go (default $TMPDIR/romio-suite)
#
# Each test runs at the rank count ROMIO's runtests script gives it (times
# K when that is smaller than K), with its file under --out. A test passes
# when it exits 0 and prints "No Errors"; the measuring programs that print
# no such line (external32, large_array, perf, coll_perf) pass when they
# exit 0 and print no error. fstype_prefix needs ROMIO's configure header
# and is left out; coll_perf writes a 14 GB file and runs only with
# --nodes 1. Prints one line per test and the count of failures; exits 1
# when any failed.
set -u
src= mpi=strand nodes=1 out=${TMPDIR:-/tmp}/romio-suite
while [ $# -gt 0 ]; do
    case $1 in
        --src) src=$2; shift 2 ;;
        --mpi) mpi=$2; shift 2 ;;
        --nodes) nodes=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "romio-suite: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -n "$src" ] && [ -f "$src/simple.c" ] || { echo "romio-suite: --src must name ROMIO's test directory" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
case $mpi in
    strand) cc=$root/launcher/mpicc; run=("$root/launcher/mpiexec" --nodes "$nodes") ;;
    mpich) cc=mpicc.mpich; run=(mpiexec.mpich) ;;
    *) echo "romio-suite: --mpi strand or mpich" >&2; exit 2 ;;
esac
out=$out/$mpi-nodes$nodes
mkdir -p "$out/files" || exit 1
# misc.c and large_file.c are made by ROMIO's configure from .in files.
for t in misc large_file; do
    sed 's/@LL@/lld/g' "$src/$t.c.in" >"$out/$t.c" || exit 1
done

tests="simple:4 async:4 async-multiple:4 atomicity:4 coll_test:4 excl:4 file_info:4 i_noncontig:2
noncontig:2 noncontig_coll:2 noncontig_coll2:4 aggregation1:4 aggregation2:4 hindexed:4 misc:4
shared_fp:4 ordered_fp:4 split_coll:4 psimple:4 error:1 status:1 types_with_zeros:2 darray_read:4
big_extents:4 creat_excl:4 external32:2 large_array:4 perf:4 coll_perf:4"
failed=0
for t in $tests; do
    name=${t%%:*} np=${t##*:}
    [ "$np" -lt "$nodes" ] && np=$((np * nodes))
    [ "$name" = coll_perf ] && [ "$nodes" -gt 1 ] && continue
    file=$src/$name.c
    [ -f "$file" ] || file=$out/$name.c
    if ! "$cc" -O1 -o "$out/$name" "$file" -lm 2>"$out/$name.build"; then
        echo "$name: does not build (see $out/$name.build)"
        failed=$((failed + 1))
        continue
    fi
    case $name in
        big_extents) args=("$out/files/$name.dat") ;;
        aggregation1) args=(-h -f "$out/files/$name.dat") ;;
        *) args=(-fname "$out/files/$name.dat") ;;
    esac
    start=$(date +%s.%N)
    timeout 600 "${run[@]}" -n "$np" "$out/$name" "${args[@]}" >"$out/$name.out" 2>&1
    rc=$?
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    rm -rf "$out/files/"*
    verdict=FAIL
    if [ "$rc" = 0 ]; then
        case $name in
            external32|large_array|perf|coll_perf) grep -qi error "$out/$name.out" || verdict=pass ;;
            *) grep -q "No Errors" "$out/$name.out" && verdict=pass ;;
        esac
    fi
    [ "$verdict" = pass ] || failed=$((failed + 1))
    printf '%-18s np=%-3s %-4s %7.2f s\n' "$name" "$np" "$verdict" "$seconds"
done
echo "$failed failed (outputs in $out)"
[ "$failed" = 0 ]
