/* Lowering a schedule state to a target-neutral LLVM module: one loop nest per stage in
 * leaf order, attached stages inside their target's loop, reduction init before the first
 * reduce loop, vectorized innermost loops as explicit vector operations of the loop's
 * extent, unroll as loop metadata, and parallel outer loops outlined and run on pt_pool. */
#include <llvm-c/DebugInfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "lower_internal.h"

static int lfail(lw *L, int err, const char *fmt, const char *arg) {
  if (!L->err) L->err = pt_fail(L->d, err, fmt, arg);
  return L->err;
}

/* Which guard each node needs: value(node) < extent when its children over-cover it. */
static bool node_needs_guard(const pc_stage *st, int n) {
  const pc_iter *it = &st->nodes[n];
  if (it->n_children == 0) return false;
  int64_t cover = 1;
  for (int k = 0; k < it->n_children; k++) cover *= st->nodes[it->children[k]].extent;
  return cover > it->extent;
}


/* Does the subtree under node n contain a leaf of the given kind only? (for init guards) */
static bool node_is_reduce(const pc_stage *st, int n) { return st->nodes[n].kind == PC_ITER_REDUCE; }

static LLVMMetadataRef unroll_md(lw *L) {
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(L->ctx, NULL, 0);
  LLVMMetadataRef full = LLVMMDStringInContext2(L->ctx, "llvm.loop.unroll.full", 21);
  LLVMMetadataRef ops[2] = {tmp, LLVMMDNodeInContext2(L->ctx, &full, 1)};
  LLVMMetadataRef id = LLVMMDNodeInContext2(L->ctx, ops, 2);
  LLVMMetadataReplaceAllUsesWith(tmp, id);
  return id;
}

typedef struct {
  int sid;
  bool init; /* emitting the reduction-init nest: reduce leaves are skipped */
  int64_t inner_steps[PC_MAX_LEAVES + 1]; /* product of extents of leaves at and below a level */
} nest;

static void emit_level(lw *L, nest *N, int level);

/* Enters a counted loop; the body is whatever is emitted until loop_end. */
typedef struct {
  LLVMBasicBlockRef header, pre;
  LLVMValueRef iv;
  int64_t extent;
  LLVMValueRef end; /* dynamic end (parallel chunk), or NULL */
} loop;

static loop loop_begin(lw *L, LLVMValueRef begin, int64_t extent, LLVMValueRef end, const char *name) {
  loop lp = {0};
  lp.extent = extent;
  lp.end = end;
  lp.pre = LLVMGetInsertBlock(L->b);
  lp.header = LLVMAppendBasicBlockInContext(L->ctx, L->fn, name);
  LLVMBuildBr(L->b, lp.header);
  LLVMPositionBuilderAtEnd(L->b, lp.header);
  lp.iv = LLVMBuildPhi(L->b, L->i64, name);
  LLVMAddIncoming(lp.iv, &begin, &lp.pre, 1);
  return lp;
}

static void loop_end(lw *L, loop *lp, bool unroll) {
  LLVMValueRef next = LLVMBuildAdd(L->b, lp->iv, LLVMConstInt(L->i64, 1, 0), "");
  LLVMValueRef bound = lp->end ? lp->end : LLVMConstInt(L->i64, (unsigned long long)lp->extent, 0);
  LLVMValueRef more = LLVMBuildICmp(L->b, LLVMIntULT, next, bound, "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(L->b);
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "exit");
  LLVMValueRef br = LLVMBuildCondBr(L->b, more, lp->header, exit);
  if (unroll) LLVMSetMetadata(br, LLVMGetMDKindIDInContext(L->ctx, "llvm.loop", 9), LLVMMetadataAsValue(L->ctx, unroll_md(L)));
  LLVMAddIncoming(lp->iv, &next, &latch, 1);
  LLVMPositionBuilderAtEnd(L->b, exit);
}

static LLVMValueRef entry_alloca(lw *L, int64_t n_floats) {
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(L->b);
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(L->fn);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first) LLVMPositionBuilderBefore(L->b, first);
  else LLVMPositionBuilderAtEnd(L->b, entry);
  LLVMValueRef a = LLVMBuildArrayAlloca(L->b, L->f32, LLVMConstInt(L->i64, (unsigned long long)n_floats, 0), "local");
  LLVMSetAlignment(a, 64);
  LLVMPositionBuilderAtEnd(L->b, cur);
  return a;
}

