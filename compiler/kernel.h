/* The lowered kernel handle shared by lower.c (which fills the module) and jit.c (which
 * optimizes, emits and JIT-compiles it). */
#ifndef PORTENT_COMPILER_KERNEL_H
#define PORTENT_COMPILER_KERNEL_H

#include <llvm-c/Core.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/TargetMachine.h>

#include "internal.h"

struct pc_kernel {
  char name[80];
  LLVMOrcThreadSafeContextRef tsc;
  LLVMContextRef ctx;
  LLVMModuleRef mod; /* the target-neutral module after the middle end */
  int n_buffers;
  int buffer_op[PC_MAX_STAGES];
  int64_t buffer_numel[PC_MAX_STAGES];
  int n_parallel;
  char parallel_names[16][80];
  LLVMOrcLLJITRef jit;
  pc_kernel_fn entry;
  double compile_s;
};

int pc_lower_module(const pc_state *s, pc_kernel *k, pt_diag *d);
/* A TargetMachine for this host at -O3 (caller disposes). */
LLVMTargetMachineRef pc_host_target_machine(LLVMCodeModel cm, pt_diag *d);

#endif
