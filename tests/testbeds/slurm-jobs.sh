#!/usr/bin/env bash
# Jobs under Slurm (tests/testbeds/slurm: munged, slurmctld and 4 emulated
# nodes sharing this host's name, /dev/shm and loopback) started with
# srun --mpi=pmi2: one node process per Slurm node (grouped by Slurm's node
# id), also one per task; uneven, cyclic, plane and arbitrary task
# layouts (world rank = PMI rank); 64 ranks; the whole network suite
# (tests/mpi/net.testlist) under PMI-2 -m cyclic and, one node process per
# task, under PMIx; --multi-prog; srun
# without a PMI; MPI_Abort, a node process that dies, scancel mid-run,
# sbatch --wait, and a whole node killed (its slurmd, slurmstepd and task).
# After every job no process of the program may be left. Skipped (exit 77)
# without root, Slurm, munge, or a Strand built with PMI-2.
# Run by make check as `slurm-jobs.sh BUILDDIR SRCDIR`.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (the Slurm daemons)"
PATH=$PATH:/usr/sbin
for tool in slurmctld slurmd srun sbatch scancel sinfo munged; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (Debian slurmctld slurmd slurm-client munge)"
done
grep -q 'HAVE_PMI2=1' "$builddir/config.status" 2>/dev/null ||
    skip "Strand was configured without PMI-2 (Debian libpmi2-0-dev)"
have_pmix=no
grep -q 'HAVE_PMIX=1' "$builddir/config.status" 2>/dev/null && have_pmix=yes

# One Slurm test bed at a time on this machine: two clusters started at
# once (two build trees running make check) left nodes "unknown" in one.
exec 9>"${TMPDIR:-/tmp}/strand-slurm-bed.lock"
flock -w 900 9 || { echo "FAIL: another Slurm test bed has been running for 15 minutes"; exit 1; }

