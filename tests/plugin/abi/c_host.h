// SPDX-License-Identifier: MIT
/* c_host.h - what the strict C99 test hosts share: dlopen of the plugin, CHECK, the exit code. */
#ifndef HIPACM_TESTS_ABI_C_HOST_H
#define HIPACM_TESTS_ABI_C_HOST_H

#include <hipacm/hipacm.h>

/* ctest's skip code for these hosts: the plugin loads but no hipRTC backend is there. */
#define SKIP_CODE 77

/* Each host defines its name: the prefix of every line it prints. */
extern const char* const c_host_name;
/* How many CHECKs have failed so far. */
extern int c_host_failures;

void c_host_check_failed(int line, const char* condition);

/* Counts and reports a failed condition, then goes on: one run lists every failed check. */
#define CHECK(cond)                         \
  do {                                      \
    if (!(cond)) {                          \
      c_host_check_failed(__LINE__, #cond); \
    }                                       \
  } while (0)

/* The config as the host's header knows it, then bytes that belong to the host: nothing may be
 * written there. */
typedef struct guarded_config {
  hipacm_mode_config config;
  unsigned char after[64];
} guarded_config;

/* The plugin as a host reaches it: the dlopen handle, its one symbol, and the table that gives
 * for this header's HIPACM_ABI_VERSION. */
typedef struct c_host_plugin {
  void* handle;
  hipacm_get_provider_fn get_provider;
  const hipacm_provider* api;
} c_host_plugin;

/* Exits with 2 after printing the usage unless argv holds `args` arguments after the program;
 * then dlopens argv[1] (never linked) into *plugin. Returns 0 when it has the table, 1 after
 * saying why not. */
int c_host_open(c_host_plugin* plugin, int argc, char** argv, int args, const char* usage);

/* The exit code for a scenario that returned `rc`: SKIP_CODE when it skipped with no check
 * failed, 1 after any failure, else 0 once the plugin (when `unload` is set) unloads, saying
 * "ok". */
int c_host_finish(int rc, const c_host_plugin* plugin, int unload);

#endif /* HIPACM_TESTS_ABI_C_HOST_H */
