#!/usr/bin/env bash
# Dynamic processes between jobs started by separate mpiexec commands
# (tests/mpi/dpm_jobs.c): accept/connect through a port name in a file and
# through the name service (the standalone strand-nameserver), at several
# sizes and node-process counts (64 ranks in one job); connects to bogus,
# closed, refused and silent ports fail with MPI_ERR_PORT within their
# bound; MPI_Comm_join between two processes; a job that aborts after
# MPI_Comm_disconnect does not take the other down; MPI_UNIVERSE_SIZE from
# the host list's slots. Where UCX is built, jobs over --net ucx too (their
# peers of other jobs go over tcp): with a job over tcp or another over
# ucx, over UCX's shared memory only, by name, by join, a connector whose
# port's process dies mid-connection, node processes named to the other
# job only after the connect (MPI_Intercomm_create), and the failures
# above. No process is left after any of them.
. "$(dirname "$0")/lib.sh"

prog="$builddir/tests/mpi/dpm_jobs"
[ -x "$prog" ] || skip "$prog is not built (make mpi-programs)"

# No process of this tree's test program may outlive a step.
no_orphans() {
    sleep 0.3
    local left
    left=$(env -u LD_PRELOAD pgrep -f -- "$prog" | tr '\n' ' ')
    [ -z "$left" ] || { fail "$1: processes left: $left"; kill -9 $left 2>/dev/null; }
}

# run_job LOG ARGS...: one mpiexec in the background, its pid in $last.
run_job() {
    local log=$1; shift
    timeout -k 5 120 "$mpiexec" "$@" >"$log" 2>&1 &
    last=$!
}

# expect_job PID LOG STATUS WHAT: the job ended with STATUS, and, for 0,
# said " No Errors".
expect_job() {
    local rc=0
    wait "$1" || rc=$?
    [ "$rc" -eq "$3" ] || { fail "$4: exit $rc, expected $3"; sed 's/^/  | /' "$2" | head -30; return; }
    [ "$3" -ne 0 ] || expect_in "$2" "^ No Errors$" "$4"
}

# pair NAME WHERE "SERVER MPIEXEC ARGS" "CLIENT MPIEXEC ARGS" [MODE]: MODE
# (dpm_jobs's, before server|client) none or widen.
pair() {
    local name=$1 where=$2 sargs=$3 cargs=$4 mode=${5:-} s c
    rm -f "$work/port"
    # shellcheck disable=SC2086
    run_job "$name.server.log" $sargs "$prog" $mode server "$where"; s=$last
    # shellcheck disable=SC2086
    run_job "$name.client.log" $cargs "$prog" $mode client "$where"; c=$last
    expect_job "$s" "$name.server.log" 0 "$name: server ($sargs)"
    expect_job "$c" "$name.client.log" 0 "$name: client ($cargs)"
    no_orphans "$name"
}

pair small "file:$work/port" "-n 3" "-n 4 --nodes 2"
pair nodes "file:$work/port" "-n 5 --nodes 3" "-n 2 --nodes 2"
pair wide "file:$work/port" "-n 64 --nodes 2" "-n 3"

# Jobs over UCX (on the loopback device) meet jobs over tcp and each other.
ucx=false
if grep -q 'HAVE_UCX=1' "$builddir/config.status" 2>/dev/null; then
    ucx=true
    export UCX_NET_DEVICES=lo
    pair ucx-server "file:$work/port" "--net ucx -n 5 --nodes 3" "-n 2 --nodes 2"
    pair ucx-client "file:$work/port" "-n 3" "--net ucx -n 4 --nodes 2"
    pair ucx-both "file:$work/port" "--net ucx -n 3 --nodes 2" "--net ucx -n 64 --nodes 2"
    UCX_TLS=sm,self pair ucx-sm "file:$work/port" "--net ucx -n 4 --nodes 2" "--net ucx -n 3 --nodes 3"
fi
# Node processes that took no part in the accept or connect, named to the
# other job later (MPI_Intercomm_create over the rank 0s' merged pair).
pair widen "file:$work/port" "-n 4 --nodes 2" "-n 3 --nodes 3" widen
if $ucx; then
    pair widen-ucx "file:$work/port" "--net ucx -n 4 --nodes 2" "--net ucx -n 3 --nodes 3" widen
    pair widen-mixed "file:$work/port" "-n 3 --nodes 3" "--net ucx -n 5 --nodes 2" widen
fi

