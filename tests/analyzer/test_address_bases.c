/* Addresses that differ by constants (line_groups.c, pa_address_bases), which instrument.c
 * uses to derive the slow path's and the crossing classes' addresses from one leader: on a
 * hand-written block, each load's base (the first address of its kind) and the exact byte
 * difference, through constant GEPs, scaled 64-bit indices with constant adds, and a second
 * index that makes another base. */
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>

#include "analyzer/internal.h"
#include "test.h"

static const char *ir =
    "target datalayout = \"e-m:e-i64:64-f80:128-n8:16:32:64-S128\"\n"
    "define void @f(ptr %p, i64 %i, i64 %j) {\n"
    "  %a = getelementptr float, ptr %p, i64 %i\n"
    "  %x0 = load float, ptr %a\n"                       /* base 0, +0 */
    "  %b = getelementptr i8, ptr %a, i64 2048\n"
    "  %x1 = load float, ptr %b\n"                       /* base 0, +2048 */
    "  %i1 = add i64 %i, 3\n"
    "  %c = getelementptr float, ptr %p, i64 %i1\n"
    "  %x2 = load float, ptr %c\n"                       /* base 0, +12 */
    "  %d = getelementptr float, ptr %p, i64 %j\n"
    "  %x3 = load float, ptr %d\n"                       /* base 3 */
    "  %e = getelementptr i8, ptr %d, i64 -64\n"
    "  %x4 = load float, ptr %e\n"                       /* base 3, -64 */
    "  ret void\n"
    "}\n";

int main(void) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "bases");
  LLVMModuleRef mod = NULL;
  char *msg = NULL;
  CHECK_MSG(!LLVMParseIRInContext(ctx, mb, &mod, &msg), "%s", msg ? msg : "");
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(mod);
  LLVMValueRef addrs[5];
  int n = 0;
  for (LLVMValueRef in = LLVMGetFirstInstruction(LLVMGetFirstBasicBlock(LLVMGetNamedFunction(mod, "f"))); in;
       in = LLVMGetNextInstruction(in))
    if (LLVMGetInstructionOpcode(in) == LLVMLoad && n < 5) addrs[n++] = LLVMGetOperand(in, 0);
  CHECK(n == 5);
  int base_of[5];
  int64_t off[5];
  static const int want_base[5] = {0, 0, 0, 3, 3};
  static const int64_t want_off[5] = {0, 2048, 12, 0, -64};
  pa_address_bases(td, addrs, 5, base_of, off);
  for (int k = 0; k < 5; k++)
    CHECK_MSG(base_of[k] == want_base[k] && off[k] == want_off[k], "load %d: base %d off %lld", k, base_of[k],
              (long long)off[k]);
  /* a NULL address (not asked about) is its own base and takes none of the others */
  addrs[0] = NULL;
  pa_address_bases(td, addrs, 5, base_of, off);
  CHECK(base_of[0] == 0 && base_of[1] == 1 && base_of[2] == 1 && off[2] == 12 - 2048);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  TEST_DONE();
}
