#include <stdlib.h>

#include "comm/comm.h"
#include "unit_support.h"

void unit_node_create(int nranks, size_t eager_limit)
{
    struct node *n = &strand_node;
    n->config.nranks = nranks;
    n->config.eager_limit = eager_limit;
    n->config.universe_size = nranks;
    n->spin_limit = 100;
    n->initial_world = world_create_initial(nranks);
    n->ranks = n->initial_world->ranks;
    for (int i = 0; i < nranks; i++) {
        n->ranks[i]->mpi_state = RANK_MPI_INITIALIZED;
        n->ranks[i]->thread_level = MPI_THREAD_MULTIPLE;
    }
    strand_self = n->ranks[0];
}

void unit_node_destroy(void)
{
    struct node *n = &strand_node;
    world_destroy(n->initial_world);
    n->initial_world = NULL;
    n->ranks = NULL;
    strand_self = NULL;
}

atomic_int unit_stress_failures;

int unit_stress_scaled(int iterations)
{
    const char *s = getenv("STRAND_STRESS_SCALE");
    int n = s != NULL ? atoi(s) : 1;
    return iterations * (n > 0 ? n : 1);
}

void unit_act_as(int world_rank)
{
    strand_self = strand_node.ranks[world_rank];
}

int unit_run_registry(void)
{
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    int failures = (int)CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures == 0 ? 0 : 1;
}
