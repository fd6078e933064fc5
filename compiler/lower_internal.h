/* Shared by the lowering files: the codegen context, lane-affine integer values and the
 * bound inference results. lower.c walks loops, lower_expr.c emits expressions,
 * bounds.c infers the regions of attached stages. */
#ifndef PORTENT_LOWER_INTERNAL_H
#define PORTENT_LOWER_INTERNAL_H

#include <llvm-c/Core.h>

#include "internal.h"

#define LW_MAX_LANES 64

/* An integer in a (possibly vectorized) loop body: lane l holds s + step * l, or, with a
 * period p > 0, s + step * (l % p) + qstep * (l / p) (the two loops of a fused vector loop:
 * row and column of a vectorized (y, x) tile), unless v is set, in which case v is the full
 * <lanes x i64> vector. Scalar code has lanes == 1. A periodic value whose qstep is step * p
 * is kept in the plain form, so a contiguous access is always step 1 with period 0. */
typedef struct {
  LLVMValueRef s;
  int64_t step;
  LLVMValueRef v;
  bool nonneg;   /* known >= 0: lets division use cheaper unsigned forms */
  int64_t period;
  int64_t qstep;
} lw_ival;
/* Whether lanes hold different values. */
bool lw_ival_varies(lw_ival a);
/* Whether lane l holds s + l: a contiguous vector access. */
bool lw_ival_contiguous(lw_ival a);

/* A float or boolean value: scalar, or a vector of `lanes`. */
typedef struct {
  LLVMValueRef x;
  bool vec;
} lw_val;

/* Where an op's values live in the function being emitted. */
typedef struct {
  LLVMValueRef base;               /* float pointer, or NULL for inlined ops */
  int ndim;
  int64_t stride[PC_MAX_DIMS]; /* in elements; storage_align may pad a dimension's stride */
  LLVMValueRef origin[PC_MAX_DIMS]; /* region origin of an attached stage, NULL = 0 */
} lw_buffer;

typedef struct lw {
  const pc_state *s;
  const pc_program *p;
  pt_diag *d;
  int err;
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMTypeRef i1, i64, f32, ptr, void_t;
  LLVMValueRef fn;       /* function being emitted */
  LLVMValueRef kernel_fn;
  LLVMValueRef parallel_for;
  LLVMTypeRef parallel_for_ty;
  unsigned eff_guard[PC_MAX_STAGES];
  LLVMValueRef md_scope[PC_MAX_STAGES], md_noalias[PC_MAX_STAGES]; /* kernel buffers never alias */
  unsigned kind_scope, kind_noalias; /* attached stages: axes whose region may leave the tensor */
  LLVMValueRef bufs_arg; /* its float** argument */
  LLVMValueRef pool_arg;
  char name[80];
  int n_par;
  char par_names[16][80];
  int kernel_buf[PC_MAX_STAGES]; /* op -> kernel argument index, -1 if none */
  lw_buffer buf[PC_MAX_STAGES];  /* op -> storage in the current function */
  int lanes;                     /* 1 in scalar code */
  LLVMValueRef mask;             /* lanes active under a lane-varying condition, or NULL */
  pc_stage eff[PC_MAX_STAGES];   /* stages with bound-inferred extents */
  lw_ival leafv[PC_MAX_STAGES][PC_MAX_NODES]; /* values of defined leaves */
  bool leaf_set[PC_MAX_STAGES][PC_MAX_NODES];
} lw;

/* An environment: the value of each axis of the op being evaluated. */
typedef struct {
  int op;
  lw_ival axis[PC_MAX_AXES];
} lw_env;

/* lower_expr.c */
lw_ival lw_const(lw *L, int64_t v);
lw_ival lw_add(lw *L, lw_ival a, lw_ival b);
lw_ival lw_mul_const(lw *L, lw_ival a, int64_t c);
lw_ival lw_floordiv_const(lw *L, lw_ival a, int64_t c);
lw_ival lw_floormod_const(lw *L, lw_ival a, int64_t c);
LLVMValueRef lw_ival_vector(lw *L, lw_ival a);
lw_ival lw_eval_int(lw *L, const pc_expr *e, const lw_env *env);
lw_val lw_eval_cond(lw *L, const pc_expr *e, const lw_env *env);
lw_val lw_eval(lw *L, const pc_expr *e, const lw_env *env);
/* Flat element index of op `op` at the given global coordinates (origin subtracted). */
lw_ival lw_flat_index(lw *L, int op, const lw_ival *coords);
lw_val lw_load(lw *L, int op, lw_ival flat);
void lw_store(lw *L, int op, lw_ival flat, lw_val v);
lw_val lw_splat(lw *L, lw_val v);
LLVMValueRef lw_intrinsic(lw *L, const char *name, LLVMTypeRef *overloads, unsigned n_overloads,
                          LLVMValueRef *args, unsigned n);
LLVMValueRef lw_and_mask(lw *L, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef lw_contract(LLVMValueRef inst);

/* lower.c */
void lw_tag_access(lw *L, int op, LLVMValueRef inst);

/* bounds.c: the region of attached stage `sid` needed by its target's current iteration. */
int lw_infer_region(lw *L, int sid, LLVMValueRef *origin, int64_t *extent, bool *need_guard);
/* The value of node `n` of stage `sid` from its defined leaves. */
lw_ival lw_node_value(lw *L, int sid, int n);
int lw_op_stage(const lw *L, int op);

#endif