# Names: mpiexec's own name service (one job over two node processes, a
# job run without mpiexec: its node process's table), the standalone
# strand-nameserver between two jobs, its errors, and its absence.
"$mpiexec" -n 3 --nodes 2 "$prog" names "dpm jobs $$" >names1.log 2>&1
expect_in names1.log "^ No Errors$" "names through mpiexec's name service"
"$prog" names "dpm jobs $$" >names2.log 2>&1
expect_in names2.log "^ No Errors$" "names in a job run without mpiexec"
"$builddir/launcher/strand-nameserver" --local --address-file "$work/ns" >ns.log 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$work/ns" ] && break; sleep 0.1; done
ns=$(cat "$work/ns")
expect_in ns.log "^127.0.0.1:[0-9]+$" "strand-nameserver prints its address"
"$mpiexec" --nameserver "$ns" -n 2 "$prog" names "dpm jobs $$" >names3.log 2>&1
expect_in names3.log "^ No Errors$" "names through strand-nameserver"
pair named "name:dpm-jobs-$$" "--nameserver $ns -n 2 --nodes 2" "--nameserver $ns -n 3"
! $ucx || pair named-ucx "name:dpm-jobs-ucx-$$" "--nameserver $ns --net ucx -n 2 --nodes 2" \
    "--nameserver $ns --net ucx -n 3 --nodes 2"
STRAND_NAMESERVER=$ns pair named-env "name:dpm-jobs-$$" "-n 1" "-n 2"
# The example pair (examples/README.md): a server for two clients.
rm -f "$work/example.log"
run_job ex-server.log --nameserver "$ns" -n 2 "$builddir/examples/server" 2; s=$last
run_job ex-client1.log --nameserver "$ns" -n 3 "$builddir/examples/client"; c1=$last
expect_job "$c1" ex-client1.log 0 "examples/client, the first"
run_job ex-client2.log --nameserver "$ns" -n 4 --nodes 2 "$builddir/examples/client" example-squares 10; c2=$last
expect_job "$c2" ex-client2.log 0 "examples/client, the second"
expect_job "$s" ex-server.log 0 "examples/server"
expect_in ex-server.log '"example-squares" is at strand-port:' "the server prints its port name"
kill "$server"
wait "$server" 2>/dev/null
"$mpiexec" --nameserver "$ns" -n 1 "$prog" nonames "dpm jobs $$" >names4.log 2>&1
expect_in names4.log "^ No Errors$" "names when the name server is gone"

# Bad ports: a name that is not one, a refused one (nothing listens), one
# closed by its live node process, one where a silent program listens
# (STRAND_PORT_TIMEOUT bounds the wait).
"$mpiexec" -n 1 "$prog" badport garbage 1 >bad1.log 2>&1
expect_in bad1.log "^ No Errors$" "connect to a name that is no port name"
"$mpiexec" -n 1 "$prog" badport "strand-port:127.0.0.1:1:abc:0:7" 2 >bad2.log 2>&1
expect_in bad2.log "^ No Errors$" "connect to a port nobody listens on"
rm -f "$work/closed" "$work/closed.done"
run_job closed.log -n 1 "$prog" closedport "file:$work/closed"; closer=$last
for _ in $(seq 300); do [ -s "$work/closed" ] && break; sleep 0.1; done
"$mpiexec" -n 2 "$prog" badport "$(cat "$work/closed")" 2 >bad3.log 2>&1
expect_in bad3.log "^ No Errors$" "connect to a closed port of a live node process"
if $ucx; then
    "$mpiexec" --net ucx -n 2 --nodes 2 "$prog" badport "$(cat "$work/closed")" 5 >bad-ucx.log 2>&1
    expect_in bad-ucx.log "^ No Errors$" "connect from a job over UCX to a closed port"
fi
touch "$work/closed.done"
expect_job "$closer" closed.log 0 "the process of the closed port"
# The port's node process dies while a job over UCX (or tcp) waits in
# MPI_Comm_connect: MPI_ERR_PORT, at once.
dying() { # NAME CONNECTOR-MPIEXEC-ARGS
    rm -f "$work/dying" "$work/dying.connecting"
    run_job "$1-port.log" -n 2 "$prog" dyingport "file:$work/dying"; d=$last
    for _ in $(seq 300); do [ -s "$work/dying" ] && break; sleep 0.1; done
    # shellcheck disable=SC2086
    "$mpiexec" $2 "$prog" badport "$(cat "$work/dying")" 5 "$work/dying.connecting" >"$1.log" 2>&1
    expect_in "$1.log" "^ No Errors$" "$1: connect while the port's process dies"
    expect_job "$d" "$1-port.log" 137 "$1: the dying port's process"
}
dying dying-tcp "-n 2 --nodes 2"
! $ucx || dying dying-ucx "--net ucx -n 2 --nodes 2"
if command -v python3 >/dev/null; then
    python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held, end = [], time.time() + 20
