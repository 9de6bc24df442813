// SPDX-License-Identifier: MIT
// trust_sandbox_test.cpp - names stay inside the compiler's directory; environment reads.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/process/private_temp_dir.h"
#include "hip_backend/source_name_policy.h"
#include "support/environment.h"
#include "test_support.h"

namespace hipacm::test {
namespace {

namespace fs = std::filesystem;

std::string last_error() { return hipacm_last_error_message(); }

/// One synchronous compile of `source` with the given virtual headers.
struct NamedCompile {
  std::vector<std::string> names;
  std::vector<std::string> contents;
  std::optional<std::string> source_name;
  std::string source = vadd_source();

  hipacm_status run(std::string* message = nullptr) {
    std::vector<const char*> name_ptrs, content_ptrs;
    for (const std::string& n : names) name_ptrs.push_back(n.c_str());
    for (const std::string& c : contents) content_ptrs.push_back(c.c_str());
    hipacm_request req{};
    req.struct_size = sizeof req;
    req.source = source.c_str();
    req.source_name = source_name ? source_name->c_str() : nullptr;
    req.header_names = name_ptrs.data();
    req.header_sources = content_ptrs.data();
    req.num_headers = names.size();
    hipacm_future* f = nullptr;
    const hipacm_status status = hipacm_compile(&req, kArch, &f);
    if (message) *message = f ? hipacm_future_error_message(f) : last_error();
    if (f) hipacm_future_release(f);
    return status;
  }
};

/// A fresh directory that the test sets as TMPDIR for its duration.
class ScratchTmpdir {
 public:
  ScratchTmpdir() {
    std::string pattern = fs::temp_directory_path().string() + "/hipacm-trust-XXXXXX";
    path_ = mkdtemp(pattern.data());
    if (const char* old = getenv("TMPDIR")) old_ = old;
    setenv("TMPDIR", path_.c_str(), 1);
  }
  ~ScratchTmpdir() {
    if (old_) {
      setenv("TMPDIR", old_->c_str(), 1);
    } else {
      unsetenv("TMPDIR");
    }
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::optional<std::string> old_;
};

TEST(Trust01_HeaderNames, DotDotComponentIsRefused) {
  ScratchTmpdir tmp;
  const std::string victim = tmp.path() + "/victim.txt";
  NamedCompile c;
  c.names = {"../../victim.txt"};
  c.contents = {"overwritten\n"};
  std::string message;
  EXPECT_EQ(c.run(&message), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("request.header_names[0]"), std::string::npos) << message;
  EXPECT_NE(message.find("'..'"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(victim)) << "the header escaped the compiler's directory";
}

TEST(Trust01_HeaderNames, EveryEscapingOrOddNameIsRefusedWithItsReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/etc/passwd", "absolute"},
      {"a/../../b.h", "'..'"},
      {"..", "'..'"},
      {".", "'.'"},
      {"a/./b.h", "'.'"},
      {"a//b.h", "empty path component"},
      {"detail/", "ends with '/'"},
      {"a b.h", "byte 0x20 at offset 1"},
      {"a\\b.h", "byte 0x5c"},
      {"na\xc3\xafve.h", "byte 0xc3"},
      {"x\ny.h", "byte 0x0a"},
      {"~/x.h", "byte 0x7e"},
      {std::string(256, 'a'), "path component of 256 bytes"},
      {std::string(600, 'a') + "/" + std::string(600, 'b'), "1201 bytes long"},
  };
  for (const auto& [name, reason] : cases) {
    NamedCompile c;
    c.names = {"ok.h", name};
    c.contents = {"", ""};
    std::string message;
    EXPECT_EQ(c.run(&message), HIPACM_ERROR_INVALID_ARGUMENT) << name;
    EXPECT_NE(message.find("request.header_names[1]"), std::string::npos) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << name << ": " << message;
    // Bytes outside the allowed set never reach the message.
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Trust01_HeaderNames, SubdirectoriesAndLongestNamesStayValid) {
  NamedCompile c;
  c.source = "#include \"detail/math+ops@v2.h\"\n#include \"" + std::string(255, 'h') + "\"\n" +
             vadd_source();
  c.names = {"detail/math+ops@v2.h", std::string(255, 'h')};
  c.contents = {"#define SCALE 2.0f\n", "#define OTHER 1\n"};
  std::string message;
  EXPECT_EQ(c.run(&message), HIPACM_SUCCESS) << message;

  const std::string longest = std::string(255, 'a') + "/" + std::string(255, 'b') + "/" +
                              std::string(255, 'c') + "/" + std::string(256, 'd').substr(0, 255);
  EXPECT_EQ(longest.size(), 1023u);
  for (const std::string& name : {longest, std::string("x.h"), std::string("-._+@")}) {
    const Expected<void> allowed = backend::source_name_allowed(name);
    EXPECT_TRUE(allowed) << allowed.failure().message;
  }
}

TEST(Trust01_SourceName, EscapingSourceNameIsRefused) {
  for (const std::string name : {"../kernel.hip", "/tmp/kernel.hip", "k\x01.hip"}) {
    NamedCompile c;
    c.source_name = name;
    std::string message;
    EXPECT_EQ(c.run(&message), HIPACM_ERROR_INVALID_ARGUMENT) << name;
    EXPECT_NE(message.find("request.source_name"), std::string::npos) << message;
  }
  NamedCompile nested;
  nested.source_name = "kernels/vadd.hip";
  std::string message;
  EXPECT_EQ(nested.run(&message), HIPACM_SUCCESS) << message;
}

TEST(Trust01_SourceName, TheWorkerSidePolicyNamesTheField) {
  backend::CompileRequest request;
  request.source = vadd_source();
  request.headers = {{"fine.h", ""}, {"../up.h", ""}};
  Expected<void> allowed = backend::request_names_allowed(request);
  std::string why = allowed.failure().message;
  EXPECT_FALSE(allowed);
  EXPECT_NE(why.find("header_names[1]"), std::string::npos) << why;
  request.headers.pop_back();
  allowed = backend::request_names_allowed(request);
  why = allowed.failure().message;
  EXPECT_TRUE(allowed) << why;
  request.source_name = "/abs.hip";
  allowed = backend::request_names_allowed(request);
  why = allowed.failure().message;
  EXPECT_FALSE(allowed);
  EXPECT_EQ(why.rfind("source_name", 0), 0u) << why;
}

TEST(Trust01_PrivateTempDir, IsMode0700AndRemovalNeverFollowsLinks) {
  ScratchTmpdir tmp;
  const std::string outside = tmp.path() + "/outside";
  fs::create_directory(outside);
  std::ofstream(outside + "/keep.txt") << "keep";
  std::string dir_path;
  {
    auto created = backend::PrivateTempDir::create("hipacm-trust-case-");
    ASSERT_TRUE(created) << created.failure().message;
    std::unique_ptr<backend::PrivateTempDir> dir = std::move(created).value();
    dir_path = dir->path();
    EXPECT_EQ(dir_path.rfind(tmp.path() + "/hipacm-trust-case-", 0), 0u) << dir_path;
    struct stat st {};
    ASSERT_EQ(stat(dir_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    fs::create_directories(dir_path + "/comgr-1/include/detail");
    std::ofstream(dir_path + "/comgr-1/include/detail/a.h") << "source";
    fs::create_directory_symlink(outside, dir_path + "/comgr-1/include/link");
    fs::create_symlink(outside + "/keep.txt", dir_path + "/file-link");
    ASSERT_TRUE(backend::remove_directory_contents(dir_path));
    EXPECT_TRUE(fs::exists(dir_path));
    EXPECT_TRUE(fs::is_empty(dir_path));
    std::ofstream(dir_path + "/again.txt") << "x";
  }
  EXPECT_FALSE(fs::exists(dir_path)) << "the directory outlived its owner";
  EXPECT_TRUE(fs::exists(outside + "/keep.txt")) << "removal followed a link";
}

TEST(Trust03_Environment, ValuesPassThroughAndEmptyCountsAsUnset) {
  setenv("HIPACM_TRUST03_PROBE", "a value=with equals", 1);
  EXPECT_EQ(backend::environment_value("HIPACM_TRUST03_PROBE"), "a value=with equals");
  setenv("HIPACM_TRUST03_PROBE", "", 1);
  EXPECT_EQ(backend::environment_value("HIPACM_TRUST03_PROBE"), std::nullopt);
  unsetenv("HIPACM_TRUST03_PROBE");
  EXPECT_EQ(backend::environment_value("HIPACM_TRUST03_PROBE"), std::nullopt);
  // This test process is not setuid; in one that is, nothing would pass.
  EXPECT_FALSE(backend::privileged_process());
}

TEST(Trust03_Environment, AWorkerGetsTheHostEnvironmentWithItsOwnTmpdir) {
  ScratchTmpdir tmp;
  setenv("HIPACM_TRUST03_PROBE", "kept", 1);
  const std::vector<std::string> env = backend::worker_environment("/private/dir");
  unsetenv("HIPACM_TRUST03_PROBE");
  EXPECT_EQ(std::count(env.begin(), env.end(), "TMPDIR=/private/dir"), 1);
  EXPECT_EQ(std::count_if(env.begin(), env.end(),
                          [](const std::string& e) { return e.rfind("TMPDIR=", 0) == 0; }),
            1);
  EXPECT_EQ(std::count(env.begin(), env.end(), "HIPACM_TRUST03_PROBE=kept"), 1);
}

}  // namespace
}  // namespace hipacm::test
