/* SPDX-License-Identifier: MIT */
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

/* The ABI version this header describes. HIPACM_ABI_VERSION is the request a
 * host passes to hipacm_get_provider: the major number in the high 16 bits and
 * the minor in the low 16 (ABI 1.3; before, it was the plain major number 1,
 * which the plugin still accepts). The table's abi_version says, in the same
 * encoding, which version the plugin granted. All are integer constant
 * expressions, usable in #if. */
#define HIPACM_ABI_VERSION_MAJOR 1
#define HIPACM_ABI_VERSION_MINOR 5
#define HIPACM_ABI_VERSION_ENCODE(major, minor) (((major) << 16) | (minor))
#define HIPACM_ABI_VERSION_MAJOR_OF(version) ((version) >> 16)
#define HIPACM_ABI_VERSION_MINOR_OF(version) ((version)&0xFFFF)
#define HIPACM_ABI_VERSION \
  HIPACM_ABI_VERSION_ENCODE(HIPACM_ABI_VERSION_MAJOR, HIPACM_ABI_VERSION_MINOR)

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

/* Persistent-cache policies for hipacm_mode_config.cache_policy (ABI 1.2). */
#define HIPACM_CACHE_DEFAULT 0   /* $HIPACM_CACHE (off|read|readwrite), else READWRITE */
#define HIPACM_CACHE_OFF 1       /* never read or write the cache */
#define HIPACM_CACHE_READ 2      /* serve hits, never write */
#define HIPACM_CACHE_READWRITE 3 /* serve hits and store new code objects */

/* hipacm_mode_config.load_device value meaning "compile only" (ABI 1.2). */
#define HIPACM_LOAD_NONE (-1)

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
  /* Where compiles run (ABI 1.1). HIPACM_ISOLATION_AUTO (the default) uses
   * $HIPACM_ISOLATION (auto|in-process|process) when set; otherwise worker
   * processes when the hipacm-worker binary is found, else the serialized
   * in-process path with one logged warning. PROCESS fails the enter with
   * BACKEND_UNAVAILABLE when no worker can be found. */
  int32_t isolation;
  /* Per-compile limit in worker processes (ABI 1.1); 0 = none. A worker that
   * runs past it is killed and replaced; its future ends HIPACM_ERROR_TIMEOUT.
   * In-process compiles cannot be interrupted, so they ignore it. A wait for
   * another process's compile of the same kernel into a shared cache, and a
   * wait for a slot of the machine-wide budget ($HIPACM_MACHINE_JOBS), count
   * against it in either isolation (a wait that reaches it times out too). */
  uint32_t compile_timeout_ms;
  /* ---- end of version 2 (ABI 1.1) ---- */
  /* Read-write cache directory (ABI 1.2). NULL means $HIPACM_CACHE_DIR, else
   * $XDG_CACHE_HOME/hipacm, else ~/.cache/hipacm. Copied by hipacm_mode_enter.
   * $HIPACM_SYSTEM_CACHE adds a read-only layer beneath it. */
  const char* cache_dir;
  int32_t cache_policy; /* HIPACM_CACHE_*; default HIPACM_CACHE_DEFAULT */
  /* Device whose primary context each code object is loaded into, with every
   * kernel in it resolved, before the future completes (ABI 1.2).
   * HIPACM_LOAD_NONE (-1, the default) compiles only. */
  int32_t load_device;
  /* ---- end of version 3 (ABI 1.2) ---- */
  /* Negative cache (ABI 1.4). Nonzero: a compile that fails with
   * HIPACM_ERROR_COMPILATION is stored in the persistent cache, keyed exactly
   * like a success, and a later request with the same key fails at once with
   * the stored log and message instead of compiling again. Crashes, timeouts
   * and cancellations are never stored. Storing needs HIPACM_CACHE_READWRITE;
   * stored failures are served only while this field is nonzero. Default 0. */
  int32_t cache_failures;
  int32_t reserved_1_4; /* set to 0 by hipacm_mode_config_init; ignored */
  /* ---- end of version 4 (ABI 1.4) ---- */
  /* Remote cache tier (ABI 1.5): redis://[user[:password]@]host[:port][/db],
   * read on a local miss and, with $HIPACM_REMOTE_CACHE_MODE=read-write,
   * written after each compile; entries are served only when they verify
   * against $HIPACM_REMOTE_CACHE_KEY_FILE. NULL or "" means
   * $HIPACM_REMOTE_CACHE; "off" means none. Needs a cache_policy other than
   * OFF. Copied by hipacm_mode_enter. A malformed URL fails the enter with
   * INVALID_ARGUMENT; an unreachable server never fails a compile. */
  const char* remote_cache;
  /* ---- end of version 5 (ABI 1.5) ---- */
} hipacm_mode_config;

