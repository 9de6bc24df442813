// SPDX-License-Identifier: MIT
// header_cxx_test.cpp - hipacm.h as C++: v1 layouts, fixed status numbers, never-NULL strings.
#include <hipacm/hipacm.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <type_traits>

#include "status_probe.h"

namespace {

// ---- Compile-time checks: a failure here fails the build of this test. ----

// Status numbers are part of the ABI and never change: each one is its index here.
constexpr hipacm_status kStatusesInOrder[] = {HIPACM_SUCCESS,
                                              HIPACM_ERROR_INVALID_ARGUMENT,
                                              HIPACM_ERROR_ABI_MISMATCH,
                                              HIPACM_ERROR_MODE_ALREADY_ACTIVE,
                                              HIPACM_ERROR_MODE_CLOSED,
                                              HIPACM_ERROR_COMPILATION,
                                              HIPACM_ERROR_COMPILER_CRASHED,
                                              HIPACM_ERROR_TIMEOUT,
                                              HIPACM_ERROR_CANCELLED,
                                              HIPACM_ERROR_BACKEND_UNAVAILABLE,
                                              HIPACM_ERROR_FINALIZE_FAILED,
                                              HIPACM_ERROR_NOT_READY,
                                              HIPACM_ERROR_OUT_OF_MEMORY,
                                              HIPACM_ERROR_INTERNAL};
constexpr int kStatusCount = 14;
static_assert(std::size(kStatusesInOrder) == kStatusCount, "every status is listed");

// The first status whose number is not its index, or -1 when all are.
constexpr int first_misnumbered_status() {
  for (int i = 0; i < kStatusCount; ++i)
    if (static_cast<int>(kStatusesInOrder[i]) != i) return i;
  return -1;
}
static_assert(first_misnumbered_status() == -1, "status numbers are fixed");
static_assert(sizeof(hipacm_status) == sizeof(int), "hipacm_status travels as an int");

static_assert(HIPACM_ABI_VERSION == ((HIPACM_ABI_VERSION_MAJOR << 16) | HIPACM_ABI_VERSION_MINOR),
              "the ABI version request encodes major and minor");
static_assert(HIPACM_ABI_VERSION_MAJOR_OF(HIPACM_ABI_VERSION) == HIPACM_ABI_VERSION_MAJOR &&
                  HIPACM_ABI_VERSION_MINOR_OF(HIPACM_ABI_VERSION) == HIPACM_ABI_VERSION_MINOR,
              "the version request decodes");
#if HIPACM_ABI_VERSION < HIPACM_ABI_VERSION_ENCODE(1, 5)
#error "HIPACM_ABI_VERSION is usable in #if, and this header is ABI 1.5 or newer"
#endif
static_assert(HIPACM_ABI_VERSION_MAJOR == 1, "this test describes ABI 1");
static_assert(HIPACM_ISOLATION_AUTO == 0 && HIPACM_ISOLATION_IN_PROCESS == 1 &&
                  HIPACM_ISOLATION_PROCESS == 2,
              "isolation policy numbers are fixed");

// Every struct starts with `size_t struct_size` at offset 0.
#define HIPACM_EXPECT_SIZED(type)                                                     \
  static_assert(offsetof(type, struct_size) == 0, #type ": struct_size comes first"); \
  static_assert(std::is_same<decltype(type::struct_size), size_t>::value,             \
                #type ": struct_size is a size_t");                                   \
  static_assert(std::is_standard_layout<type>::value, #type ": a C struct");          \
  static_assert(std::is_trivially_copyable<type>::value, #type ": a C struct")
HIPACM_EXPECT_SIZED(hipacm_mode_config);
HIPACM_EXPECT_SIZED(hipacm_request);
HIPACM_EXPECT_SIZED(hipacm_kernel);
HIPACM_EXPECT_SIZED(hipacm_backend_info);
HIPACM_EXPECT_SIZED(hipacm_provider);
HIPACM_EXPECT_SIZED(hipacm_stats);
#undef HIPACM_EXPECT_SIZED

// The field types of version 1.
static_assert(std::is_same<decltype(hipacm_mode_config::max_workers), uint32_t>::value, "");
static_assert(std::is_same<decltype(hipacm_mode_config::ignore_errors), int32_t>::value, "");
static_assert(std::is_same<decltype(hipacm_mode_config::fail_fast), int32_t>::value, "");
static_assert(std::is_same<decltype(hipacm_mode_config::arch), const char*>::value, "");
static_assert(std::is_same<decltype(hipacm_request::finalize), hipacm_finalize_fn>::value, "");
static_assert(std::is_same<decltype(hipacm_request::cleanup), hipacm_cleanup_fn>::value, "");
static_assert(std::is_same<decltype(hipacm_kernel::compile_seconds), double>::value, "");
static_assert(std::is_same<decltype(hipacm_backend_info::available), int32_t>::value, "");
static_assert(std::is_same<decltype(hipacm_provider::abi_version), uint32_t>::value, "");
static_assert(std::is_same<decltype(hipacm_provider::future_wait),
                           hipacm_status (*)(hipacm_future*, int64_t)>::value,
              "");

// Where version 1 (ABI 1.0) of each struct ends: a 1.0 host passes exactly this struct_size.
#define HIPACM_FIELD_END(type, field) (offsetof(type, field) + sizeof(type::field))
constexpr size_t kModeConfigV1Size = HIPACM_FIELD_END(hipacm_mode_config, arch);
constexpr size_t kRequestV1Size = HIPACM_FIELD_END(hipacm_request, user_data);
constexpr size_t kKernelV1Size = HIPACM_FIELD_END(hipacm_kernel, compile_seconds);
constexpr size_t kBackendInfoV1Size = HIPACM_FIELD_END(hipacm_backend_info, default_arch);
constexpr size_t kProviderV1Size = HIPACM_FIELD_END(hipacm_provider, get_backend_info);
static_assert(sizeof(hipacm_mode_config) >= kModeConfigV1Size, "fields are only appended");
static_assert(sizeof(hipacm_request) >= kRequestV1Size, "fields are only appended");
static_assert(sizeof(hipacm_kernel) >= kKernelV1Size, "fields are only appended");
static_assert(sizeof(hipacm_backend_info) >= kBackendInfoV1Size, "fields are only appended");
static_assert(sizeof(hipacm_provider) >= kProviderV1Size, "fields are only appended");

// ABI 1.4: the log callback's levels and type, the counters, and the provider table's version 3.
static_assert(HIPACM_LOG_OFF == 0 && HIPACM_LOG_ERROR == 1 && HIPACM_LOG_WARNING == 2 &&
                  HIPACM_LOG_INFO == 3 && HIPACM_LOG_DEBUG == 4,
              "log levels are fixed");
static_assert(std::is_same<hipacm_log_fn, void (*)(void*, int32_t, const char*)>::value, "");
static_assert(std::is_same<decltype(hipacm_stats::compiles), uint64_t>::value, "");
static_assert(std::is_same<decltype(hipacm_stats::cached_failures), uint64_t>::value, "");
static_assert(std::is_same<decltype(hipacm_provider::set_log_callback),
                           hipacm_status (*)(hipacm_log_fn, void*, int32_t)>::value,
              "");
static_assert(
    std::is_same<decltype(hipacm_provider::get_stats), hipacm_status (*)(hipacm_stats*)>::value,
    "");
static_assert(offsetof(hipacm_provider, set_log_callback) >
                  offsetof(hipacm_provider, mode_config_init_sized),
              "appended after version 2");

// ABI 1.5: the remote cache's URL and counters, appended.
static_assert(std::is_same<decltype(hipacm_mode_config::remote_cache), const char*>::value, "");
static_assert(offsetof(hipacm_mode_config, remote_cache) >
                  offsetof(hipacm_mode_config, reserved_1_4),
              "appended after version 4");
static_assert(std::is_same<decltype(hipacm_stats::remote_waits), uint64_t>::value, "");
static_assert(offsetof(hipacm_stats, remote_hits) > offsetof(hipacm_stats, cached_failures),
              "appended after version 1");

// Fields appended in ABI 1.1.
static_assert(std::is_same<decltype(hipacm_mode_config::isolation), int32_t>::value, "");
static_assert(std::is_same<decltype(hipacm_mode_config::compile_timeout_ms), uint32_t>::value, "");
static_assert(offsetof(hipacm_mode_config, isolation) >= kModeConfigV1Size, "appended after v1");

#if defined(__LP64__) || defined(_LP64)
// The exact layouts on LP64 (x86-64, AArch64, ...). Fields are only ever appended, so these
// offsets and the version-1 sizes can never change.
static_assert(offsetof(hipacm_mode_config, max_workers) == 8, "");
static_assert(offsetof(hipacm_mode_config, ignore_errors) == 12, "");
static_assert(offsetof(hipacm_mode_config, fail_fast) == 16, "");
static_assert(offsetof(hipacm_mode_config, arch) == 24, "");
static_assert(kModeConfigV1Size == 32, "");
static_assert(offsetof(hipacm_mode_config, isolation) == 32, "ABI 1.1");
static_assert(offsetof(hipacm_mode_config, compile_timeout_ms) == 36, "ABI 1.1");

// Each struct's fields after struct_size lie 8 bytes apart: the index of the first that does not
// (counting from the field at offset 8), or -1.
template <typename... Offsets>
constexpr int first_misplaced(Offsets... offsets) {
  size_t expected = 8;
  int index = 0;
  for (const size_t offset : {size_t{offsets}...}) {
    if (offset != expected) return index;
    expected += 8;
    ++index;
  }
  return -1;
}
#define HIPACM_AT(type, field) offsetof(hipacm_##type, field)
static_assert(first_misplaced(HIPACM_AT(request, key), HIPACM_AT(request, source),
                              HIPACM_AT(request, source_name), HIPACM_AT(request, options),
                              HIPACM_AT(request, num_options), HIPACM_AT(request, header_sources),
                              HIPACM_AT(request, header_names), HIPACM_AT(request, num_headers),
                              HIPACM_AT(request, name_expressions),
                              HIPACM_AT(request, num_name_expressions),
                              HIPACM_AT(request, finalize), HIPACM_AT(request, cleanup),
                              HIPACM_AT(request, user_data)) == -1,
              "hipacm_request");
static_assert(kRequestV1Size == 112, "");

static_assert(first_misplaced(HIPACM_AT(kernel, key), HIPACM_AT(kernel, code),
                              HIPACM_AT(kernel, code_size), HIPACM_AT(kernel, log),
                              HIPACM_AT(kernel, arch), HIPACM_AT(kernel, lowered_names),
                              HIPACM_AT(kernel, num_lowered_names),
                              HIPACM_AT(kernel, compile_seconds)) == -1,
              "hipacm_kernel");
static_assert(kKernelV1Size == 72, "");

static_assert(first_misplaced(HIPACM_AT(backend_info, available), HIPACM_AT(backend_info, compiler),
                              HIPACM_AT(backend_info, version),
                              HIPACM_AT(backend_info, library_path),
                              HIPACM_AT(backend_info, default_arch)) == -1,
              "hipacm_backend_info");
static_assert(kBackendInfoV1Size == 48, "");

static_assert(
    first_misplaced(HIPACM_AT(provider, abi_version), HIPACM_AT(provider, name),
                    HIPACM_AT(provider, version), HIPACM_AT(provider, mode_config_init),
                    HIPACM_AT(provider, mode_enter), HIPACM_AT(provider, mode_exit),
                    HIPACM_AT(provider, active_mode), HIPACM_AT(provider, submit),
                    HIPACM_AT(provider, compile), HIPACM_AT(provider, future_wait),
                    HIPACM_AT(provider, future_status), HIPACM_AT(provider, future_result),
                    HIPACM_AT(provider, future_key), HIPACM_AT(provider, future_log),
                    HIPACM_AT(provider, future_error_message), HIPACM_AT(provider, future_retain),
                    HIPACM_AT(provider, future_release), HIPACM_AT(provider, status_string),
                    HIPACM_AT(provider, last_error_message),
                    HIPACM_AT(provider, get_backend_info)) == -1,
    "hipacm_provider");
#undef HIPACM_AT
static_assert(kProviderV1Size == 168, "");
static_assert(offsetof(hipacm_provider, mode_config_init_sized) == 168, "ABI 1.1");
static_assert(offsetof(hipacm_provider, set_log_callback) == 176, "ABI 1.4");
static_assert(offsetof(hipacm_provider, get_stats) == 184, "ABI 1.4");
static_assert(sizeof(hipacm_provider) == 192, "");

// hipacm_stats: twelve 64-bit counters (ABI 1.4), then eight (ABI 1.5), 8 bytes apart.
static_assert(
    first_misplaced(offsetof(hipacm_stats, compiles), offsetof(hipacm_stats, compile_failures),
                    offsetof(hipacm_stats, cache_hits), offsetof(hipacm_stats, cache_misses),
                    offsetof(hipacm_stats, cache_stores), offsetof(hipacm_stats, bytes_stored),
                    offsetof(hipacm_stats, cache_evictions), offsetof(hipacm_stats, bytes_evicted),
                    offsetof(hipacm_stats, worker_spawns), offsetof(hipacm_stats, worker_crashes),
                    offsetof(hipacm_stats, timeouts), offsetof(hipacm_stats, cached_failures),
                    // ABI 1.5: version 2, the remote cache's eight.
                    offsetof(hipacm_stats, remote_hits), offsetof(hipacm_stats, remote_misses),
                    offsetof(hipacm_stats, remote_refused), offsetof(hipacm_stats, remote_stores),
                    offsetof(hipacm_stats, remote_duplicates),
                    offsetof(hipacm_stats, remote_store_failures),
                    offsetof(hipacm_stats, remote_errors),
                    offsetof(hipacm_stats, remote_waits)) == -1,
    "hipacm_stats");
static_assert(offsetof(hipacm_stats, remote_hits) == 104, "version 1 (ABI 1.4) ends at 104");
static_assert(sizeof(hipacm_stats) == 168, "");

// hipacm_mode_config's version 4 (ABI 1.4) follows version 3 without tail padding.
static_assert(offsetof(hipacm_mode_config, cache_failures) == 56, "ABI 1.4");
static_assert(offsetof(hipacm_mode_config, reserved_1_4) == 60, "ABI 1.4");
// Version 5 (ABI 1.5) follows version 4 without padding.
static_assert(offsetof(hipacm_mode_config, remote_cache) == 64, "ABI 1.5");
static_assert(sizeof(hipacm_mode_config) == 72, "");
#endif

constexpr const char* kVectorAdd =
    "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

// True when a compiler backend is there; tests that compile skip otherwise.
bool backend_available() {
  hipacm_backend_info info{};
  info.struct_size = sizeof(info);
  return hipacm_get_backend_info(&info) == HIPACM_SUCCESS && info.available != 0;
}

// ---- Run-time checks against the linked libhipacm.so.1. ----

TEST(HeaderCxx, StatusNumbersAreTheFixedValues) {
  for (int i = 0; i < kStatusCount; ++i) EXPECT_EQ(static_cast<int>(kStatusesInOrder[i]), i);
}

TEST(HeaderCxx, EveryStatusHasItsOwnStaticString) {
  std::set<std::string> seen;
  for (const hipacm_status status : kStatusesInOrder) {
    const int i = static_cast<int>(status);
    const char* s = hipacm_status_string(status);
    ASSERT_NE(s, nullptr) << "status " << i;
    EXPECT_STRNE(s, "") << "status " << i;
    EXPECT_EQ(s, hipacm_status_string(status)) << "status strings are static";
    EXPECT_TRUE(seen.insert(s).second) << "status " << i << " shares the string '" << s << "'";
  }
  EXPECT_NE(std::string(hipacm_status_string(HIPACM_SUCCESS)).find("SUCCESS"), std::string::npos);
}

TEST(HeaderCxx, StatusStringIsNeverNullForUnknownValues) {
  std::set<std::string> known;
  for (const hipacm_status status : kStatusesInOrder) known.insert(hipacm_status_string(status));
  for (int value : {-1, 14, 1000, -2147483647 - 1, 2147483647}) {
    const char* s = hipacm_abi_probe_status_string(value);
    ASSERT_NE(s, nullptr) << "value " << value;
    EXPECT_STRNE(s, "") << "value " << value;
    EXPECT_EQ(known.count(s), 0u) << "unknown value " << value << " reads as '" << s << "'";
  }
}

TEST(HeaderCxx, LastErrorMessageIsNeverNullAndThreadLocal) {
  // A thread that has made no failing call.
  const char* fresh = reinterpret_cast<const char*>(1);
  std::thread([&] { fresh = hipacm_last_error_message(); }).join();
  EXPECT_NE(fresh, nullptr);

  EXPECT_NE(hipacm_last_error_message(), nullptr);
  ASSERT_EQ(hipacm_mode_enter(nullptr, nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  const char* message = hipacm_last_error_message();
  ASSERT_NE(message, nullptr);
  EXPECT_STRNE(message, "");
  const std::string main_message = message;

  // The message belongs to the failing thread only.
  std::string other_message = "unset";
  std::thread([&] {
    const char* m = hipacm_last_error_message();
    other_message = m == nullptr ? "NULL" : m;
  }).join();
  EXPECT_NE(other_message, "NULL");
  EXPECT_NE(other_message, main_message);

  ASSERT_EQ(hipacm_future_retain(nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  ASSERT_NE(hipacm_last_error_message(), nullptr);
  EXPECT_STRNE(hipacm_last_error_message(), "");
}

TEST(HeaderCxx, ProviderTableMatchesTheHeader) {
  const hipacm_provider* p = hipacm_get_provider(HIPACM_ABI_VERSION);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(p->struct_size, sizeof(hipacm_provider));
  EXPECT_EQ(p->abi_version, static_cast<uint32_t>(HIPACM_ABI_VERSION));
  ASSERT_NE(p->name, nullptr);
  EXPECT_STREQ(p->name, "hipacm");
  ASSERT_NE(p->version, nullptr);
  EXPECT_STREQ(p->version, HIPACM_VERSION_STRING);
  EXPECT_EQ(hipacm_get_provider(HIPACM_ABI_VERSION), p) << "the table is static";
  EXPECT_EQ(hipacm_get_provider(0), nullptr);
  EXPECT_EQ(hipacm_get_provider(HIPACM_ABI_VERSION_ENCODE(2, 0)), nullptr);
  EXPECT_EQ(hipacm_get_provider(UINT32_MAX), nullptr);
  // A minor newer than the plugin's gets the newest table, which says what it granted.
  EXPECT_EQ(hipacm_get_provider(HIPACM_ABI_VERSION + 1), p);
  ASSERT_NE(p->status_string, nullptr);
  EXPECT_STREQ(p->status_string(HIPACM_ERROR_TIMEOUT), hipacm_status_string(HIPACM_ERROR_TIMEOUT));
}

TEST(HeaderCxx, AbiOneZeroInitWritesOnlyVersionOne) {
  // The exported 1.0 entry point, as a binary built against the 1.0 header
  // calls it: it must not touch the fields appended in 1.1.
  hipacm_mode_config cfg;
  std::memset(&cfg, 0xA5, sizeof(cfg));
  (hipacm_mode_config_init)(&cfg);
  EXPECT_EQ(cfg.struct_size, kModeConfigV1Size);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&cfg);
  for (size_t i = kModeConfigV1Size; i < sizeof(cfg); ++i)
    EXPECT_EQ(bytes[i], 0xA5) << "byte " << i << " past version 1 was written";
}

TEST(HeaderCxx, ModeConfigInitSetsStructSizeAndIgnoresNull) {
  (hipacm_mode_config_init)(nullptr);
  hipacm_mode_config_init_sized(nullptr, sizeof(hipacm_mode_config));
  hipacm_mode_config cfg;
  std::memset(&cfg, 0xA5, sizeof(cfg));
  hipacm_mode_config_init(&cfg);
  EXPECT_EQ(cfg.struct_size, sizeof(hipacm_mode_config));
  EXPECT_EQ(cfg.arch, nullptr) << "the default arch is NULL ($HIPACM_ARCH, then the device)";
  EXPECT_EQ(cfg.isolation, HIPACM_ISOLATION_AUTO) << "AUTO is the documented default";
}

TEST(HeaderCxx, TooSmallStructSizesAreAbiMismatch) {
  EXPECT_EQ(hipacm_active_mode(), nullptr);

  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  cfg.arch = "gfx90a";
  for (size_t size : {size_t{0}, size_t{1}, kModeConfigV1Size - 1}) {
    cfg.struct_size = size;
    hipacm_mode* mode = reinterpret_cast<hipacm_mode*>(1);
    EXPECT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_ERROR_ABI_MISMATCH) << "size " << size;
    EXPECT_EQ(hipacm_active_mode(), nullptr);
    EXPECT_STRNE(hipacm_last_error_message(), "");
  }

  hipacm_request req{};
  req.source = kVectorAdd;
  for (size_t size : {size_t{0}, kRequestV1Size - 1}) {
    req.struct_size = size;
    hipacm_future* f = nullptr;
    EXPECT_EQ(hipacm_compile(&req, "gfx90a", &f), HIPACM_ERROR_ABI_MISMATCH) << "size " << size;
    if (f != nullptr) hipacm_future_release(f);
  }

  hipacm_backend_info info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = kBackendInfoV1Size - 1;
  EXPECT_EQ(hipacm_get_backend_info(&info), HIPACM_ERROR_ABI_MISMATCH);
}

TEST(HeaderCxx, BackendInfoStringsAreNeverNull) {
  hipacm_backend_info info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  const hipacm_status status = hipacm_get_backend_info(&info);
  EXPECT_TRUE(status == HIPACM_SUCCESS || status == HIPACM_ERROR_BACKEND_UNAVAILABLE)
      << hipacm_status_string(status);
  EXPECT_EQ(status == HIPACM_SUCCESS, info.available != 0);
  EXPECT_NE(info.compiler, nullptr);
  EXPECT_NE(info.version, nullptr);
  EXPECT_NE(info.library_path, nullptr);
  EXPECT_NE(info.default_arch, nullptr);
}

TEST(HeaderCxx, BadHandlesGiveInvalidArgumentAndEmptyStrings) {
  EXPECT_EQ(hipacm_future_retain(nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_release(nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_wait(nullptr, 0), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_status(nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_result(nullptr, nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(hipacm_future_key(nullptr), "");
  EXPECT_STREQ(hipacm_future_log(nullptr), "");
  EXPECT_STREQ(hipacm_future_error_message(nullptr), "");
  EXPECT_EQ(hipacm_mode_exit(nullptr, nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  hipacm_future* first_failure = reinterpret_cast<hipacm_future*>(1);
  EXPECT_EQ(hipacm_mode_exit(nullptr, &first_failure), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(first_failure, nullptr);
  EXPECT_EQ(hipacm_submit(nullptr, nullptr, nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
}

// A caller built against a newer header passes bigger structs; v1 ignores the unknown tail.
struct RequestV2 {
  hipacm_request v1;
  unsigned char future_fields[64];
};
struct ModeConfigV2 {
  hipacm_mode_config v1;
  unsigned char future_fields[64];
};

int count_call(void* user_data, hipacm_future*) {
  ++*static_cast<int*>(user_data);
  return 0;
}

TEST(HeaderCxx, LargerStructSizesAreAccepted) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";

  RequestV2 req;
  std::memset(&req, 0xA5, sizeof(req));  // the tail is garbage to a v1 plugin
  req.v1 = hipacm_request{};
  req.v1.struct_size = sizeof(req);
  req.v1.source = kVectorAdd;
  int finalized = 0;
  req.v1.finalize = count_call;
  req.v1.user_data = &finalized;

  hipacm_future* f = nullptr;
  ASSERT_EQ(hipacm_compile(&req.v1, "gfx90a", &f), HIPACM_SUCCESS) << hipacm_last_error_message();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(finalized, 0) << "hipacm_compile runs the callbacks at hipacm_future_result";
  const hipacm_kernel* kernel = nullptr;
  ASSERT_EQ(hipacm_future_result(f, &kernel), HIPACM_SUCCESS);
  EXPECT_EQ(finalized, 1);
  ASSERT_NE(kernel, nullptr);
  EXPECT_GE(kernel->struct_size, sizeof(hipacm_kernel));
  EXPECT_GT(kernel->code_size, 0u);
  EXPECT_EQ(hipacm_future_result(f, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(finalized, 1) << "finalize runs exactly once";
  EXPECT_EQ(hipacm_future_release(f), HIPACM_SUCCESS);

  ModeConfigV2 cfg;
  std::memset(&cfg, 0xA5, sizeof(cfg));
  hipacm_mode_config_init(&cfg.v1);
  cfg.v1.struct_size = sizeof(cfg);
  cfg.v1.arch = "gfx90a";
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg.v1, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  EXPECT_EQ(hipacm_active_mode(), mode);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(hipacm_active_mode(), nullptr);
}

// A host built against ABI 1.0 passes the version-1 struct_size: whatever lies past it is not
// the host's (here: garbage) and must be ignored, with those fields taking their defaults.
TEST(HeaderCxx, VersionOneSizedModeConfigIsAcceptedAndTheTailIgnored) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";
  hipacm_mode_config cfg;
  std::memset(&cfg, 0xA5, sizeof(cfg));
  cfg.struct_size = kModeConfigV1Size;
  cfg.max_workers = 1;
  cfg.ignore_errors = 0;
  cfg.fail_fast = 0;
  cfg.arch = "gfx90a";
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  EXPECT_EQ(hipacm_active_mode(), mode);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(hipacm_active_mode(), nullptr);
}

}  // namespace
