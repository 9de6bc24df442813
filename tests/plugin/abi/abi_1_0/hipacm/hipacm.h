// SPDX-License-Identifier: MIT
/* hipacm.h - the public C ABI of the hipacm asynchronous kernel-compile plugin. */
#ifndef HIPACM_HIPACM_H
#define HIPACM_HIPACM_H

/*
 * hipacm compiles HIP kernel sources asynchronously while a host JIT warms up.
 *
 * Contract summary (docs/ABI.md has the long form):
 *  - Valid C99 and C++. Every symbol is prefixed hipacm_ / HIPACM_.
 *  - Every struct that a caller fills in starts with `size_t struct_size`.
 *    The plugin rejects a size smaller than version 1 of the struct with
 *    HIPACM_ERROR_ABI_MISMATCH and accepts larger ones. Fields are only ever
 *    appended; a field past the caller's struct_size takes its default.
 *  - Status numbers are fixed forever.
 *  - Handles (hipacm_mode, hipacm_future) are opaque. Futures are reference
 *    counted; a mode lives from hipacm_mode_enter until hipacm_mode_exit.
 *  - No C++ exception, abort or exit() ever reaches the host. A failing call
 *    returns a status and sets a thread-local message that
 *    hipacm_last_error_message() returns.
 *  - Every function is thread-safe.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define HIPACM_API
#elif defined(__GNUC__)
#define HIPACM_API __attribute__((visibility("default")))
#else
#define HIPACM_API
#endif

/* The ABI version: a host checks the major number through hipacm_get_provider. */
#define HIPACM_ABI_VERSION_MAJOR 1
#define HIPACM_ABI_VERSION_MINOR 0
#define HIPACM_ABI_VERSION HIPACM_ABI_VERSION_MAJOR

/* The plugin's own release version. */
#define HIPACM_VERSION_MAJOR 0
#define HIPACM_VERSION_MINOR 1
#define HIPACM_VERSION_PATCH 0
#define HIPACM_VERSION_STRING "0.1.0"

/* Status codes. The numbers are part of the ABI and never change. */
typedef enum hipacm_status {
  HIPACM_SUCCESS = 0,
  HIPACM_ERROR_INVALID_ARGUMENT = 1,
  HIPACM_ERROR_ABI_MISMATCH = 2,
  HIPACM_ERROR_MODE_ALREADY_ACTIVE = 3,
  HIPACM_ERROR_MODE_CLOSED = 4,
  HIPACM_ERROR_COMPILATION = 5,
  HIPACM_ERROR_COMPILER_CRASHED = 6,
  HIPACM_ERROR_TIMEOUT = 7,
  HIPACM_ERROR_CANCELLED = 8,
  HIPACM_ERROR_BACKEND_UNAVAILABLE = 9,
  HIPACM_ERROR_FINALIZE_FAILED = 10,
  HIPACM_ERROR_NOT_READY = 11,
  HIPACM_ERROR_OUT_OF_MEMORY = 12,
  HIPACM_ERROR_INTERNAL = 13
} hipacm_status;

/* An active async compile mode. Owned by the plugin from hipacm_mode_enter
 * until hipacm_mode_exit frees it; never use it after exit. */
typedef struct hipacm_mode hipacm_mode;

/* A reference-counted handle to one compile's outcome. It stays valid after
 * its mode has exited, until its last reference is released. */
typedef struct hipacm_future hipacm_future;

/* Runs once, on the collecting thread, after a successful compile. A nonzero
 * return marks the future HIPACM_ERROR_FINALIZE_FAILED, and cleanup then runs.
 * `f` is borrowed for the duration of the call (hipacm_future_result on it
 * returns at once with the compile outcome, without re-running callbacks). */
typedef int (*hipacm_finalize_fn)(void* user_data, hipacm_future* f);

/* Runs once, on the collecting thread, after a failed, cancelled or
 * finalize-failed compile. `f` is borrowed for the duration of the call. */
typedef void (*hipacm_cleanup_fn)(void* user_data, hipacm_future* f);

/* Isolation policies for hipacm_mode_config.isolation. */
#define HIPACM_ISOLATION_AUTO 0
#define HIPACM_ISOLATION_IN_PROCESS 1
#define HIPACM_ISOLATION_PROCESS 2

/* Options for hipacm_mode_enter. Fill in with hipacm_mode_config_init. */
typedef struct hipacm_mode_config {
  size_t struct_size;    /* sizeof(hipacm_mode_config) as the caller knows it */
  uint32_t max_workers;  /* pool size; 0 = hardware concurrency */
  int32_t ignore_errors; /* nonzero: mode_exit succeeds even if compiles failed */
  int32_t fail_fast;     /* nonzero: the first failure cancels queued compiles */
  /* Target arch, e.g. "gfx90a" or "gfx90a:xnack-". NULL means $HIPACM_ARCH,
   * otherwise the current device's arch. Copied by hipacm_mode_enter. */
  const char* arch;
  /* ---- end of version 1 (ABI 1.0) ---- */
} hipacm_mode_config;

