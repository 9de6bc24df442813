// SPDX-License-Identifier: MIT
// request_recorder_test.cpp - $HIPACM_RECORD: real compiles recorded with their exact fields, once,
// whole lines under threads and forks, 0600, cache hits too, and a failing file never fails a
// compile.
#include <hipacm/hipacm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "plugin/mode/record_format.h"
#include "plugin/mode/request_recorder.h"
#include "tests/plugin/plugin_test_support.h"

namespace hipacm::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

/// A fresh directory, removed with everything in it; HIPACM_RECORD names a file in it meanwhile.
class RecordDir {
 public:
  RecordDir() {
    std::string pattern = (fs::temp_directory_path() / "hipacm-record-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
    file_ = (fs::path(dir_) / "requests.jsonl").string();
    record_to(file_);
  }
  RecordDir(const RecordDir&) = delete;
  RecordDir& operator=(const RecordDir&) = delete;
  ~RecordDir() {
    ::unsetenv("HIPACM_RECORD");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static void record_to(const std::string& file) { ::setenv("HIPACM_RECORD", file.c_str(), 1); }
  const std::string& file() const { return file_; }
  std::string dir() const { return dir_; }

 private:
  std::string dir_;
  std::string file_;
};

std::string read_all(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Every line of `file`, each parsed; fails the test on a line that is not a whole JSON object.
std::vector<Json> read_records(const std::string& file) {
  const std::string text = read_all(file);
  std::vector<Json> records;
  if (text.empty()) return records;
  EXPECT_EQ(text.back(), '\n') << "the file ends inside a line";
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    Json record = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(record.is_object()) << "not a whole record: " << line.substr(0, 200);
    if (record.is_object()) records.push_back(std::move(record));
  }
  return records;
}

/// The fields a record must carry for `request` compiled for `arch`.
Json expected_record(const Request& request, const std::string& arch) {
  Json headers = Json::array();
  for (const auto& [name, source] : request.headers)
    headers.push_back({{"name", name}, {"source", source}});
  return {{"schema", kRecordSchema},
          {"arch", arch},
          {"source_name", request.source_name.empty() ? "kernel.hip" : request.source_name},
          {"options", request.options},
          {"name_expressions", request.names},
          {"headers", headers},
          {"source", request.source}};
}

hipacm_mode_config mode_config(const char* cache_dir, int32_t cache_policy) {
  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  cfg.max_workers = 2;
  cfg.arch = nullptr;  // $HIPACM_ARCH: the record must name the mode's resolved arch
  cfg.cache_dir = cache_dir;
  cfg.cache_policy = cache_policy;
  return cfg;
}

/// Submits every request to one mode, waits for all, and returns each kernel's from_cache.
std::vector<int> compile_in_mode(std::vector<Request>& requests, const hipacm_mode_config& cfg) {
  hipacm_mode* mode = nullptr;
  EXPECT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  std::vector<hipacm_future*> futures;
  for (Request& request : requests) {
    hipacm_future* f = nullptr;
    EXPECT_EQ(hipacm_submit(mode, request.get(), &f), HIPACM_SUCCESS)
        << hipacm_last_error_message();
    futures.push_back(f);
  }
  std::vector<int> from_cache;
  for (hipacm_future* f : futures) {
    const hipacm_kernel* kernel = nullptr;
    EXPECT_EQ(hipacm_future_result(f, &kernel), HIPACM_SUCCESS) << hipacm_future_error_message(f);
    from_cache.push_back(kernel != nullptr ? kernel->from_cache : -1);
    hipacm_future_release(f);
  }
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  return from_cache;
}

std::vector<Request> sample_requests() {
  std::vector<Request> requests;
  requests.emplace_back(vadd_source("recorded_plain"));
  Request with_everything(kTemplatedSource);
  with_everything.source = "#include \"scale_kind.h\"\n" + with_everything.source;
  with_everything.source_name = "scale.hip";
  with_everything.headers = {{"scale_kind.h", "#define SCALE_KIND 2\n"},
                             {"unused/extra.h", "// \"quoted\" \\ and a tab\there\n"}};
  with_everything.with_options({"-O2", "-DRECORD_TEST=1"});
  with_everything.with_name_expressions({"scale<float>", "scale<double>"});
  requests.push_back(std::move(with_everything));
  Request keyed(vadd_source("recorded_keyed"), "host-chosen-key");
  keyed.with_options({"-DKEYED"});
  requests.push_back(std::move(keyed));
  return requests;
}

std::string current_arch() {
  const char* arch = std::getenv("HIPACM_ARCH");
  return arch != nullptr ? arch : kArch;
}

TEST(RequestRecorder, RecordsEverySubmittedAndCompiledRequestOnceWithItsFields) {
  RecordDir record;
  std::vector<Request> requests = sample_requests();
  compile_in_mode(requests, mode_config(nullptr, HIPACM_CACHE_OFF));
  // The same requests again in a second mode: already recorded by this process.
  compile_in_mode(requests, mode_config(nullptr, HIPACM_CACHE_OFF));

  // hipacm_compile records the arch it was given.
  Request synchronous(vadd_source("recorded_sync"));
  synchronous.source_name = "sync.hip";
  hipacm_future* f = nullptr;
  ASSERT_EQ(hipacm_compile(synchronous.get(), "gfx90a", &f), HIPACM_SUCCESS)
      << hipacm_last_error_message();
  hipacm_future_release(f);

  const std::vector<Json> records = read_records(record.file());
  ASSERT_EQ(records.size(), requests.size() + 1);
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(records[i], expected_record(requests[i], current_arch())) << "record " << i;
  EXPECT_EQ(records.back(), expected_record(synchronous, "gfx90a"));

  struct stat st {};
  ASSERT_EQ(::stat(record.file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "sources may be private";
}

TEST(RequestRecorder, RecordsCacheHits) {
  RecordDir record;
  const std::string cache_dir = record.dir() + "/cache";
  std::vector<Request> requests;
  requests.emplace_back(vadd_source("recorded_hit"));
  EXPECT_EQ(compile_in_mode(requests, mode_config(cache_dir.c_str(), HIPACM_CACHE_READWRITE)),
            std::vector<int>{0});
  // Another file: this process has not recorded the request there yet.
  const std::string second = record.dir() + "/hits.jsonl";
  RecordDir::record_to(second);
  EXPECT_EQ(compile_in_mode(requests, mode_config(cache_dir.c_str(), HIPACM_CACHE_READWRITE)),
            std::vector<int>{1});
  const std::vector<Json> records = read_records(second);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0], expected_record(requests[0], current_arch()));
}

struct Warnings {
  std::mutex mutex;
  std::vector<std::string> lines;
};

void collect_warning(void* user, int32_t level, const char* message) {
  auto* warnings = static_cast<Warnings*>(user);
  if (level != HIPACM_LOG_WARNING ||
      std::string(message).find("record requests") == std::string::npos)
    return;
  const std::lock_guard<std::mutex> lock(warnings->mutex);
  warnings->lines.emplace_back(message);
}

TEST(RequestRecorder, AnUnwritableFileWarnsOnceAndCompilingGoesOn) {
  RecordDir record;
  const std::string missing_dir = record.dir() + "/no-such-dir/requests.jsonl";
  RecordDir::record_to(missing_dir);
  Warnings warnings;
  ASSERT_EQ(hipacm_set_log_callback(collect_warning, &warnings, HIPACM_LOG_WARNING),
            HIPACM_SUCCESS);
  for (const char* name : {"unrecorded_a", "unrecorded_b"}) {
    Request request(vadd_source(name));
    hipacm_future* f = nullptr;
    EXPECT_EQ(hipacm_compile(request.get(), "gfx90a", &f), HIPACM_SUCCESS)
        << hipacm_last_error_message();
    hipacm_future_release(f);
  }
  // A directory is no file to append to either.
  RecordDir::record_to(record.dir());
  Request another(vadd_source("unrecorded_c"));
  hipacm_future* f = nullptr;
  EXPECT_EQ(hipacm_compile(another.get(), "gfx90a", &f), HIPACM_SUCCESS);
  hipacm_future_release(f);
  ASSERT_EQ(hipacm_set_log_callback(nullptr, nullptr, HIPACM_LOG_WARNING), HIPACM_SUCCESS);
  ASSERT_EQ(warnings.lines.size(), 1u) << testing::PrintToString(warnings.lines);
  EXPECT_NE(warnings.lines[0].find(missing_dir), std::string::npos) << warnings.lines[0];
  EXPECT_FALSE(fs::exists(missing_dir));
}

backend::CompileRequest numbered_request(int thread, int index) {
  backend::CompileRequest request;
  // Sizes from a few bytes to 256 KiB: large writes are the ones a careless writer tears.
  request.source = "// thread " + std::to_string(thread) + " request " + std::to_string(index) +
                   "\n" + std::string(static_cast<std::size_t>((index % 5) * 65536), 'x') + "\n";
  request.source_name = "t" + std::to_string(thread) + ".hip";
  request.options = {"-DINDEX=" + std::to_string(index)};
  request.headers = {{"h.h", "// header\n"}};
  request.arch = "gfx90a";
  return request;
}

TEST(RequestRecorderConcurrency, ThreadsAndForkedChildrenAppendWholeLinesOnce) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  // The sanitizer runtimes of GCC 12 take no lock of their allocator at fork(): a child forked
  // while a parent thread allocates can hang in malloc, whatever the code under test does.
  GTEST_SKIP() << "the sanitizer runtime does not support allocation after a multi-threaded fork";
#endif
  RecordDir record;
  constexpr int kThreads = 8;
  constexpr int kPerThread = 40;
  backend::CompileRequest shared = numbered_request(-1, 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &shared] {
      for (int i = 0; i < kPerThread; ++i) {
        record_request(numbered_request(t, i));
        record_request(shared);  // every thread, every time: recorded once
      }
    });
  // Children record into the same file while the threads run: one request of their own each,
  // and the shared one, which their parent may already have recorded (then it stays once).
  constexpr int kChildren = 3;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      record_request(numbered_request(100 + c, 3));
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (std::thread& thread : threads) thread.join();
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }

  const std::vector<Json> records = read_records(record.file());
  std::multiset<std::string> sources;
  for (const Json& r : records) sources.insert(r.at("source").get<std::string>());
  EXPECT_EQ(records.size(), static_cast<std::size_t>(kThreads * kPerThread + 1 + kChildren));
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kPerThread; ++i)
      EXPECT_EQ(sources.count(numbered_request(t, i).source), 1u) << t << "/" << i;
  for (int c = 0; c < kChildren; ++c)
    EXPECT_EQ(sources.count(numbered_request(100 + c, 3).source), 1u) << "child " << c;
  EXPECT_EQ(sources.count(shared.source), 1u);
}

TEST(RequestRecorder, ALineIsOneRequestWhateverItsText) {
  backend::CompileRequest request = numbered_request(0, 0);
  request.source = "line one\nline two\r\n\"quoted\" \\ \x01 \xc3\xa9\n";
  const std::string line = record_line(request);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(Json::parse(line).at("source"), request.source);
  request.source = "not UTF-8: \xff\n";
  EXPECT_THROW(record_line(request), nlohmann::json::exception);
}

}  // namespace
}  // namespace hipacm::test