static void emit_stage(lw *L, int sid);

/* Row-major strides of a buffer of `shape`; storage_align pads the stride of one dimension to
 * factor * k + offset (TVM's rule). Returns the element count to allocate. */
static int64_t buffer_strides(const pc_stage *st, int ndim, const int64_t *shape, int64_t *stride) {
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    if (d == st->storage_align_dim && st->storage_align_factor > 0) {
      int64_t f = st->storage_align_factor, o = st->storage_align_offset;
      s = s + ((o - s % f) % f + f) % f;
    }
    stride[d] = s;
    s *= shape[d];
  }
  return s;
}

/* Loads every kernel buffer's base pointer at the top of the current function. */
static void load_bases(lw *L) {
  for (int op = 0; op < L->p->n_ops; op++) {
    if (L->kernel_buf[op] < 0) continue;
    LLVMValueRef idx = LLVMConstInt(L->i64, (unsigned long long)L->kernel_buf[op], 0);
    LLVMValueRef slot = LLVMBuildGEP2(L->b, L->ptr, L->bufs_arg, &idx, 1, "");
    L->buf[op].base = LLVMBuildLoad2(L->b, L->ptr, slot, L->p->ops[op].name);
  }
}

/* Emits the attached stages of node `node` of stage `sid`. */
static void emit_attached(lw *L, int sid, int node) {
  for (int o = 0; o < L->s->n_stages; o++)
    if (L->s->stages[o].at == PC_AT_ITER && L->s->stages[o].attach_stage == sid && L->s->stages[o].attach_node == node)
      emit_stage(L, o);
}

/* The statement at the innermost level: init store, or the update / plain store. */
static void emit_body(lw *L, nest *N) {
  int sid = N->sid;
  const pc_stage *st = &L->eff[sid];
  const pc_op *op = &L->p->ops[st->op];
  lw_env env = {.op = st->op};
  lw_ival coords[PC_MAX_DIMS];
  /* Guards: nodes whose children over-cover them, and the tensor bounds of attached regions. */
  LLVMValueRef scalar_guard = NULL, lane_guard = NULL;
  for (int n = 0; n < st->n_nodes; n++) {
    if (!node_needs_guard(st, n) || (N->init && node_is_reduce(st, n))) continue;
    lw_ival v = lw_node_value(L, sid, n);
    LLVMValueRef lim = LLVMConstInt(L->i64, (unsigned long long)st->nodes[n].extent, 0);
    if (lw_ival_varies(v)) {
      LLVMValueRef vec = lw_ival_vector(L, v);
      lw_ival li = {lim, 0, NULL, true};
      lane_guard = lw_and_mask(L, lane_guard, LLVMBuildICmp(L->b, LLVMIntULT, vec, lw_ival_vector(L, li), ""));
    } else
      scalar_guard = lw_and_mask(L, scalar_guard, LLVMBuildICmp(L->b, LLVMIntULT, v.s, lim, ""));
  }
  for (int a = 0; a < op->ndim + op->n_reduce; a++) {
    if (N->init && a >= op->ndim) break;
    int root = -1;
    for (int n = 0; n < st->n_nodes; n++)
      if (st->nodes[n].rel == PC_REL_ROOT && st->nodes[n].root_axis == a) root = n;
    lw_ival v = lw_node_value(L, sid, root);
    if (a < op->ndim && L->buf[st->op].origin[a]) {
      lw_ival o = {L->buf[st->op].origin[a], 0, NULL, true};
      v = lw_add(L, v, o);
    }
    env.axis[a] = v;
    if (a < op->ndim) coords[a] = v;
  }
  /* Attached regions that may step outside the tensor carry a bounds check per axis. */
  for (int a = 0; a < op->ndim; a++) {
    if (!L->buf[st->op].origin[a] || !(L->eff_guard[sid] & (1u << a))) continue;
    lw_ival v = coords[a];
    LLVMValueRef lim = LLVMConstInt(L->i64, (unsigned long long)op->shape[a], 0);
    if (lw_ival_varies(v)) {
      lw_ival li = {lim, 0, NULL, true};
      lane_guard = lw_and_mask(L, lane_guard, LLVMBuildICmp(L->b, LLVMIntULT, lw_ival_vector(L, v), lw_ival_vector(L, li), ""));
    } else
      scalar_guard = lw_and_mask(L, scalar_guard, LLVMBuildICmp(L->b, LLVMIntULT, v.s, lim, ""));
  }
  LLVMBasicBlockRef join = NULL;
  if (scalar_guard) {
    LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "guard");
    join = LLVMAppendBasicBlockInContext(L->ctx, L->fn, "guard.end");
    LLVMBuildCondBr(L->b, scalar_guard, then, join);
    LLVMPositionBuilderAtEnd(L->b, then);
  }
  LLVMValueRef saved_mask = L->mask;
  L->mask = lw_and_mask(L, L->mask, lane_guard);
  lw_ival flat = lw_flat_index(L, st->op, coords);
  if (N->init) {
    double init = op->reduce == PC_REDUCE_MAX ? -3.402823466e38 : 0.0;
    lw_val z = {LLVMConstReal(L->f32, init), false};
    lw_store(L, st->op, flat, z);
  } else {
    lw_val v = lw_eval(L, op->body, &env);
    if (op->reduce != PC_REDUCE_NONE) {
      lw_val acc = lw_load(L, st->op, flat);
      if (acc.vec != v.vec) acc = lw_splat(L, acc), v = lw_splat(L, v);
      if (op->reduce == PC_REDUCE_SUM) v.x = lw_contract(LLVMBuildFAdd(L->b, acc.x, v.x, ""));
      else {
        LLVMTypeRef ty = LLVMTypeOf(v.x);
        LLVMValueRef args[2] = {acc.x, v.x};
        v.x = lw_intrinsic(L, "llvm.maxnum", &ty, 1, args, 2);
      }
    }
    lw_store(L, st->op, flat, v);
  }
  L->mask = saved_mask;
  if (join) {
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
  }
}