/* One compile request. Every pointer is borrowed for the duration of the call
 * that takes it: the plugin copies what it keeps. */
typedef struct hipacm_request {
  size_t struct_size; /* sizeof(hipacm_request) as the caller knows it */
  /* Dedup key. NULL means a SHA-256 content digest of everything that affects
   * the output: source, source name, options, headers, name expressions, arch. */
  const char* key;
  const char* source;      /* required, non-empty, NUL-terminated */
  const char* source_name; /* NULL = "kernel.hip" */
  const char* const* options; /* num_options entries, none NULL */
  size_t num_options;
  const char* const* header_sources; /* num_headers entries, none NULL */
  const char* const* header_names;   /* num_headers entries, none NULL */
  size_t num_headers;
  const char* const* name_expressions; /* e.g. "scale<float>"; none NULL */
  size_t num_name_expressions;
  hipacm_finalize_fn finalize; /* may be NULL */
  hipacm_cleanup_fn cleanup;   /* may be NULL */
  void* user_data;             /* passed to the callbacks; owned by the caller */
  /* ---- end of version 1 (ABI 1.0) ---- */
} hipacm_request;

/* A compiled kernel. Read-only and owned by its future: every pointer stays
 * valid until the future's last reference is released. */
typedef struct hipacm_kernel {
  size_t struct_size; /* sizeof(hipacm_kernel) as the plugin knows it */
  const char* key;
  const void* code; /* the code object: an AMDGPU ELF for gfx targets */
  size_t code_size;
  const char* log;  /* compiler log; never NULL, may be empty */
  const char* arch; /* the arch it was compiled for */
  /* Lowered (mangled) names, in the order of the request's name expressions. */
  const char* const* lowered_names;
  size_t num_lowered_names;
  double compile_seconds; /* wall time of the compile step itself */
  /* ---- end of version 1 (ABI 1.0) ---- */
} hipacm_kernel;

/* What the backend found. Strings are owned by the plugin and live until the
 * plugin is unloaded. */
typedef struct hipacm_backend_info {
  size_t struct_size;       /* caller sets sizeof(hipacm_backend_info) */
  int32_t available;        /* nonzero when the compiler could be loaded */
  const char* compiler;     /* e.g. "hiprtc"; never NULL */
  const char* version;      /* e.g. "9.0"; never NULL, "" when unavailable */
  const char* library_path; /* the library that was loaded; never NULL */
  const char* default_arch; /* $HIPACM_ARCH or the device's; "" if none */
  /* ---- end of version 1 (ABI 1.0) ---- */
} hipacm_backend_info;

/* Fills `cfg` with the defaults and sets cfg->struct_size. NULL is ignored. */
HIPACM_API void hipacm_mode_config_init(hipacm_mode_config* cfg);

/* Claims the single process-wide mode slot with a compare-and-swap.
 * cfg: NULL means defaults. out: receives the mode; required.
 * Returns SUCCESS; MODE_ALREADY_ACTIVE if the slot is taken (nothing leaks and
 * no thread starts); ABI_MISMATCH for a too-small struct_size;
 * INVALID_ARGUMENT for a NULL out or an unknown arch (the message lists the
 * supported ones); BACKEND_UNAVAILABLE when no compiler can be loaded or no
 * arch is known; OUT_OF_MEMORY. */
HIPACM_API hipacm_status hipacm_mode_enter(const hipacm_mode_config* cfg, hipacm_mode** out);

/* The mode in the slot, or NULL (an acquire load). */
HIPACM_API hipacm_mode* hipacm_active_mode(void);

/* Schedules a compile on the mode's pool. *out receives one reference owned by
 * the caller (release it with hipacm_future_release). Submitting a key that is
 * already in the mode returns the same future with one more reference; the new
 * request's callbacks are not attached and nothing is scheduled.
 * Returns SUCCESS; INVALID_ARGUMENT (bad mode, request, NULL entries, empty
 * source); ABI_MISMATCH; MODE_CLOSED when the mode is exiting or exited;
 * OUT_OF_MEMORY. */
HIPACM_API hipacm_status hipacm_submit(hipacm_mode* mode, const hipacm_request* req,
                                       hipacm_future** out);

/* Leaves the mode. In order: validates `mode` (a NULL, unknown or already
 * exited mode is INVALID_ARGUMENT; of two racing exits exactly one wins);
 * resets the slot first; closes the mode to submits; collects every future in
 * completion order, running finalize or cleanup exactly once each; joins the
 * pool and frees the mode.
 * Returns SUCCESS when nothing failed or ignore_errors is set; otherwise the
 * status of the first failure in completion order, with a new reference to
 * that future in *first_failure (when first_failure is not NULL; the caller
 * releases it). On SUCCESS *first_failure is set to NULL. */
