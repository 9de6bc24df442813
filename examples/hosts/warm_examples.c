/* warm_examples.c - C99 host: dlopens libhipacm, compiles all example kernels, prints a table. */
#define _POSIX_C_SOURCE 200809L

#include <hipacm/hipacm.h>

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * Usage: hipacm-warm-examples [--plugin PATH] [--arch ARCH] [--workers N] [--kernels DIR]
 *
 * The plugin is, in order: --plugin PATH; $HIPACM_LIBRARY; libhipacm.so.1 next to this
 * executable; HIPACM_PLUGIN_PATH (set by CMake to the built library); "libhipacm.so.1" through the
 * dynamic loader's search path. Only hipacm_get_provider is looked up; everything else goes
 * through the provider table.
 *
 * Every *.hip file in the kernels directory (default HIPACM_EXAMPLES_DIR, set by CMake) is
 * submitted to one mode, in name order. What a kernel needs besides its source comes from
 * directives in its leading // comment block, one per line (kernels/README.md has the details):
 *   // hipacm: option=-O3
 *   // hipacm: header=include/hipacm_example_math.h    (virtual header named by the base name)
 *   // hipacm: name_expression=scale<float>
 *
 * Exit status: 0 when every kernel compiled and was finalized exactly once, 1 when any kernel
 * failed, 2 for a usage or set-up error, 3 when the plugin has no compiler backend (no hipRTC).
 */

#define DEFAULT_ARCH "gfx90a"
#define PLUGIN_FILE_NAME "libhipacm.so.1"
#define DIRECTIVE_PREFIX "hipacm:"

/* A growable list of owned strings. */
typedef struct string_list {
  char** items;
  size_t count;
  size_t capacity;
} string_list;

/* One example kernel: its inputs, its future and what its callbacks saw. */
typedef struct example {
  char* file_name;
  char* source;
  string_list options;
  string_list header_names;
  string_list header_sources;
  string_list name_expressions;
  char* setup_error; /* set when the file or a directive could not be used */
  hipacm_status submit_status;
  hipacm_future* future;
  long duplicate_of; /* index of an earlier example that got the same future, or -1 */
  /* Written only by this example's callbacks. */
  int finalize_calls;
  int cleanup_calls;
  size_t finalized_code_size;
} example;

static char* copy_string(const char* s, size_t n) {
  char* out = (char*)malloc(n + 1);
  if (out != NULL) {
    memcpy(out, s, n);
    out[n] = '\0';
  }
  return out;
}

static int string_list_push(string_list* list, const char* s, size_t n) {
  char* item;
  if (list->count == list->capacity) {
    size_t capacity = list->capacity == 0 ? 4 : list->capacity * 2;
    char** items = (char**)realloc(list->items, capacity * sizeof(char*));
    if (items == NULL) {
      return -1;
    }
    list->items = items;
    list->capacity = capacity;
  }
  item = copy_string(s, n);
  if (item == NULL) {
    return -1;
  }
  list->items[list->count++] = item;
  return 0;
}

