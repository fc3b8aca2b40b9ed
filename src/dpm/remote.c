/* Dynamic processes between node processes: the WIRE_DPM frames, handed
 * over by the network progress thread (src/net/net.h), dispatched by kind
 * (dpm.h). */
#include <stdio.h>

#include "../net/net.h"
#include "dpm.h"

void dpm_frame_arrived(struct net_peer *from, const struct wire_frame *f, const unsigned char *payload)
{
    switch (f->context_id) {
    case DPM_CONNECT:
    case DPM_ACCEPT:
        dpm_port_frame(from, f, payload);
        return;
    case DPM_SPAWN_PREPARE:
    case DPM_SPAWN_PREPARED:
    case DPM_SPAWN_GO:
    case DPM_SPAWN_DONE:
    case DPM_SPAWN_START:
    case DPM_SPAWN_CANCEL:
        dpm_spawn_frame(from, f, payload);
        return;
    default: {
        char line[200];
        snprintf(line, sizeof line, "Strand MPI: node %d of job %llx sent an unknown dynamic-process frame (%u); "
                                    "ending the job\n",
                 from->job_node, (unsigned long long)from->job_id, f->context_id);
        strand_job_abort(1, line);
    }
    }
}

void dpm_peer_lost(struct net_peer *peer, const char *what)
{
    dpm_port_peer_lost(peer, what);
    dpm_spawn_peer_lost(peer, what);
}