HIPACM_API hipacm_status hipacm_mode_exit(hipacm_mode* mode, hipacm_future** first_failure);

/* Compiles synchronously, without a mode, on the calling thread.
 * arch: NULL means $HIPACM_ARCH, otherwise the device's. *out receives a
 * completed future owned by the caller; callbacks run at hipacm_future_result.
 * Returns the compile's outcome (SUCCESS, COMPILATION, ...); *out is set
 * whenever the request itself was valid, failed compiles included. */
HIPACM_API hipacm_status hipacm_compile(const hipacm_request* req, const char* arch,
                                        hipacm_future** out);

/* Adds a reference. Returns INVALID_ARGUMENT for NULL or an unknown handle. */
HIPACM_API hipacm_status hipacm_future_retain(hipacm_future* f);
/* Drops a reference; the last one frees the future and its kernel. */
HIPACM_API hipacm_status hipacm_future_release(hipacm_future* f);

/* Waits until the compile is done. timeout_ms < 0 waits forever.
 * Returns SUCCESS once done (whatever the outcome), NOT_READY on timeout.
 * Never runs callbacks. */
HIPACM_API hipacm_status hipacm_future_wait(hipacm_future* f, int64_t timeout_ms);

/* Non-blocking: NOT_READY while pending, otherwise the outcome. */
HIPACM_API hipacm_status hipacm_future_status(hipacm_future* f);

/* Blocks until done, runs finalize or cleanup exactly once (on this thread, if
 * no other thread got there first), and returns the outcome only after that
 * callback has finished. On SUCCESS *out (may be NULL) points to the kernel,
 * owned by the future. */
HIPACM_API hipacm_status hipacm_future_result(hipacm_future* f, const hipacm_kernel** out);

/* Owned by the future; never NULL ("" for a bad handle). */
HIPACM_API const char* hipacm_future_key(hipacm_future* f);
HIPACM_API const char* hipacm_future_log(hipacm_future* f);
HIPACM_API const char* hipacm_future_error_message(hipacm_future* f);

/* Static strings; never NULL, also for unknown values. */
HIPACM_API const char* hipacm_status_string(hipacm_status status);

/* The message of the last failing call on this thread; never NULL. Valid until
 * the next hipacm call on this thread. */
HIPACM_API const char* hipacm_last_error_message(void);

/* Fills *out (struct_size set by the caller). Returns SUCCESS, or
 * BACKEND_UNAVAILABLE (with *out still filled) when hipRTC cannot be loaded. */
HIPACM_API hipacm_status hipacm_get_backend_info(hipacm_backend_info* out);

/* The function table: one dlsym gives a host everything. */
typedef struct hipacm_provider {
  size_t struct_size;
  uint32_t abi_version;
  const char* name;    /* "hipacm" */
  const char* version; /* HIPACM_VERSION_STRING of the loaded plugin */
  void (*mode_config_init)(hipacm_mode_config*);
  hipacm_status (*mode_enter)(const hipacm_mode_config*, hipacm_mode**);
  hipacm_status (*mode_exit)(hipacm_mode*, hipacm_future**);
  hipacm_mode* (*active_mode)(void);
  hipacm_status (*submit)(hipacm_mode*, const hipacm_request*, hipacm_future**);
  hipacm_status (*compile)(const hipacm_request*, const char*, hipacm_future**);
  hipacm_status (*future_wait)(hipacm_future*, int64_t);
  hipacm_status (*future_status)(hipacm_future*);
  hipacm_status (*future_result)(hipacm_future*, const hipacm_kernel**);
  const char* (*future_key)(hipacm_future*);
  const char* (*future_log)(hipacm_future*);
  const char* (*future_error_message)(hipacm_future*);
  hipacm_status (*future_retain)(hipacm_future*);
  hipacm_status (*future_release)(hipacm_future*);
  const char* (*status_string)(hipacm_status);
  const char* (*last_error_message)(void);
  hipacm_status (*get_backend_info)(hipacm_backend_info*);
  /* ---- end of version 1 (ABI 1.0) ---- */
} hipacm_provider;

/* Returns the table for `abi_version` (a major version), or NULL if this
 * plugin does not implement it. The table is static and owned by the plugin. */
HIPACM_API const hipacm_provider* hipacm_get_provider(uint32_t abi_version);

/* The signature of hipacm_get_provider, for dlsym. */
typedef const hipacm_provider* (*hipacm_get_provider_fn)(uint32_t abi_version);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIPACM_HIPACM_H */
