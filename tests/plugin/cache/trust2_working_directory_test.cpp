// SPDX-License-Identifier: MIT
// trust2_working_directory_test.cpp - a compile's working directory is not an input: a PCH of
// hipRTC's runtime header made by hipRTC itself (with `#define threadIdx blockIdx`), a `.gch` and
// a junk file, each planted in the host's working directory, change nothing a worker compiles and
// put nothing in the cache; in-process, where the host cannot leave the directory, nothing is
// stored; and a relative -I still means what it meant, under the absolute path's key.
#include <gtest/gtest.h>
#include <hipacm/hipacm.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/hiprtc/inprocess_compiler.h"
#include "hip_backend/hiprtc/rocm_toolchain.h"
#include "hip_backend/pch/runtime_header_pch_file.h"
#include "hip_backend/pool/worker_pool.h"
#include "plugin/cache/cache_admin.h"
#include "plugin/cache/key/path_options.h"
#include "support/libraries/dynamic_library.h"
#include "support/libraries/loaded_objects.h"
#include "tests/plugin/cache/cache_test_support.h"
#include "tests/scoped_env.h"

extern char** environ;

namespace hipacm::cache_test {
namespace {

namespace fs = std::filesystem;
using test::ScopedEnv;

// The poison: every `threadIdx` in a kernel that includes hipRTC's header through this PCH reads
// `blockIdx` instead.
constexpr const char* kPoison = "#define threadIdx blockIdx\n";

const std::string kSaxpy =
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// The helper the tests run in a process of its own (comgr reads AMD_COMGR_SAVE_TEMPS once, at its
// first use); skipped otherwise. hipRTC's first step compiles `kPoison` with its own options and
// `-include hiprtc_runtime.h`, and -emit-pch makes that step's output a PCH of the real runtime
// header with the poison after it: the PCH a user gets from hipRTC itself.
TEST(Trust2_01_Helper, EmitPoisonedRuntimeHeaderPch) {
  const char* out = std::getenv("HIPACM_TRUST2_PCH_OUT");
  const char* temp = std::getenv("TMPDIR");
  if (out == nullptr || temp == nullptr) GTEST_SKIP() << "run by Trust2_01_WorkingDirectory.*";
  const auto loaded = backend::load_hiprtc();
  ASSERT_TRUE(loaded) << loaded.failure().message;
  const backend::HiprtcApi* api = loaded.value();
  backend::CompileRequest alone;
  alone.source = kPoison;
  alone.source_name = "pch.hip";
  alone.arch = kArch;
  std::vector<std::string> options = backend::hiprtc_compile_options(alone);
  for (const char* flag : {"-emit-pch", "-fmodules-embed-all-files", "-fno-pch-timestamp"}) {
    options.push_back("-Xclang");
    options.push_back(flag);
  }
  std::vector<const char*> argv;
  for (const std::string& option : options) argv.push_back(option.c_str());
  backend::hiprtc_program program = nullptr;
  ASSERT_EQ(api->hiprtcCreateProgram(&program, kPoison, "pch.hip", 0, nullptr, nullptr), 0);
  // Fails by design once the steps after the first meet a PCH instead of bitcode.
  api->hiprtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  api->hiprtcDestroyProgram(&program);
  int found = 0;
  for (const auto& action : fs::directory_iterator(temp)) {
    std::error_code ec;
    for (const auto& file : fs::directory_iterator(action.path() / "output", ec)) {
      std::vector<std::uint8_t> bytes = read_bytes(file.path().string());
      if (bytes.size() > 4 && std::equal(bytes.begin(), bytes.begin() + 4, backend::kPchMagic)) {
        write_bytes(out, bytes);
        ++found;
      }
    }
  }
  ASSERT_EQ(found, 1) << "hipRTC's first step left no single PCH in " << temp;
  // Nothing of hipRTC's teardown (or a leak checker's report on what it keeps) decides the
  // helper's exit code.
  std::fflush(nullptr);
  _exit(::testing::Test::HasFailure() ? 1 : 0);
}

/// Whether this process's hipRTC is ROCm 5.2's, where the attack was shown to work: there a
/// missing PCH is a failure, elsewhere a reason to skip.
bool hiprtc_is_rocm52() {
  const auto toolchain = backend::rocm_toolchain();
  return toolchain &&
         backend::file_base_name(backend::real_file_path(toolchain.value()->hiprtc_path))
                 .rfind("libamdhip64.so.5.2", 0) == 0;
}

/// The poisoned PCH, or a skip where this hipRTC cannot make one (a fatal failure on ROCm 5.2).
#define REQUIRE_POISONED_PCH(pch)                                          \
  do {                                                                     \
    if ((pch).empty()) {                                                   \
      ASSERT_FALSE(hiprtc_is_rocm52()) << "ROCm 5.2's hipRTC made no PCH"; \
      GTEST_SKIP() << "this hipRTC emits no PCH of its runtime header";    \
    }                                                                      \
  } while (false)

/// This process in `dir` for one scope. Workers take their working directory when they start, so
/// the warm ones go: every compile below starts a worker in the directory it names.
class InDirectory {
 public:
  explicit InDirectory(const std::string& dir) : previous_(fs::current_path()) {
    backend::WorkerPool::instance().shutdown();
    fs::current_path(dir);
  }
  InDirectory(const InDirectory&) = delete;
  InDirectory& operator=(const InDirectory&) = delete;
  ~InDirectory() {
    backend::WorkerPool::instance().shutdown();
    std::error_code ec;
    fs::current_path(previous_, ec);
  }

