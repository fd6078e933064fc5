/* What compiler/ files share and nothing outside compiler/ may use. */
#ifndef PORTENT_COMPILER_INTERNAL_H
#define PORTENT_COMPILER_INTERNAL_H

#include <stdarg.h>

#include "compiler.h"

void pc_expr_remap_tensors(pc_expr *e, const int *new_id);

/* state.c / attach.c */
int64_t pc_ceil_div(int64_t a, int64_t b);
int pc_apply_attach(pc_state *s, const pc_step *step, pt_diag *d);
void pc_stage_init(pc_stage *st, const pc_program *p, int op_id);
/* s as p's initial state (one stage per op, no steps), s->prog borrowed; what s held before is
 * overwritten, not freed. */
void pc_state_init(pc_state *s, const pc_program *p);

/* dag_steps.c */
pc_program *pc_program_copy(const pc_program *p);
int pc_apply_dag_step(pc_state *s, const pc_step *step, pt_diag *d);
int pc_stage_of_op(const pc_state *s, int op);
bool pc_stage_consumes(const pc_state *s, int consumer, int producer);

#endif