static bool has_attached(const lw *L, int sid, int node) {
  for (int o = 0; o < L->s->n_stages; o++)
    if (L->s->stages[o].at == PC_AT_ITER && L->s->stages[o].attach_stage == sid && L->s->stages[o].attach_node == node)
      return true;
  return false;
}

/* The next level to emit: in the init nest, reduce leaves are skipped. */
static int next_level(lw *L, nest *N, int level) {
  const pc_stage *st = &L->eff[N->sid];
  while (N->init && level < st->n_leaves && st->nodes[st->leaves[level]].kind == PC_ITER_REDUCE) level++;
  return level;
}

static int first_reduce_level(const pc_stage *st) {
  for (int l = 0; l < st->n_leaves; l++)
    if (st->nodes[st->leaves[l]].kind != PC_ITER_SPATIAL) return l;
  return -1;
}

static void emit_parallel(lw *L, nest *N, int level);

static void emit_level(lw *L, nest *N, int level) {
  if (L->err) return;
  int sid = N->sid;
  const pc_stage *st = &L->eff[sid];
  const pc_op *op = &L->p->ops[st->op];
  level = next_level(L, N, level);
  if (!N->init && op->reduce != PC_REDUCE_NONE && level == first_reduce_level(st)) {
    nest init = *N;
    init.init = true;
    emit_level(L, &init, level);
  }
  if (level >= st->n_leaves) {
    emit_body(L, N);
    return;
  }
  int node = st->leaves[level];
  const pc_iter *it = &st->nodes[node];
  if (it->kind == PC_ITER_MIXED) {
    lfail(L, PT_ERR_UNSUPPORTED, "lowering: iterator %s fuses spatial and reduction loops", it->name);
    return;
  }
  bool innermost = next_level(L, N, level + 1) >= st->n_leaves;
  /* Vectorize: the innermost loop of the nest, no stage attached inside, a sane width. */
  if (it->annotation == PC_ANN_VECTORIZE && innermost && L->lanes == 1 && it->extent > 1 &&
      it->extent <= LW_MAX_LANES && !has_attached(L, sid, node)) {
    L->lanes = (int)it->extent;
    lw_ival lane = {LLVMConstInt(L->i64, 0, 0), 1, NULL, true};
    L->leafv[sid][node] = lane;
    L->leaf_set[sid][node] = true;
    emit_body(L, N);
    L->leaf_set[sid][node] = false;
    L->lanes = 1;
    return;
  }
  if (it->annotation == PC_ANN_PARALLEL && L->fn == L->kernel_fn && st->at == PC_AT_ROOT && level == 0 && !N->init &&
      it->extent > 1) {
    emit_parallel(L, N, level);
    return;
  }
  bool unroll = it->annotation == PC_ANN_UNROLL ||
                (L->s->stages[sid].auto_unroll_max_step > 0 && N->inner_steps[level] <= L->s->stages[sid].auto_unroll_max_step);
  if (it->extent == 1) {
    lw_ival zero = lw_const(L, 0);
    L->leafv[sid][node] = zero;
    L->leaf_set[sid][node] = true;
    if (!N->init) emit_attached(L, sid, node);
    emit_level(L, N, level + 1);
    L->leaf_set[sid][node] = false;
    return;
  }
  /* Unroll as TVM does, by replicating the body with the iterator as a constant, so the
   * middle end sees the register tile from its first pass (CSE, store promotion); bodies
   * too large for that keep a loop with full-unroll metadata. */
  if (unroll && N->inner_steps[level] <= 4096) {
    for (int64_t i = 0; i < it->extent && !L->err; i++) {
      L->leafv[sid][node] = lw_const(L, i);
      L->leaf_set[sid][node] = true;
      if (!N->init) emit_attached(L, sid, node);
      emit_level(L, N, level + 1);
    }
    L->leaf_set[sid][node] = false;
    return;
  }
  loop lp = loop_begin(L, LLVMConstInt(L->i64, 0, 0), it->extent, NULL, it->name);
  lw_ival v = {lp.iv, 0, NULL, true};
  L->leafv[sid][node] = v;
  L->leaf_set[sid][node] = true;
  if (!N->init) emit_attached(L, sid, node);
  emit_level(L, N, level + 1);
  L->leaf_set[sid][node] = false;
  loop_end(L, &lp, unroll);
}

