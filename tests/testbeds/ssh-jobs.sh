#!/usr/bin/env bash
# Jobs over two "hosts" (network namespaces joined by a veth pair, an sshd
# in each: tests/testbeds/netns, tests/testbeds/ssh), started from the
# first one with mpiexec -hosts: node 0 by fork, node 1 through ssh (or
# both through ssh), TCP between them. Point-to-point and collectives,
# MPI_Abort and a killed node on the remote host, a non-zero exit, an
# unreachable host, a refused login, ^C, a dead ssh connection, a killed
# mpiexec, a taken port (the key-value store fallback), -genv/-x and the
# working directory; after every job no process of it may be left in
# either namespace. Skipped (exit 77) without root, iproute2 or openssh.
# Run by make check as `ssh-jobs.sh BUILDDIR SRCDIR`.
. "$(dirname "$0")/lib.sh"
mpiexec="$builddir/launcher/mpiexec"

[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, sshd)"
command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || skip "openssh-server (sshd) is not installed"
command -v ssh >/dev/null || skip "openssh-client (ssh) is not installed"
command -v ssh-keygen >/dev/null || skip "ssh-keygen is not installed"
PATH=$PATH:/usr/sbin

state=$(mktemp -d "${TMPDIR:-/tmp}/strand-ssh.XXXXXX")
teardown() {
    "$beds/ssh" down "$state"
    "$beds/netns" down "$state"
    rm -rf "$state"
}
trap teardown EXIT
trap 'exit 1' INT TERM
"$beds/netns" up "$state" >"$state/up.log" 2>&1 || { cat "$state/up.log"; skip "cannot create network namespaces here"; }
"$beds/ssh" up "$state" >>"$state/up.log" 2>&1 || { cat "$state/up.log"; echo "FAIL: the ssh test bed did not start"; exit 1; }
# shellcheck disable=SC1091
. "$state/netns.env"
# shellcheck disable=SC1091
. "$state/ssh.env"
export STRAND_SSH_CONFIG=$SSH_CONFIG
hosts="$ADDR_A,$ADDR_B"
on_a() { ip netns exec "$NS_A" "$@"; }
on_b() { ip netns exec "$NS_B" "$@"; }

# Processes of a namespace but its sshd listener (and the test's own
# helper, $keep).
keep=""
leftovers() { # NS
    local mine
    mine=$(cat "$state"/sshd_*.pid 2>/dev/null | tr '\n' '|')
    ip netns pids "$1" | grep -Ev "^(${mine}${keep:-none})\$" | xargs -r env -u LD_PRELOAD ps -o pid=,args= -p
}

# No process of the job may be left on either host (agents and node
# processes end within a second or two of mpiexec).
check_no_orphans() { # WHAT
    local left
    for _ in $(seq 30); do
        left="$(leftovers "$NS_A")$(leftovers "$NS_B")"
        [ -z "$left" ] && return
        sleep 0.1
    done
    fail "$1: processes left: $left"
}

# job NAME WANT_EXIT(N|ANY) OUTPUT_REGEX|"" mpiexec-args...: mpiexec on host a
job() {
    local name=$1 want=$2 regex=$3
    shift 3
    # (under the README's sanitizer recipe the remote node processes need
    # the preloaded runtime and its options too: sshd passes no environment)
    run "$name" "$want" "$regex" ip netns exec "$NS_A" "$mpiexec" ${LD_PRELOAD:+-x LD_PRELOAD} ${ASAN_OPTIONS:+-x ASAN_OPTIONS} "$@"
}

# --- MPI across the two hosts --------------------------------------------
job coll_bcast 0 "" -hosts "$hosts" -n 7 "$progs/coll_bcast"
job coll_ops 0 "" -hosts "$hosts" -n 6 "$progs/coll_ops"
job send_modes 0 "" -hosts "$hosts" -n 4 "$progs/send_modes"
job net_rendezvous 0 "" -hosts "$hosts" -n 4 "$progs/net_rendezvous"
job net_anysource 0 "" -hosts "$hosts" -n 5 "$progs/net_anysource"
job launcher_ssh_both 0 "" --launcher ssh -hosts "$hosts" -n 4 "$progs/ring_large"
job three_nodes 0 "" -hosts "$hosts,$ADDR_B" -n 6 "$progs/coll_allgather"