 private:
  fs::path previous_;
};

struct Settings {
  std::int32_t isolation = HIPACM_ISOLATION_PROCESS;
  std::vector<std::string> options;
  bool cache_failures = false;
};

/// One saxpy compile through a mode on `cache_dir` with `run`'s isolation.
Outcome compile_saxpy(const std::string& cache_dir, const Settings& run) {
  CompileSpec spec;
  spec.source = kSaxpy;
  spec.options = run.options;
  spec.cache_failures = run.cache_failures;
  spec.isolation = run.isolation;
  return compile_in_mode(cache_dir, spec);
}

/// Entries and stored failures in the cache at `cache_dir`.
std::size_t stored_entries(const TempDir& cache) {
  if (!fs::exists(cache.db())) return 0;
  return cache::CacheAdmin::open(cache.db()).list().size();
}

class Trust2_01_WorkingDirectory : public CacheEnvironment {
 protected:
  void SetUp() override {
    CacheEnvironment::SetUp();
    worker_.emplace("HIPACM_WORKER", HIPACM_WORKER_BINARY);
    runtime_.emplace("HIPACM_RUNTIME_DIR", root_.path() + "/run");
    pch_setting_.emplace("HIPACM_HIPRTC_PCH", "off");
    fs::create_directory(root_.path() + "/run");
    fs::permissions(root_.path() + "/run", fs::perms::owner_all);
    for (const char* dir : {"/clean", "/planted", "/work"})
      fs::create_directory(root_.path() + dir);
  }
  void TearDown() override {
    backend::WorkerPool::instance().shutdown();
    pch_setting_.reset();
    runtime_.reset();
    worker_.reset();
    CacheEnvironment::TearDown();
  }

  std::string clean() const { return root_.path() + "/clean"; }
  std::string planted() const { return root_.path() + "/planted"; }

  /// The poisoned PCH, made once by hipRTC in a helper process.
  static const std::vector<std::uint8_t>& poisoned_pch() {
    static const std::vector<std::uint8_t> pch = [] {
      TempDir dir;
      const std::string out = dir.path() + "/poison.pch", temp = dir.path() + "/tmp";
      fs::create_directory(temp);
      const std::string binary = HIPACM_CACHE_TEST_BINARY;
      const std::string filter = "--gtest_filter=Trust2_01_Helper.EmitPoisonedRuntimeHeaderPch";
      std::vector<std::string> env = {"HIPACM_TRUST2_PCH_OUT=" + out, "TMPDIR=" + temp,
                                      "AMD_COMGR_SAVE_TEMPS=1"};
      for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry = *e;
        if (entry.rfind("TMPDIR=", 0) != 0 && entry.rfind("AMD_COMGR_SAVE_TEMPS=", 0) != 0)
          env.push_back(entry);
      }
      std::vector<char*> envp;
      for (std::string& s : env) envp.push_back(s.data());
      envp.push_back(nullptr);
      std::vector<char*> argv{const_cast<char*>(binary.c_str()), const_cast<char*>(filter.c_str()),
                              nullptr};
      pid_t pid = -1;
      int status = -1;
      if (::posix_spawn(&pid, binary.c_str(), nullptr, nullptr, argv.data(), envp.data()) == 0)
        ::waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::vector<std::uint8_t>{};
      return read_bytes(out);
    }();
    return pch;
  }

