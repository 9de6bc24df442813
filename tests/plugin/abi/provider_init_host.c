/* SPDX-License-Identifier: MIT */
/* provider_init_host.c - strict C99 host: settings written after hp->mode_config_init take effect.
 */
#define _POSIX_C_SOURCE 200809L

#include <hipacm/hipacm.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "c_host.h"

/*
 * Usage: hipacm_abi_provider_init_host PATH_TO_LIBHIPACM SCENARIO
 *   tables     the version negotiation: what each request gets, and how many bytes the
 *              table's mode_config_init writes (no compiler needed)
 *   isolation  the README pattern with cfg.isolation = PROCESS, run with $HIPACM_WORKER naming a
 *              missing file: mode_enter must fail with BACKEND_UNAVAILABLE
 *   timeout    the README pattern with cfg.compile_timeout_ms = 300 and PROCESS isolation, run
 *              with a worker told to hang: the future must end with TIMEOUT
 * Prints "provider init host: ok" and returns 0 when every check passes, 1 otherwise, and 77
 * (ctest's skip code) when no hipRTC backend is there.
 */

const char* const c_host_name = "provider init host";

/* How many bytes `init` wrote into a 0xA5-filled guarded config (the last one changed). */
static size_t bytes_written(void (*init)(hipacm_mode_config*), size_t* struct_size) {
  guarded_config guarded;
  const unsigned char* bytes = (const unsigned char*)&guarded;
  size_t i;
  size_t last = 0;
  memset(&guarded, 0xA5, sizeof guarded);
  init(&guarded.config);
  for (i = 0; i < sizeof guarded; ++i) {
    if (bytes[i] != 0xA5) {
      last = i + 1;
    }
  }
  *struct_size = guarded.config.struct_size;
  return last;
}

/* That `table` is granted `abi_version` and that its mode_config_init fills `want` bytes and says
 * so in struct_size: a failure names the table, as the CHECK lines are this function's. */
static void check_table(const hipacm_provider* table, uint32_t abi_version, size_t want) {
  const int failures_before = c_host_failures;
  size_t size = 0;
  CHECK(table->abi_version == abi_version);
  CHECK(bytes_written(table->mode_config_init, &size) == want);
  CHECK(size == want);
  if (c_host_failures != failures_before) {
    fprintf(stderr, "%s: (the table for ABI %u.%u)\n", c_host_name,
            (unsigned)HIPACM_ABI_VERSION_MAJOR_OF(abi_version),
            (unsigned)HIPACM_ABI_VERSION_MINOR_OF(abi_version));
  }
}

/* The versions each request is granted, and the size its mode_config_init fills. */
static int check_tables(hipacm_get_provider_fn get) {
  const size_t v1 = offsetof(hipacm_mode_config, arch) + sizeof(const char*);
  const size_t v2 = offsetof(hipacm_mode_config, compile_timeout_ms) + sizeof(uint32_t);
  const hipacm_provider* current = get(HIPACM_ABI_VERSION);
  const hipacm_provider* plain = get(1);
  const hipacm_provider* newer = get(HIPACM_ABI_VERSION_ENCODE(1, 999));
  const hipacm_provider* minor1 = get(HIPACM_ABI_VERSION_ENCODE(1, 1));
  const hipacm_provider* minor0 = get(HIPACM_ABI_VERSION_ENCODE(1, 0));
  const hipacm_provider* minor3 = get(HIPACM_ABI_VERSION_ENCODE(1, 3));
  const hipacm_provider* minor4 = get(HIPACM_ABI_VERSION_ENCODE(1, 4));
  const hipacm_provider* minor5 = get(HIPACM_ABI_VERSION_ENCODE(1, 5));
  const size_t v4 = offsetof(hipacm_mode_config, reserved_1_4) + sizeof(int32_t);
  const size_t v3 = offsetof(hipacm_mode_config, load_device) + sizeof(int32_t);
  size_t size = 0;

  CHECK(current != NULL && plain != NULL && newer != NULL && minor1 != NULL && minor0 != NULL &&
        minor3 != NULL && minor4 != NULL && minor5 != NULL);
  if (current == NULL || plain == NULL || newer == NULL || minor1 == NULL || minor0 == NULL ||
      minor3 == NULL || minor4 == NULL || minor5 == NULL) {
    return 1;
  }
  CHECK(get(0) == NULL);
  CHECK(get(2) == NULL);
  CHECK(get(HIPACM_ABI_VERSION_ENCODE(2, 0)) == NULL);
  CHECK(get(HIPACM_ABI_VERSION) == current); /* static tables */

  /* This header's request: granted as asked, and the natural init fills this header's struct. */
  check_table(current, HIPACM_ABI_VERSION, sizeof(hipacm_mode_config));
  CHECK(HIPACM_ABI_VERSION_MAJOR_OF(current->abi_version) == 1);

  /* A plain 1 (every header before 1.3): the 1.0 table, version 1 only. */
  check_table(plain, 1, v1);

  /* Older minors fill their own header's struct, and never more. */
  check_table(minor0, HIPACM_ABI_VERSION_ENCODE(1, 0), v1);
  check_table(minor1, HIPACM_ABI_VERSION_ENCODE(1, 1), v2);

  /* 1.3 fills version 3; 1.4 fills version 4 and its table carries set_log_callback and
   * get_stats; 1.5 fills version 5 (remote_cache: the whole struct of this header). */
  check_table(minor3, HIPACM_ABI_VERSION_ENCODE(1, 3), v3);
  check_table(minor4, HIPACM_ABI_VERSION_ENCODE(1, 4), v4);
  check_table(minor5, HIPACM_ABI_VERSION_ENCODE(1, 5), sizeof(hipacm_mode_config));
  CHECK(v4 < sizeof(hipacm_mode_config));
  CHECK(minor4->struct_size >= offsetof(hipacm_provider, get_stats) + sizeof(minor4->get_stats));
  CHECK(minor4->set_log_callback != NULL && minor4->get_stats != NULL);
  CHECK(minor4->set_log_callback(NULL, NULL, 5) == HIPACM_ERROR_INVALID_ARGUMENT);
  CHECK(minor4->get_stats(NULL) == HIPACM_ERROR_INVALID_ARGUMENT);

  /* A newer minor than the plugin's: the plugin's newest, saying so. */
  CHECK(newer->abi_version == HIPACM_ABI_VERSION);
  CHECK(bytes_written(newer->mode_config_init, &size) == sizeof(hipacm_mode_config));
  return 0;
}

