/* The UCP functions the UCX module calls, reached through a table filled
 * by dlopen (ucx_api.c) rather than by linking libucp.
 *
 * Why: libucp and its libraries (libucs, libuct, libucm) cost every program
 * that merely links them: a few milliseconds and 1.5 MB at each start, and
 * libucs installs its own handlers for SIGSEGV and friends when it loads
 * (replacing Strand's crash report). Loaded on demand, they cost nothing to
 * a single-process job or a job on the TCP module, and a Strand built with
 * UCX still runs on a host without it (the UCX module then says it cannot
 * load libucp).
 *
 * Threads: ucx_api_load is called once by the main thread (in the module's
 * init, before any rank runs); the table is read-only afterwards. */
#ifndef STRAND_NET_UCX_API_H
#define STRAND_NET_UCX_API_H

#include <stddef.h>
#include <ucp/api/ucp.h>

#define UCX_API_FUNCTIONS(X)                                                                            \
    X(ucp_config_read) X(ucp_config_modify) X(ucp_config_release) X(ucp_init_version) X(ucp_cleanup)                          \
    X(ucp_context_print_info) X(ucp_get_version_string)                                                  \
    X(ucp_worker_create) X(ucp_worker_destroy) X(ucp_worker_get_efd) X(ucp_worker_arm)                   \
    X(ucp_worker_signal) X(ucp_worker_progress) X(ucp_worker_get_address) X(ucp_worker_release_address)  \
    X(ucp_worker_set_am_recv_handler) X(ucp_worker_flush_nbx)                                            \
    X(ucp_ep_create) X(ucp_ep_close_nbx)                                                                 \
    X(ucp_am_send_nbx) X(ucp_am_recv_data_nbx) X(ucp_am_data_release)                                    \
    X(ucp_tag_send_nbx) X(ucp_tag_recv_nbx) X(ucp_request_cancel)                                        \
    X(ucp_request_free) X(ucp_request_check_status) X(ucs_status_string)

struct ucx_api {
#define UCX_API_POINTER(name) __typeof__(name) *name;
    UCX_API_FUNCTIONS(UCX_API_POINTER)
#undef UCX_API_POINTER
};

extern struct ucx_api ucx_api;

/* A UCP call through the table: UCP(ucp_worker_progress)(worker). */
#define UCP(name) (ucx_api.name)

/* Main thread: loads libucp (the file STRAND_UCX_LIBRARY names, else the
 * one configure found, else its soname through the loader's search path)
 * and fills the table. Before that it sets
 * UCX_HANDLE_ERRORS=none unless the user chose a value, so that libucs
 * leaves Strand's signal handlers alone. Returns 0, or -1 with the reason
 * in why[why_len]. Idempotent. */
int ucx_api_load(char *why, size_t why_len);

#endif
