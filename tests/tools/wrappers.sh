#!/usr/bin/env bash
# mpicc and mpicxx as a user types them: link errors, -show and the info
# options, -c and -o with several sources, .a and .so inputs, compiler
# overrides, --version and --help; mpiexec --version.
. "$(dirname "$0")/lib.sh"

cat >main.c <<'SRC'
#include <mpi.h>
#include <stdio.h>
int twice(int);
int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (twice(rank) != 2 * rank)
        printf("wrong\n");
    MPI_Finalize();
    if (rank == 0)
        printf(" No Errors\n");
    return 0;
}
SRC
echo 'int twice(int x) { return 2 * x; }' >twice.c
cat >typo.c <<'SRC'
#include <mpi.h>
int MPI_Comm_rnak(MPI_Comm, int *);
int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    if (argc > 99) /* never reached: the link must fail anyway */
        MPI_Comm_rnak(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    return 0;
}
SRC
cat >nolibm.c <<'SRC'
#include <math.h>
#include <mpi.h>
int main(int argc, char **argv)
{
    volatile double x = 27.0;
    MPI_Init(&argc, &argv);
    x = cbrt(x);
    MPI_Finalize();
    return x != 3.0;
}
SRC
printf '#include <iostream>\n#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); std::cout << "hi\\n"; MPI_Finalize(); }\n' >cxx.cpp

# Undefined symbols are link errors, with the linker's message.
"$mpicc" -o typo typo.c >typo.log 2>&1 && fail "a misspelled MPI function linked"
expect_in typo.log "undefined reference to .MPI_Comm_rnak" "link error for a misspelled function"
"$mpicc" -o nolibm nolibm.c >nolibm.log 2>&1 && fail "cbrt without -lm linked"
expect_in nolibm.log "undefined reference to .cbrt" "link error without -lm"
"$mpicc" -o nolibm nolibm.c -lm >nolibm2.log 2>&1 || fail "cbrt with -lm did not link"
"$mpicc" -o cxx cxx.cpp >cxx.log 2>&1 && fail "C++ linked by mpicc without its runtime"
expect_in cxx.log "undefined reference" "link error for C++ through mpicc"
"$mpicxx" -o cxx cxx.cpp >cxx2.log 2>&1 || fail "mpicxx could not link a C++ program"
grep -q UNIQUE cxx2.log && fail "mpicxx warned about unique symbols it should have avoided"

# Objects compiled without the wrapper's -fno-gnu-unique: a warning at link
# time, and a clear refusal when a second rank starts.
printf '#include <mpi.h>\ninline int &count() { static int c; return c; }\nint main(int c, char **v) { MPI_Init(&c, &v); count()++; MPI_Finalize(); return 0; }\n' >unique.cpp
if g++ -fPIC -I"$srcdir/include" -c unique.cpp -o unique.o 2>/dev/null; then
    "$mpicxx" -o unique unique.o >unique.log 2>&1 || fail "mpicxx could not link unique.o"
    expect_in unique.log "STB_GNU_UNIQUE.*compile its objects with mpicxx" "link-time warning for STB_GNU_UNIQUE"
    "$mpiexec" -n 2 ./unique >unique-run.log 2>&1 && fail "a program with unique symbols ran 2 ranks"
    expect_in unique-run.log "STB_GNU_UNIQUE.*-fno-gnu-unique" "run-time refusal of STB_GNU_UNIQUE"
fi

# -show: one compiler line, every flag once; then the DT_DEBUG step.
"$mpicc" -show -o app main.c twice.c >show.log || fail "mpicc -show failed"
head -n 1 show.log | tr ' ' '\n' | sort | uniq -d >dups.log
[ -s dups.log ] && fail "mpicc -show repeats flags: $(tr '\n' ' ' <dups.log)"
expect_in show.log "-lmpi" "-show names libmpi"
"$mpicc" -showme -fPIC -c main.c >show2.log
[ "$(grep -o -- '-fPIC' show2.log | wc -l)" -eq 1 ] || fail "-fPIC twice in: $(cat show2.log)"
"$mpicc" -compile_info >ci.log && expect_in ci.log "-I.*include" "-compile_info"
"$mpicc" -link_info >li.log && expect_in li.log "-lmpi" "-link_info"
"$mpicc" -showme:compile >sc.log && expect_in sc.log "^-fPIC" "-showme:compile"
"$mpicc" -showme:link >sl.log && expect_in sl.log "-Wl,-shared" "-showme:link"

# -c and -o, several sources, objects, a static archive.
"$mpicc" -c main.c twice.c || fail "mpicc -c with two sources"
[ -f main.o ] && [ -f twice.o ] || fail "mpicc -c wrote no objects"
ar rcs libtwice.a twice.o
"$mpicc" -o app main.o -L. -ltwice || fail "linking an object and a .a"
"$mpiexec" -n 3 ./app >run.log 2>&1 || fail "the program linked from .o and .a"
expect_in run.log "^ No Errors$" "run of the .a-linked program"
"$mpicc" -o app2 main.c twice.c || fail "mpicc with two sources"
"$mpiexec" -n 2 ./app2 >run2.log 2>&1 && expect_in run2.log "^ No Errors$" "two-source program"

# A .so input: linked, with one warning that its globals are per process.
"$mpicc" -shared -o libtwice.so twice.c || fail "mpicc -shared"
"$mpicc" -o app3 main.c ./libtwice.so ./libtwice.so >so.log 2>&1 || fail "linking a .so"
[ "$(grep -c 'shared by all ranks' so.log)" -eq 1 ] || fail "expected one .so warning: $(cat so.log)"
LD_LIBRARY_PATH=. "$mpiexec" -n 2 ./app3 >run3.log 2>&1 && expect_in run3.log "^ No Errors$" ".so program"

# Compiler overrides: -cc=, STRAND_CC, MPICH_CC, -cxx=, MPICH_CXX.
"$mpicc" -cc=false -o x main.c 2>/dev/null && fail "-cc=false still compiled"
STRAND_CC=false "$mpicc" -o x main.c 2>/dev/null && fail "STRAND_CC=false still compiled"
MPICH_CC=false "$mpicc" -o x main.c 2>/dev/null && fail "MPICH_CC=false still compiled"
MPICH_CC=cc "$mpicc" -show main.c | grep -q '^cc ' || fail "MPICH_CC=cc not used by -show"
"$mpicxx" -cxx=false -o x cxx.cpp 2>/dev/null && fail "-cxx=false still compiled"
MPICH_CXX=false "$mpicxx" -o x cxx.cpp 2>/dev/null && fail "MPICH_CXX=false still compiled"
"$mpicc" -cc= main.c 2>/dev/null; [ $? -eq 2 ] || fail "-cc= without a compiler: not exit 2"
"$mpicc" -static main.c 2>/dev/null; [ $? -eq 2 ] || fail "-static: not exit 2"

# --version and --help.
"$mpicc" --version >v.log && expect_in v.log "^mpicc \(Strand MPI\) [0-9]" "mpicc --version"
"$mpicxx" --version >vx.log && expect_in vx.log "^mpicxx \(Strand MPI\)" "mpicxx --version"
"$mpicc" --help >h.log && expect_in h.log "Exit status" "mpicc --help documents exit codes"
"$mpiexec" --version >mv.log && expect_in mv.log "\(Strand MPI\) [0-9]" "mpiexec --version"
"$mpiexec" --help >mh.log && expect_in mh.log "[Ee]xit status" "mpiexec --help documents exit codes"

finish
