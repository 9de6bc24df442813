/* SPDX-License-Identifier: MIT */
/* exit_with_active_mode.c - a host that returns from main() with a mode active and compiles in flight. */
#include <hipacm/hipacm.h>

#include <stdio.h>

/* Exit-time destructors run while pool threads still compile and hold
 * futures; the process must still end with the host's own exit code. */
int main(void) {
  hipacm_mode_config cfg;
  hipacm_mode* mode = NULL;
  hipacm_request req = {sizeof req, NULL, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, NULL, NULL, NULL};
  hipacm_future* f = NULL;
  int i;
  char source[160];

  hipacm_mode_config_init(&cfg);
  cfg.arch = "gfx90a";
  cfg.max_workers = 2;
  if (hipacm_mode_enter(&cfg, &mode) != HIPACM_SUCCESS) {
    fprintf(stderr, "mode_enter: %s\n", hipacm_last_error_message());
    return 1;
  }
  for (i = 0; i < 4; ++i) {
    snprintf(source, sizeof source,
             "extern \"C\" __global__ void k%d(float* a) { a[threadIdx.x] += %d.0f; }", i, i);
    req.source = source;
    if (hipacm_submit(mode, &req, &f) != HIPACM_SUCCESS) return 2;
    if (i % 2 == 0) hipacm_future_release(f); /* keep some references, drop others */
  }
  return 0;
}