state=$(mktemp -d "${TMPDIR:-/tmp}/strand-slurm.XXXXXX")
teardown() {
    "$beds/slurm" down "$state"
    if [ "$errors" -gt 0 ]; then
        # The jobs' and the daemons' logs, for a look at what went wrong.
        rm -rf "$builddir/tests/logs/slurm-jobs"
        cp -r "$state" "$builddir/tests/logs/slurm-jobs" 2>/dev/null
        echo "the bed's logs: $builddir/tests/logs/slurm-jobs; slurmctld's last errors:"
        grep -E 'error|WEXITSTATUS [^0]' "$state/log/slurmctld.log" 2>/dev/null | tail -n 15 | sed 's/^/  | /'
    fi
    rm -rf "$state"
}
trap teardown EXIT
trap 'exit 1' INT TERM
"$beds/slurm" up "$state" 6 >"$state/up.log" 2>&1 || { cat "$state/up.log" "$state"/log/*; echo "FAIL: the Slurm test bed did not start"; exit 1; }
# shellcheck disable=SC1091
. "$state/slurm.env"
export SLURM_CONF
# The node processes listen on loopback (all emulated nodes are this host).
export STRAND_NET_HOST=127.0.0.1

check_no_orphans() { # WHAT
    local left
    for _ in $(seq 30); do
        left=$(pgrep -fa -- "$progs/" | grep -v -e srun -e sbatch)
        [ -z "$left" ] && return
        sleep 0.1
    done
    fail "$1: processes left: $left"
}

pmi2=(srun --mpi=pmi2)

# --- layouts: net_layout NODES [UNIVERSE] checks the node processes --------
run one_node 0 "" "${pmi2[@]}" -N 1 -n 4 "$progs/net_layout" 1 4
run two_nodes 0 "" "${pmi2[@]}" -N 2 -n 4 "$progs/net_layout" 2 4
run four_nodes 0 "" "${pmi2[@]}" -N 4 -n 16 --ntasks-per-node=4 "$progs/net_layout" 4 16
run ranks_64 0 "" "${pmi2[@]}" -N 4 -n 64 "$progs/net_layout" 4 64
# Whatever the distribution the world rank is the PMI rank: net_layout
# checks each rank against its node's SLURM_GTIDS (PMI_process_mapping).
run uneven_cyclic 0 "" "${pmi2[@]}" -N 3 -n 7 -m cyclic "$progs/net_layout" 3
run cyclic 0 "" "${pmi2[@]}" -N 3 -n 9 --ntasks-per-node=3 -m cyclic "$progs/net_layout" 3
run plane 0 "" "${pmi2[@]}" -N 2 -n 8 -m plane=3 "$progs/net_layout" 2
# -m arbitrary: Slurm 22.05's PMI-2 mapping is wrong there ("(vector,(0,5,1))"
# for 5 tasks on 3 nodes); it disagrees with SLURM_STEP_TASKS_PER_NODE: a
# node process per task, said once.
printf '%s\n' n2 n1 n2 n3 n1 >"$state/hosts"
SLURM_HOSTFILE=$state/hosts run arbitrary 0 "PMI's node of each rank is missing or disagrees" \
    "${pmi2[@]}" -n 5 -m arbitrary "$progs/net_layout" 5
STRAND_PMI_LAYOUT=task run per_task 0 "" "${pmi2[@]}" -N 2 -n 6 "$progs/net_layout" 6
run no_pmi 0 "started by srun without a PMI \(PMI_FD and PMIX_NAMESPACE are not set\)" srun -N 2 -n 2 "$progs/net_layout" 1
[ "$(grep -c "without a PMI" "$state/no_pmi.log")" = 1 ] || fail "no_pmi: the warning is not said exactly once"
[ "$(grep -c '^ No Errors$' "$state/no_pmi.log")" = 2 ] || fail "no_pmi: each task should run as a job of its own"

# --- MPI across the emulated nodes ---------------------------------------
run coll_bcast 0 "" "${pmi2[@]}" -N 3 -n 7 "$progs/coll_bcast"
run coll_allgather 0 "" "${pmi2[@]}" -N 4 -n 8 "$progs/coll_allgather"
run send_modes 0 "" "${pmi2[@]}" -N 2 -n 4 "$progs/send_modes"
run net_rendezvous 0 "" "${pmi2[@]}" -N 2 -n 4 "$progs/net_rendezvous"
run net_anysource 0 "" "${pmi2[@]}" -N 2 -n 5 "$progs/net_anysource"

# srun --multi-prog: tasks of one Slurm node run different programs (as
# rank threads of one node process: each loads its own program); Slurm
# gives every task MPI_APPNUM 0.
L=mpmd:2,mpmd_peer:3
printf '%s\n' "0-1 $progs/mpmd $L zero" "2-4 $progs/mpmd_peer $L zero 'a b' ''" >"$state/multi.conf"
run multi_prog_one_node 0 "" "${pmi2[@]}" -N 1 -n 5 --multi-prog "$state/multi.conf"
run multi_prog_two_nodes 0 "" "${pmi2[@]}" -N 2 -n 5 --multi-prog "$state/multi.conf"
run multi_prog_cyclic 0 "" "${pmi2[@]}" -N 2 -n 5 -m cyclic --multi-prog "$state/multi.conf"

# The whole network suite (tests/mpi/net.testlist: jobs over 2 to 16
# node processes) under srun --mpi=pmi2, a node process per Slurm node,
# distributed -m cyclic: every node process holds non-consecutive ranks
# (the block layout is mpiexec's, which make check runs the suite with);
# more tasks than the emulated CPUs, hence --overcommit.
suite() { # NAME RUN-TESTS-OPTIONS...
    local name=$1 log="$state/$1.log" started=$SECONDS
    shift
    "$srcdir/tests/run-tests" --builddir "$builddir" --list "$srcdir/tests/mpi/net.testlist" "$@" >"$log" 2>&1 ||
        fail "$name: $(grep -E '^(FAIL|failed:)' "$log" | head -n 5)"
    echo "$name: $(tail -n 1 "$log") in $((SECONDS - started)) s"
    grep '^note:' "$log" | sed "s/^/$name: /"
    check_no_orphans "$name"
}
# (Not the entries of 16 node processes: the bed has 6 Slurm nodes.)
suite suite_pmi2_cyclic --srun "srun --mpi=pmi2 --overcommit -m cyclic" --skip 'nodes16'

# --- over UCX (when built): worker addresses through PMI's key-value space --
if grep -q 'HAVE_UCX=1' "$builddir/config.status" 2>/dev/null; then
    export UCX_NET_DEVICES=lo
    STRAND_NET=ucx run ucx_send_modes 0 "" "${pmi2[@]}" -N 2 -n 4 "$progs/send_modes"
    STRAND_NET=ucx run ucx_four_nodes 0 "" "${pmi2[@]}" -N 4 -n 16 "$progs/coll_hier"
    STRAND_NET=ucx run ucx_rma 0 "" "${pmi2[@]}" -N 3 -n 7 "$progs/rma_net"
    STRAND_NET=ucx run ucx_abort 7 "MPI_Abort called by rank 5 with error code 7" \
        "${pmi2[@]}" -N 3 -n 6 "$progs/net_fail" abort
    [ "$have_pmix" = yes ] && STRAND_NET=ucx run ucx_pmix 0 "" srun --mpi=pmix -N 3 -n 6 "$progs/net_rendezvous"
    unset UCX_NET_DEVICES
fi

# --- the same under PMIx (srun --mpi=pmix), when built ---------------------
if [ "$have_pmix" = yes ]; then
    pmix=(srun --mpi=pmix)
    run pmix_two_nodes 0 "" "${pmix[@]}" -N 2 -n 4 "$progs/net_layout" 2 4
    run pmix_ranks_64 0 "" "${pmix[@]}" -N 4 -n 64 "$progs/net_layout" 4 64
    run pmix_cyclic 0 "" "${pmix[@]}" -N 3 -n 7 -m cyclic "$progs/net_layout" 3
    SLURM_HOSTFILE=$state/hosts run pmix_arbitrary 0 "" "${pmix[@]}" -n 5 -m arbitrary "$progs/net_layout" 3
    STRAND_PMI_LAYOUT=task run pmix_per_task 0 "" "${pmix[@]}" -N 2 -n 4 "$progs/net_layout" 4
    run pmix_coll_bcast 0 "" "${pmix[@]}" -N 3 -n 7 "$progs/coll_bcast"
    # PMIx_Abort carries the code: srun exits with it.
    # The network suite again, one node process per task, up to 8 (the
    # 64-rank entries would be 64 processes; net_layout checks the
    # node-per-Slurm-node layout; 16 nodes are more than the bed has).
    STRAND_PMI_LAYOUT=task suite suite_pmix_per_task --srun "srun --mpi=pmix --overcommit" --skip 'net_layout|np64|nodes16'

    run pmix_multi_prog 0 "" "${pmix[@]}" -N 2 -n 5 --multi-prog "$state/multi.conf"
    run pmix_abort 7 "MPI_Abort called by rank 3 with error code 7" "${pmix[@]}" -N 2 -n 4 "$progs/net_fail" abort
else
    echo "PMIx jobs: skipped (Strand was configured without PMIx: Debian libpmix-dev)"
fi

# --- failures --------------------------------------------------------------
# PMI-2's abort has no code and kills (srun would exit 137, as for MPICH):
# the node processes exit with the code themselves (JOB_ABORT, net.c), so
# srun exits with it; also one node process, one per task, and 3 nodes
# -m cyclic (every other rank waits in MPI_Recv for the aborting one).
run abort 7 "MPI_Abort called by rank 3 with error code 7" "${pmi2[@]}" -N 2 -n 4 "$progs/net_fail" abort
run abort_one_node 7 "MPI_Abort called by rank 3 with error code 7" "${pmi2[@]}" -N 1 -n 4 "$progs/net_fail" abort
run abort_cyclic 7 "MPI_Abort called by rank 6 with error code 7" "${pmi2[@]}" -N 3 -n 7 -m cyclic "$progs/net_fail" abort
STRAND_PMI_LAYOUT=task run abort_per_task 7 "MPI_Abort called by rank 3 with error code 7" \
    "${pmi2[@]}" -N 2 -n 4 "$progs/net_fail" abort
run node_process_killed ANY "lost node 1 \(ranks 3\)" "${pmi2[@]}" -N 2 -n 4 "$progs/net_fail" kill

# scancel while it runs
"${pmi2[@]}" -N 2 -n 4 "$progs/spin_forever" >"$state/scancel.log" 2>&1 &
srun_pid=$!
for _ in $(seq 50); do [ "$(pgrep -fc -- "$progs/spin_forever")" -ge 3 ] && break; sleep 0.1; done
scancel "$(squeue -h -o %i | head -n 1)"
wait "$srun_pid"
rc=$?
echo "scancel: exit $rc"
[ "$rc" -ne 0 ] || fail "scancel: srun exited with 0"
check_no_orphans scancel

# sbatch --wait, with srun inside
cat >"$state/job.sh" <<EOF
#!/bin/sh
srun --mpi=pmi2 "$progs/net_layout" 3 6
EOF
run sbatch 0 "Submitted batch job" sbatch --wait -N 3 -n 6 -o "$state/sbatch.out" "$state/job.sh"
grep -q '^ No Errors$' "$state/sbatch.out" || { fail "sbatch: no ' No Errors' in its output"; cat "$state/sbatch.out"; }

# A whole node dies: its slurmd, its slurmstepd and its task (the node
# process of Slurm node id 1), while every rank waits for a message.
"${pmi2[@]}" -N 2 -n 4 "$progs/net_fail" wait >"$state/node_dies.log" 2>&1 &
srun_pid=$!
task=""
for _ in $(seq 50); do
    for pid in $(pgrep -f -- "$progs/net_fail"); do
        tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "SLURM_NODEID=1" && task=$pid
    done
    [ -n "$task" ] && break
    sleep 0.1
done
if [ -z "$task" ]; then
    fail "node_dies: the node process of node id 1 did not start"
else
    sleep 0.5   # into the receive
    node=$(tr '\0' '\n' <"/proc/$task/environ" | sed -n 's/^SLURMD_NODENAME=//p')
    stepd=$(ps -o ppid= -p "$task" | tr -d ' ')
    kill -9 "$(cat "$state/slurmd.$node.pid")" "$stepd" "$task"
    started=$SECONDS
    wait "$srun_pid"
    rc=$?
    echo "node_dies ($node): exit $rc in $((SECONDS - started)) s"
    sed 's/^/  | /' "$state/node_dies.log"
    [ "$rc" -ne 0 ] || fail "node_dies: srun exited with 0"
    grep -q "lost node 1" "$state/node_dies.log" || fail "node_dies: no message naming the lost node"
    check_no_orphans node_dies
fi

finish "Slurm jobs"
