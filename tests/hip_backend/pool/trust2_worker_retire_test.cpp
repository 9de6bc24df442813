// SPDX-License-Identifier: MIT
// trust2_worker_retire_test.cpp - a worker that compiled with -Xclang or -mllvm options, which can
// leave code or LLVM settings in its process, serves no other compile: not from the pool, not
// from the compile service's stock.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <boost/chrono.hpp>
#include <boost/thread/thread.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "hip_backend/code_loading_options.h"
#include "hip_backend/pool/worker_compiler.h"
#include "hip_backend/pool/worker_pool.h"
#include "hip_backend/pool/worker_process.h"
#include "hip_backend/service/service_client.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

namespace fs = std::filesystem;
using backend::CompileRequest;
using backend::WorkerCompiler;
using backend::WorkerProcess;

/// A real compile that reaches into the compiler: a cc1 option through -Xclang, harmless in
/// itself.
CompileRequest xclang_request(int i) {
  CompileRequest request = make_request(kernel_source(i));
  request.options = {"-Xclang", "-disable-O0-optnone"};
  return request;
}

pid_t only_worker() {
  const std::vector<pid_t> pids = worker_children(false);
  return pids.size() == 1 ? pids[0] : -1;
}

TEST(Trust2_09_CompilerPlugins, AWorkerThatCompiledWithXclangIsNotReused) {
  backend::WorkerPool::instance().shutdown();
  ScopedEnv service("HIPACM_ISOLATION", "service=off");
  WorkerCompiler compiler(kWorkerPath, 1, 60000);
  ASSERT_EQ(compiler.compile(make_request(kernel_source(1))).status, HIPACM_SUCCESS);
  const pid_t first = only_worker();
  ASSERT_GT(first, 0);
  // A plain compile keeps the worker.
  ASSERT_EQ(compiler.compile(make_request(kernel_source(2))).status, HIPACM_SUCCESS);
  EXPECT_EQ(only_worker(), first);

  const backend::CompileResult tainted = compiler.compile(xclang_request(3));
  ASSERT_EQ(tainted.status, HIPACM_SUCCESS) << tainted.error_message;
  ASSERT_EQ(compiler.compile(make_request(kernel_source(4))).status, HIPACM_SUCCESS);
  const pid_t next = only_worker();
  EXPECT_GT(next, 0);
  EXPECT_NE(next, first) << "the worker that compiled with -Xclang served the next compile";
  EXPECT_EQ(backend::WorkerPool::instance().idle_count(), 1u);

  // -mllvm sets LLVM's process-wide options: the same.
  CompileRequest mllvm = make_request(kernel_source(5));
  mllvm.options = {"-mllvm", "-amdgpu-early-inline-all=true"};
  ASSERT_EQ(compiler.compile(mllvm).status, HIPACM_SUCCESS);
  ASSERT_EQ(compiler.compile(make_request(kernel_source(6))).status, HIPACM_SUCCESS);
  EXPECT_NE(only_worker(), next) << "the worker that compiled with -mllvm was reused";
  backend::WorkerPool::instance().shutdown();
}

