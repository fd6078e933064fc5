/* LLVM integer semantics on 64-bit words, shared by the two interpreters of IR values: the
 * static block counter (counts.c) and the traced reuse profile (trace.c). Values are held
 * zero-extended to their width; inline because both evaluate them per interpreted instruction. */
#ifndef PORTENT_ANALYZER_INT_OPS_H
#define PORTENT_ANALYZER_INT_OPS_H

#include <llvm-c/Core.h>
#include <stdbool.h>
#include <stdint.h>

static inline uint64_t pa_int_mask(int bits) { return bits >= 64 ? ~0ULL : (1ULL << bits) - 1; }

static inline int64_t pa_int_sext(uint64_t v, int bits) {
  return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}

/* icmp of two values of width bits (zero-extended). */
static inline bool pa_int_icmp(int pred, uint64_t a, uint64_t b, int bits) {
  int64_t sa = pa_int_sext(a, bits), sb = pa_int_sext(b, bits);
  switch ((LLVMIntPredicate)pred) {
  case LLVMIntEQ: return a == b;
  case LLVMIntNE: return a != b;
  case LLVMIntUGT: return a > b;
  case LLVMIntUGE: return a >= b;
  case LLVMIntULT: return a < b;
  case LLVMIntULE: return a <= b;
  case LLVMIntSGT: return sa > sb;
  case LLVMIntSGE: return sa >= sb;
  case LLVMIntSLT: return sa < sb;
  default: return sa <= sb; /* SLE */
  }
}

/* A binary operator on width w; false where LLVM gives poison or undefined behaviour (division
 * by zero, signed overflow of a division, shifts by the width or more) or for other opcodes. */
static inline bool pa_int_binop(LLVMOpcode op, uint64_t a, uint64_t b, int w, uint64_t *out) {
  int64_t sa = pa_int_sext(a, w), sb = pa_int_sext(b, w), smin = pa_int_sext(1ULL << (w - 1), w);
  uint64_t x;
  switch (op) {
  case LLVMAdd: x = a + b; break;
  case LLVMSub: x = a - b; break;
  case LLVMMul: x = a * b; break;
  case LLVMAnd: x = a & b; break;
  case LLVMOr: x = a | b; break;
  case LLVMXor: x = a ^ b; break;
  case LLVMUDiv: if (!b) return false; x = a / b; break;
  case LLVMURem: if (!b) return false; x = a % b; break;
  case LLVMSDiv: if (!sb || (sb == -1 && sa == smin)) return false; x = (uint64_t)(sa / sb); break;
  case LLVMSRem: if (!sb || (sb == -1 && sa == smin)) return false; x = (uint64_t)(sa % sb); break;
  case LLVMShl: if (b >= (uint64_t)w) return false; x = a << b; break;
  case LLVMLShr: if (b >= (uint64_t)w) return false; x = a >> b; break;
  case LLVMAShr: if (b >= (uint64_t)w) return false; x = (uint64_t)(sa >> b); break;
  default: return false;
  }
  *out = x & pa_int_mask(w);
  return true;
}

/* llvm.smin/smax/umin/umax: kind 0 smin, 1 smax, 2 umin, 3 umax. */
static inline uint64_t pa_int_minmax(int kind, uint64_t a, uint64_t b, int w) {
  bool a_less = kind < 2 ? pa_int_sext(a, w) < pa_int_sext(b, w) : a < b;
  return (kind == 0 || kind == 2) == a_less ? a : b;
}

#endif
