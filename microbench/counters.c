/* Hardware counters through libpfm4 and perf_event_open: whether cycles and instructions can
 * be read on this machine, and why not when they cannot (VMs often expose no PMU; perf then
 * answers "not supported"). Characterization never fails for want of counters. */
#include <errno.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static int open_event(const char *name, int group, char *why, size_t n) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  pfm_perf_encode_arg_t arg;
  memset(&arg, 0, sizeof arg);
  arg.attr = &attr;
  arg.size = sizeof arg;
  int r = pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
  if (r != PFM_SUCCESS) {
    snprintf(why, n, "libpfm4 cannot encode %s: %s", name, pfm_strerror(r));
    return -1;
  }
  attr.disabled = group < 0; /* the group leader starts and stops both */
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_GROUP;
  int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, group, 0);
  if (fd < 0) {
    int e = errno;
    const char *hint = e == ENOENT || e == EOPNOTSUPP || e == ENODEV ? ": the kernel exposes no hardware PMU here (usual in VMs)"
                       : e == EACCES || e == EPERM ? ": not permitted (see /proc/sys/kernel/perf_event_paranoid)" : "";
    snprintf(why, n, "not available: perf_event_open(%s): %s%s", name, strerror(e), hint);
  }
  return fd;
}

int pmb_counters_probe(char *why, size_t n) {
  int r = pfm_initialize();
  if (r != PFM_SUCCESS) {
    snprintf(why, n, "libpfm4 initialization failed: %s", pfm_strerror(r));
    return 0;
  }
  int cyc = open_event("cycles", -1, why, n);
  int ins = cyc >= 0 ? open_event("instructions", cyc, why, n) : -1;
  int ok = cyc >= 0 && ins >= 0;
  if (cyc >= 0) close(cyc);
  if (ins >= 0) close(ins);
  pfm_terminate();
  if (ok) snprintf(why, n, "available (cycles, instructions)");
  return ok;
}

struct pmb_counters {
  int cycles_fd, instructions_fd;
};

pmb_counters *pmb_counters_open(void) {
  char why[256];
  if (pfm_initialize() != PFM_SUCCESS) return NULL;
  int cyc = open_event("cycles", -1, why, sizeof why);
  int ins = cyc >= 0 ? open_event("instructions", cyc, why, sizeof why) : -1;
  if (cyc < 0 || ins < 0) {
    if (cyc >= 0) close(cyc);
    pfm_terminate();
    return NULL;
  }
  pmb_counters *k = malloc(sizeof *k);
  k->cycles_fd = cyc;
  k->instructions_fd = ins;
  return k;
}

void pmb_counters_close(pmb_counters *k) {
  if (!k) return;
  close(k->instructions_fd);
  close(k->cycles_fd);
  free(k);
  pfm_terminate();
}

int pmb_counters_measure(pmb_counters *k, void (*fn)(int64_t, void *, void *), int64_t iters, void *in, void *out,
                         double *cycles, double *instructions) {
  ioctl(k->cycles_fd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
  ioctl(k->cycles_fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  fn(iters, in, out);
  ioctl(k->cycles_fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
  uint64_t buf[3]; /* PERF_FORMAT_GROUP: count, then one value per event */
  if (read(k->cycles_fd, buf, sizeof buf) != (ssize_t)sizeof buf || buf[0] != 2) return -1;
  *cycles = (double)buf[1];
  *instructions = (double)buf[2];
  return 0;
}
