# Sourced by the tests/tools scripts: $1 is the build tree, $2 the source
# tree; a scratch directory $work is removed at exit.
set -u
builddir=$(cd "$1" && pwd)
srcdir=$(cd "$2" && pwd)
mpicc="$builddir/launcher/mpicc"
mpicxx="$builddir/launcher/mpicxx"
mpiexec="$builddir/launcher/mpiexec"
work=$(mktemp -d "${TMPDIR:-/tmp}/strand-tools.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
errors=0

fail() {
    echo "FAIL: $*"
    errors=$((errors + 1))
}

skip() {
    echo "skipped: $*"
    exit 77
}

# expect_in FILE REGEX WHAT
expect_in() {
    grep -Eq -- "$2" "$1" || { fail "$3: /$2/ not in $1:"; sed 's/^/  | /' "$1" | head -40; }
}

# check_pkg_config DIR MPIEXEC: build ring.c with `pkg-config --cflags --libs
# mpi` from the mpi.pc in DIR and run it at 4 ranks.
check_pkg_config() {
    if ! command -v pkg-config >/dev/null; then
        echo "pkg-config not installed: pkg-config check skipped"
        return
    fi
    local flags
    flags=$(PKG_CONFIG_PATH="$1" pkg-config --cflags --libs mpi) || fail "pkg-config finds no mpi in $1"
    # shellcheck disable=SC2086
    cc -o ring_pc ring.c $flags || fail "cc \$(pkg-config --cflags --libs mpi) with $1/mpi.pc"
    "$2" -n 4 ./ring_pc >pc.log 2>&1
    expect_in pc.log "^ No Errors$" "program built with $1/mpi.pc at 4 ranks"
}

finish() {
    [ "$errors" -eq 0 ] && echo "all checks passed" && exit 0
    echo "$errors checks failed"
    exit 1
}
