/* MPI_Publish_name, MPI_Unpublish_name, MPI_Lookup_name: a table shared
 * by every world of the node process (the name service across processes,
 * in mpiexec, needs the network layer). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dpm.h"

struct published {
    struct published *next;
    char *service;
    char port[MPI_MAX_PORT_NAME];
};

static struct {
    pthread_mutex_t lock;
    struct published *list;
} names = { PTHREAD_MUTEX_INITIALIZER, NULL };

/* Under the lock: the link pointing at `service`'s entry (or at NULL). */
static struct published **name_find(const char *service)
{
    struct published **p = &names.list;
    while (*p != NULL && strcmp((*p)->service, service) != 0)
        p = &(*p)->next;
    return p;
}

static int name_args_check(const char *where, const char *service, const char *port)
{
    int rc = error_check_initialized(where);
    if (rc != MPI_SUCCESS)
        return rc;
    if (service == NULL || port == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "service_name and port_name must not be NULL");
    return MPI_SUCCESS;
}

int PMPI_Publish_name(char *service_name, MPI_Info info, char *port_name)
{
    const char *where = "MPI_Publish_name";
    int rc = name_args_check(where, service_name, port_name);
    if (rc != MPI_SUCCESS)
        return rc;
    (void)info;
    if (strnlen(port_name, MPI_MAX_PORT_NAME) == MPI_MAX_PORT_NAME)
        return error_report(MPI_COMM_WORLD, MPI_ERR_ARG, where, "port_name is longer than MPI_MAX_PORT_NAME");
    struct published *e = calloc(1, sizeof *e);
    if (e == NULL || (e->service = strdup(service_name)) == NULL) {
        free(e);
        return error_report(MPI_COMM_WORLD, MPI_ERR_NO_MEM, where, "out of memory");
    }
    strcpy(e->port, port_name);
    pthread_mutex_lock(&names.lock);
    struct published **at = name_find(service_name);
    bool taken = *at != NULL;
    if (!taken)
        *at = e;
    pthread_mutex_unlock(&names.lock);
    if (taken) {
        free(e->service);
        free(e);
        return error_report(MPI_COMM_WORLD, MPI_ERR_SERVICE, where, "service \"%s\" is already published",
                            service_name);
    }
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Publish_name);

int PMPI_Unpublish_name(char *service_name, MPI_Info info, char *port_name)
{
    const char *where = "MPI_Unpublish_name";
    int rc = name_args_check(where, service_name, port_name);
    if (rc != MPI_SUCCESS)
        return rc;
    (void)info;
    pthread_mutex_lock(&names.lock);
    struct published **at = name_find(service_name), *e = *at;
    bool same_port = e != NULL && strncmp(e->port, port_name, MPI_MAX_PORT_NAME) == 0;
    if (same_port)
        *at = e->next;
    pthread_mutex_unlock(&names.lock);
    if (e == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_SERVICE, where, "service \"%s\" is not published",
                            service_name);
    if (!same_port)
        return error_report(MPI_COMM_WORLD, MPI_ERR_SERVICE, where,
                            "service \"%s\" is published with another port", service_name);
    free(e->service);
    free(e);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Unpublish_name);

int PMPI_Lookup_name(char *service_name, MPI_Info info, char *port_name)
{
    const char *where = "MPI_Lookup_name";
    int rc = name_args_check(where, service_name, port_name);
    if (rc != MPI_SUCCESS)
        return rc;
    (void)info;
    pthread_mutex_lock(&names.lock);
    struct published *e = *name_find(service_name);
    if (e != NULL)
        strcpy(port_name, e->port);
    pthread_mutex_unlock(&names.lock);
    if (e == NULL)
        return error_report(MPI_COMM_WORLD, MPI_ERR_NAME, where, "no service \"%s\" is published", service_name);
    return MPI_SUCCESS;
}
STRAND_MPI_ALIAS(MPI_Lookup_name);