/* Outlines levels >= `level` into `void NAME_parK(float **bufs, i64 begin, i64 end)` and
 * calls pt_parallel_for(pool, fn, bufs, extent) in the kernel. */
static void emit_parallel(lw *L, nest *N, int level) {
  int sid = N->sid;
  const pc_stage *st = &L->eff[sid];
  int node = st->leaves[level];
  const pc_iter *it = &st->nodes[node];
  char name[80];
  snprintf(name, sizeof name, "%.64s_par%d", L->name, L->n_par);
  if (L->n_par < 16) snprintf(L->par_names[L->n_par], sizeof L->par_names[0], "%s", name);
  L->n_par++;
  LLVMTypeRef params[3] = {L->ptr, L->i64, L->i64};
  LLVMTypeRef fty = LLVMFunctionType(L->void_t, params, 3, 0);
  LLVMValueRef fn = LLVMAddFunction(L->mod, name, fty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  /* The module says which functions run in parallel and over how many iterations, so any
   * reader of the .ll (the analyzer, a person) can divide their work over threads:
   * !portent.parallel = !{!{ptr @fn, i64 extent}, ...}. */
  LLVMMetadataRef md[2] = {LLVMValueAsMetadata(fn),
                           LLVMValueAsMetadata(LLVMConstInt(L->i64, (unsigned long long)it->extent, 0))};
  LLVMAddNamedMetadataOperand(L->mod, "portent.parallel",
                              LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, md, 2)));
  /* Call site in the kernel. */
  LLVMValueRef call_args[4] = {L->pool_arg, fn, L->bufs_arg, LLVMConstInt(L->i64, (unsigned long long)it->extent, 0)};
  LLVMBuildCall2(L->b, L->parallel_for_ty, L->parallel_for, call_args, 4, "");
  /* Body of the outlined function. */
  LLVMBasicBlockRef resume = LLVMGetInsertBlock(L->b);
  LLVMValueRef saved_fn = L->fn, saved_bufs = L->bufs_arg;
  lw_buffer saved_buf[PC_MAX_STAGES];
  memcpy(saved_buf, L->buf, sizeof saved_buf);
  L->fn = fn;
  L->bufs_arg = LLVMGetParam(fn, 0);
  LLVMPositionBuilderAtEnd(L->b, LLVMAppendBasicBlockInContext(L->ctx, fn, "entry"));
  load_bases(L);
  loop lp = loop_begin(L, LLVMGetParam(fn, 1), it->extent, LLVMGetParam(fn, 2), it->name);
  lw_ival v = {lp.iv, 0, NULL, true};
  L->leafv[sid][node] = v;
  L->leaf_set[sid][node] = true;
  emit_attached(L, sid, node);
  emit_level(L, N, level + 1);
  L->leaf_set[sid][node] = false;
  loop_end(L, &lp, false);
  LLVMBuildRetVoid(L->b);
  L->fn = saved_fn;
  L->bufs_arg = saved_bufs;
  memcpy(L->buf, saved_buf, sizeof saved_buf);
  LLVMPositionBuilderAtEnd(L->b, resume);
}

