#!/usr/bin/env bash
# Build systems find Strand: pkg-config (mpi.pc), CMake's own FindMPI with
# Strand's mpicc first on PATH, and an Autotools-style CC=mpicc check.
. "$(dirname "$0")/lib.sh"
cp "$srcdir/tests/tools/cmake/ring.c" "$srcdir/tests/tools/cmake/ring.cpp" .

# pkg-config: the build tree's mpi.pc.
check_pkg_config "$builddir/launcher" "$mpiexec"

# Autotools: what AC_PROG_CC and AX_MPI do with CC=mpicc: compile, link and
# run a test program, and link MPI_Init.
printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n' >conftest.c
"$mpicc" -o conftest conftest.c && ./conftest || fail "CC=mpicc: a configure-style test program"

# CMake.
if ! command -v cmake >/dev/null; then
    [ "$errors" -eq 0 ] && skip "cmake not installed (apt-get install cmake)"
    finish
fi
PATH="$builddir/launcher:$PATH" cmake -S "$srcdir/tests/tools/cmake" -B build \
    >cmake.log 2>&1 || { fail "cmake configure"; sed 's/^/  | /' cmake.log | tail -30; }
expect_in cmake.log "Found MPI_C: " "FindMPI found MPI for C"
expect_in cmake.log "Found MPI_CXX: " "FindMPI found MPI for C++"
expect_in build/mpiexec.txt "^$builddir/launcher/mpiexec$" "FindMPI's MPIEXEC_EXECUTABLE is Strand's"
cmake --build build >build.log 2>&1 || { fail "cmake --build"; tail -20 build.log; }
for prog in ring_c ring_cxx; do
    "$mpiexec" -n 4 "build/$prog" >"$prog.log" 2>&1
    expect_in "$prog.log" "^ No Errors$" "CMake-built $prog at 4 ranks"
done
finish
