# Sourced by the test-bed tests (ssh-jobs.sh, slurm-jobs.sh): $1 is the
# build tree, $2 the source tree. Each test defines check_no_orphans NAME
# (how it sees what a job left behind) and a scratch directory $state.
set -u
builddir=$(cd "$1" && pwd)
srcdir=$(cd "$2" && pwd)
progs="$builddir/tests/mpi"
beds="$srcdir/tests/testbeds"
errors=0

# procps' tools (pgrep, pkill, ps) hang under a preloaded sanitizer
# runtime (the README's sanitizer recipe preloads it for the whole suite):
# never give them one. (Through a wrapper that execs them: `env -u
# LD_PRELOAD pgrep`.)
pgrep() { env -u LD_PRELOAD pgrep "$@"; }
pkill() { env -u LD_PRELOAD pkill "$@"; }
ps() { env -u LD_PRELOAD ps "$@"; }

skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAIL: $*"; errors=$((errors + 1)); }

# run NAME WANT_EXIT(N|ANY) OUTPUT_REGEX|"" command...: runs a job (at most
# 60 s), checks its status and output (" No Errors" when it should succeed
# and no regex is given), shows the output, then looks for orphans.
run() {
    local name=$1 want=$2 regex=$3
    shift 3
    local log="$state/$name.log" started=$SECONDS
    timeout -k 5 60 "$@" >"$log" 2>&1
    local rc=$?
    echo "$name: exit $rc in $((SECONDS - started)) s"
    if [ "$want" = ANY ]; then
        [ "$rc" -ne 0 ] || fail "$name: expected a non-zero exit"
    elif [ "$rc" -ne "$want" ]; then
        fail "$name: exit $rc, expected $want"
    fi
    [ "$rc" -ne 124 ] || fail "$name: hung (timeout)"
    if [ -n "$regex" ] && ! grep -Eq -- "$regex" "$log"; then
        fail "$name: output lacks /$regex/"
    fi
    [ "$rc" -eq 0 ] && [ -z "$regex" ] && ! grep -q '^ No Errors$' "$log" && fail "$name: no ' No Errors'"
    grep -q . "$log" && sed 's/^/  | /' "$log" | head -20
    check_no_orphans "$name"
}

# The end of a test: its status.
finish() { # WHAT
    [ "$errors" -eq 0 ] || { echo "$errors failure(s)"; exit 1; }
    echo "all $1 passed"
}
