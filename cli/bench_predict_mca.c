/* A second opinion on the pipeline simulator: llvm-mca-19's cycles per iteration for the
 * innermost single-block loop bodies of a candidate, beside the simulator's steady state with
 * every load an L1 hit (what llvm-mca assumes). Each body is delimited in the host assembly by
 * `# LLVM-MCA-BEGIN/END` comments that inline-asm calls put at the start (after the phis) and
 * before the terminator of its IR block, so each region is exactly the block the simulator sees
 * (the loop branch itself falls outside). */
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_predict.h"
#include "commands.h"
#include "compiler.h"
#include "predictor.h"

typedef struct {
  const char *workload;
  int candidate;
  char region[64];
  char block[96];     /* function/block, as `portent predict --blocks` names them */
  int uops;
  double sim, mca;
} mca_row;

static void marker(LLVMModuleRef mod, LLVMBuilderRef b, const char *text) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(ctx), NULL, 0, 0);
  LLVMValueRef fn = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)"", 0, 1, 0, LLVMInlineAsmDialectATT, 0);
  LLVMBuildCall2(b, fty, fn, NULL, 0, "");
}

static LLVMBasicBlockRef nth_block(LLVMValueRef fn, int j) {
  LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn);
  for (int i = 0; bb && i < j; i++) bb = LLVMGetNextBasicBlock(bb);
  return bb;
}

/* Region name -> cycles per iteration from llvm-mca's summary view. */
static int run_mca(const char *asm_path, const char *cpu, int n, mca_row *rows) {
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "llvm-mca-19 -mcpu=%s -iterations=100 -all-views=false -summary-view %s 2>&1", cpu,
           asm_path);
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  char line[512], region[64] = "";
  double iters = 0;
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    char name[64];
    double v;
    if (sscanf(line, "[%*d] Code Region - %63s", name) == 1) snprintf(region, sizeof region, "%s", name), iters = 0;
    else if (sscanf(line, "Iterations: %lf", &v) == 1) iters = v;
    else if (sscanf(line, "Total Cycles: %lf", &v) == 1 && iters > 0)
      for (int i = 0; i < n; i++)
        if (strcmp(rows[i].region, region) == 0) rows[i].mca = v / iters, found++;
  }
  int st = pclose(f);
  return st == 0 ? found : -1;
}

/* Appends the rows of one candidate; returns how many. */
static int candidate_rows(pp_predictor *pp, double l1, const char *cpu, const char *workload, int candidate,
                          const char *steps_json, mca_row *rows, int cap) {
  pt_diag d = {0};
  pc_program *prog = pc_workload_build(workload, &d);
  pc_state *s = prog ? pc_state_new(prog) : NULL;
  int n = 0;
  pc_kernel *k = NULL;
  pa_module *m = NULL;
  pa_profile *p = NULL;
  LLVMBuilderRef b = NULL;
  if (!s || bp_apply_steps(s, steps_json, &d) != 0 || !(k = pc_lower(s, NULL, &d)))
    goto done;
  LLVMModuleRef mod = pc_kernel_module(k);
  m = pa_module_from_llvm(mod);
  p = m ? pa_profile_static(m, &d) : NULL;
  if (!p) goto done;
  b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  pp_op *ops = NULL;
  for (int i = 0; i < p->n_functions; i++) {
    const pa_function *f = &p->functions[i];
    LLVMValueRef fn = LLVMGetNamedFunction(mod, f->name);
    if (!fn) continue;
    for (int l = 0; l < f->n_loops && n < cap; l++) {
      bool inner = f->loops[l].n_blocks == 1;
      for (int q = 0; q < f->n_loops && inner; q++) inner = f->loops[q].parent != l;
      if (!inner) continue;
      const pa_block *blk = &f->blocks[f->loops[l].header];
      LLVMBasicBlockRef bb = nth_block(fn, f->loops[l].header);
      if (!bb || blk->n_nodes == 0) continue;
      ops = realloc(ops, sizeof *ops * blk->n_nodes);
      pp_legalize_block(pp, blk, l1, ops);
      mca_row *r = &rows[n++];
      r->workload = workload, r->candidate = candidate, r->mca = NAN;
      snprintf(r->region, sizeof r->region, "f%d_b%d", i, f->loops[l].header);
      snprintf(r->block, sizeof r->block, "%s/%s", f->name, blk->name);
      r->uops = 0;
      for (int q = 0; q < blk->n_nodes; q++) r->uops += ops[q].parts;
      r->sim = pp_schedule(pp, blk->n_nodes, ops, blk->n_edges, blk->edges, true);
      LLVMValueRef first = LLVMGetFirstInstruction(bb);
      while (first && LLVMGetInstructionOpcode(first) == LLVMPHI) first = LLVMGetNextInstruction(first);
      char text[128];
      snprintf(text, sizeof text, "# LLVM-MCA-BEGIN %s", r->region);
      LLVMPositionBuilderBefore(b, first);
      marker(mod, b, text);
      snprintf(text, sizeof text, "# LLVM-MCA-END %s", r->region);
      LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(bb));
      marker(mod, b, text);
    }
  }
  free(ops);
  if (n > 0) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/portent-mca-%d.s", (int)getpid());
    if (pc_kernel_emit_cpu(k, path, cpu, &d) != 0 || run_mca(path, cpu, n, rows) < 0) {
      fprintf(stderr, "  %s #%d: llvm-mca failed%s%s\n", workload, candidate, d.msg[0] ? ": " : "", d.msg);
      n = 0;
    }
    remove(path);
  }
