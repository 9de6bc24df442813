/* SPDX-License-Identifier: MIT */
/* c99_host.c - strict C99 host: dlopens libhipacm, checks the provider, compiles a kernel. */
#define _POSIX_C_SOURCE 200809L

#include <hipacm/hipacm.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "c_host.h"

/*
 * Usage: hipacm_abi_c99_host PATH_TO_LIBHIPACM
 * Built twice: against include/hipacm/hipacm.h, and against the frozen ABI 1.0 header in
 * abi_1_0/ to play a host that was compiled before later fields were appended.
 * Prints "c99 host: ok" and returns 0 when every check passes; prints each failed check and
 * returns 1 otherwise. Returns 77 (ctest's skip code for this test) when the plugin loads and its
 * table is right but no hipRTC backend is available to compile with.
 */

const char* const c_host_name = "c99 host";

static const char kVectorAdd[] =
    "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) {\n"
    "    c[i] = a[i] + b[i];\n"
    "  }\n"
    "}\n";

/* What the finalize callback saw. */
typedef struct finalize_record {
  const hipacm_provider* api;
  int finalize_calls;
  int cleanup_calls;
  hipacm_status result_in_finalize;
  size_t code_size_in_finalize;
} finalize_record;

static int on_finalize(void* user_data, hipacm_future* f) {
  finalize_record* record = (finalize_record*)user_data;
  const hipacm_kernel* kernel = NULL;
  record->finalize_calls += 1;
  /* f is borrowed: future_result on it returns the outcome at once, without re-running us. */
  record->result_in_finalize = record->api->future_result(f, &kernel);
  record->code_size_in_finalize = kernel != NULL ? kernel->code_size : 0;
  return 0;
}

static void on_cleanup(void* user_data, hipacm_future* f) {
  finalize_record* record = (finalize_record*)user_data;
  (void)f;
  record->cleanup_calls += 1;
}

/* Returns nonzero when every function pointer of the v1 table is set. */
static int all_functions_set(const hipacm_provider* p) {
  return p->mode_config_init != NULL && p->mode_enter != NULL && p->mode_exit != NULL &&
         p->active_mode != NULL && p->submit != NULL && p->compile != NULL &&
         p->future_wait != NULL && p->future_status != NULL && p->future_result != NULL &&
         p->future_key != NULL && p->future_log != NULL && p->future_error_message != NULL &&
         p->future_retain != NULL && p->future_release != NULL && p->status_string != NULL &&
         p->last_error_message != NULL && p->get_backend_info != NULL;
}

/* The sized initialiser where this header has it (ABI 1.1), so that the whole struct this host
 * knows gets its defaults; the 1.0 entry point otherwise. */
static void init_config(const hipacm_provider* api, hipacm_mode_config* config) {
#if HIPACM_ABI_VERSION_MINOR >= 1
  if (api->struct_size >=
          offsetof(hipacm_provider, mode_config_init_sized) + sizeof(api->mode_config_init_sized) &&
      api->mode_config_init_sized != NULL) {
    api->mode_config_init_sized(config, sizeof *config);
    return;
  }
#endif
  api->mode_config_init(config);
}

/* mode_config_init must write no byte past the caller's sizeof(hipacm_mode_config): a host built
 * against an older header (a smaller struct) must keep working with a newer plugin. */
static void check_config_init_stays_inside(const hipacm_provider* api) {
  guarded_config guarded;
  size_t i;
  size_t overwritten = 0;
  memset(&guarded, 0xA5, sizeof guarded);
  init_config(api, &guarded.config);
  for (i = 0; i < sizeof guarded.after; ++i) {
    if (guarded.after[i] != 0xA5) {
      overwritten = i + 1;
    }
  }
  if (overwritten != 0) {
    fprintf(stderr,
            "c99 host: mode_config_init wrote into the %lu bytes after this host's %lu-byte "
            "hipacm_mode_config (ABI %d.%d header)\n",
            (unsigned long)overwritten, (unsigned long)sizeof(hipacm_mode_config),
            HIPACM_ABI_VERSION_MAJOR, HIPACM_ABI_VERSION_MINOR);
  }
  CHECK(overwritten == 0);
  CHECK(guarded.config.struct_size == sizeof(hipacm_mode_config));
}

