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

finish() {
    [ "$errors" -eq 0 ] && echo "all checks passed" && exit 0
    echo "$errors checks failed"
    exit 1
}
