/* SPDX-License-Identifier: MIT */
/* intercept_abi.h - PRIVATE: the entry point libhipacm.so.1 gives libhipacm_intercept.so.
 *
 * Not part of hipacm's public C ABI (include/hipacm/hipacm.h) and never installed: the only
 * caller is the intercept shim of the same build, which looks the entry up by its versioned name
 * with dlsym. A change of layout or meaning takes a new name (_v2), so a shim and a libhipacm of
 * different builds find no entry instead of a wrong one, and the shim then passes every compile
 * through to the real hipRTC. */
#ifndef HIPACM_PLUGIN_ABI_INTERCEPT_ABI_H
#define HIPACM_PLUGIN_ABI_INTERCEPT_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HIPACM_PRIVATE_API __attribute__((visibility("default")))

/* One hipRTC or NVRTC program's compile, as the program gave it: the create call's arguments, its
 * name expressions (each once, in the order added) and the compile call's options. Every
 * pointer is read during the call only. */
typedef struct hipacm_intercept_request {
  size_t struct_size; /* sizeof(hipacm_intercept_request) */
  const char* source;
  const char* source_name;
  size_t num_headers;
  const char* const* header_sources;
  const char* const* header_names;
  size_t num_options;
  const char* const* options;
  size_t num_name_expressions;
  const char* const* name_expressions;
  /* The target the options name ("gfx90a", "gfx90a:xnack-", "sm_90"); the shim finds it. */
  const char* arch;
  /* Appended later; read only when struct_size covers them (a shim of an older layout sends a
   * hipRTC request). */
  unsigned flags; /* HIPACM_INTERCEPT_* request flags */
  /* The file of the library whose calls the program made, or NULL when unknown. NVRTC
   * (HIPACM_INTERCEPT_RAW_NVRTC): a worker compiles with it. hipRTC: served only when it is the
   * file hipacm compiles with. */
  const char* library;
} hipacm_intercept_request;

/* An NVRTC program (a CUDA source), compiled exactly as given: its options unchanged, its headers
 * only, none of the HIP prelude hipacm's own NVIDIA compiles add. `arch` is the arch its options
 * name (or NVRTC's default, a compute_XX, when they name none): it files the result. */
#define HIPACM_INTERCEPT_RAW_NVRTC 1u

/* What became of a request. */
typedef enum hipacm_intercept_outcome {
  HIPACM_INTERCEPT_HIT = 0,      /* served from the persistent cache */
  HIPACM_INTERCEPT_COMPILED = 1, /* compiled by hipacm (a worker), succeeded */
  HIPACM_INTERCEPT_FAILED = 2,   /* compiled by hipacm, failed as hipRTC would: rtc_result, log */
  HIPACM_INTERCEPT_PASSTHROUGH = 3, /* hipacm will not serve this one: compile it with hipRTC */
  HIPACM_INTERCEPT_UNAVAILABLE = 4  /* hipacm cannot serve anything here (no worker, settings) */
} hipacm_intercept_outcome;

/* The answer, owned by libhipacm until hipacm_intercept_release_v1. Strings are NUL-terminated;
 * the sizes do not count the NUL. */
typedef struct hipacm_intercept_result {
  size_t struct_size;
  int outcome;    /* hipacm_intercept_outcome */
  int rtc_result; /* HIT, COMPILED, FAILED: what the compile call returns (the same numbers in
                     hiprtcResult and nvrtcResult) */
  const char* code;
  size_t code_size;
  const char* log;
  size_t log_size;
  /* One per request name expression, in its order (HIT and COMPILED). */
  const char* const* lowered_names;
  size_t num_lowered_names;
  /* PASSTHROUGH, UNAVAILABLE: a short category for counting ("not keyable"); else "". */
  const char* reason;
  /* One line for the log: why it passed through, or hipacm's message of a failure; may be "". */
  const char* detail;
} hipacm_intercept_result;

/* Compiles one request synchronously through the stack a mode uses (the persistent cache's key
 * and trust rules over the worker pool or the compile service, as the settings say), without
 * taking the mode slot; thread-safe, and callers compile concurrently. The settings (HIPACM_*)
 * are read at the first compile for an arch, and that compile step serves the arch for the rest
 * of the process. Never throws; NULL only when memory ran out (treat as PASSTHROUGH). */
HIPACM_PRIVATE_API hipacm_intercept_result* hipacm_intercept_compile_v1(
    const hipacm_intercept_request* request);

/* Frees a result of hipacm_intercept_compile_v1; NULL is ignored. */
HIPACM_PRIVATE_API void hipacm_intercept_release_v1(hipacm_intercept_result* result);

#ifdef __cplusplus
}
#endif

#endif /* HIPACM_PLUGIN_ABI_INTERCEPT_ABI_H */
