/* The variable in which a node process writes its own pid at start
 * (src/core/node.c, node_environment_inherited): a program that a rank
 * starts with fork and exec inherits it, sees another pid there, and does
 * not take the job's environment for its own. mpiexec (launcher/, which
 * includes this file) removes it from the environment of the node
 * processes it starts, so that a job launched from inside another job's
 * rank starts as a job of its own. */
#ifndef STRAND_CORE_NODE_PID_H
#define STRAND_CORE_NODE_PID_H

#define NODE_PID_VARIABLE "STRAND_NODE_PID"

#endif
