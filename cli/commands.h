/* One function per subcommand; each parses its own arguments and returns the exit code. */
#ifndef PORTENT_CLI_COMMANDS_H
#define PORTENT_CLI_COMMANDS_H

/* Exit codes (docs/cli.md): 0 ok, 1 the operation failed, 2 bad usage or input. */
enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

int cmd_workloads(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench_compile(int argc, char **argv);
int cmd_bench_counts(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_characterize(int argc, char **argv);
int cmd_targets(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_bench_predict(int argc, char **argv);
int cmd_bench_analyze(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_bench_tune(int argc, char **argv);
int cmd_bench_characterize(int argc, char **argv);
int cmd_bench_xgbi(int argc, char **argv);
int cmd_dataset(int argc, char **argv);
/* dataset subcommands with files of their own (argv[0] is the subcommand). */
int cmd_dataset_remeasure(int argc, char **argv);
int cmd_dataset_compare(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_networks(int argc, char **argv);
int cmd_bench_learn(int argc, char **argv);

#endif
