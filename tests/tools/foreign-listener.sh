#!/usr/bin/env bash
# A foreign program listening on a node process's static port (issue 11):
# the node finds its port taken and listens elsewhere (publishing the port
# in mpiexec's store); a peer that connects to the static port reaches the
# foreign program, which answers nothing (or garbage, then closes): the
# peer must notice (no HELLO_ACK), ask the store and connect at the
# published port, and the job must work, not hang or end. Needs python3
# for the foreign listener.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is not installed (it plays the foreign program)"
prog="$builddir/tests/mpi/ring_large"   # messages both ways between the node processes
[ -x "$prog" ] || skip "$prog is not built (make mpi-programs)"

# listener MODE PORTFILE: binds a free port P + 1 (P free too), writes P,
# and plays the foreign program: silent (accepts, never answers) or
# garbage (answers bytes that are no Strand frame, then closes).
listener() {
    python3 - "$1" "$2" <<'PY' &
import socket, sys, time
mode, portfile = sys.argv[1], sys.argv[2]
for _ in range(200):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    base = probe.getsockname()[1]
    probe.close()
    if base >= 65535:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", base + 1))
        t = socket.socket()
        t.bind(("127.0.0.1", base))       # node 0's port must be free too
        t.close()
        break
    except OSError:
        s.close()
s.listen(8)
open(portfile, "w").write(str(base))
held, end = [], time.time() + 40
s.settimeout(0.5)
while time.time() < end:
    try:
        c, _ = s.accept()
    except OSError:
        continue
    if mode == "garbage":
        c.sendall(b"HTTP/1.0 400 not a Strand node process\r\n" * 4)
        c.close()
    else:
        held.append(c)
PY
    pid=$!
}

for mode in silent garbage; do
    rm -f "$work/base"
    listener "$mode" "$work/base"
    for _ in $(seq 100); do [ -s "$work/base" ] && break; sleep 0.1; done
    base=$(cat "$work/base")
    STRAND_NET_PORT=$base timeout -k 5 60 "$mpiexec" -n 4 --nodes 2 "$prog" >"$mode.log" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || { fail "$mode listener on node 1's port $((base + 1)): exit $rc"; sed 's/^/  | /' "$mode.log" | head; }
    expect_in "$mode.log" "^ No Errors$" "a job whose node 1's static port a $mode program holds"
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
done

finish