static void emit_stage(lw *L, int sid) {
  if (L->err) return;
  const pc_stage *orig = &L->s->stages[sid];
  const pc_op *op = &L->p->ops[orig->op];
  L->eff[sid] = *orig;
  pc_stage *st = &L->eff[sid];
  if (orig->at == PC_AT_ITER) {
    /* Region of this stage needed by one iteration of the target's attach loop. */
    LLVMValueRef origin[PC_MAX_DIMS] = {0};
    int64_t extent[PC_MAX_DIMS];
    bool guard[PC_MAX_DIMS];
    lw_infer_region(L, sid, origin, extent, guard);
    L->eff_guard[sid] = 0;
    for (int d = 0; d < op->ndim; d++) {
      L->buf[orig->op].origin[d] = origin[d];
      if (guard[d]) L->eff_guard[sid] |= 1u << d;
    }
    int64_t total = buffer_strides(orig, op->ndim, extent, L->buf[orig->op].stride);
    if (total > (1 << 20)) {
      lfail(L, PT_ERR_UNSUPPORTED, "lowering: stage %s computed at a loop needs a local buffer over 4 MiB", op->name);
      return;
    }
    L->buf[orig->op].ndim = op->ndim;
    L->buf[orig->op].base = entry_alloca(L, total);
    pc_stage_bound_region(st, op->ndim, extent);
  }
  nest N = {.sid = sid};
  N.inner_steps[st->n_leaves] = 1;
  /* auto_unroll_max_step counts the statements a loop runs; a loop holding an attached
   * stage runs that stage's whole nest, so it is never unrolled automatically. */
  bool holds_attached = false;
  for (int l = st->n_leaves - 1; l >= 0; l--) {
    holds_attached = holds_attached || has_attached(L, sid, st->leaves[l]);
    int64_t steps = N.inner_steps[l + 1] * st->nodes[st->leaves[l]].extent;
    N.inner_steps[l] = holds_attached || steps > (1 << 20) ? (1 << 20) : steps;
  }
  emit_level(L, &N, 0);
}

static int collect_buffers(lw *L, pc_kernel *k) {
  int n = 0;
  for (int pass = 0; pass < 3; pass++)
    for (int op = 0; op < L->p->n_ops; op++) {
      const pc_op *o = &L->p->ops[op];
      int st = lw_op_stage(L, op);
      bool inputs = o->is_placeholder, outputs = !o->is_placeholder && o->is_output;
      bool inter = !o->is_placeholder && !o->is_output && st >= 0 && L->s->stages[st].at == PC_AT_ROOT;
      if ((pass == 0 && inputs) || (pass == 1 && outputs) || (pass == 2 && inter)) {
        if (n >= PC_MAX_STAGES) return pt_fail(L->d, PT_ERR_INVALID, "too many buffers");
        L->kernel_buf[op] = n;
        k->buffer_op[n] = op;
        k->buffer_numel[n] = buffer_strides(&L->s->stages[st], o->ndim, o->shape, L->buf[op].stride);
        n++;
      }
    }
  k->n_buffers = n;
  for (int op = 0; op < L->p->n_ops; op++) L->buf[op].ndim = L->p->ops[op].ndim;
  return 0;
}

static LLVMMetadataRef self_ref_node(lw *L, LLVMMetadataRef *ops, int n) {
  LLVMMetadataRef all[4];
  all[0] = LLVMTemporaryMDNode(L->ctx, NULL, 0);
  for (int i = 0; i < n; i++) all[i + 1] = ops[i];
  LLVMMetadataRef node = LLVMMDNodeInContext2(L->ctx, all, (size_t)n + 1);
  LLVMMetadataReplaceAllUsesWith(all[0], node);
  return node;
}

/* Scoped no-alias metadata: the kernel's buffers are distinct arrays, which LLVM cannot
 * see through the float** argument; without this, accumulators are never kept in
 * registers across a reduction loop. */