  /// The saxpy that a compile in an empty directory gives: the reference every other must equal.
  std::vector<std::uint8_t> clean_code() {
    const InDirectory in(clean());
    const backend::CompileResult plain = backend::compile_for_target(saxpy_request());
    EXPECT_EQ(plain.status, HIPACM_SUCCESS) << plain.error_message;
    return plain.code;
  }

  static backend::CompileRequest saxpy_request() {
    backend::CompileRequest request;
    request.source = kSaxpy;
    request.arch = kArch;
    return request;
  }

  /// Plants `bytes` as `name` in planted(), and says whether this hipRTC loads it from the
  /// working directory at all: an in-process compile there (which cannot leave it) differs from
  /// the clean one. Where it does not, there is nothing to defend against here.
  bool plant(const std::string& name, const std::vector<std::uint8_t>& bytes,
             const std::vector<std::uint8_t>& clean_object) {
    write_bytes(planted() + "/" + name, bytes);
    const InDirectory in(planted());
    const backend::CompileResult attacked = backend::compile_for_target(saxpy_request());
    return attacked.status != HIPACM_SUCCESS || attacked.code != clean_object;
  }

  TempDir root_;
  std::optional<ScopedEnv> worker_, runtime_, pch_setting_;
};

// A worker of this host or of the compile service (with the runtime-header PCH off, and on: its
// first compile of a key is a plain one) compiles in a directory of its own: the planted PCH
// changes no byte, and the cache serves the clean object everywhere afterwards.
TEST_F(Trust2_01_WorkingDirectory, APchMadeByHiprtcInTheHostsDirectoryReachesNoWorkerNorTheCache) {
  const std::vector<std::uint8_t>& pch = poisoned_pch();
  REQUIRE_POISONED_PCH(pch);
  const std::vector<std::uint8_t> clean_object = clean_code();
  ASSERT_FALSE(clean_object.empty());
  if (!plant(backend::kRuntimeHeaderPchName, pch, clean_object))
    GTEST_SKIP() << "this hipRTC does not load a PCH from the working directory";
  const ScopedEnv idle("HIPACM_IDLE_MS", ",2000");
  for (const char* service : {"off", "on"}) {
    for (const char* setting : {"off", "on"}) {
      SCOPED_TRACE(std::string("HIPACM_ISOLATION=service=") + service +
                   " HIPACM_HIPRTC_PCH=" + setting);
      const ScopedEnv service_setting("HIPACM_ISOLATION", std::string("service=") + service);
      const ScopedEnv pch_setting("HIPACM_HIPRTC_PCH", setting);
      TempDir cache;
      {
        const InDirectory in(planted());
        const Outcome attacked = compile_saxpy(cache.path(), {});
        ASSERT_EQ(attacked.status, HIPACM_SUCCESS) << attacked.error_message;
        EXPECT_FALSE(attacked.from_cache);
        EXPECT_EQ(attacked.code, clean_object) << "the worker compiled the planted PCH in";
      }
      const InDirectory in(clean());
      const Outcome served = compile_saxpy(cache.path(), {});
      ASSERT_EQ(served.status, HIPACM_SUCCESS) << served.error_message;
      EXPECT_TRUE(served.from_cache);
      EXPECT_EQ(served.code, clean_object) << "the cache holds a poisoned saxpy";
    }
  }
}

TEST_F(Trust2_01_WorkingDirectory, AGchInTheHostsDirectoryReachesNoWorkerNorTheCache) {
  const std::vector<std::uint8_t>& pch = poisoned_pch();
  REQUIRE_POISONED_PCH(pch);
  const std::vector<std::uint8_t> clean_object = clean_code();
  if (!plant("hiprtc_runtime.h.gch", pch, clean_object))
    GTEST_SKIP() << "this hipRTC does not load a .gch from the working directory";
  TempDir cache;
  {
    const InDirectory in(planted());
    const Outcome attacked = compile_saxpy(cache.path(), {});
    ASSERT_EQ(attacked.status, HIPACM_SUCCESS) << attacked.error_message;
    EXPECT_EQ(attacked.code, clean_object) << "the worker compiled the planted .gch in";
  }
  const InDirectory in(clean());
  const Outcome served = compile_saxpy(cache.path(), {});
  ASSERT_EQ(served.status, HIPACM_SUCCESS) << served.error_message;
  EXPECT_TRUE(served.from_cache);
  EXPECT_EQ(served.code, clean_object);
}

// A junk file fails the compile where it is loaded; with failures cached, that failure would
// then fail the kernel everywhere.
TEST_F(Trust2_01_WorkingDirectory, AJunkPchStoresNoFailure) {
  const std::vector<std::uint8_t> junk = {'j', 'u', 'n', 'k', '\n'};
  const std::vector<std::uint8_t> clean_object = clean_code();
  if (!plant(backend::kRuntimeHeaderPchName, junk, clean_object))
    GTEST_SKIP() << "this hipRTC does not load a PCH from the working directory";
  TempDir cache;
  Settings run;
  run.cache_failures = true;
  {
    const InDirectory in(planted());
    const Outcome attacked = compile_saxpy(cache.path(), run);
    EXPECT_EQ(attacked.status, HIPACM_SUCCESS) << attacked.error_message;
    EXPECT_EQ(attacked.code, clean_object);
  }
  const InDirectory in(clean());
  const Outcome later = compile_saxpy(cache.path(), run);
  ASSERT_EQ(later.status, HIPACM_SUCCESS) << "a failure was cached: " << later.error_message;
  EXPECT_EQ(later.code, clean_object);
}

// In the host's own process the directory cannot be left: what the driver may have read there
// keeps the result out of the cache (a clean entry is still served), and a failure is not stored.
TEST_F(Trust2_01_WorkingDirectory, InProcessNothingIsStoredWhileTheDirectoryHoldsOne) {
  const std::vector<std::uint8_t>& pch = poisoned_pch();
  REQUIRE_POISONED_PCH(pch);
  const std::vector<std::uint8_t> clean_object = clean_code();
  const bool loaded = plant(backend::kRuntimeHeaderPchName, pch, clean_object);
  Settings in_process;
  in_process.isolation = HIPACM_ISOLATION_IN_PROCESS;
  in_process.cache_failures = true;
  TempDir cache;
  {
    const InDirectory in(planted());
    const Outcome attacked = compile_saxpy(cache.path(), in_process);
    ASSERT_EQ(attacked.status, HIPACM_SUCCESS) << attacked.error_message;
    EXPECT_EQ(attacked.code != clean_object, loaded);
    EXPECT_EQ(stored_entries(cache), 0u) << "an in-process compile beside a PCH was stored";
    // The same with a junk file and failures cached: no failure is stored.
    write_bytes(planted() + "/" + backend::kRuntimeHeaderPchName, {'j', 'u', 'n', 'k'});
    const Outcome junk = compile_saxpy(cache.path(), in_process);
    if (loaded) {
      EXPECT_NE(junk.status, HIPACM_SUCCESS);
    }
  }
  {
    const InDirectory in(clean());
    const Outcome later = compile_saxpy(cache.path(), in_process);
    ASSERT_EQ(later.status, HIPACM_SUCCESS) << "a failure was cached: " << later.error_message;
    EXPECT_FALSE(later.from_cache) << "something was stored from the planted directory";
    EXPECT_EQ(later.code, clean_object);
    EXPECT_EQ(stored_entries(cache), 1u);
  }
  // A lookup is still served there: the stored result is the clean one.
  fs::remove(planted() + "/" + backend::kRuntimeHeaderPchName);
  write_bytes(planted() + "/hiprtc_runtime.h.gch", pch);
  const InDirectory in(planted());
  const Outcome hit = compile_saxpy(cache.path(), in_process);
  ASSERT_EQ(hit.status, HIPACM_SUCCESS) << hit.error_message;
  EXPECT_TRUE(hit.from_cache);
  EXPECT_EQ(hit.code, clean_object);
}

// A relative -I is made absolute against the host's directory before any worker sees it: it
// compiles as it did, and under the key of the absolute path.
TEST_F(Trust2_01_WorkingDirectory, ARelativeIncludeDirectoryStillWorksUnderTheAbsoluteKey) {
  const std::string work = root_.path() + "/work";
  fs::create_directory(work + "/inc");
  std::ofstream(work + "/inc/scale.h")
      << "__device__ inline float scale(float v) { return 2 * v; }\n";
  const std::string source = "#include \"scale.h\"\n" + kSaxpy;
  TempDir cache;
  const InDirectory in(work);
  const std::string absolute = fs::current_path().string() + "/inc";
  const hipacm_mode_config cfg = cache_mode_config(cache.path(), HIPACM_ISOLATION_PROCESS);
  const auto compile = [&](std::vector<std::string> options, Outcome* out) {
    hipacm_mode* mode = nullptr;
    ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS);
    test::Request req(source);
    req.with_options(std::move(options));
    hipacm_future* future = nullptr;
    ASSERT_EQ(hipacm_submit(mode, req.get(), &future), HIPACM_SUCCESS);
    const hipacm_kernel* kernel = nullptr;
    out->status = hipacm_future_result(future, &kernel);
    if (out->status == HIPACM_SUCCESS) {
      const auto* bytes = static_cast<const std::uint8_t*>(kernel->code);
      out->code.assign(bytes, bytes + kernel->code_size);
      out->from_cache = kernel->from_cache != 0;
    } else {
      out->error_message = hipacm_future_error_message(future);
    }
    hipacm_future_release(future);
    hipacm_mode_exit(mode, nullptr);
  };
  Outcome first, joined, separate;
  ASSERT_NO_FATAL_FAILURE(compile({"-Iinc"}, &first));
  ASSERT_EQ(first.status, HIPACM_SUCCESS) << first.error_message;
  EXPECT_FALSE(first.from_cache);
  ASSERT_NO_FATAL_FAILURE(compile({"-I" + absolute}, &joined));
  ASSERT_EQ(joined.status, HIPACM_SUCCESS) << joined.error_message;
  EXPECT_TRUE(joined.from_cache) << "the relative -I was keyed apart from its absolute path";
  EXPECT_EQ(joined.code, first.code);
  ASSERT_NO_FATAL_FAILURE(compile({"-I", "inc"}, &separate));
  ASSERT_EQ(separate.status, HIPACM_SUCCESS) << separate.error_message;
  EXPECT_FALSE(separate.from_cache) << "'-I' 'inc' is two options, another key";
  EXPECT_EQ(separate.code, first.code);
}

