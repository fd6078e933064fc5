/* Shared by the targets/ files: figure helpers used by the reader and the writer. */
#ifndef PORTENT_TARGETS_INTERNAL_H
#define PORTENT_TARGETS_INTERNAL_H

#include "targets.h"

/* A figure with only a value (spread 0, no repetitions, the entry's source). */
ptg_figure ptg_fig(double value);

#endif
