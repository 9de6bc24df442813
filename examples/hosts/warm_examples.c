/* SPDX-License-Identifier: MIT */
/* warm_examples.c - a C99 walk-through of the hipacm C ABI: load it, compile files in one mode. */
#define _POSIX_C_SOURCE 200809L

#include <hipacm/hipacm.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Usage: hipacm-warm-examples [--plugin PATH] [--arch ARCH] KERNEL.hip...
 * Each file is one request: its source, under its base name. (Options, headers and name
 * expressions are request fields too; `hipacm warmup` takes them from // hipacm: directives.)
 * The plugin is --plugin, else $HIPACM_LIBRARY, else libhipacm.so.1 (the one beside this program
 * in a build tree). Exit status: 0 when every file compiled, 1 when one did not, 2 for a usage or
 * set-up error, 3 when the plugin has no compiler (no hipRTC).
 */

/* One file and what its callbacks saw; the plugin hands it back as user_data. */
typedef struct kernel_file {
  const char* path;
  char* source;
  hipacm_future* future;
  int finalized;
  int cleaned_up;
} kernel_file;

/* After a successful compile, once: where a JIT would load the code object. Nonzero would mark
 * the future FINALIZE_FAILED. */
static int on_finalize(void* user_data, hipacm_future* f) {
  (void)f;
  ((kernel_file*)user_data)->finalized += 1;
  return 0;
}

/* Instead of finalize, once, after a failed or cancelled compile: where a JIT gives up. */
static void on_cleanup(void* user_data, hipacm_future* f) {
  (void)f;
  ((kernel_file*)user_data)->cleaned_up += 1;
}

static char* read_file(const char* path) {
  FILE* file = fopen(path, "rb");
  char* text = NULL;
  long size;
  if (file == NULL) return NULL;
  if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) >= 0 && fseek(file, 0, SEEK_SET) == 0 &&
      (text = (char*)malloc((size_t)size + 1)) != NULL) {
    text[fread(text, 1, (size_t)size, file)] = '\0';
  }
  fclose(file);
  return text;
}

/* The one symbol a host looks up: everything else comes through the table it returns. */
static const hipacm_provider* load_provider(const char* path, void** plugin) {
  void* symbol;
  hipacm_get_provider_fn get_provider;
  const hipacm_provider* provider;
  *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  symbol = *plugin != NULL ? dlsym(*plugin, "hipacm_get_provider") : NULL;
  if (symbol == NULL) {
    fprintf(stderr, "hipacm-warm-examples: %s\n", dlerror());
    return NULL;
  }
  /* ISO C has no cast from void* to a function pointer; copying the bytes is the POSIX idiom. */
  memcpy(&get_provider, &symbol, sizeof get_provider);
  /* Asking for this header's version makes mode_config_init fill the whole struct it declares. */
  provider = get_provider(HIPACM_ABI_VERSION);
  if (provider == NULL) {
    fprintf(stderr, "hipacm-warm-examples: %s lacks ABI %d\n", path, HIPACM_ABI_VERSION_MAJOR);
  }
  return provider;
}

int main(int argc, char** argv) {
  const char* plugin_path = getenv("HIPACM_LIBRARY");
  const char* arch = NULL; /* NULL: $HIPACM_ARCH, else the GPU's */
  kernel_file* files = (kernel_file*)calloc((size_t)argc, sizeof(kernel_file));
  size_t count = 0, compiled = 0, i;
  void* plugin = NULL;
  const hipacm_provider* hp = NULL;
  hipacm_mode_config config;
  hipacm_mode* mode = NULL;
  hipacm_future* first_failure = NULL;
  hipacm_status status;
  int a, rc = 2;

  for (a = 1; files != NULL && a < argc; ++a) {
    if (strcmp(argv[a], "--plugin") == 0 && a + 1 < argc)
      plugin_path = argv[++a];
    else if (strcmp(argv[a], "--arch") == 0 && a + 1 < argc)
      arch = argv[++a];
    else
      files[count++].path = argv[a];
  }
  if (count == 0 || files[0].path[0] == '-') {
    fprintf(stderr, "usage: hipacm-warm-examples [--plugin PATH] [--arch ARCH] KERNEL.hip...\n");
  } else {
    hp = load_provider(plugin_path != NULL && *plugin_path != '\0' ? plugin_path : "libhipacm.so.1",
                       &plugin);
  }
  if (hp == NULL) goto done;

  /* 1. The plugin's defaults, then whatever this host wants otherwise. */
  hp->mode_config_init(&config);
  config.arch = arch;
  /* 2. Claim the one mode slot of the process. A failed call says why in last_error_message. */
  status = hp->mode_enter(&config, &mode);
  if (status != HIPACM_SUCCESS) {
    fprintf(stderr, "hipacm-warm-examples: mode_enter: %s: %s\n", hp->status_string(status),
            hp->last_error_message());
    rc = status == HIPACM_ERROR_BACKEND_UNAVAILABLE ? 3 : 2;
    goto done;
  }
  /* 3. Submit each file. submit returns at once; the compile runs on the mode's workers. */
  for (i = 0; i < count; ++i) {
    const char* slash = strrchr(files[i].path, '/');
    hipacm_request request;
    memset(&request, 0, sizeof request);
    request.struct_size = sizeof request;
    request.source = files[i].source = read_file(files[i].path);
    request.source_name = slash != NULL ? slash + 1 : files[i].path;
    request.finalize = on_finalize;
    request.cleanup = on_cleanup;
    request.user_data = &files[i];
    if (hp->submit(mode, &request, &files[i].future) != HIPACM_SUCCESS) {
      fprintf(stderr, "%s: %s\n", files[i].path, hp->last_error_message());
    }
  }
  /* ... a JIT would go on warming up here ... */

  /* 4. Exit: frees the slot first, then waits for every compile and runs each one's finalize or
   * cleanup exactly once. The first failure comes back with a reference of its own. */
  status = hp->mode_exit(mode, &first_failure);
  if (first_failure != NULL) {
    fprintf(stderr, "first failure: %s\n%s\n", hp->future_error_message(first_failure),
            hp->future_log(first_failure));
    hp->future_release(first_failure);
  }
  /* 5. Every future is done now: future_result answers at once and runs no callback again. */
  for (i = 0; i < count; ++i) {
    const hipacm_kernel* kernel = NULL;
    if (files[i].future == NULL) continue; /* submit failed, said above */
    if (hp->future_result(files[i].future, &kernel) == HIPACM_SUCCESS) {
      compiled += 1;
      printf("%s: %lu bytes for %s in %.3f s; finalize ran %d time(s)\n", files[i].path,
             (unsigned long)kernel->code_size, kernel->arch, kernel->compile_seconds,
             files[i].finalized);
    } else {
      printf("%s: %s; cleanup ran %d time(s)\n", files[i].path,
             hp->status_string(hp->future_status(files[i].future)), files[i].cleaned_up);
    }
    /* 6. A future outlives its mode until its last reference is released. */
    hp->future_release(files[i].future);
  }
  printf("%lu of %lu compiled; mode_exit: %s\n", (unsigned long)compiled, (unsigned long)count,
         hp->status_string(status));
  rc = compiled == count && status == HIPACM_SUCCESS ? 0 : 1;
done:
  for (i = 0; files != NULL && i < count; ++i) free(files[i].source);
  free(files);
  if (plugin != NULL) dlclose(plugin);
  return rc;
}