# --- over UCX (when built): its tcp transport on the veth --------------------
# (UCX_* variables reach the remote node process like STRAND_* ones.)
if grep -q 'HAVE_UCX=1' "$builddir/config.status" 2>/dev/null; then
    export UCX_NET_DEVICES=$DEV
    job ucx_send_modes 0 "" --net ucx -hosts "$hosts" -n 4 "$progs/send_modes"
    job ucx_rendezvous 0 "" --net ucx -hosts "$hosts" -n 4 "$progs/net_rendezvous"
    job ucx_rma 0 "" --net ucx -hosts "$hosts" -n 5 "$progs/rma_net"
    job ucx_ssh_both 0 "" --net ucx --launcher ssh -hosts "$hosts" -n 6 "$progs/coll_allgather"
    job ucx_killed ANY 'node 1 \(ranks 2-3\) on host 169\.254\.77\.2 was killed by signal 9' \
        --net ucx -hosts "$hosts" -n 4 "$progs/net_fail" kill
    # UCX's tcp transport on a device that does not exist: one clear
    # message, no hang, nothing left on either host. (Not UCX_NET_DEVICES
    # alone: UCX would then fall back to shared memory, and it takes the
    # namespaces for one host, which they are not for its wake-ups.)
    UCX_TLS=tcp UCX_NET_DEVICES=strand_no_such_device job ucx_no_device ANY \
        'node 0 cannot start its ucx network: UCX finds no usable transport.*UCX_NET_DEVICES=strand_no_such_device' \
        --net ucx -hosts "$hosts" -n 4 "$progs/coll_bcast"
    unset UCX_NET_DEVICES
else
    echo "ucx: skipped (Strand was built without UCX)"
fi

# --- failures --------------------------------------------------------------
job remote_abort 7 '^\[3\] Strand MPI: MPI_Abort called by rank 3' \
    -l -hosts "$hosts" -n 4 "$progs/net_fail" abort
job remote_killed ANY 'node 1 \(ranks 2-3\) on host 169\.254\.77\.2 was killed by signal 9' \
    -hosts "$hosts" -n 4 "$progs/net_fail" kill
job nonzero_exit 4 "" -hosts "$hosts" -n 2 sh -c 'exit $((3 + STRAND_NODE_INDEX))'
job unreachable ANY "cannot start node 1 \(rank 1\) on host $ADDR_NOBODY through ssh" \
    -hosts "$ADDR_A,$ADDR_NOBODY" -n 2 "$progs/coll_bcast"
STRAND_SSH_CONFIG=$SSH_CONFIG_REFUSED job login_refused ANY "cannot start node 1 \(rank 1\) on host $ADDR_B through ssh" -hosts "$hosts" -n 2 "$progs/coll_bcast"
grep -q "Permission denied" "$state/login_refused.log" || fail "login_refused: ssh's own message is not shown"
job no_program 127 "cannot run /nonexistent/prog" --launcher ssh -hosts "$hosts" -n 2 /nonexistent/prog

# --- the environment and the working directory ---------------------------
mkdir -p "$state/wd"
(cd "$state/wd" && FORWARDED=yes job environment 0 "^1:bar:yes:$state/wd:[0-9]+\$" \
    -hosts "$hosts" -n 2 -genv FOO bar -x FORWARDED \
    sh -c 'echo "$STRAND_NODE_INDEX:$FOO:$FORWARDED:$PWD:$STRAND_NRANKS"')

# --- the end of a job from outside -----------------------------------------
# (the node processes are `sleep`: they only need to outlive the signal)
interrupt() { # NAME SIGNAL-ACTION WANT_REGEX
    local log="$state/$1.log"
    # (ip netns exec execs mpiexec: $! is mpiexec)
    ip netns exec "$NS_A" "$mpiexec" -hosts "$hosts" -n 2 sleep 30 >"$log" 2>&1 &
    local m=$!
    for _ in $(seq 50); do
        on_b env -u LD_PRELOAD pgrep -x sleep >/dev/null && break
        sleep 0.1
    done
    on_b env -u LD_PRELOAD pgrep -x sleep >/dev/null || fail "$1: the remote node process did not start"
    eval "$2"
    wait "$m"
    local rc=$?
    echo "$1: exit $rc"
    [ "$rc" -ne 0 ] || fail "$1: expected a non-zero exit"
    [ -z "$3" ] || grep -Eq -- "$3" "$log" || fail "$1: output lacks /$3/"
    sed 's/^/  | /' "$log"
    check_no_orphans "$1"
}
interrupt ctrl_c 'kill -INT $m' ""
interrupt ssh_dies 'pkill -9 -P $m -x ssh' "lost the ssh connection to node 1 \(rank 1\) on host $ADDR_B"
interrupt mpiexec_killed 'kill -9 $m' ""

# --- a taken static port -------------------------------------------------
# Node 1's port (base + 1) is held on host B by a socket that is bound but
# not listening (as a client's port would be): node 1 listens elsewhere,
# publishes the port in mpiexec's store, and node 0 finds it when refused.
if command -v python3 >/dev/null; then
    ip netns exec "$NS_B" python3 -c "
import socket, time
s = socket.socket(); s.bind(('$ADDR_B', 31001)); time.sleep(20)" &
    holder=$!
    keep=$holder
    sleep 0.3
    STRAND_NET_PORT=31000 job port_taken 0 "" -hosts "$hosts" -n 4 "$progs/coll_bcast"
    keep=""
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
else
    echo "port_taken: skipped (python3 is not installed to hold the port)"
fi

finish "ssh jobs"
