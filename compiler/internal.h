/* What compiler/ files share and nothing outside compiler/ may use. */
#ifndef PORTENT_COMPILER_INTERNAL_H
#define PORTENT_COMPILER_INTERNAL_H

#include <stdarg.h>

#include "compiler.h"

void pc_expr_remap_tensors(pc_expr *e, const int *new_id);

#endif