done:
  if (d.msg[0] && n == 0) fprintf(stderr, "  %s #%d: %s\n", workload, candidate, d.msg);
  if (b) LLVMDisposeBuilder(b);
  pa_profile_free(p);
  pa_module_free(m);
  pc_kernel_free(k);
  pc_state_free(s);
  pc_program_free(prog);
  return n;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int bp_mca(const ptg_target *t, const bp_set *s, int per_workload, bool json) {
  pt_diag d = {0};
  pp_options o;
  pp_options_default(&o);
  o.threads = 1;
  pp_predictor *pp = pp_predictor_new(t, &o, &d);
  if (!pp) {
    fprintf(stderr, "portent bench predict --mca: %s\n", d.msg);
    return EXIT_USAGE;
  }
  double hit[PP_MAX_LEVELS + 1];
  double l1 = pp_memory_model(t, NULL, 1, hit); /* no histogram: every access an L1 hit */
  /* the target's own CPU for both the code and llvm-mca's model (a set predicted for another
   * generation is compared on that generation's code); this host's where LLVM models none */
  char *host = LLVMGetHostCPUName();
  const char *cpu = ptg_target_llvm_cpu(t) ? ptg_target_llvm_cpu(t) : host;
  int cap = 4096, n = 0;
  mca_row *rows = calloc(cap, sizeof *rows);
  for (int i = 0; i < s->nw; i++)
    for (int j = 0; j < s->w[i].n && j < per_workload; j++)
      n += candidate_rows(pp, l1, cpu, s->w[i].name, s->w[i].candidate[j], s->w[i].steps[j], rows + n, cap - n);
  if (!json) {
    printf("\nllvm-mca-19 -mcpu=%s vs the simulator (%s, L1 hits), innermost single-block loop bodies of the\n"
           "first %d candidates of each workload: cycles per iteration\n",
           cpu, t->name, per_workload);
    printf("%-12s %4s %5s %9s %9s %6s  %s\n", "workload", "cand", "uops", "simulator", "llvm-mca", "ratio", "block");
  }
  double *ratio = malloc(sizeof(double) * (n ? n : 1)), *a = malloc(sizeof(double) * (n ? n : 1)),
         *bm = malloc(sizeof(double) * (n ? n : 1));
  int m = 0;
  for (int r = 0; r < n; r++) {
    if (!json)
      printf("%-12s %4d %5d %9.2f %9.2f %6.2f  %s\n", rows[r].workload, rows[r].candidate, rows[r].uops, rows[r].sim,
             rows[r].mca, rows[r].sim / rows[r].mca, rows[r].block);
    if (rows[r].mca > 0 && rows[r].sim > 0) ratio[m] = rows[r].sim / rows[r].mca, a[m] = rows[r].sim, bm[m] = rows[r].mca, m++;
  }
  double sa = 0, sb = 0, sab = 0, saa = 0, sbb = 0;
  for (int r = 0; r < m; r++) {
    double x = log(a[r]), y = log(bm[r]);
    sa += x, sb += y, sab += x * y, saa += x * x, sbb += y * y;
  }
  double pearson = m > 1 ? (m * sab - sa * sb) / sqrt((m * saa - sa * sa) * (m * sbb - sb * sb)) : NAN;
  double spearman = m > 1 ? pp_spearman(m, a, bm) : NAN;
  qsort(ratio, m, sizeof(double), cmp_double);
  double median = m ? (m % 2 ? ratio[m / 2] : 0.5 * (ratio[m / 2 - 1] + ratio[m / 2])) : NAN;
  int within = 0;
  for (int r = 0; r < m; r++) within += ratio[r] >= 0.8 && ratio[r] <= 1.25;
  if (json)
    printf("{\"mca\": {\"cpu\": \"%s\", \"loops\": %d, \"median_ratio\": %.4f, \"pearson_log\": %.4f, \"spearman\": %.4f, "
           "\"within_25pct\": %d}}\n",
           cpu, m, median, pearson, spearman, within);
  else
    printf("summary: %d loop bodies; simulator / llvm-mca median %.2f (%d within 0.8-1.25x); correlation of "
           "log cycles %.3f, Spearman %.3f\n",
           m, median, within, pearson, spearman);
  free(ratio), free(a), free(bm), free(rows);
  LLVMDisposeMessage(host);
  pp_predictor_free(pp);
  return EXIT_OK;
}
