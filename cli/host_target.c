#include "host_target.h"

#include <stdio.h>
#include <unistd.h>

#include "microbench.h"
#include "targets.h"

const char *host_target_path(char *buf, size_t size) {
  ptg_target *host = ptg_target_new("host");
  pt_diag d = {0};
  bool found = false;
  if (host && pmb_topology(host, &d) == 0) {
    snprintf(buf, size, "%s/%s.json", ptg_shipped_dir(), pmb_default_target_name(host));
    found = access(buf, R_OK) == 0;
  }
  ptg_target_free(host);
  if (!found) snprintf(buf, size, "%s/zen5-epyc-2c.json", ptg_shipped_dir());
  return buf;
}
