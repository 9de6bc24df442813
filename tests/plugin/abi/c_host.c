/* SPDX-License-Identifier: MIT */
/* c_host.c - the shared part of the strict C99 test hosts (see c_host.h). */
#define _POSIX_C_SOURCE 200809L

#include "c_host.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int c_host_failures = 0;

void c_host_check_failed(int line, const char* condition) {
  fprintf(stderr, "%s: check failed at line %d: %s\n", c_host_name, line, condition);
  ++c_host_failures;
}

int c_host_open(c_host_plugin* plugin, int argc, char** argv, int args, const char* usage) {
  void* symbol;
  if (argc != args + 1) {
    fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    exit(2);
  }
  plugin->handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin->handle == NULL) {
    fprintf(stderr, "%s: dlopen(%s) failed: %s\n", c_host_name, argv[1], dlerror());
    return 1;
  }
  symbol = dlsym(plugin->handle, "hipacm_get_provider");
  if (symbol == NULL) {
    fprintf(stderr, "%s: no hipacm_get_provider: %s\n", c_host_name, dlerror());
    return 1;
  }
  /* ISO C has no cast from void* to a function pointer; copying the bytes is the POSIX idiom. */
  memcpy(&plugin->get_provider, &symbol, sizeof plugin->get_provider);
  plugin->api = plugin->get_provider(HIPACM_ABI_VERSION);
  if (plugin->api == NULL) {
    fprintf(stderr, "%s: hipacm_get_provider(%d) returned NULL\n", c_host_name, HIPACM_ABI_VERSION);
    return 1;
  }
  return 0;
}

int c_host_finish(int rc, const c_host_plugin* plugin, int unload) {
  if (rc == SKIP_CODE) {
    return c_host_failures == 0 ? SKIP_CODE : 1;
  }
  if (rc != 0 || c_host_failures != 0) {
    fprintf(stderr, "%s: %d check(s) failed\n", c_host_name, c_host_failures);
    return 1;
  }
  /* Unloading after the mode has exited must work. */
  if (unload && dlclose(plugin->handle) != 0) {
    fprintf(stderr, "%s: dlclose failed: %s\n", c_host_name, dlerror());
    return 1;
  }
  printf("%s: ok\n", c_host_name);
  return 0;
}
