/* SPDX-License-Identifier: MIT */
/* consumer.c - links against an installed libhipacm and compiles one kernel through worker processes. */
#include <hipacm/hipacm.h>

#include <stdio.h>

int main(void) {
  hipacm_mode_config cfg;
  hipacm_mode* mode = NULL;
  hipacm_request req = {sizeof req, NULL, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, NULL, NULL, NULL};
  hipacm_future* f = NULL;
  const hipacm_kernel* k = NULL;
  hipacm_status s;

  hipacm_mode_config_init(&cfg);
  cfg.arch = "gfx90a";
  cfg.isolation = HIPACM_ISOLATION_PROCESS; /* the worker must be found in libexec/ */
  if ((s = hipacm_mode_enter(&cfg, &mode)) != HIPACM_SUCCESS) {
    fprintf(stderr, "consumer: mode_enter: %s: %s\n", hipacm_status_string(s),
            hipacm_last_error_message());
    return 1;
  }
  req.source = "extern \"C\" __global__ void k(float* a) { a[threadIdx.x] = 1.0f; }";
  if (hipacm_submit(mode, &req, &f) != HIPACM_SUCCESS) return 2;
  if ((s = hipacm_mode_exit(mode, NULL)) != HIPACM_SUCCESS) {
    fprintf(stderr, "consumer: mode_exit: %s\n", hipacm_last_error_message());
    return 3;
  }
  if (hipacm_future_result(f, &k) != HIPACM_SUCCESS || k->code_size < 64) return 4;
  hipacm_future_release(f);
  printf("consumer: ok, %lu-byte code object from an installed hipacm\n", (unsigned long)k->code_size);
  return 0;
}