/* Enters a gfx90a mode, compiles vector_add with callbacks, exits, checks the outcome. */
static int compile_vector_add(const hipacm_provider* api) {
  hipacm_mode_config config;
  hipacm_mode* mode = NULL;
  hipacm_mode* second = NULL;
  hipacm_request request;
  hipacm_future* future = NULL;
  hipacm_future* first_failure = NULL;
  const hipacm_kernel* kernel = NULL;
  finalize_record record;
  hipacm_status status;

  memset(&record, 0, sizeof record);
  record.api = api;
  record.result_in_finalize = HIPACM_ERROR_INTERNAL;

  CHECK(api->active_mode() == NULL);
  init_config(api, &config);
  CHECK(config.struct_size == sizeof config);
  config.arch = "gfx90a";
  status = api->mode_enter(&config, &mode);
  if (status == HIPACM_ERROR_BACKEND_UNAVAILABLE) {
    printf("c99 host: skipped, no compiler backend: %s\n", api->last_error_message());
    return SKIP_CODE;
  }
  if (status != HIPACM_SUCCESS || mode == NULL) {
    fprintf(stderr, "c99 host: mode_enter failed: %s: %s\n", api->status_string(status),
            api->last_error_message());
    return 1;
  }
  CHECK(api->active_mode() == mode);
  /* The slot holds one mode: a second enter fails and leaves the first in place. */
  CHECK(api->mode_enter(&config, &second) == HIPACM_ERROR_MODE_ALREADY_ACTIVE);
  CHECK(api->last_error_message()[0] != '\0');
  CHECK(api->active_mode() == mode);

  memset(&request, 0, sizeof request);
  request.struct_size = sizeof request;
  request.source = kVectorAdd;
  request.source_name = "vector_add.hip";
  request.finalize = on_finalize;
  request.cleanup = on_cleanup;
  request.user_data = &record;
  status = api->submit(mode, &request, &future);
  CHECK(status == HIPACM_SUCCESS);
  CHECK(future != NULL);

  status = api->mode_exit(mode, &first_failure);
  mode = NULL;
  if (status != HIPACM_SUCCESS && future != NULL) {
    fprintf(stderr, "c99 host: mode_exit: %s: %s\nlog:\n%s\n", api->status_string(status),
            api->future_error_message(future), api->future_log(future));
  }
  CHECK(status == HIPACM_SUCCESS);
  CHECK(first_failure == NULL);
  CHECK(api->active_mode() == NULL);
  CHECK(record.finalize_calls == 1);
  CHECK(record.cleanup_calls == 0);
  CHECK(record.result_in_finalize == HIPACM_SUCCESS);
  CHECK(record.code_size_in_finalize > 0);
  if (future == NULL) {
    return 1;
  }

  CHECK(api->future_status(future) == HIPACM_SUCCESS);
  CHECK(api->future_wait(future, 0) == HIPACM_SUCCESS);
  CHECK(api->future_result(future, &kernel) == HIPACM_SUCCESS);
  CHECK(record.finalize_calls == 1); /* future_result after collection runs nothing again */
  CHECK(kernel != NULL);
  if (kernel != NULL) {
    CHECK(kernel->struct_size >= sizeof(hipacm_kernel));
    CHECK(kernel->code != NULL && kernel->code_size > 4);
    CHECK(kernel->code != NULL && memcmp(kernel->code, "\177ELF", 4) == 0);
    CHECK(kernel->code_size == record.code_size_in_finalize);
    CHECK(kernel->log != NULL);
    CHECK(kernel->arch != NULL && strncmp(kernel->arch, "gfx90a", 6) == 0);
    CHECK(kernel->key != NULL && kernel->key[0] != '\0');
    CHECK(kernel->key != NULL && strcmp(kernel->key, api->future_key(future)) == 0);
    CHECK(kernel->num_lowered_names == 0);
  }
  CHECK(api->future_release(future) == HIPACM_SUCCESS);
  return 0;
}

int main(int argc, char** argv) {
  c_host_plugin plugin;
  const hipacm_provider* api;
  if (c_host_open(&plugin, argc, argv, 1, "PATH_TO_LIBHIPACM") != 0) {
    return 1;
  }
  api = plugin.api;
  CHECK(api->struct_size >= sizeof(hipacm_provider));
  CHECK(api->abi_version == HIPACM_ABI_VERSION);
  CHECK(api->name != NULL && strcmp(api->name, "hipacm") == 0);
  CHECK(api->version != NULL && strcmp(api->version, HIPACM_VERSION_STRING) == 0);
  CHECK(all_functions_set(api));
  CHECK(plugin.get_provider(HIPACM_ABI_VERSION) == api); /* a static table */
  CHECK(plugin.get_provider(2) == NULL);
  CHECK(plugin.get_provider(0) == NULL);
  if (c_host_failures != 0 || !all_functions_set(api)) {
    return 1;
  }
  check_config_init_stays_inside(api);
  if (c_host_failures != 0) {
    return 1;
  }
  return c_host_finish(compile_vector_add(api), &plugin, 1);
}