// The service keeps a worker a host gives back warm for the next host. One that compiled with
// -Xclang must not go back, even when the host gives it back as usable (the worker decides).
TEST(Trust2_09_CompilerPlugins, TheCompileServiceDoesNotRestockAWorkerThatCompiledWithXclang) {
  std::string dir = fs::temp_directory_path().string() + "/hipacm-retire-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  pid_t service_pid = -1;
  {
    ScopedEnv runtime("HIPACM_RUNTIME_DIR", dir + "/run");
    ScopedEnv requested("HIPACM_ISOLATION", "service=on");
    ScopedEnv idle("HIPACM_IDLE_MS", ",60000");
    std::string error;
    auto order = [&]() -> std::unique_ptr<WorkerProcess> {
      auto spawned = WorkerProcess::spawn(kWorkerPath, kArch);
      if (spawned) return std::move(spawned).value();
      error = spawned.failure().message;
      return nullptr;
    };
    const Expected<std::string> named =
        backend::compile_service_socket(kWorkerPath, WorkerProcess::environment_for("/unused"));
    const std::string why = named ? std::string() : named.failure().message;
    const std::string socket = named ? named.value() : std::string();

    // A plain compile: the worker goes back and serves the next order (the service works here).
    auto worker = order();
    ASSERT_TRUE(worker) << error;
    service_pid = backend::compile_service_pid(socket);
    ASSERT_GT(service_pid, 0) << "no service at " << socket << ": " << why;
    ASSERT_EQ(worker->compile(make_request(kernel_source(1)), 60000).status, HIPACM_SUCCESS);
    const pid_t plain = worker->pid();
    worker.reset();
    for (int i = 0; i < 2000 && !back_in_service(plain); ++i)
      boost::this_thread::sleep_for(boost::chrono::milliseconds(10));
    ASSERT_TRUE(back_in_service(plain));
    worker = order();
    ASSERT_TRUE(worker) << error;
    ASSERT_EQ(worker->pid(), plain) << "the service did not restock a plain worker";

    // With -Xclang, given back as usable, the worker ends instead.
    const backend::CompileResult tainted = worker->compile(xclang_request(2), 60000);
    ASSERT_EQ(tainted.status, HIPACM_SUCCESS) << tainted.error_message;
    worker.reset();
    for (int i = 0; i < 1000 && alive(plain) && !back_in_service(plain); ++i)
      boost::this_thread::sleep_for(boost::chrono::milliseconds(10));
    EXPECT_FALSE(alive(plain)) << "the worker that compiled with -Xclang stayed in the service";
    worker = order();
    ASSERT_TRUE(worker) << error;
    EXPECT_NE(worker->pid(), plain) << "the service handed out the worker that ran -Xclang";
    worker.reset();
    backend::WorkerPool::instance().shutdown();
  }
  if (service_pid > 0) ::kill(service_pid, SIGTERM);
  for (int i = 0; i < 500 && service_pid > 0 && alive(service_pid); ++i)
    boost::this_thread::sleep_for(boost::chrono::milliseconds(10));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(Trust2_09_CompilerPlugins, OptionsThatLoadCodeAreFoundInEverySpelling) {
  using backend::find_code_loading_option;
  const std::vector<std::vector<std::string>> loading = {
      {"-Xclang", "-load", "-Xclang", "x.so"},
      {"-O2", "-Xclang=-load", "-Xclang=x.so"},
      {"-Xclang", "-plugin", "-Xclang", "p"},
      {"-Xclang", "-add-plugin", "-Xclang", "p"},
      {"-Xclang", "-plugin-arg-p", "-Xclang", "a"},
      {"-Xclang", "-fpass-plugin=x.so"},
      {"-fplugin=x.so"},
      {"-fpass-plugin=x.so"},
      {"-load", "x.so"},
      {"-mllvm", "-load=x.so"},
      {"-mllvm", "--load", "-mllvm", "x.so"},
      {"-mllvm=-load=x.so"},
      {"--load-pass-plugin=x.so"},
      {"-Wl,--load-pass-plugin=x.so"},
      {"-Xlinker", "--load-pass-plugin", "-Xlinker", "x.so"},
      {"@options.rsp"},
      {"--config", "x.cfg"},
      {"--config=x.cfg"},
      {"-B/tmp/tools"},
      {"-B", "/tmp/tools"},
      {"--prefix=/tmp/tools"},
      {"-fuse-ld=/tmp/ld"},
      {"--ld-path=/tmp/ld"},
  };
  for (const auto& options : loading) {
    EXPECT_TRUE(find_code_loading_option(options)) << testing::PrintToString(options);
    EXPECT_TRUE(backend::options_leave_compiler_state(options)) << testing::PrintToString(options);
  }
  const auto found = find_code_loading_option({"-O2", "-Xclang", "-load", "-Xclang", "x.so"});
  ASSERT_TRUE(found);
  EXPECT_EQ(found->index, 2u);
  EXPECT_EQ(found->option, "-load");

  const std::vector<std::vector<std::string>> plain = {
      {"-O3", "-DLOAD=1", "-Dplugin", "-I/opt/plugin/include", "-ffast-math", "-std=c++17"},
      {"-Bstatic", "-Wl,--as-needed", "--offload-arch=gfx90a", "-include", "load.h"},
      {"-Xclang", "-disable-O0-optnone"},
      {"-mllvm", "-amdgpu-early-inline-all=true"},
  };
  for (const auto& options : plain)
    EXPECT_FALSE(find_code_loading_option(options)) << testing::PrintToString(options);
  EXPECT_FALSE(backend::options_leave_compiler_state(plain[0]));
  EXPECT_FALSE(backend::options_leave_compiler_state(plain[1]));
  EXPECT_TRUE(backend::options_leave_compiler_state(plain[2]));
  EXPECT_TRUE(backend::options_leave_compiler_state(plain[3]));
}

}  // namespace
}  // namespace hipacm::test