/* One compile request. Every pointer is borrowed for the duration of the call
 * that takes it: the plugin copies what it keeps. */
typedef struct hipacm_request {
  size_t struct_size; /* sizeof(hipacm_request) as the caller knows it */
  /* Dedup key. NULL means a SHA-256 content digest of everything that affects
   * the output: source, source name, options, headers, name expressions, arch. */
  const char* key;
  const char* source;         /* required, non-empty, NUL-terminated */
  const char* source_name;    /* NULL = "kernel.hip" */
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
  const void* code; /* AMDGPU ELF (gfx*), CUBIN (sm_*) or NUL-terminated PTX (compute_*) */
  size_t code_size;
  const char* log;  /* compiler log; never NULL, may be empty */
  const char* arch; /* the arch it was compiled for */
  /* Lowered (mangled) names, in the order of the request's name expressions. */
  const char* const* lowered_names;
  size_t num_lowered_names;
  double compile_seconds; /* wall time of the compile step itself */
  /* ---- end of version 1 (ABI 1.0) ---- */
  /* Nonzero when the code object came from the persistent cache (ABI 1.2);
   * compile_seconds is then the lookup's time. */
  int32_t from_cache;
  /* With load_device >= 0: the loaded module (a CUmodule on NVIDIA targets,
   * a hipModule_t on AMD ones), else NULL. Unloaded when the future's last
   * reference is released; do not unload it yourself (ABI 1.2). */
  void* module;
  /* Every kernel in the code object, sorted by name, and with a module its
   * resolved function (CUfunction / hipFunction_t; NULL entries otherwise). */
  const char* const* function_names;
  void* const* functions;
  size_t num_functions;
  /* ---- end of version 2 (ABI 1.2) ---- */
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

/* Fills the first `struct_size` bytes of `cfg` with the defaults and sets
 * cfg->struct_size to `struct_size` (the plugin never writes past it; fields
 * it does not know are zeroed). Pass sizeof(hipacm_mode_config) as your
 * header declares it. NULL, or a size below version 1, is ignored. (ABI 1.1) */
HIPACM_API void hipacm_mode_config_init_sized(hipacm_mode_config* cfg, size_t struct_size);

/* Deprecated: the ABI 1.0 entry point. It fills version 1 of the struct only
 * and sets struct_size to that size, so a host built against the 1.0 header is
 * never written past, but every field a caller then sets past version 1
 * (isolation, compile_timeout_ms, cache_dir, cache_policy, load_device) is
 * ignored. Source compiled against this header gets the macro below, which
 * initialises the whole struct that this header declares; hosts that call
 * through the provider table get a mode_config_init of the right size when
 * they request HIPACM_ABI_VERSION (see hipacm_get_provider). */
HIPACM_API void(hipacm_mode_config_init)(hipacm_mode_config* cfg);
#define hipacm_mode_config_init(cfg) hipacm_mode_config_init_sized((cfg), sizeof(*(cfg)))

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

/* Log levels for hipacm_set_log_callback (ABI 1.4). $HIPACM_LOG names them
 * off, error, warning (the default), info and debug. */
#define HIPACM_LOG_OFF 0
#define HIPACM_LOG_ERROR 1
#define HIPACM_LOG_WARNING 2
#define HIPACM_LOG_INFO 3
#define HIPACM_LOG_DEBUG 4

/* Receives one log event: `level` is a HIPACM_LOG_* value and `message` a
 * NUL-terminated line without the "hipacm: " prefix or a newline, borrowed for
 * the duration of the call. It may run on any thread, the plugin's own pool
 * threads included, and concurrently; it must not block for long, and it must
 * not call hipacm_set_log_callback. (ABI 1.4) */
typedef void (*hipacm_log_fn)(void* user_data, int32_t level, const char* message);

/* Sends the plugin's log events to `fn` instead of stderr: every event at or
 * below `max_level` (HIPACM_LOG_ERROR ... HIPACM_LOG_DEBUG; HIPACM_LOG_OFF
 * drops them all). fn NULL restores the default: lines on stderr, filtered by
 * $HIPACM_LOG. When the call returns, the callback it replaced is no longer
 * running and is never called again, so its user_data may be freed.
 * Returns SUCCESS, or INVALID_ARGUMENT for a level outside 0..4 (nothing is
 * changed then). (ABI 1.4) */
HIPACM_API hipacm_status hipacm_set_log_callback(hipacm_log_fn fn, void* user_data,
                                                 int32_t max_level);

/* Process-wide counters since the plugin was loaded (ABI 1.4). Each is
 * monotonic; read them twice and subtract to measure an interval. */
typedef struct hipacm_stats {
  size_t struct_size;        /* caller sets sizeof(hipacm_stats) */
  uint64_t compiles;         /* compiler runs started (in-process or in a worker) */
  uint64_t compile_failures; /* compiler runs that ended HIPACM_ERROR_COMPILATION */
  uint64_t cache_hits;       /* requests served from the persistent cache */
  uint64_t cache_misses;     /* cache lookups that found nothing usable */
  uint64_t cache_stores;     /* code objects written to the cache */
  uint64_t bytes_stored;     /* code object bytes written to the cache */
  uint64_t cache_evictions;  /* entries removed to keep the cache in its bound */
  uint64_t bytes_evicted;    /* code object bytes those entries held */
  uint64_t worker_spawns;    /* hipacm-worker processes started */
  uint64_t worker_crashes;   /* workers that died during a compile */
  uint64_t timeouts;         /* compiles killed at compile_timeout_ms */
  uint64_t cached_failures;  /* requests failed at once from a stored failure */
  /* ---- end of version 1 (ABI 1.4) ---- */
  uint64_t remote_hits;           /* local misses served from the remote cache */
  uint64_t remote_misses;         /* remote lookups that found nothing */
  uint64_t remote_refused;        /* remote values refused (signature, bounds, request) */
  uint64_t remote_stores;         /* entries put to the remote cache */
  uint64_t remote_duplicates;     /* puts that found the entry there already */
  uint64_t remote_store_failures; /* puts that failed or were dropped (full, down) */
  uint64_t remote_errors;         /* remote calls that failed or timed out */
  uint64_t remote_waits;          /* compiles served after waiting for another machine's */
  /* ---- end of version 2 (ABI 1.5) ---- */
} hipacm_stats;

/* Fills the first out->struct_size bytes of *out. Returns SUCCESS;
 * INVALID_ARGUMENT for NULL; ABI_MISMATCH for a struct_size below version 1.
 * (ABI 1.4) */
HIPACM_API hipacm_status hipacm_get_stats(hipacm_stats* out);

/* The function table: one dlsym gives a host everything. */
typedef struct hipacm_provider {
  size_t struct_size;
  uint32_t abi_version;
  const char* name;    /* "hipacm" */
  const char* version; /* HIPACM_VERSION_STRING of the loaded plugin */
  /* Fills the hipacm_mode_config of the header version the host requested
   * (see hipacm_get_provider). Deprecated in the table for a plain `1`
   * request, where it fills version 1 only. */
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
  void (*mode_config_init_sized)(hipacm_mode_config*, size_t); /* ABI 1.1 */
  /* ---- end of version 2 (ABI 1.1) ---- */
  hipacm_status (*set_log_callback)(hipacm_log_fn, void*, int32_t); /* ABI 1.4 */
  hipacm_status (*get_stats)(hipacm_stats*);                        /* ABI 1.4 */
  /* ---- end of version 3 (ABI 1.4) ---- */
} hipacm_provider;

/* Returns the function table for the requested ABI version, or NULL if this
 * plugin does not implement its major version. The table is static and owned
 * by the plugin. Pass HIPACM_ABI_VERSION:
 *  - An encoded request for major 1 (HIPACM_ABI_VERSION_ENCODE(1, minor), ABI
 *    1.3) gets a table whose mode_config_init fills exactly the
 *    hipacm_mode_config of that minor's header (sizeof as that header declares
 *    it) and sets struct_size to it, so
 *    `hp->mode_config_init(&cfg); cfg.compile_timeout_ms = 300;` is honoured.
 *    A minor newer than the plugin's gets the plugin's newest table; its
 *    abi_version then names the older minor, and fields appended after it are
 *    left alone and not read (struct_size says where the plugin stopped).
 *  - The plain major number 1 (what headers before ABI 1.3 passed) gets the
 *    ABI 1.0 table: abi_version 1, and a deprecated mode_config_init that
 *    fills version 1 only.
 *  - Anything else (another major, 0) returns NULL. */
HIPACM_API const hipacm_provider* hipacm_get_provider(uint32_t abi_version);

/* The signature of hipacm_get_provider, for dlsym. */
typedef const hipacm_provider* (*hipacm_get_provider_fn)(uint32_t abi_version);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIPACM_HIPACM_H */