/* The README's pattern: the provider's init, then fields past version 1. */
static int enter_readme_mode(const hipacm_provider* hp, uint32_t timeout_ms, hipacm_mode** mode) {
  hipacm_mode_config cfg;
  hp->mode_config_init(&cfg);
  cfg.arch = "gfx90a";
  cfg.isolation = HIPACM_ISOLATION_PROCESS;
  cfg.compile_timeout_ms = timeout_ms;
  cfg.cache_policy = HIPACM_CACHE_OFF;
  return hp->mode_enter(&cfg, mode);
}

static int check_isolation(const hipacm_provider* hp) {
  hipacm_mode* mode = NULL;
  const hipacm_status status = enter_readme_mode(hp, 0, &mode);
  if (status == HIPACM_SUCCESS) {
    fprintf(stderr,
            "provider init host: cfg.isolation = PROCESS was ignored: the mode entered "
            "without a worker binary\n");
    hp->mode_exit(mode, NULL);
  }
  CHECK(status == HIPACM_ERROR_BACKEND_UNAVAILABLE);
  CHECK(strstr(hp->last_error_message(), "worker") != NULL);
  CHECK(hp->active_mode() == NULL);
  return 0;
}

static int check_timeout(const hipacm_provider* hp) {
  static const char kHangs[] =
      "// @HANG@: the test worker hangs on this source\n"
      "extern \"C\" __global__ void hangs(int* p) { p[0] = 1; }\n";
  hipacm_mode* mode = NULL;
  hipacm_request req;
  hipacm_future* f = NULL;
  hipacm_status status = enter_readme_mode(hp, 300, &mode);
  if (status == HIPACM_ERROR_BACKEND_UNAVAILABLE) {
    printf("provider init host: skipped, no compiler backend: %s\n", hp->last_error_message());
    return SKIP_CODE;
  }
  CHECK(status == HIPACM_SUCCESS);
  if (status != HIPACM_SUCCESS) {
    fprintf(stderr, "provider init host: mode_enter: %s\n", hp->last_error_message());
    return 1;
  }
  memset(&req, 0, sizeof req);
  req.struct_size = sizeof req;
  req.source = kHangs;
  CHECK(hp->submit(mode, &req, &f) == HIPACM_SUCCESS);
  if (f == NULL) {
    return 1;
  }
  /* Far longer than the 300 ms limit: a compile still pending now means it was ignored. The
   * host then leaves without exiting the mode, which worker isolation makes safe. */
  if (hp->future_wait(f, 60000) != HIPACM_SUCCESS) {
    fprintf(stderr,
            "provider init host: cfg.compile_timeout_ms = 300 was ignored: the hung "
            "compile still runs after 60 s\n");
    return 1;
  }
  status = hp->future_status(f);
  if (status != HIPACM_ERROR_TIMEOUT) {
    fprintf(stderr, "provider init host: expected TIMEOUT, got %s: %s\n", hp->status_string(status),
            hp->future_error_message(f));
  }
  CHECK(status == HIPACM_ERROR_TIMEOUT);
  CHECK(hp->mode_exit(mode, NULL) == HIPACM_ERROR_TIMEOUT);
  CHECK(hp->future_release(f) == HIPACM_SUCCESS);
  return 0;
}

int main(int argc, char** argv) {
  c_host_plugin plugin;
  int rc = 0;
  if (c_host_open(&plugin, argc, argv, 2, "PATH_TO_LIBHIPACM tables|isolation|timeout") != 0) {
    return 1;
  }
  if (strcmp(argv[2], "tables") == 0) {
    rc = check_tables(plugin.get_provider);
  } else if (strcmp(argv[2], "isolation") == 0) {
    rc = check_isolation(plugin.api);
  } else if (strcmp(argv[2], "timeout") == 0) {
    rc = check_timeout(plugin.api);
  } else {
    fprintf(stderr, "provider init host: unknown scenario '%s'\n", argv[2]);
    return 2;
  }
  /* Never unloaded here: a failed timeout scenario leaves its mode behind. */
  return c_host_finish(rc, &plugin, 0);
}
