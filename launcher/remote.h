/* Node processes on other hosts: mpiexec starts each through ssh as
 *   ssh [-F CONFIG] -o BatchMode=yes -o ConnectTimeout=S -T -x HOST \
 *       exec MPIEXEC --node-agent --wdir DIR --setenv NAME=VALUE... -- PROGRAM ARGS
 * (words quoted for the remote POSIX shell). The node agent is this same
 * mpiexec binary on the remote host (same path: a shared or identical
 * installation); it reports to the job's key-value store (kvs.h), runs the
 * node process as its child and stays with it:
 *  - it tells the store that it started, and how the node process ended
 *    (exit status, signal, MPI_Abort: the node process signals its parent
 *    with SIGUSR1 as with a local mpiexec);
 *  - its stdin is mpiexec's pipe through ssh: end of file (mpiexec ended
 *    the job, was killed, or the ssh connection died) kills the node
 *    process's group, so nothing is left behind on the host;
 *  - the node process dies with the agent (PR_SET_PDEATHSIG).
 * stdout and stderr of the node process go through ssh to mpiexec's. */
#ifndef STRAND_LAUNCHER_REMOTE_H
#define STRAND_LAUNCHER_REMOTE_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

/* True when `host` names this machine: localhost, a 127.x or ::1 address,
 * this host's name, or a name or address of one of its interfaces. */
bool host_is_this_machine(const char *host);
/* This machine's address (numeric, in out[len]) on the route to `host`:
 * where a node process there reaches mpiexec. Returns 0 or -1. */
int address_toward(const char *host, char *out, size_t len);

/* Installs `handler` for `sig`; interrupted system calls restart (also
 * used by mpiexec.c). */
void on_signal(int sig, void (*handler)(int));

/* What `--node-agent` follows with, up to and including "--". */
struct remote_command {
    const char *host;
    char **env;             /* NAME=VALUE, NULL-terminated: forwarded to the node process */
    char **program_argv;
};

/* The ssh command line (a NULL-terminated argv, malloc'd) that starts the
 * agent for `cmd` on cmd->host. */
char **remote_ssh_argv(const struct remote_command *cmd);

/* `mpiexec --node-agent ...`: argv starts after "--node-agent". Never
 * returns to mpiexec's main. */
_Noreturn void node_agent_main(int argc, char **argv);

#endif