// Which options are paths: every relative one anchored, everything else left byte for byte.
TEST(Trust2_01_PathOptions, RelativePathsAreAnchoredAndNothingElseChanges) {
  TempDir dir;
  std::ofstream(dir.path() + "/forced.h") << "\n";
  const InDirectory in(dir.path());
  const std::string here = fs::current_path().string();
  std::vector<std::string> options = {
      "-Iinc",
      "-I",
      "inc",
      "-isystem=sys",
      "--include-path=nv",
      "-include",
      "forced.h",
      "-include",
      "absent.h",
      "-fsanitize-ignorelist=list.txt",
      "@args.rsp",
      "-B",
      "bin",
      "--config-system-dir=cfg",
      "--config",
      "plain.cfg",
      "--config",
      "sub/x.cfg",
  };
  // These name no path of the working directory (or none it may anchor): they stay as they are.
  const std::vector<std::string> kept = {
      "-I-",     "-DX=inc/y",     "-D",     "inc", "-Xclang",  "-include-pch",  "-Xclang",
      "rel.pch", "-fprofile-use", "-I/abs", "-O3", " -Ispace", "-fprofile-use="};
  options.insert(options.end(), kept.begin(), kept.end());
  const Expected<void> anchored = cache::anchor_relative_paths(&options);
  ASSERT_TRUE(anchored) << anchored.failure().message;
  std::vector<std::string> expected = {
      "-I" + here + "/inc",
      "-I",
      here + "/inc",
      "-isystem=" + here + "/sys",
      "--include-path=" + here + "/nv",
      "-include",
      here + "/forced.h",
      "-include",
      "absent.h",
      "-fsanitize-ignorelist=" + here + "/list.txt",
      "@" + here + "/args.rsp",
      "-B",
      here + "/bin",
      "--config-system-dir=cfg",
      "--config",
      "plain.cfg",
      "--config",
      here + "/sub/x.cfg",
  };
  expected.insert(expected.end(), kept.begin(), kept.end());
  EXPECT_EQ(options, expected);
  std::vector<std::string> clean = {"-O3", "-I/abs/inc", "-DN=4", "--offload-arch=gfx90a"};
  const std::vector<std::string> before = clean;
  ASSERT_TRUE(cache::anchor_relative_paths(&clean));
  EXPECT_EQ(clean, before);
}

}  // namespace
}  // namespace hipacm::cache_test
