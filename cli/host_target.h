/* Which shipped target description describes the machine a command runs on: the benchmarks
 * that measure here default to it, so a Zen 4 session predicts with the Zen 4 file. */
#ifndef PORTENT_CLI_HOST_TARGET_H
#define PORTENT_CLI_HOST_TARGET_H

#include <stddef.h>

/* Writes to buf the path of the shipped description named as characterize names this host
 * (e.g. targets/zen4-epyc-2c.json), or of zen5-epyc-2c.json when there is none; returns buf. */
const char *host_target_path(char *buf, size_t size);

#endif
