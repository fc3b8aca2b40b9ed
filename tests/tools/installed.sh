#!/usr/bin/env bash
# An installed Strand (make installcheck, run by make distcheck): the
# installed mpicc, mpicxx, mpiexec and mpi.pc work from the prefix alone,
# and CMake's FindMPI finds them through MPI_HOME.  Arguments: PREFIX SRCDIR.
. "$(dirname "$0")/lib.sh" "$1" "$2"
prefix=$builddir
cp "$srcdir/tests/tools/cmake/ring.c" "$srcdir/tests/tools/cmake/ring.cpp" .

"$prefix/bin/mpicc" -o ring_c ring.c || fail "installed mpicc"
"$prefix/bin/mpicxx" -o ring_cxx ring.cpp || fail "installed mpicxx"
for prog in ring_c ring_cxx; do
    "$prefix/bin/mpiexec" -n 4 "./$prog" >"$prog.log" 2>&1
    expect_in "$prog.log" "^ No Errors$" "$prog built by the installed wrapper"
done
check_pkg_config "$prefix/lib/pkgconfig" "$prefix/bin/mpiexec"
if command -v cmake >/dev/null; then
    cmake -DMPI_HOME="$prefix" -S "$srcdir/tests/tools/cmake" -B build >cmake.log 2>&1 ||
        { fail "cmake -DMPI_HOME"; tail -20 cmake.log; }
    expect_in build/mpiexec.txt "^$prefix/bin/mpiexec$" "FindMPI with MPI_HOME finds Strand's mpiexec"
    cmake --build build >build.log 2>&1 || { fail "cmake --build"; tail -20 build.log; }
    "$prefix/bin/mpiexec" -n 4 build/ring_c >cm.log 2>&1
    expect_in cm.log "^ No Errors$" "CMake (MPI_HOME) program at 4 ranks"
fi
finish