while time.time() < end:
    s.settimeout(0.5)
    try:
        held.append(s.accept())
    except OSError:
        pass
' "$work/silent" &
    silent=$!
    for _ in $(seq 100); do [ -s "$work/silent" ] && break; sleep 0.1; done
    STRAND_PORT_TIMEOUT=2 "$mpiexec" -n 1 "$prog" badport "strand-port:127.0.0.1:$(cat "$work/silent"):abc:0:7" 8 \
        >bad4.log 2>&1
    expect_in bad4.log "^ No Errors$" "connect to a port where a silent program listens"
    kill "$silent" 2>/dev/null
    wait "$silent" 2>/dev/null
fi
no_orphans "bad ports"

# MPI_Comm_join over a TCP connection between two jobs' processes.
rm -f "$work/join"
run_job join1.log -n 2 "$prog" join listen "$work/join"; l=$last
run_job join2.log -n 1 --nodes 1 "$prog" join connect "$work/join"; c=$last
expect_job "$l" join1.log 0 "join: the listening side"
expect_job "$c" join2.log 0 "join: the connecting side"
if $ucx; then
    rm -f "$work/join"
    run_job join3.log --net ucx -n 2 --nodes 2 "$prog" join listen "$work/join"; l=$last
    run_job join4.log --net ucx -n 3 --nodes 2 "$prog" join connect "$work/join"; c=$last
    expect_job "$l" join3.log 0 "join over UCX: the listening side"
    expect_job "$c" join4.log 0 "join over UCX: the connecting side"
fi
no_orphans join

# Failures: after MPI_Comm_disconnect the jobs are independent (the
# survivor ends normally after the other aborted); while connected, the
# abort, or the death, of one ends the other with a message, no hang.
isolation() { # WHEN SURVIVOR_STATUS ABORTER_STATUS MESSAGE [SURVIVOR-ARGS [ABORTER-ARGS]]
    rm -f "$work/iso"
    # shellcheck disable=SC2086
    run_job iso-s.log ${5:--n 2} "$prog" survivor "file:$work/iso" "$1"; s=$last
    # shellcheck disable=SC2086
    run_job iso-a.log ${6:--n 3 --nodes 2} "$prog" aborter "file:$work/iso" "$1"; a=$last
    expect_job "$a" iso-a.log "$3" "isolation $1 ${5:-}: the aborting job"
    expect_job "$s" iso-s.log "$2" "isolation $1 ${5:-}: the other job"
    [ -z "$4" ] || expect_in iso-s.log "$4" "isolation $1 ${5:-}: the other job's message"
    no_orphans "isolation $1"
}
lost="lost node 0 of job [0-9a-f]+ .*, which a communicator here still reaches"
isolation after 0 3 ""
isolation before 1 3 "$lost"
isolation killed 1 137 "$lost"
if $ucx; then
    isolation after 0 3 "" "--net ucx -n 2 --nodes 2" "--net ucx -n 3 --nodes 2"
    isolation killed 1 137 "$lost" "--net ucx -n 2 --nodes 2" "--net ucx -n 3 --nodes 2"
    isolation before 1 3 "$lost" "--net ucx -n 3 --nodes 3" "-n 3 --nodes 2"
fi

# MPI_UNIVERSE_SIZE from the slots of the host list (-hosts H:N, a host
# file's "H slots=N" and "H:N"; -usize wins; never below the job's size).
layout="$builddir/tests/mpi/net_layout"
universe() { # WHAT NODES UNIVERSE MPIEXEC-ARGS...
    local what=$1 nodes=$2 want=$3; shift 3
    "$mpiexec" "$@" "$layout" "$nodes" "$want" >universe.log 2>&1
    expect_in universe.log "^ No Errors$" "MPI_UNIVERSE_SIZE $want from $what"
}
universe "-hosts H:5,H:7" 2 12 -hosts 127.0.0.1:5,127.0.0.1:7 -n 2
printf '127.0.0.1 slots=9\n127.0.0.1:3\n' >hostfile
universe "a host file" 2 12 -hostfile hostfile -n 4
universe "-usize over the slots" 2 20 -usize 20 -hosts 127.0.0.1:5,127.0.0.1:7 -n 2
universe "slots below the job's size" 2 4 -hosts 127.0.0.1:1,127.0.0.1:1 -n 4

finish
