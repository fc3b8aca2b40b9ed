/* Loading libucp on demand (ucx_api.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "ucx_api.h"

struct ucx_api ucx_api;

/* STRAND_UCX_LIBRARY names another libucp (a UCX installed elsewhere). */
static void *open_libucp(char *why, size_t why_len)
{
    const char *chosen = getenv("STRAND_UCX_LIBRARY");
    if (chosen != NULL && *chosen != '\0') {
        void *lib = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL)
            snprintf(why, why_len, "cannot load UCX's libucp (STRAND_UCX_LIBRARY=%s): %s", chosen, dlerror());
        return lib;
    }
    void *lib = dlopen(STRAND_UCP_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        lib = dlopen(STRAND_UCP_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        snprintf(why, why_len, "cannot load UCX's libucp (%s): %s", STRAND_UCP_LIBRARY, dlerror());
    return lib;
}

int ucx_api_load(char *why, size_t why_len)
{
    static void *lib;
    if (lib != NULL)
        return 0;
    /* Read by libucs as it loads: keep Strand's crash report (the main
     * thread runs alone here, so setenv is safe). */
    setenv("UCX_HANDLE_ERRORS", "none", 0);
    void *opened = open_libucp(why, why_len);
    if (opened == NULL)
        return -1;
    /* dlsym on the handle also searches libucp's own dependencies, where
     * ucs_status_string lives (libucs). */
#define UCX_API_RESOLVE(name)                                                                          \
    if ((ucx_api.name = (__typeof__(name) *)dlsym(opened, #name)) == NULL) {                           \
        snprintf(why, why_len, "UCX's libucp lacks %s: UCX 1.11 or newer is needed", #name);           \
        dlclose(opened);                                                                               \
        return -1;                                                                                     \
    }
    UCX_API_FUNCTIONS(UCX_API_RESOLVE)
#undef UCX_API_RESOLVE
    lib = opened;
    return 0;
}
