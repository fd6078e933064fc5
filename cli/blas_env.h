/* OpenBLAS reads OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE when it loads, and some machines export
 * them to force AVX2 kernels: commands that use OpenBLAS restart themselves without them. */
#ifndef PORTENT_CLI_BLAS_ENV_H
#define PORTENT_CLI_BLAS_ENV_H

/* Re-executes `portent [parent] argv...` without the two variables, if either is set; returns
 * only when neither is set or exec failed (the command then prints the core OpenBLAS chose). */
void restart_without_forced_blas_core(const char *parent, int argc, char **argv);

#endif
