// SPDX-License-Identifier: MIT
// request_recorder_test.cpp - $HIPACM_RECORD: real compiles recorded with their exact fields, once,
// whole lines under threads and forks, 0600, cache hits too, and a failing file never fails a
// compile.
#include <fcntl.h>
#include <hipacm/hipacm.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "plugin/record/record_format.h"
#include "plugin/record/request_recorder.h"
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

/// Compiles one small kernel synchronously; true when it compiled.
bool compile_one(const std::string& name) {
  Request request(vadd_source(name));
  hipacm_future* f = nullptr;
  const bool ok = hipacm_compile(request.get(), "gfx90a", &f) == HIPACM_SUCCESS;
  EXPECT_TRUE(ok) << hipacm_last_error_message();
  hipacm_future_release(f);
  return ok;
}

/// Creates `file` empty with exactly `mode`, owned by `uid`.
void plant(const std::string& file, mode_t mode, uid_t uid) {
  { std::ofstream(file, std::ios::binary).flush(); }
  ASSERT_EQ(::chown(file.c_str(), uid, static_cast<gid_t>(-1)), 0) << std::strerror(errno);
  ASSERT_EQ(::chmod(file.c_str(), mode), 0) << std::strerror(errno);
}

/// Collects the recorder's warnings while it lives.
class WarningCapture {
 public:
  WarningCapture() {
    EXPECT_EQ(hipacm_set_log_callback(collect_warning, &warnings_, HIPACM_LOG_WARNING),
              HIPACM_SUCCESS);
  }
  WarningCapture(const WarningCapture&) = delete;
  WarningCapture& operator=(const WarningCapture&) = delete;
  ~WarningCapture() { hipacm_set_log_callback(nullptr, nullptr, HIPACM_LOG_WARNING); }
  std::vector<std::string> lines() {
    const std::lock_guard<std::mutex> lock(warnings_.mutex);
    return warnings_.lines;
  }

 private:
  Warnings warnings_;
};

// A 0666 file another user planted where the record file is expected gets none of this user's
// sources (the recorder used to append to it), and compiling goes on.
TEST(Trust2_03_RecordFile, AFileOwnedByAnotherUserReceivesNothing) {
  if (::geteuid() != 0) GTEST_SKIP() << "planting a file of another uid needs root";
  RecordDir record;
  plant(record.file(), 0666, 65534);
  WarningCapture capture;
  EXPECT_TRUE(compile_one("planted_a"));
  EXPECT_TRUE(compile_one("planted_b"));
  EXPECT_EQ(read_all(record.file()), "") << "another user's file received a record";
  const std::vector<std::string> lines = capture.lines();
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("owned by uid 65534"), std::string::npos) << lines[0];
}

// A file of this user's that others may write is refused as well: whoever can write it could
// have prepared it (or read it through a link they made before the mode was widened).
TEST(Trust2_03_RecordFile, AGroupOrOtherWritableFileIsRefused) {
  RecordDir record;
  const std::string group_writable = record.dir() + "/group.jsonl";
  const std::string other_writable = record.dir() + "/other.jsonl";
  plant(group_writable, 0620, ::geteuid());
  plant(other_writable, 0602, ::geteuid());
  WarningCapture capture;
  RecordDir::record_to(group_writable);
  EXPECT_TRUE(compile_one("writable_a"));
  RecordDir::record_to(other_writable);
  EXPECT_TRUE(compile_one("writable_b"));
  EXPECT_EQ(read_all(group_writable), "");
  EXPECT_EQ(read_all(other_writable), "");
  // One warning per process, naming the first file refused.
  const std::vector<std::string> lines = capture.lines();
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("group- or other-writable"), std::string::npos) << lines[0];
  // Our own 0600 file is still recorded to.
  RecordDir::record_to(record.file());
  EXPECT_TRUE(compile_one("writable_c"));
  EXPECT_EQ(read_records(record.file()).size(), 1u);
}

// Anyone who can open the record file can flock it. A holder that never lets go used to hang
// every compile in flock(LOCK_EX); now a record waits a bounded time, is skipped, and the
// process says so once.
TEST(Trust2_03_RecordFile, ALockHeldForeverDoesNotHangCompiles) {
  RecordDir record;
  plant(record.file(), 0600, ::geteuid());
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    const int fd = ::open(record.file().c_str(), O_RDONLY);
    const char locked = fd >= 0 && ::flock(fd, LOCK_EX) == 0 ? 'y' : 'n';
    (void)!::write(ready[1], &locked, 1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char locked = 0;
  ASSERT_EQ(::read(ready[0], &locked, 1), 1);
  ::close(ready[0]);
  auto stop_holder = [holder] {
    ::kill(holder, SIGKILL);
    int status = 0;
    ::waitpid(holder, &status, 0);
  };
  if (locked != 'y') {
    stop_holder();
    FAIL() << "the holder could not lock the file";
  }

  WarningCapture capture;
  constexpr int kCompiles = 6;
  std::promise<int> done;
  std::future<int> compiled = done.get_future();
  std::thread compiles([&done] {
    int ok = 0;
    for (int i = 0; i < kCompiles; ++i) ok += compile_one("locked_" + std::to_string(i)) ? 1 : 0;
    done.set_value(ok);
  });
  // A hang-detector only: the bound is far above the 1.5 s one skipped record may wait.
  const bool finished = compiled.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  stop_holder();  // releases the lock, so a hung compile finishes and the thread joins
  compiles.join();
  EXPECT_TRUE(finished) << "compiles hung on the record file's lock";
  EXPECT_EQ(compiled.get(), kCompiles);
  EXPECT_EQ(read_all(record.file()), "") << "a record was written under another's lock";
  const std::vector<std::string> lines = capture.lines();
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_NE(lines[0].find("held its lock"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace hipacm::test