static void build_alias_scopes(lw *L) {
  LLVMMetadataRef name = LLVMMDStringInContext2(L->ctx, "portent.buffers", 15);
  LLVMMetadataRef domain = self_ref_node(L, &name, 1);
  LLVMMetadataRef scopes[PC_MAX_STAGES];
  int ops[PC_MAX_STAGES], n = 0;
  for (int op = 0; op < L->p->n_ops; op++) {
    if (L->kernel_buf[op] < 0) continue;
    LLVMMetadataRef args[2] = {domain, LLVMMDStringInContext2(L->ctx, L->p->ops[op].name, strlen(L->p->ops[op].name))};
    scopes[n] = self_ref_node(L, args, 2);
    ops[n++] = op;
  }
  for (int i = 0; i < n; i++) {
    LLVMMetadataRef others[PC_MAX_STAGES];
    int m = 0;
    for (int j = 0; j < n; j++)
      if (j != i) others[m++] = scopes[j];
    L->md_scope[ops[i]] = LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, &scopes[i], 1));
    L->md_noalias[ops[i]] = LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, others, (size_t)m));
  }
  L->kind_scope = LLVMGetMDKindIDInContext(L->ctx, "alias.scope", 11);
  L->kind_noalias = LLVMGetMDKindIDInContext(L->ctx, "noalias", 7);
}

void lw_tag_access(lw *L, int op, LLVMValueRef inst) {
  if (!L->md_scope[op]) return;
  LLVMSetMetadata(inst, L->kind_scope, L->md_scope[op]);
  LLVMSetMetadata(inst, L->kind_noalias, L->md_noalias[op]);
}

int pc_lower_module(const pc_state *s, pc_kernel *k, pt_diag *d) {
  lw *L = calloc(1, sizeof *L);
  L->s = s;
  L->p = s->prog;
  L->d = d;
  L->lanes = 1;
  L->ctx = k->ctx;
  snprintf(L->name, sizeof L->name, "%s", k->name);
  L->mod = LLVMModuleCreateWithNameInContext(k->name, L->ctx);
  L->b = LLVMCreateBuilderInContext(L->ctx);
  L->i1 = LLVMInt1TypeInContext(L->ctx);
  L->i64 = LLVMInt64TypeInContext(L->ctx);
  L->f32 = LLVMFloatTypeInContext(L->ctx);
  L->ptr = LLVMPointerTypeInContext(L->ctx, 0);
  L->void_t = LLVMVoidTypeInContext(L->ctx);
  for (int i = 0; i < PC_MAX_STAGES; i++) L->kernel_buf[i] = -1;
  int rc = collect_buffers(L, k);
  if (rc) goto done;
  build_alias_scopes(L);
  LLVMTypeRef pf_params[4] = {L->ptr, L->ptr, L->ptr, L->i64};
  L->parallel_for_ty = LLVMFunctionType(L->void_t, pf_params, 4, 0);
  L->parallel_for = LLVMAddFunction(L->mod, "pt_parallel_for", L->parallel_for_ty);
  LLVMTypeRef params[2] = {L->ptr, L->ptr};
  L->fn = L->kernel_fn = LLVMAddFunction(L->mod, k->name, LLVMFunctionType(L->void_t, params, 2, 0));
  L->bufs_arg = LLVMGetParam(L->fn, 0);
  L->pool_arg = LLVMGetParam(L->fn, 1);
  LLVMPositionBuilderAtEnd(L->b, LLVMAppendBasicBlockInContext(L->ctx, L->fn, "entry"));
  load_bases(L);
  /* Root stages in topological order; attached ones are emitted inside their targets. */
  for (int sid = 0; sid < s->n_stages && !L->err; sid++) {
    const pc_stage *st = &s->stages[sid];
    if (L->p->ops[st->op].is_placeholder || st->at != PC_AT_ROOT) continue;
    emit_stage(L, sid);
  }
  LLVMBuildRetVoid(L->b);
  rc = L->err;
  k->n_parallel = L->n_par < 16 ? L->n_par : 16;
  memcpy(k->parallel_names, L->par_names, sizeof L->par_names);
done:
  LLVMDisposeBuilder(L->b);
  if (rc) LLVMDisposeModule(L->mod);
  else k->mod = L->mod;
  free(L);
  return rc;
}
