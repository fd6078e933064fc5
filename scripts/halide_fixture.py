#!/usr/bin/env python3
"""Writes tests/analyzer/fixtures/halide_matmul.bc: LLVM bitcode that Halide emitted for a small
tiled, vectorized matmul, so the analyzer is tested on IR from a compiler other than clang and
portent's own (tests/analyzer/test_halide.c checks its static analysis).

    apt-get install python3-halide          # Debian 12: Halide 14, LLVM 14 inside
    /usr/bin/python3 scripts/halide_fixture.py [OUT.bc]

Only this script needs Halide; the build and the tests read the committed .bc (LLVM 19 reads
LLVM 14 bitcode by auto-upgrade). The pipeline, C(x, y) = sum_k A(k, y) x B(x, k) over
float32 with C 128 x 64 and K = 64, every extent and stride fixed so that the loop bounds are
constants:

    C(x, y) = 0                      vectorized 8 wide along x (Halide lowers it to a memset)
    C(x, y) += A(k, y) * B(x, k)     y split by 4, x split by 8, loops yo > yi > xo > k > xi,
                                     xi vectorized: <8 x float> fmul and fadd

for a plain x86-64 target without asserts, bounds queries or the runtime, so the module holds
halide_matmul(A, B, C) (halide_buffer_t pointers), its _argv wrapper and _metadata. Halide's
own LLVM passes then unroll yi (4 copies of the xo > k nest per yo iteration): yo runs 16
times, each xo copy 16 times per entry, each k copy 64 times per entry.
"""
import sys

import halide as hl

W, H, K = 128, 64, 64  # C is W x H (x fastest), the reduction K long
OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/analyzer/fixtures/halide_matmul.bc"


def main():
    A = hl.ImageParam(hl.Float(32), 2, "A")  # A(k, y): K x H
    B = hl.ImageParam(hl.Float(32), 2, "B")  # B(x, k): W x K
    x, y, xo, xi, yo, yi = (hl.Var(n) for n in ("x", "y", "xo", "xi", "yo", "yi"))
    k = hl.RDom([hl.Range(0, K)], "k")
    C = hl.Func("C")
    C[x, y] = hl.f32(0)
    C[x, y] += A[k.x, y] * B[x, k.x]
    C.vectorize(x, 8)
    C.update().split(y, yo, yi, 4).split(x, xo, xi, 8).reorder(xi, k.x, xo, yi, yo).vectorize(xi)
    # static extents and strides: the loop bounds become constants
    A.dim(0).set_bounds(0, K).dim(1).set_bounds(0, H).set_stride(K)
    B.dim(0).set_bounds(0, W).dim(1).set_bounds(0, K).set_stride(W)
    C.output_buffer().dim(0).set_bounds(0, W).dim(1).set_bounds(0, H).set_stride(W)
    target = hl.Target("x86-64-linux-no_asserts-no_bounds_query-no_runtime")
    C.compile_to({hl.OutputFileType.bitcode: OUT}, [A, B], "halide_matmul", target)
    print(f"wrote {OUT} (Halide, target {target})")


if __name__ == "__main__":
    main()