static void string_list_free(string_list* list) {
  size_t i;
  for (i = 0; i < list->count; ++i) {
    free(list->items[i]);
  }
  free(list->items);
  list->items = NULL;
  list->count = list->capacity = 0;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char* join_path(const char* dir, const char* name) {
  size_t dir_len = strlen(dir);
  size_t name_len = strlen(name);
  char* out = (char*)malloc(dir_len + 1 + name_len + 1);
  if (out != NULL) {
    memcpy(out, dir, dir_len);
    out[dir_len] = '/';
    memcpy(out + dir_len + 1, name, name_len + 1);
  }
  return out;
}

/* Reads a whole file into a NUL-terminated buffer; NULL with *why set on failure. */
static char* read_file(const char* path, const char** why) {
  FILE* file = fopen(path, "rb");
  char* data = NULL;
  size_t size = 0;
  size_t capacity = 0;
  if (file == NULL) {
    *why = strerror(errno);
    return NULL;
  }
  for (;;) {
    size_t got;
    if (capacity - size < 4096) {
      size_t new_capacity = capacity == 0 ? 16384 : capacity * 2;
      char* grown = (char*)realloc(data, new_capacity + 1);
      if (grown == NULL) {
        free(data);
        fclose(file);
        *why = "out of memory";
        return NULL;
      }
      data = grown;
      capacity = new_capacity;
    }
    got = fread(data + size, 1, capacity - size, file);
    size += got;
    if (got == 0) {
      break;
    }
  }
  if (ferror(file)) {
    free(data);
    fclose(file);
    *why = "read error";
    return NULL;
  }
  fclose(file);
  data[size] = '\0';
  return data;
}

static void set_setup_error(example* ex, const char* what, const char* detail) {
  size_t n = strlen(what) + strlen(detail) + 3;
  if (ex->setup_error != NULL) {
    return; /* keep the first problem */
  }
  ex->setup_error = (char*)malloc(n);
  if (ex->setup_error != NULL) {
    snprintf(ex->setup_error, n, "%s: %s", what, detail);
  }
}

/* Applies one "key=value" directive to `ex`. */
static void apply_directive(example* ex, const char* kernels_dir, const char* text, size_t len) {
  const char* eq = (const char*)memchr(text, '=', len);
  size_t key_len;
  const char* value;
  size_t value_len;
  if (eq == NULL) {
    set_setup_error(ex, "directive without '='", ex->file_name);
    return;
  }
  key_len = (size_t)(eq - text);
  value = eq + 1;
  value_len = len - key_len - 1;
  if (value_len == 0) {
    set_setup_error(ex, "directive with an empty value", ex->file_name);
    return;
  }
  if (key_len == 6 && memcmp(text, "option", 6) == 0) {
    if (string_list_push(&ex->options, value, value_len) != 0) {
      set_setup_error(ex, "out of memory", ex->file_name);
    }
  } else if (key_len == 15 && memcmp(text, "name_expression", 15) == 0) {
    if (string_list_push(&ex->name_expressions, value, value_len) != 0) {
      set_setup_error(ex, "out of memory", ex->file_name);
    }
  } else if (key_len == 6 && memcmp(text, "header", 6) == 0) {
    char* relative = copy_string(value, value_len);
    char* path = relative != NULL ? join_path(kernels_dir, relative) : NULL;
    const char* why = "out of memory";
    char* contents = path != NULL ? read_file(path, &why) : NULL;
    const char* slash = relative != NULL ? strrchr(relative, '/') : NULL;
    const char* base = slash != NULL ? slash + 1 : relative;
    if (contents == NULL) {
      set_setup_error(ex, "cannot read header", relative != NULL ? relative : "?");
      fprintf(stderr, "hipacm-warm-examples: %s: header %s: %s\n", ex->file_name,
              path != NULL ? path : "?", why);
    } else if (*base == '\0') {
      set_setup_error(ex, "header path without a file name", relative);
    } else if (string_list_push(&ex->header_names, base, strlen(base)) != 0 ||
               string_list_push(&ex->header_sources, contents, strlen(contents)) != 0) {
      set_setup_error(ex, "out of memory", ex->file_name);
    }
    free(contents);
    free(path);
    free(relative);
  } else {
    set_setup_error(ex, "unknown directive key (want option, header or name_expression)",
                    ex->file_name);
  }
}

/* Scans the leading // comment block of ex->source for "// hipacm: key=value" lines. */
static void parse_directives(example* ex, const char* kernels_dir) {
  const char* line = ex->source;
  while (line[0] == '/' && line[1] == '/') {
    const char* end = strchr(line, '\n');
    const char* p = line + 2;
    const char* stop = end != NULL ? end : line + strlen(line);
    while (p < stop && (*p == ' ' || *p == '\t')) {
      ++p;
    }
    if ((size_t)(stop - p) >= strlen(DIRECTIVE_PREFIX) &&
        memcmp(p, DIRECTIVE_PREFIX, strlen(DIRECTIVE_PREFIX)) == 0) {
      const char* text = p + strlen(DIRECTIVE_PREFIX);
      const char* text_end = stop;
      while (text < text_end && (*text == ' ' || *text == '\t')) {
        ++text;
      }
      while (text_end > text &&
             (text_end[-1] == ' ' || text_end[-1] == '\t' || text_end[-1] == '\r')) {
        --text_end;
      }
      apply_directive(ex, kernels_dir, text, (size_t)(text_end - text));
    }
    if (end == NULL) {
      break;
    }
    line = end + 1;
  }
}

static int has_hip_suffix(const char* name) {
  size_t n = strlen(name);
  return n > 4 && strcmp(name + n - 4, ".hip") == 0;
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* Lists the *.hip files of `dir`, sorted; returns -1 with errno-based message on failure. */
static int list_kernel_files(const char* dir, string_list* out) {
  DIR* d = opendir(dir);
  struct dirent* entry;
  if (d == NULL) {
    fprintf(stderr, "hipacm-warm-examples: cannot open kernels directory %s: %s\n", dir,
            strerror(errno));
    return -1;
  }
  while ((entry = readdir(d)) != NULL) {
    if (has_hip_suffix(entry->d_name) &&
        string_list_push(out, entry->d_name, strlen(entry->d_name)) != 0) {
      closedir(d);
      fprintf(stderr, "hipacm-warm-examples: out of memory\n");
      return -1;
    }
  }
  closedir(d);
  if (out->count > 1) {
    qsort(out->items, out->count, sizeof(char*), compare_names);
  }
  return 0;
}

/* Counts the kernel descriptors (symbols named *.kd) of an AMDGPU ELF code object, from its
 * dynamic symbol table (or the static one when there is none). Returns -1 when `code` is not a
 * little-endian ELF64 image this reader understands. */
static long count_kernel_descriptors(const void* code, size_t size) {
  const unsigned char* bytes = (const unsigned char*)code;
  Elf64_Ehdr eh;
  Elf64_Shdr symtab;
  Elf64_Shdr strtab;
  int found = 0;
  size_t i;
  long count = 0;
  if (code == NULL || size < sizeof(Elf64_Ehdr)) {
    return -1;
  }
  memcpy(&eh, bytes, sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff > size || eh.e_shnum > (size - eh.e_shoff) / sizeof(Elf64_Shdr)) {
    return -1;
  }
  for (i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    memcpy(&sh, bytes + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    if (sh.sh_type == SHT_DYNSYM || (sh.sh_type == SHT_SYMTAB && !found)) {
      symtab = sh;
      found = 1;
      if (sh.sh_type == SHT_DYNSYM) {
        break;
      }
    }
  }
  if (!found || symtab.sh_link >= eh.e_shnum || symtab.sh_offset > size ||
      symtab.sh_size > size - symtab.sh_offset) {
    return -1;
  }
  memcpy(&strtab, bytes + eh.e_shoff + symtab.sh_link * sizeof(Elf64_Shdr), sizeof strtab);
  if (strtab.sh_offset > size || strtab.sh_size > size - strtab.sh_offset) {
    return -1;
  }
  for (i = 0; i < symtab.sh_size / sizeof(Elf64_Sym); ++i) {
    Elf64_Sym sym;
    const char* name;
    const char* nul;
    size_t len;
    memcpy(&sym, bytes + symtab.sh_offset + i * sizeof(Elf64_Sym), sizeof sym);
    if (sym.st_name >= strtab.sh_size) {
      continue;
    }
    name = (const char*)bytes + strtab.sh_offset + sym.st_name;
    nul = (const char*)memchr(name, '\0', strtab.sh_size - sym.st_name);
    if (nul == NULL) {
      continue;
    }
    len = (size_t)(nul - name);
    if (len > 3 && memcmp(name + len - 3, ".kd", 3) == 0) {
      ++count;
    }
  }
  return count;
}

/* Finalize callback: runs once per successful compile. Touches only its own example. */
static int on_finalize(void* user_data, hipacm_future* f) {
  example* ex = (example*)user_data;
  (void)f;
  ex->finalize_calls += 1;
  return 0;
}

/* Cleanup callback: runs once per failed, cancelled or finalize-failed compile. */
static void on_cleanup(void* user_data, hipacm_future* f) {
  example* ex = (example*)user_data;
  (void)f;
  ex->cleanup_calls += 1;
}

/* The directory of this executable, from /proc/self/exe; NULL when unknown. */
static char* executable_dir(void) {
  char buffer[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  char* slash;
  if (n <= 0) {
    return NULL;
  }
  buffer[n] = '\0';
  slash = strrchr(buffer, '/');
  if (slash == NULL) {
    return NULL;
  }
  return copy_string(buffer, (size_t)(slash - buffer));
}

/* dlopens the plugin following the documented search order; NULL after printing why. */
static void* open_plugin(const char* option_path, char** opened_path) {
  const char* env = getenv("HIPACM_LIBRARY");
  char* dir;
  void* handle;
  if (option_path != NULL || (env != NULL && env[0] != '\0')) {
    const char* path = option_path != NULL ? option_path : env;
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      fprintf(stderr, "hipacm-warm-examples: dlopen(%s) failed: %s\n", path, dlerror());
      return NULL;
    }
    *opened_path = copy_string(path, strlen(path));
    return handle;
  }
  dir = executable_dir();
  if (dir != NULL) {
    char* path = join_path(dir, PLUGIN_FILE_NAME);
    free(dir);
    if (path != NULL && access(path, F_OK) == 0) {
      handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (handle == NULL) {
        fprintf(stderr, "hipacm-warm-examples: dlopen(%s) failed: %s\n", path, dlerror());
        free(path);
        return NULL;
      }
      *opened_path = path;
      return handle;
    }
    free(path);
  }
#ifdef HIPACM_PLUGIN_PATH
  if (access(HIPACM_PLUGIN_PATH, F_OK) == 0) {
    handle = dlopen(HIPACM_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      fprintf(stderr, "hipacm-warm-examples: dlopen(%s) failed: %s\n", HIPACM_PLUGIN_PATH,
              dlerror());
      return NULL;
    }
    *opened_path = copy_string(HIPACM_PLUGIN_PATH, strlen(HIPACM_PLUGIN_PATH));
    return handle;
  }
#endif
  handle = dlopen(PLUGIN_FILE_NAME, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fprintf(stderr,
            "hipacm-warm-examples: cannot load %s (%s); pass --plugin PATH or set "
            "HIPACM_LIBRARY\n",
            PLUGIN_FILE_NAME, dlerror());
    return NULL;
  }
  *opened_path = copy_string(PLUGIN_FILE_NAME, strlen(PLUGIN_FILE_NAME));
  return handle;
}

static void usage(FILE* out) {
  fprintf(out,
          "usage: hipacm-warm-examples [--plugin PATH] [--arch ARCH] [--workers N] "
          "[--kernels DIR]\n"
          "  --plugin PATH  libhipacm to dlopen (default: $HIPACM_LIBRARY, else %s next to\n"
          "                 this executable, else the built library, else the loader's search)\n"
          "  --arch ARCH    target, e.g. gfx90a or gfx1030 (default %s)\n"
          "  --workers N    compile threads, 0 = hardware concurrency (default 0)\n"
          "  --kernels DIR  directory of *.hip files (default: the examples/kernels directory)\n",
          PLUGIN_FILE_NAME, DEFAULT_ARCH);
}

static int parse_workers(const char* text, uint32_t* out) {
  char* end = NULL;
  unsigned long value;
  if (text[0] < '0' || text[0] > '9') {
    return -1;
  }
  errno = 0;
  value = strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value > 4096) {
    return -1;
  }
  *out = (uint32_t)value;
  return 0;
}

static void free_examples(example* examples, size_t count) {
  size_t i;
  for (i = 0; i < count; ++i) {
    free(examples[i].file_name);
    free(examples[i].source);
    free(examples[i].setup_error);
    string_list_free(&examples[i].options);
    string_list_free(&examples[i].header_names);
    string_list_free(&examples[i].header_sources);
    string_list_free(&examples[i].name_expressions);
  }
  free(examples);
}

/* Command-line settings. */
typedef struct settings {
  const char* plugin;
  const char* arch;
  const char* kernels_dir;
  uint32_t workers;
} settings;

/* Returns -1 to exit with 0 (help), 0 to run, 2 on a usage error. */
static int parse_args(int argc, char** argv, settings* out) {
  int i = 1;
  out->plugin = NULL;
  out->arch = DEFAULT_ARCH;
  out->kernels_dir = NULL;
  out->workers = 0;
  while (i < argc) {
    const char* arg = argv[i];
    const char* value = (i + 1 < argc) ? argv[i + 1] : NULL;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(stdout);
      return -1;
    }
    if (value == NULL) {
      fprintf(stderr, "hipacm-warm-examples: '%s' needs a value\n", arg);
      usage(stderr);
      return 2;
    }
    if (strcmp(arg, "--plugin") == 0) {
      out->plugin = value;
    } else if (strcmp(arg, "--arch") == 0) {
      out->arch = value;
    } else if (strcmp(arg, "--kernels") == 0) {
      out->kernels_dir = value;
    } else if (strcmp(arg, "--workers") == 0) {
      if (parse_workers(value, &out->workers) != 0) {
        fprintf(stderr, "hipacm-warm-examples: --workers wants a number 0..4096, not '%s'\n",
                value);
        return 2;
      }
    } else {
      fprintf(stderr, "hipacm-warm-examples: unknown argument '%s'\n", arg);
      usage(stderr);
      return 2;
    }
    i += 2;
  }
#ifdef HIPACM_EXAMPLES_DIR
  if (out->kernels_dir == NULL) {
    out->kernels_dir = HIPACM_EXAMPLES_DIR;
  }
#endif
  if (out->kernels_dir == NULL) {
    fprintf(stderr, "hipacm-warm-examples: no kernels directory; pass --kernels DIR\n");
    return 2;
  }
  return 0;
}

/* Gets the provider table through the one dlsym; NULL after printing why. Requesting
 * HIPACM_ABI_VERSION (major and minor) makes the table's mode_config_init fill the whole
 * hipacm_mode_config that this program's header declares, so every field set after it counts. */
static const hipacm_provider* load_provider(void* plugin, const char* plugin_path) {
  void* symbol = dlsym(plugin, "hipacm_get_provider");
  hipacm_get_provider_fn get_provider;
  const hipacm_provider* api;
  if (symbol == NULL) {
    fprintf(stderr, "hipacm-warm-examples: %s has no hipacm_get_provider: %s\n", plugin_path,
            dlerror());
    return NULL;
  }
  /* ISO C has no cast from void* to a function pointer; copying the bytes is the POSIX idiom. */
  memcpy(&get_provider, &symbol, sizeof get_provider);
  api = get_provider(HIPACM_ABI_VERSION);
  if (api == NULL) {
    fprintf(stderr, "hipacm-warm-examples: %s does not implement ABI %d.%d\n", plugin_path,
            HIPACM_ABI_VERSION_MAJOR, HIPACM_ABI_VERSION_MINOR);
    return NULL;
  }
  if (HIPACM_ABI_VERSION_MAJOR_OF(api->abi_version) != HIPACM_ABI_VERSION_MAJOR ||
      api->struct_size < sizeof(hipacm_provider)) {
    fprintf(stderr,
            "hipacm-warm-examples: %s returned a table for ABI %u.%u of %lu bytes; this program "
            "needs ABI %d and %lu bytes\n",
            plugin_path, (unsigned)HIPACM_ABI_VERSION_MAJOR_OF(api->abi_version),
            (unsigned)HIPACM_ABI_VERSION_MINOR_OF(api->abi_version),
            (unsigned long)api->struct_size, HIPACM_ABI_VERSION_MAJOR,
            (unsigned long)sizeof(hipacm_provider));
    return NULL;
  }
  return api;
}

/* Reads example `ex` (file_name set) and submits it to `mode`. Problems end up in setup_error. */
static void submit_example(const hipacm_provider* api, hipacm_mode* mode, const char* kernels_dir,
                           example* ex) {
  const char* why = "out of memory";
  char* path = join_path(kernels_dir, ex->file_name);
  hipacm_request request;
  ex->source = path != NULL ? read_file(path, &why) : NULL;
  free(path);
  if (ex->source == NULL) {
    set_setup_error(ex, "cannot read source", why);
    return;
  }
  parse_directives(ex, kernels_dir);
  if (ex->setup_error != NULL) {
    return;
  }
  memset(&request, 0, sizeof request);
  request.struct_size = sizeof request;
  request.source = ex->source;
  request.source_name = ex->file_name;
  request.options = (const char* const*)ex->options.items;
  request.num_options = ex->options.count;
  request.header_sources = (const char* const*)ex->header_sources.items;
  request.header_names = (const char* const*)ex->header_names.items;
  request.num_headers = ex->header_names.count;
  request.name_expressions = (const char* const*)ex->name_expressions.items;
  request.num_name_expressions = ex->name_expressions.count;
  request.finalize = on_finalize;
  request.cleanup = on_cleanup;
  request.user_data = ex;
  ex->submit_status = api->submit(mode, &request, &ex->future);
  if (ex->submit_status != HIPACM_SUCCESS) {
    set_setup_error(ex, "submit failed", api->last_error_message());
    ex->future = NULL;
  }
}

/* Totals over the table. */
typedef struct totals {
  size_t compiled;
  size_t distinct_futures;
  int finalize_calls;
  int cleanup_calls;
  int callbacks_exactly_once;
  int lowered_names_complete;
  size_t code_bytes;
  double compile_seconds;
} totals;

/* Prints one table row (plus lowered names or the failure) and adds it to `t`. */
static void report_example(const hipacm_provider* api, example* ex, int name_width, totals* t) {
  const hipacm_kernel* kernel = NULL;
  hipacm_status result = ex->submit_status;
  char kernels_column[24] = "-";
  size_t j;
  if (ex->future != NULL) {
    /* The mode has exited, so the compile is done and its callback has run: this returns the
     * outcome at once and does not run a callback again. */
    result = api->future_result(ex->future, &kernel);
  }
  if (ex->future != NULL && ex->duplicate_of < 0) {
    t->distinct_futures += 1;
    t->finalize_calls += ex->finalize_calls;
    t->cleanup_calls += ex->cleanup_calls;
    /* Exactly once: finalize after a success, cleanup after a failure, never both. */
    if (result == HIPACM_SUCCESS ? (ex->finalize_calls != 1 || ex->cleanup_calls != 0)
                                 : (ex->finalize_calls != 0 || ex->cleanup_calls != 1)) {
      t->callbacks_exactly_once = 0;
    }
  }
  if (result == HIPACM_SUCCESS && kernel != NULL && kernel->code != NULL && kernel->code_size > 0) {
    long descriptors = count_kernel_descriptors(kernel->code, kernel->code_size);
    if (descriptors >= 0) {
      snprintf(kernels_column, sizeof kernels_column, "%ld", descriptors);
    }
    t->compiled += 1;
    t->code_bytes += kernel->code_size;
    t->compile_seconds += kernel->compile_seconds;
    printf("%-*s %-24s %9lu %7s %5lu %10.3f%s\n", name_width, ex->file_name,
           api->status_string(result), (unsigned long)kernel->code_size, kernels_column,
           (unsigned long)kernel->num_lowered_names, kernel->compile_seconds,
           ex->duplicate_of >= 0 ? "  (same future as an earlier file)" : "");
    for (j = 0; kernel->lowered_names != NULL && j < kernel->num_lowered_names &&
                j < ex->name_expressions.count;
         ++j) {
      printf("    %s -> %s\n", ex->name_expressions.items[j],
             kernel->lowered_names[j] != NULL ? kernel->lowered_names[j] : "(null)");
    }
    if (kernel->num_lowered_names != ex->name_expressions.count ||
        (kernel->num_lowered_names > 0 && kernel->lowered_names == NULL)) {
      printf("    expected %lu lowered names\n", (unsigned long)ex->name_expressions.count);
      t->lowered_names_complete = 0;
    }
    return;
  }
  printf("%-*s %-24s %9s %7s %5s %10s\n", name_width, ex->file_name,
         ex->future == NULL ? "NOT SUBMITTED" : api->status_string(result), "-", "-", "-", "-");
  if (ex->setup_error != NULL) {
    printf("    %s\n", ex->setup_error);
  }
  if (ex->future != NULL) {
    const char* message = api->future_error_message(ex->future);
    const char* log = api->future_log(ex->future);
    if (message[0] != '\0') {
      printf("    error: %s\n", message);
    }
    if (log[0] != '\0') {
      printf("    log:\n%s\n", log);
    }
    if (result == HIPACM_SUCCESS) {
      printf("    succeeded without a code object\n");
    }
  }
}

int main(int argc, char** argv) {
  settings opts;
  char* plugin_path = NULL;
  void* plugin;
  const hipacm_provider* api;
  hipacm_backend_info backend;
  hipacm_mode_config config;
  hipacm_mode* mode = NULL;
  hipacm_future* first_failure = NULL;
  hipacm_status status;
  string_list files = {NULL, 0, 0};
  example* examples;
  size_t count;
  size_t i;
  totals t;
  int name_width = 11; /* strlen("KERNEL FILE") */
  double started;
  double wall;
  int rc = parse_args(argc, argv, &opts);
  if (rc != 0) {
    return rc < 0 ? 0 : rc;
  }

  plugin = open_plugin(opts.plugin, &plugin_path);
  if (plugin == NULL) {
    return 2;
  }
  api = load_provider(plugin, plugin_path);
  if (api == NULL || list_kernel_files(opts.kernels_dir, &files) != 0) {
    free(plugin_path);
    dlclose(plugin);
    return 2;
  }
  count = files.count;
  examples = count > 0 ? (example*)calloc(count, sizeof(example)) : NULL;
  if (examples == NULL) {
    fprintf(stderr, "hipacm-warm-examples: %s\n",
            count == 0 ? "no *.hip files in the kernels directory" : "out of memory");
    string_list_free(&files);
    free(plugin_path);
    dlclose(plugin);
    return 2;
  }
  for (i = 0; i < count; ++i) {
    examples[i].file_name = files.items[i]; /* moved */
    files.items[i] = NULL;
    examples[i].duplicate_of = -1;
    examples[i].submit_status = HIPACM_ERROR_INVALID_ARGUMENT;
  }
  string_list_free(&files);

  memset(&backend, 0, sizeof backend);
  backend.struct_size = sizeof backend;
  status = api->get_backend_info(&backend);
  printf("plugin   %s %s (ABI %u.%u) from %s\n", api->name, api->version,
         (unsigned)HIPACM_ABI_VERSION_MAJOR_OF(api->abi_version),
         (unsigned)HIPACM_ABI_VERSION_MINOR_OF(api->abi_version), plugin_path);
  printf("backend  %s %s from %s%s\n", backend.compiler, backend.version, backend.library_path,
         status == HIPACM_SUCCESS ? "" : " (unavailable)");
  printf("arch     %s, workers %u (0 = one per core), kernels %s\n\n", opts.arch,
         (unsigned)opts.workers, opts.kernels_dir);

  started = now_seconds();
  api->mode_config_init(&config);
  config.max_workers = opts.workers;
  config.arch = opts.arch;
  status = api->mode_enter(&config, &mode);
  if (status != HIPACM_SUCCESS) {
    fprintf(stderr, "hipacm-warm-examples: mode_enter(arch %s) failed: %s: %s\n", opts.arch,
            api->status_string(status), api->last_error_message());
    free_examples(examples, count);
    free(plugin_path);
    dlclose(plugin);
    return status == HIPACM_ERROR_BACKEND_UNAVAILABLE ? 3 : 2;
  }
  for (i = 0; i < count; ++i) {
    size_t j;
    submit_example(api, mode, opts.kernels_dir, &examples[i]);
    /* Identical requests share one future, and only the first one's callbacks are attached. */
    for (j = 0; examples[i].future != NULL && j < i; ++j) {
      if (examples[j].future == examples[i].future) {
        examples[i].duplicate_of = (long)j;
        break;
      }
    }
  }
  /* Waits for every compile and runs each finalize or cleanup exactly once. */
  status = api->mode_exit(mode, &first_failure);
  wall = now_seconds() - started;
  if (first_failure != NULL) {
    api->future_release(first_failure);
  }

  memset(&t, 0, sizeof t);
  t.callbacks_exactly_once = 1;
  t.lowered_names_complete = 1;
  for (i = 0; i < count; ++i) {
    size_t len = strlen(examples[i].file_name);
    if (len > (size_t)name_width && len < 200) {
      name_width = (int)len;
    }
  }
  printf("%-*s %-24s %9s %7s %5s %10s\n", name_width, "KERNEL FILE", "STATUS", "CODE(B)", "KERNELS",
         "NAMES", "COMPILE(s)");
  for (i = 0; i < count; ++i) {
    report_example(api, &examples[i], name_width, &t);
  }
  for (i = 0; i < count; ++i) {
    if (examples[i].future != NULL) {
      api->future_release(examples[i].future);
      examples[i].future = NULL;
    }
  }
  printf("\n%lu of %lu compiled for %s: %lu bytes of code, %.3f s compiling (sum), %.3f s wall\n",
         (unsigned long)t.compiled, (unsigned long)count, opts.arch, (unsigned long)t.code_bytes,
         t.compile_seconds, wall);
  printf("callbacks: %d finalize and %d cleanup for %lu futures%s\n", t.finalize_calls,
         t.cleanup_calls, (unsigned long)t.distinct_futures,
         t.callbacks_exactly_once ? "" : " (NOT exactly once each)");
  printf("mode_exit: %s\n", api->status_string(status));

  rc = (t.compiled == count && status == HIPACM_SUCCESS && t.callbacks_exactly_once &&
        t.lowered_names_complete && t.finalize_calls == (int)t.distinct_futures &&
        t.cleanup_calls == 0)
           ? 0
           : 1;
  free_examples(examples, count);
  free(plugin_path);
  dlclose(plugin);
  return rc;
}
