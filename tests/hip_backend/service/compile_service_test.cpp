// SPDX-License-Identifier: MIT
// compile_service_test.cpp - the per-user compile service: warm forked workers for any process,
// real compiles, crash and timeout reports, cleanup when a host dies, idle exit, the fallback,
// and its privacy.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/chrono.hpp>
#include <boost/thread/thread.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/pool/worker_process.h"
#include "hip_backend/process/adopted_services.h"
#include "hip_backend/process/private_temp_dir.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "hip_backend/protocol/service_wire.h"
#include "hip_backend/service/service_client.h"
#include "hip_backend/service/service_start_lock.h"
#include "support/environment.h"
#include "support/log.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

namespace fs = std::filesystem;
namespace sw = backend::service_wire;
using backend::UniqueFd;
using backend::WorkerProcess;

/// Polls `done` every 10 ms for up to `seconds`.
template <class Done>
bool eventually(Done done, int seconds = 20) {
  for (int i = 0; i < seconds * 100; ++i) {
    if (done()) return true;
    boost::this_thread::sleep_for(boost::chrono::milliseconds(10));
  }
  return done();
}

/// Forks a host process that runs `body(report)` and then _exits 1; `report(pid)` sends one pid
/// back over a pipe. Gives the host's pid in *host and the pid it reported in *reported (a fatal
/// failure when the pipe or the fork fails or nothing comes back: call it through
/// ASSERT_NO_FATAL_FAILURE).
template <class Body>
void fork_host(Body body, pid_t* host, pid_t* reported) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  *host = ::fork();
  ASSERT_GE(*host, 0);
  if (*host == 0) {
    ::close(p[0]);
    body([fd = p[1]](pid_t pid) {
      [[maybe_unused]] const ssize_t w = ::write(fd, &pid, sizeof pid);
    });
    _exit(1);
  }
  ::close(p[1]);
  ASSERT_EQ(::read(p[0], reported, sizeof *reported), static_cast<ssize_t>(sizeof *reported));
  ::close(p[0]);
}

/// The pid of the service listening at `socket_path`, or -1.
pid_t listener_pid(const std::string& socket_path) {
  return backend::compile_service_pid(socket_path);
}

/// Each test gets its own runtime directory, so its own service, which it stops at the end.
class CompileService : public ::testing::Test {
 protected:
  CompileService()
      : dir_(make_dir()),
        runtime_("HIPACM_RUNTIME_DIR", dir_ + "/run"),
        requested_("HIPACM_ISOLATION", "service=on"),
        idle_("HIPACM_IDLE_MS", ",60000") {}

  ~CompileService() override {
    backend::WorkerPool::instance().shutdown();
    // Every service this test started, whatever settings named its socket.
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir_ + "/run", ec)) {
      if (entry.path().extension() != ".sock") continue;
      if (const pid_t pid = listener_pid(entry.path().string()); pid > 0) {
        ::kill(pid, SIGTERM);
        eventually([&] { return !alive(pid); });
      }
    }
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  static std::string make_dir() {
    std::string templ = fs::temp_directory_path().string() + "/hipacm-service-test-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) ADD_FAILURE() << "mkdtemp";
    return templ;
  }

  /// The socket this process's workers would be ordered from.
  std::string socket_path() {
    const Expected<std::string> socket =
        backend::compile_service_socket(kWorkerPath, WorkerProcess::environment_for("/unused"));
    return socket ? socket.value() : std::string();
  }

  std::unique_ptr<WorkerProcess> ordered_worker() {
    auto worker = WorkerProcess::spawn(kWorkerPath, kArch);
    EXPECT_TRUE(worker) << worker.failure().message;
    return worker ? std::move(worker).value() : nullptr;
  }

  /// Orders a worker and has it compile once: the worker in *worker, and in *service the pid of
  /// the service that handed it out (a fatal failure when either fails: call it through
  /// ASSERT_NO_FATAL_FAILURE).
  void order_a_worker_that_compiled(std::unique_ptr<WorkerProcess>* worker, pid_t* service) {
    ASSERT_NO_FATAL_FAILURE(order_a_worker(worker, service));
    ASSERT_EQ((*worker)->compile(make_request(kernel_source(2)), 60000).status, HIPACM_SUCCESS);
  }

  /// Orders a worker: the worker in *worker, and in *service the pid of the service listening
  /// now (a fatal failure when either is missing: call it through ASSERT_NO_FATAL_FAILURE).
  void order_a_worker(std::unique_ptr<WorkerProcess>* worker, pid_t* service) {
    *worker = ordered_worker();
    ASSERT_TRUE(*worker);
    *service = listener_pid(socket_path());
    ASSERT_GT(*service, 0) << "no service listens at " << socket_path();
  }

  std::string dir_;
  ScopedEnv runtime_, requested_, idle_;
};

TEST_F(CompileService, ServesRealCompilesFromAWorkerItForked) {
  std::unique_ptr<WorkerProcess> worker;
  pid_t service = 0;
  ASSERT_NO_FATAL_FAILURE(order_a_worker(&worker, &service));
  const auto info = read_proc(worker->pid());
  ASSERT_TRUE(info);
  EXPECT_EQ(info->ppid, service) << "the worker is not the service's child";
  EXPECT_TRUE(worker_children().empty()) << "the worker was spawned here after all";

  const backend::CompileResult result = worker->compile(make_request(kernel_source(3)), 60000);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  const auto checked = backend::check_amdgpu_code_object(result.code, kArch, {"k3"});
  EXPECT_TRUE(checked) << checked.failure().message;

  // The worker runs in its private TMPDIR and never in this process's working directory: each
  // compile has an empty one of its own, and between compiles the worker sits in /.
  const std::string proc = "/proc/" + std::to_string(worker->pid());
  // Between compiles: the first compile of a key is followed by its PCH build, whose two
  // compiles run in the build's directory.
  EXPECT_TRUE(eventually([&] {
    std::error_code ec;
    return fs::read_symlink(proc + "/cwd", ec).string() == "/";
  })) << fs::read_symlink(proc + "/cwd").string();
  const std::string temp_dir = worker->temp_dir();
  EXPECT_TRUE(fs::is_directory(temp_dir));

  const pid_t pid = worker->pid();
  worker.reset();
  EXPECT_FALSE(fs::exists(temp_dir)) << "the worker's TMPDIR outlived its use";
  EXPECT_EQ(backend::WorkerFdRegistry::size(), 0u);
  EXPECT_EQ(zombie_children(), 0);
  EXPECT_TRUE(alive(service)) << "the service went with its worker";
  // Given back, the worker waits in the service, warm, and serves the next order.
  EXPECT_TRUE(eventually([&] { return back_in_service(pid); }));
  auto again = ordered_worker();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->pid(), pid) << "the next order got a new worker, not the warm one";
  const backend::CompileResult second = again->compile(make_request(kernel_source(7)), 60000);
  ASSERT_EQ(second.status, HIPACM_SUCCESS) << second.error_message;
  const auto checked_again = backend::check_amdgpu_code_object(second.code, kArch, {"k7"});
  EXPECT_TRUE(checked_again) << checked_again.failure().message;
}

TEST_F(CompileService, SpawnsItsWorkersWhenItCannotFork) {
  // What a service does once a compiler has started threads in it: exec fresh workers, which
  // serve and come back warm like forked ones.
  ScopedEnv spawn("HIPACM_SERVICE_FORK", "off");
  std::unique_ptr<WorkerProcess> worker;
  pid_t service = 0;
  ASSERT_NO_FATAL_FAILURE(order_a_worker(&worker, &service));
  const pid_t pid = worker->pid();
  const auto info = read_proc(pid);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->ppid, service);
  // Right after exec the new image's arguments may not be in place yet (cmdline reads empty).
  std::string args;
  EXPECT_TRUE(eventually([&] {
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
    args.assign(std::istreambuf_iterator<char>(cmdline), std::istreambuf_iterator<char>());
    return !args.empty();
  }));
  EXPECT_NE(args.find("--service-worker"), std::string::npos) << "not an exec'd worker: " << args;
  // Started where the host was, it leaves that directory before it serves.
  EXPECT_TRUE(eventually([&] {
    std::error_code ec;
    return fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec).string() == "/";
  })) << fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd").string();

  backend::CompileResult result = worker->compile(make_request(kernel_source(8)), 60000);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  const auto checked = backend::check_amdgpu_code_object(result.code, kArch, {"k8"});
  EXPECT_TRUE(checked) << checked.failure().message;
  worker.reset();
  EXPECT_TRUE(eventually([&] { return back_in_service(pid); }));
  auto again = ordered_worker();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->pid(), pid) << "the spawned worker did not come back to the service";
  result = again->compile(make_request(kernel_source(9)), 60000);
  EXPECT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
}

TEST_F(CompileService, ProcessesShareOneWarmService) {
  // Three processes, one after another, each orders a worker and compiles: one service serves
  // them all, and it is none of their children.
  std::vector<pid_t> parents;
  for (int i = 0; i < 3; ++i) {
    pid_t child = -1;
    pid_t parent = -1;
    ASSERT_NO_FATAL_FAILURE(fork_host(
        [i](auto report) {
          auto spawned = WorkerProcess::spawn(kWorkerPath, kArch);
          std::unique_ptr<WorkerProcess> worker = spawned ? std::move(spawned).value() : nullptr;
          pid_t its_parent = -1;
          if (worker && worker->compile(make_request(kernel_source(10 + i)), 60000).status ==
                            HIPACM_SUCCESS) {
            if (const auto info = read_proc(worker->pid())) its_parent = info->ppid;
          }
          report(its_parent);
          worker.reset();
          _exit(its_parent > 0 ? 0 : 1);
        },
        &child, &parent));
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "process " << i;
    EXPECT_NE(parent, child);
    parents.push_back(parent);
  }
  EXPECT_EQ(parents[0], parents[1]);
  EXPECT_EQ(parents[1], parents[2]);
  EXPECT_EQ(listener_pid(socket_path()), parents[0]);
}

TEST_F(CompileService, ACrashIsReportedWithItsSignal) {
  FaultScope crash("crash-segv");
  auto worker = ordered_worker();
  ASSERT_TRUE(worker);
  const backend::CompileResult result = worker->compile(make_request(kernel_source(1)), 60000);
  EXPECT_EQ(result.status, HIPACM_ERROR_COMPILER_CRASHED);
  EXPECT_NE(result.error_message.find("signal 11"), std::string::npos) << result.error_message;
  EXPECT_NE(result.error_message.find("injecting fault"), std::string::npos)
      << "the worker's own output is missing: " << result.error_message;
  EXPECT_FALSE(worker->usable());
  const pid_t service = listener_pid(socket_path());
  EXPECT_GT(service, 0) << "the service died with its worker";
}

TEST_F(CompileService, ATimeoutKillsTheWorker) {
  FaultScope hang("hang");
  auto worker = ordered_worker();
  ASSERT_TRUE(worker);
  const pid_t pid = worker->pid();
  const backend::CompileResult result = worker->compile(make_request(kernel_source(1)), 300);
  EXPECT_EQ(result.status, HIPACM_ERROR_TIMEOUT) << result.error_message;
  EXPECT_NE(result.error_message.find("was killed"), std::string::npos) << result.error_message;
  EXPECT_FALSE(alive(pid));
  EXPECT_FALSE(worker->usable());
}

TEST_F(CompileService, AHostThatDiesTakesItsBusyWorkerWithIt) {
  FaultScope hang("hang");
  pid_t host = -1;
  pid_t worker = -1;
  ASSERT_NO_FATAL_FAILURE(fork_host(
      [](auto report) {
        auto ordered = WorkerProcess::spawn(kWorkerPath, kArch);
        std::unique_ptr<WorkerProcess> spawned = ordered ? std::move(ordered).value() : nullptr;
        report(spawned ? spawned->pid() : -1);
        if (spawned) spawned->compile(make_request(kernel_source(1)), 0);  // hangs until killed
      },
      &host, &worker));
  ASSERT_GT(worker, 0);
  EXPECT_TRUE(alive(worker));
  boost::this_thread::sleep_for(boost::chrono::milliseconds(200));  // it is compiling (hung)
  ::kill(host, SIGKILL);
  ASSERT_EQ(::waitpid(host, nullptr, 0), host);
  EXPECT_TRUE(eventually([&] { return !alive(worker); }))
      << "worker " << worker << " outlived its host";
}

TEST_F(CompileService, ExitsWhenIdleAndRemovesItsSocket) {
  ScopedEnv quick("HIPACM_IDLE_MS", ",300");
  std::unique_ptr<WorkerProcess> worker;
  pid_t service = -1;
  ASSERT_NO_FATAL_FAILURE(order_a_worker_that_compiled(&worker, &service));
  const std::string socket = socket_path();
  // Busy with a worker, it stays.
  boost::this_thread::sleep_for(boost::chrono::milliseconds(800));
  EXPECT_TRUE(alive(service));
  worker.reset();
  EXPECT_TRUE(eventually([&] { return !alive(service); })) << "the idle service did not exit";
  EXPECT_FALSE(fs::exists(socket));
  EXPECT_FALSE(fs::exists(socket + ".tmp"));
  EXPECT_FALSE(fs::exists(socket + ".lock")) << "nothing of it stays in the runtime dir";
  // The next order starts a new one.
  auto again = ordered_worker();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->compile(make_request(kernel_source(4)), 60000).status, HIPACM_SUCCESS);
  const pid_t second = listener_pid(socket);
  EXPECT_GT(second, 0);
  EXPECT_NE(second, service);
}

TEST_F(CompileService, AHostThatIsAChildSubreaperIsLeftNoZombies) {
  // Such a host adopts the service it starts, and whatever the service leaves behind.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  ScopedEnv quick("HIPACM_IDLE_MS", ",300");
  std::unique_ptr<WorkerProcess> worker;
  pid_t service = -1;
  ASSERT_NO_FATAL_FAILURE(order_a_worker_that_compiled(&worker, &service));
  const std::string socket = socket_path();
  const auto info = read_proc(service);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->ppid, ::getpid()) << "the service was not adopted: nothing here to test";
  EXPECT_EQ(backend::adopted_service_count(), 1u);
  const pid_t waiting = worker->pid();
  worker.reset();  // back to the service, where it waits for its next host
  EXPECT_TRUE(eventually([&] { return !alive(service); })) << "the idle service did not exit";
  EXPECT_TRUE(eventually([&] { return !read_proc(waiting); }))
      << "the service's waiting worker was left to this process to reap";
  // The next order reaps the service that exited (once it can be reaped: a process whose first
  // thread has ended shows as a zombie a moment before it can be waited for), and adopts the one
  // it starts.
  auto again = ordered_worker();
  ASSERT_TRUE(again);
  EXPECT_NE(listener_pid(socket), service);
  EXPECT_TRUE(eventually([&] {
    backend::reap_adopted_services();
    return !read_proc(service);
  })) << "the adopted service is still a zombie here";
  EXPECT_EQ(zombie_children(), 0);
  EXPECT_EQ(backend::adopted_service_count(), 1u);
}

TEST_F(CompileService, StopsCleanlyOnSigtermLeavingHandedOutWorkersRunning) {
  std::unique_ptr<WorkerProcess> worker;
  pid_t service = 0;
  ASSERT_NO_FATAL_FAILURE(order_a_worker(&worker, &service));
  const std::string socket = socket_path();
  ASSERT_EQ(::kill(service, SIGTERM), 0);
  EXPECT_TRUE(eventually([&] { return !alive(service); }));
  EXPECT_FALSE(fs::exists(socket));
  EXPECT_FALSE(fs::exists(socket + ".tmp"));
  EXPECT_FALSE(fs::exists(socket + ".lock"));
  // The worker is this process's to use until it lets go.
  EXPECT_TRUE(alive(worker->pid()));
  const backend::CompileResult result = worker->compile(make_request(kernel_source(6)), 60000);
  EXPECT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
}

TEST_F(CompileService, LeavesWhenIdleOnceItsSocketIsGone) {
  ScopedEnv quick("HIPACM_IDLE_MS", ",300");
  std::unique_ptr<WorkerProcess> worker;
  pid_t service = 0;
  ASSERT_NO_FATAL_FAILURE(order_a_worker(&worker, &service));
  const std::string socket = socket_path();
  worker.reset();
  // No one can reach it any more, not even to hold its start lock.
  fs::remove_all(dir_ + "/run");
  EXPECT_TRUE(eventually([&] { return !alive(service); }));
}

TEST_F(CompileService, LeavesLongBeforeItsIdleTimeWhenItsDirectoryIsRemoved) {
  // The fixture's idle time is a minute; a removed runtime directory must not keep it that long.
  std::unique_ptr<WorkerProcess> worker;
  pid_t service = 0;
  ASSERT_NO_FATAL_FAILURE(order_a_worker(&worker, &service));
  const std::string socket = socket_path();
  const pid_t waiting = worker->pid();
  worker.reset();
  EXPECT_TRUE(eventually([&] { return back_in_service(waiting); }));
  // While a worker is in use it stays, socket or not: the worker's host still needs its reports.
  auto busy = ordered_worker();
  ASSERT_TRUE(busy);
  fs::remove(socket);
  boost::this_thread::sleep_for(boost::chrono::milliseconds(2500));
  EXPECT_TRUE(alive(service)) << "left while a host still held one of its workers";
  EXPECT_EQ(busy->compile(make_request(kernel_source(8)), 60000).status, HIPACM_SUCCESS);
  busy.reset();
  // A worker may still be finishing a PCH build in there, removing its own stage directory while
  // remove_all walks the tree: a walk that loses that race is simply run again.
  std::error_code ec;
  for (int attempt = 0; attempt < 50 && fs::exists(dir_ + "/run"); ++attempt)
    fs::remove_all(dir_ + "/run", ec);
  ASSERT_FALSE(fs::exists(dir_ + "/run")) << ec.message();
  EXPECT_TRUE(eventually([&] { return !alive(service); }, 30))
      << "the service waited for its idle time with no socket to be reached by";
  EXPECT_TRUE(eventually([&] { return !read_proc(waiting); }, 30)) << "its waiting worker stayed";
}

TEST_F(CompileService, FallsBackToItsOwnWorkersWhenTheServiceCannotBeUsed) {
  // A runtime directory that is a file: no service, yet compiles go on in spawned workers.
  const std::string file = dir_ + "/not-a-directory";
  { std::ofstream(file) << "x"; }
  ScopedEnv runtime("HIPACM_RUNTIME_DIR", file);
  auto spawned = WorkerProcess::spawn(kWorkerPath, kArch);
  ASSERT_TRUE(spawned) << spawned.failure().message;
  std::unique_ptr<WorkerProcess> worker = std::move(spawned).value();
  const auto info = read_proc(worker->pid());
  ASSERT_TRUE(info);
  EXPECT_EQ(info->ppid, ::getpid()) << "the fallback worker should be this process's child";
  const backend::CompileResult result = worker->compile(make_request(kernel_source(5)), 60000);
  EXPECT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
}

TEST_F(CompileService, IsWhereWorkersComeFromByDefault) {
  ScopedEnv unset("HIPACM_COMPILE_SERVICE", std::nullopt);
  ScopedEnv unset_isolation("HIPACM_ISOLATION", std::nullopt);  // and its service= part
  ASSERT_EQ(backend::compile_service_setting(), backend::CompileServiceSetting::kAuto);
  ASSERT_EQ(backend::compile_service_auto_declined(), "") << "this test runs as a plain host";
  EXPECT_TRUE(backend::compile_service_requested());
  auto worker = ordered_worker();
  ASSERT_TRUE(worker);
  const pid_t service = listener_pid(socket_path());
  ASSERT_GT(service, 0) << "no service was started by default";
  const auto info = read_proc(worker->pid());
  ASSERT_TRUE(info);
  EXPECT_NE(info->ppid, ::getpid()) << "the worker was spawned here, not ordered";
  const backend::CompileResult result = worker->compile(make_request(kernel_source(6)), 60000);
  EXPECT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  const auto checked = backend::check_amdgpu_code_object(result.code, kArch, {"k6"});
  EXPECT_TRUE(checked) << checked.failure().message;
}

TEST_F(CompileService, ByDefaultAChildSubreaperHostSpawnsItsOwnWorkers) {
  // Such a host would adopt the service it starts; by default it is not asked to reap it.
  ScopedEnv unset("HIPACM_COMPILE_SERVICE", std::nullopt);
  ScopedEnv unset_isolation("HIPACM_ISOLATION", std::nullopt);  // and its service= part
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  EXPECT_FALSE(backend::compile_service_requested());
  EXPECT_NE(backend::compile_service_auto_declined().find("child subreaper"), std::string::npos)
      << backend::compile_service_auto_declined();
  auto worker = ordered_worker();
  ASSERT_TRUE(worker);
  const auto info = read_proc(worker->pid());
  ASSERT_TRUE(info);
  EXPECT_EQ(info->ppid, ::getpid()) << "the worker should be this process's own child";
  EXPECT_LE(listener_pid(socket_path()), 0) << "a service was started anyway";
  EXPECT_EQ(worker->compile(make_request(kernel_source(7)), 60000).status, HIPACM_SUCCESS);
  // Asked for by name, such a host still gets the service (and reaps it: see above).
  ScopedEnv on("HIPACM_ISOLATION", "service=on");
  EXPECT_TRUE(backend::compile_service_requested());
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

TEST(CompileServiceSetting, ReadsAutoOnAndOffAndAnythingElseAsOffWithAReason) {
  struct Case {
    std::optional<std::string> value;
    backend::CompileServiceSetting setting;
    bool problem;
  };
  const Case cases[] = {{std::nullopt, backend::CompileServiceSetting::kAuto, false},
                        {"", backend::CompileServiceSetting::kAuto, false},
                        {"auto", backend::CompileServiceSetting::kAuto, false},
                        {"on", backend::CompileServiceSetting::kOn, false},
                        {"off", backend::CompileServiceSetting::kOff, false},
                        {"ON", backend::CompileServiceSetting::kOff, true},
                        {"yes", backend::CompileServiceSetting::kOff, true},
                        {"1", backend::CompileServiceSetting::kOff, true}};
  ScopedEnv unset_isolation("HIPACM_ISOLATION", std::nullopt);  // its service= part is the default
  for (const Case& c : cases) {
    ScopedEnv env("HIPACM_COMPILE_SERVICE", c.value);
    std::string problem;
    EXPECT_EQ(backend::compile_service_setting(&problem), c.setting) << c.value.value_or("unset");
    EXPECT_EQ(!problem.empty(), c.problem) << problem;
    if (c.problem) {
      EXPECT_NE(problem.find("'" + *c.value + "'"), std::string::npos) << problem;
    }
    EXPECT_EQ(backend::compile_service_requested(),
              c.setting == backend::CompileServiceSetting::kOn ||
                  (c.setting == backend::CompileServiceSetting::kAuto &&
                   backend::compile_service_auto_declined().empty()));
  }
}

TEST_F(CompileService, AnotherUserGetsNothing) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  auto worker = ordered_worker();  // the service runs
  ASSERT_TRUE(worker);
  const std::string socket = socket_path();
  // Open the way on purpose, so that only the service's own check stands.
  ASSERT_EQ(::chmod((dir_ + "/run").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(socket.c_str(), 0777), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) _exit(2);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) _exit(3);
    sw::WorkerOrder order;
    order.arch = kArch;
    order.cwd = "/";
    order.temp_dir = "/tmp";
    const auto bytes = sw::encode_order(order);
    if (!bytes) _exit(4);
    // The service may close the connection before the order is even written.
    if (!sw::send_message(fd.get(), bytes.value(), nullptr, 0, 5000)) _exit(0);
    sw::Header header;
    std::vector<std::uint8_t> payload;
    std::vector<UniqueFd> fds;
    // Closed without a word (an end of stream, or a reset for the unread order): no reply, no
    // worker.
    const sw::ReadResult read = sw::read_message(fd.get(), 10000, &header, &payload, &fds);
    const bool answered = static_cast<bool>(read);
    const std::string& why = read.error;
    _exit(!answered && fds.empty() && why.find("in time") == std::string::npos ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "another user's order was not simply closed";
}

// The holder of the start lock may remove its file (a service does as it exits): a waiter then
// holds a lock on a file no one else can open, so it must take the lock again on the new file.
TEST(CompileServiceStartLock, AWaiterWhoseFileWasRemovedLocksTheNewOne) {
  const fs::path dir =
      fs::temp_directory_path() / ("hipacm-start-lock-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "service.sock.lock").string();
  for (int round = 0; round < 20; ++round) {
    Expected<backend::UniqueFd> first_lock = backend::lock_service_start(path, 0);
    ASSERT_TRUE(first_lock) << first_lock.failure().message;
    backend::UniqueFd first = std::move(first_lock).value();
    EXPECT_FALSE(backend::lock_service_start(path, 0)) << "held: a single try fails";
    std::string waiter_why;
    backend::UniqueFd second;
    boost::thread waiter([&] {
      Expected<backend::UniqueFd> locked = backend::lock_service_start(path, 30000);
      if (locked)
        second = std::move(locked).value();
      else
        waiter_why = locked.failure().message;
    });
    boost::this_thread::sleep_for(boost::chrono::milliseconds(round % 3 * 10));
    ASSERT_EQ(::unlink(path.c_str()), 0);
    first.reset();
    waiter.join();
    ASSERT_TRUE(second) << waiter_why;
    struct stat held {
    }, named{};
    ASSERT_EQ(::fstat(second.get(), &held), 0);
    ASSERT_EQ(::stat(path.c_str(), &named), 0) << "the waiter made the file anew";
    EXPECT_EQ(held.st_ino, named.st_ino) << "round " << round << ": its lock is on the named file";
    EXPECT_FALSE(backend::lock_service_start(path, 0)) << "and it excludes others";
  }
  fs::remove_all(dir);
}

TEST(CompileServiceSocket, IsSharedByLikeEnvironmentsAndSplitByCompilerSettings) {
  const std::string dir =
      fs::temp_directory_path().string() + "/hipacm-service-key-" + std::to_string(::getpid());
  ScopedEnv runtime("HIPACM_RUNTIME_DIR", dir);
  // The socket for `environment`, "" with the reason in `why` when there is none.
  std::string why;
  const auto socket_for = [&](const std::string& worker,
                              const std::vector<std::string>& environment) {
    const Expected<std::string> socket = backend::compile_service_socket(worker, environment);
    if (!socket) why = socket.failure().message;
    return socket ? socket.value() : std::string();
  };
  const std::vector<std::string> base = {"PATH=/usr/bin", "HOME=/root", "PWD=/a"};
  const std::string a = socket_for(kWorkerPath, base);
  ASSERT_FALSE(a.empty()) << why;
  EXPECT_EQ(a.rfind(dir + "/compile-service-", 0), 0u) << a;
  // A shell's working directory and TMPDIR change nothing a compiler does.
  EXPECT_EQ(socket_for(kWorkerPath, {"HOME=/root", "PWD=/b", "PATH=/usr/bin", "TMPDIR=/x"}), a);
  // hipacm's host-side settings do not split services; its compiler choice does.
  EXPECT_EQ(socket_for(kWorkerPath, {"HIPACM_CACHE=off", "PATH=/usr/bin", "HOME=/root"}), a);
  EXPECT_NE(socket_for(kWorkerPath, {"HIPACM_HIPRTC_LIBRARY=/opt/rocm/lib/libhiprtc.so",
                                     "PATH=/usr/bin", "HOME=/root"}),
            a);
  // A different ROCm is a different service.
  EXPECT_NE(socket_for(kWorkerPath, {"PATH=/usr/bin", "HOME=/root", "ROCM_PATH=/opt/rocm-6.4.3"}),
            a);
  // A missing binary has no service.
  EXPECT_EQ(socket_for("/nonexistent/hipacm-worker", base), "");
  EXPECT_NE(why.find("/nonexistent/hipacm-worker"), std::string::npos) << why;
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

TEST(CompileServiceWire, OrdersRoundTripAndHostileOnesAreRefused) {
  sw::WorkerOrder order;
  order.arch = "gfx90a";
  order.cwd = "/work";
  order.temp_dir = "/tmp/hipacm-worker-x";
  order.environment = {"A=1", "B=two"};
  std::string why;
  const auto encoded = sw::encode_order(order);
  ASSERT_TRUE(encoded) << encoded.failure().message;
  std::vector<std::uint8_t> bytes = encoded.value();
  const auto parsed = sw::parse_header(bytes.data(), bytes.size());
  ASSERT_TRUE(parsed) << parsed.failure().message;
  sw::Header header = parsed.value();
  EXPECT_EQ(header.length, bytes.size() - sw::kHeaderBytes);
  const auto back = sw::decode_order(bytes.data() + sw::kHeaderBytes, header.length);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->environment, order.environment);
  EXPECT_EQ(back->cwd, order.cwd);

  sw::WorkerOrder relative = order;
  relative.cwd = "work";
  const auto relative_bytes = sw::encode_order(relative);
  ASSERT_TRUE(relative_bytes);
  bytes = relative_bytes.value();
  const auto relative_back =
      sw::decode_order(bytes.data() + sw::kHeaderBytes, bytes.size() - sw::kHeaderBytes);
  EXPECT_FALSE(relative_back);
  if (!relative_back) why = relative_back.failure().message;
  EXPECT_NE(why.find("absolute"), std::string::npos) << why;

  std::vector<std::uint8_t> huge = bytes;
  huge[8] = 0xff;
  huge[9] = 0xff;
  huge[10] = 0xff;
  huge[11] = 0x7f;
  const auto huge_header = sw::parse_header(huge.data(), huge.size());
  EXPECT_FALSE(huge_header);
  if (!huge_header) why = huge_header.failure().message;
  EXPECT_NE(why.find("bound"), std::string::npos) << why;
}

// --- issue 27: orders read side by side, and a reason for every fallback ----------------------

/// A connection to the service's socket, or an invalid fd.
UniqueFd connect_to(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    return UniqueFd();
  return fd;
}

/// Whether the other end closed `fd` (it reads end of stream, or the connection was reset).
bool closed_by_peer(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  char byte = 0;
  return ::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
}

class Trust2_08_ServiceOrders : public CompileService {};

TEST_F(Trust2_08_ServiceOrders, IdleConnectionsDoNotDelayAnOrder) {
  // A first order starts the service.
  ASSERT_TRUE(ordered_worker());
  const pid_t service = listener_pid(socket_path());
  ASSERT_GT(service, 0);
  // Eight connections of the same user that never finish an order: half send nothing, half the
  // first bytes of a header. Each would hold the service for its 5 s read limit in turn.
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(connect_to(socket_path()));
    ASSERT_TRUE(idle.back()) << std::strerror(errno);
    if (i % 2 == 1) {
      ASSERT_EQ(::send(idle.back().get(), "HSV", 3, MSG_NOSIGNAL), 3);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  auto worker = ordered_worker();
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(worker);
  const auto info = read_proc(worker->pid());
  ASSERT_TRUE(info);
  EXPECT_EQ(info->ppid, service) << "the order was not served by the service";
  // A generous bound, far below the 8 x 5 s that reading them in turn would take.
  EXPECT_LT(took, std::chrono::seconds(8))
      << "an order waited " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
      << " ms behind idle connections";
  const backend::CompileResult result = worker->compile(make_request(kernel_source(8)), 60000);
  EXPECT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  // The idle connections are dropped once their own time is up.
  for (const UniqueFd& fd : idle) {
    EXPECT_TRUE(eventually([&] { return closed_by_peer(fd.get()); }, 30))
        << "an idle connection stayed open";
  }
  EXPECT_TRUE(alive(service));
}

TEST_F(Trust2_08_ServiceOrders, AFloodOfIdleConnectionsIsCappedOldestFirst) {
  ASSERT_TRUE(ordered_worker());
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 200; ++i) {
    idle.push_back(connect_to(socket_path()));
    ASSERT_TRUE(idle.back()) << std::strerror(errno);
  }
  // The oldest are dropped at once to make room, long before their read limit.
  EXPECT_TRUE(eventually([&] { return closed_by_peer(idle.front().get()); }, 3))
      << "200 idle connections were all kept";
  auto worker = ordered_worker();
  ASSERT_TRUE(worker);
  EXPECT_EQ(worker->compile(make_request(kernel_source(9)), 60000).status, HIPACM_SUCCESS);
}

class Trust2_12_RemovedWorkingDirectory : public CompileService {};

TEST_F(Trust2_12_RemovedWorkingDirectory, TheFallbackSaysWhy) {
  const fs::path before = fs::current_path();
  const std::string gone = dir_ + "/gone";
  ASSERT_TRUE(fs::create_directory(gone));
  ASSERT_EQ(::chdir(gone.c_str()), 0);
  ASSERT_EQ(::rmdir(gone.c_str()), 0);
  LogLines log;
  auto spawned = WorkerProcess::spawn(kWorkerPath, kArch);
  ASSERT_EQ(::chdir(before.c_str()), 0);
  ASSERT_TRUE(spawned) << spawned.failure().message;
  std::unique_ptr<WorkerProcess> worker = std::move(spawned).value();
  const std::string line = log.find("the compile service cannot be used");
  ASSERT_NE(line, "") << "nothing said why the service was not used";
  EXPECT_EQ(line.find("()"), std::string::npos) << "an empty reason: " << line;
  EXPECT_NE(line.find("the working directory cannot be read"), std::string::npos) << line;
  EXPECT_EQ(worker->compile(make_request(kernel_source(10)), 60000).status, HIPACM_SUCCESS);
}

// Trust2_07: a worker ordered from the service runs with its host's resource limits, CPU set and
// nice value, as a worker the host spawned itself would. Each host is a forked child that limits
// itself, so this process stays unlimited and its service (started first, here) does too.
class Trust2_07_ServiceWorkerLimits : public CompileService {
 protected:
  /// A host in a forked child: it takes on `limit`, orders a worker, and holds it until told to
  /// let go (after compiling with it, when asked).
  class LimitedHost {
   public:
    explicit LimitedHost(const std::function<bool()>& limit) {
      int to[2], from[2];
      if (::pipe(to) != 0 || ::pipe(from) != 0) ADD_FAILURE() << "pipe";
      pid_ = ::fork();
      if (pid_ == 0) {
        ::close(to[1]);
        ::close(from[0]);
        std::unique_ptr<WorkerProcess> worker;
        pid_t worker_pid = -1;
        if (limit()) {
          auto spawned = WorkerProcess::spawn(kWorkerPath, kArch);
          if (spawned) worker = std::move(spawned).value();
          if (worker) worker_pid = worker->pid();
        }
        [[maybe_unused]] const ssize_t w = ::write(from[1], &worker_pid, sizeof worker_pid);
        char go = 0;
        [[maybe_unused]] const ssize_t r = ::read(to[0], &go, 1);
        int code = worker ? 0 : 3;
        if (worker && go == 'c') {
          const backend::CompileResult result =
              worker->compile(make_request(kernel_source(27)), 120000);
          code = result.status == HIPACM_SUCCESS &&
                         backend::check_amdgpu_code_object(result.code, kArch, {"k27"})
                     ? 0
                     : 1;
        }
        worker.reset();  // back to the service
        _exit(code);
      }
      ::close(to[0]);
      ::close(from[1]);
      go_ = to[1];
      if (::read(from[0], &worker_, sizeof worker_) != static_cast<ssize_t>(sizeof worker_))
        worker_ = -1;
      ::close(from[0]);
    }
    ~LimitedHost() {
      if (pid_ > 0) finish(false);
    }
    pid_t pid() const { return pid_; }
    pid_t worker() const { return worker_; }
    /// Lets it compile (or not), give its worker back and exit; its exit code (0: all went well).
    int finish(bool compile) {
      const char go = compile ? 'c' : 'q';
      [[maybe_unused]] const ssize_t w = ::write(go_, &go, 1);
      ::close(go_);
      int status = 0;
      const pid_t waited = ::waitpid(pid_, &status, 0);
      pid_ = -1;
      return waited > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

   private:
    pid_t pid_ = -1;
    pid_t worker_ = -1;
    int go_ = -1;
  };

  /// The lines of /proc/<pid>/limits but the core size's, which every worker sets to 0.
  static std::vector<std::string> limits_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("Max core file size")) lines.push_back(line);
    }
    return lines;
  }
  static std::string limit_line(pid_t pid, const std::string& name) {
    for (const std::string& line : limits_of(pid)) {
      if (line.starts_with(name)) return line;
    }
    return "";
  }
  static std::string cpus_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("Cpus_allowed_list:")) return line;
    }
    return "";
  }
  /// Field 19 of /proc/<pid>/stat.
  static std::optional<int> nice_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line) || line.rfind(')') == std::string::npos) return std::nullopt;
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i < 19 && (rest >> field); ++i) {
    }
    int nice = 0;
    if (!(rest >> nice)) return std::nullopt;
    return nice;
  }

  /// Starts this process's (unlimited) service with one warm worker waiting in it: what a
  /// limited host must not simply be handed.
  pid_t stock_one_worker() {
    auto worker = ordered_worker();
    if (!worker) return -1;
    const pid_t pid = worker->pid();
    worker.reset();
    EXPECT_TRUE(eventually([&] { return back_in_service(pid); }));
    return pid;
  }

  /// 64 GiB, or twice what this process maps where that is more: ASan and TSan reserve terabytes
  /// of shadow memory, and a limit below that fails the sanitizer's own mappings in the host and
  /// the worker alike.
  static rlim_t address_space_limit() {
    constexpr rlim_t kGiB = rlim_t{1} << 30;
    rlim_t mapped = 0;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("VmSize:")) mapped = std::stoull(line.substr(7)) * 1024;
    }
    return std::max(64 * kGiB, (2 * mapped + kGiB - 1) / kGiB * kGiB);
  }
  static inline const rlim_t kAddressSpace = address_space_limit();
};

TEST_F(Trust2_07_ServiceWorkerLimits, AnAddressSpaceLimitReachesTheWorkerAndItStillCompiles) {
  const pid_t stocked = stock_one_worker();
  ASSERT_GT(stocked, 0);
  const pid_t service = listener_pid(socket_path());
  ASSERT_GT(service, 0);
  // `ulimit -Sv`: the soft limit, under the hard one, so the same service serves it.
  LimitedHost host([] {
    rlimit as{};
    return ::getrlimit(RLIMIT_AS, &as) == 0 && (as.rlim_cur = kAddressSpace) <= as.rlim_max &&
           ::setrlimit(RLIMIT_AS, &as) == 0;
  });
  ASSERT_GT(host.worker(), 0);
  EXPECT_EQ(read_proc(host.worker())->ppid, service) << "not a worker of the service";
  EXPECT_NE(limit_line(host.pid(), "Max address space").find(std::to_string(kAddressSpace)),
            std::string::npos)
      << limit_line(host.pid(), "Max address space");
  EXPECT_EQ(limit_line(host.worker(), "Max address space"),
            limit_line(host.pid(), "Max address space"));
  EXPECT_EQ(limits_of(host.worker()), limits_of(host.pid()));
  // A real compile through the limited worker.
  EXPECT_EQ(host.finish(true), 0) << "the limited worker did not compile";
}

TEST_F(Trust2_07_ServiceWorkerLimits, ACpuTimeLimitGetsAFreshWorkerWithThatLimit) {
  const pid_t stocked = stock_one_worker();
  ASSERT_GT(stocked, 0);
  // `ulimit -St 3600`: a worker that already compiled has used part of that time.
  LimitedHost host([] {
    rlimit cpu{};
    return ::getrlimit(RLIMIT_CPU, &cpu) == 0 && (cpu.rlim_cur = 3600) <= cpu.rlim_max &&
           ::setrlimit(RLIMIT_CPU, &cpu) == 0;
  });
  ASSERT_GT(host.worker(), 0);
  EXPECT_NE(limit_line(host.pid(), "Max cpu time").find("3600"), std::string::npos);
  EXPECT_EQ(limit_line(host.worker(), "Max cpu time"), limit_line(host.pid(), "Max cpu time"));
  EXPECT_EQ(limits_of(host.worker()), limits_of(host.pid()));
  EXPECT_NE(host.worker(), stocked) << "a worker with CPU time used up was handed out";
  EXPECT_TRUE(back_in_service(stocked)) << "the unlimited waiting worker was disturbed";
  const pid_t worker = host.worker();
  EXPECT_EQ(host.finish(true), 0);
  EXPECT_TRUE(eventually([&] { return !alive(worker); }))
      << "a worker with its host's limits went back to serve other hosts";
}

TEST_F(Trust2_07_ServiceWorkerLimits, ACpuSetReachesTheWorkerAndStaysWithIt) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "needs two CPUs to narrow to one";
  int last = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mine)) last = cpu;
  }
  const pid_t stocked = stock_one_worker();
  ASSERT_GT(stocked, 0);
  // `taskset -c LAST`.
  LimitedHost host([last] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    return ::sched_setaffinity(0, sizeof one, &one) == 0;
  });
  ASSERT_GT(host.worker(), 0);
  EXPECT_EQ(cpus_of(host.pid()), "Cpus_allowed_list:\t" + std::to_string(last));
  EXPECT_EQ(cpus_of(host.worker()), cpus_of(host.pid()));
  const pid_t narrowed = host.worker();
  EXPECT_EQ(host.finish(true), 0);
  // The next host, with every CPU, gets a worker with every CPU.
  EXPECT_TRUE(eventually([&] { return !alive(narrowed); }))
      << "the narrowed worker went back to serve other hosts";
  auto next = ordered_worker();
  ASSERT_TRUE(next);
  EXPECT_NE(next->pid(), narrowed);
  EXPECT_EQ(cpus_of(next->pid()), cpus_of(::getpid()));
}

TEST_F(Trust2_07_ServiceWorkerLimits, ANiceValueReachesTheWorker) {
  ASSERT_GT(stock_one_worker(), 0);
  errno = 0;
  const int own = ::getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  if (own > 14) GTEST_SKIP() << "this process is already nice " << own;
  // `nice -n 5`.
  LimitedHost host([own] { return ::setpriority(PRIO_PROCESS, 0, own + 5) == 0; });
  ASSERT_GT(host.worker(), 0);
  ASSERT_EQ(nice_of(host.pid()), own + 5);
  EXPECT_EQ(nice_of(host.worker()), nice_of(host.pid()));
  EXPECT_EQ(host.finish(true), 0);
  auto next = ordered_worker();
  ASSERT_TRUE(next);
  EXPECT_EQ(nice_of(next->pid()), own) << "an unlimited host got a niced worker";
}

TEST_F(Trust2_07_ServiceWorkerLimits, AHostWithHigherLimitsAfterALoweredOneGetsItsOwn) {
#if defined(__SANITIZE_THREAD__)
  // A lowered hard address-space limit starts a service of its own, and a ThreadSanitizer
  // program started under any address-space limit refuses to run: the release and ASan builds
  // run this test.
  GTEST_SKIP() << "ThreadSanitizer cannot start under a hard RLIMIT_AS";
#endif
  const pid_t stocked = stock_one_worker();
  ASSERT_GT(stocked, 0);
  const pid_t service = listener_pid(socket_path());
  const std::string unlimited = limit_line(::getpid(), "Max address space");
  {
    // The waiting worker takes on a lowered soft limit...
    LimitedHost lowered([] {
      rlimit as{};
      return ::getrlimit(RLIMIT_AS, &as) == 0 && (as.rlim_cur = kAddressSpace) <= as.rlim_max &&
             ::setrlimit(RLIMIT_AS, &as) == 0;
    });
    ASSERT_GT(lowered.worker(), 0);
    EXPECT_EQ(lowered.worker(), stocked) << "the waiting worker could have taken these on";
    EXPECT_EQ(limits_of(lowered.worker()), limits_of(lowered.pid()));
    EXPECT_EQ(lowered.finish(false), 0);
    // ...and never serves a host with higher ones.
    EXPECT_TRUE(eventually([&] { return !alive(stocked); }));
  }
  {
    // A lowered hard limit, which no worker can raise again.
    LimitedHost lowered([] {
      rlimit as{kAddressSpace, kAddressSpace};
      return ::setrlimit(RLIMIT_AS, &as) == 0;
    });
    ASSERT_GT(lowered.worker(), 0);
    EXPECT_EQ(limits_of(lowered.worker()), limits_of(lowered.pid()));
    EXPECT_NE(limit_line(lowered.worker(), "Max address space").find(std::to_string(kAddressSpace)),
              std::string::npos);
    EXPECT_EQ(lowered.finish(true), 0);
  }
  // Higher limits again: a worker with them, from this process's service.
  for (int i = 0; i < 2; ++i) {
    LimitedHost higher([] { return true; });
    ASSERT_GT(higher.worker(), 0);
    EXPECT_EQ(read_proc(higher.worker())->ppid, service);
    EXPECT_EQ(limit_line(higher.worker(), "Max address space"), unlimited);
    EXPECT_EQ(limits_of(higher.worker()), limits_of(higher.pid()));
    EXPECT_EQ(higher.finish(true), 0);
  }
}

TEST_F(Trust2_07_ServiceWorkerLimits, ASpawnedWorkerTakesThemOnToo) {
  // A service whose compilers started threads spawns its workers: the limits reach those too.
  ScopedEnv spawn("HIPACM_SERVICE_FORK", "off");
  const pid_t stocked = stock_one_worker();
  ASSERT_GT(stocked, 0);
#if defined(__SANITIZE_THREAD__)
  // A ThreadSanitizer program that finds an address-space limit while it starts re-executes
  // itself without one, and a spawned worker can still be starting when its limits arrive.
  constexpr bool kLimitAddressSpace = false;
#else
  constexpr bool kLimitAddressSpace = true;
#endif
  LimitedHost host([] {
    rlimit cpu{}, as{};
    return ::getrlimit(RLIMIT_CPU, &cpu) == 0 && (cpu.rlim_cur = 3600) <= cpu.rlim_max &&
           ::setrlimit(RLIMIT_CPU, &cpu) == 0 &&
           (!kLimitAddressSpace ||
            (::getrlimit(RLIMIT_AS, &as) == 0 && (as.rlim_cur = kAddressSpace) <= as.rlim_max &&
             ::setrlimit(RLIMIT_AS, &as) == 0));
  });
  ASSERT_GT(host.worker(), 0);
  EXPECT_NE(host.worker(), stocked) << "a CPU time limit needs a fresh worker";
  // Right after exec the new image's arguments may not be in place yet (cmdline reads empty).
  std::string args;
  EXPECT_TRUE(eventually([&] {
    std::ifstream cmdline("/proc/" + std::to_string(host.worker()) + "/cmdline");
    args.assign(std::istreambuf_iterator<char>(cmdline), std::istreambuf_iterator<char>());
    return !args.empty();
  }));
  EXPECT_NE(args.find("--service-worker"), std::string::npos) << "not a spawned worker: " << args;
  EXPECT_EQ(limits_of(host.worker()), limits_of(host.pid()));
  EXPECT_NE(limit_line(host.worker(), "Max cpu time").find("3600"), std::string::npos);
  EXPECT_EQ(host.finish(true), 0);
}

TEST_F(Trust2_07_ServiceWorkerLimits, OrdersCarryLimitsAndHostileOnesAreRefused) {
  sw::WorkerOrder order;
  order.arch = "gfx90a";
  order.cwd = "/";
  order.temp_dir = "/tmp/hipacm-worker-x";
  order.limits = backend::capture_host_limits();
  ASSERT_EQ(order.limits.limits.size(), static_cast<std::size_t>(RLIMIT_NLIMITS));
  ASSERT_FALSE(order.limits.cpus.empty());
  std::string why;
  const auto encoded = sw::encode_order(order);
  ASSERT_TRUE(encoded) << encoded.failure().message;
  const std::vector<std::uint8_t>& bytes = encoded.value();
  const auto back =
      sw::decode_order(bytes.data() + sw::kHeaderBytes, bytes.size() - sw::kHeaderBytes);
  ASSERT_TRUE(back) << back.failure().message;
  EXPECT_TRUE(back->limits == order.limits);

  auto refused = [&](const backend::HostLimits& limits, const std::string& reason) {
    sw::WorkerOrder hostile = order;
    hostile.limits = limits;
    const auto hostile_bytes = sw::encode_order(hostile);
    EXPECT_TRUE(hostile_bytes);
    if (!hostile_bytes) return;
    const std::vector<std::uint8_t>& hostile_wire = hostile_bytes.value();
    const auto decoded = sw::decode_order(hostile_wire.data() + sw::kHeaderBytes,
                                          hostile_wire.size() - sw::kHeaderBytes);
    EXPECT_FALSE(decoded) << reason;
    const std::string text = decoded ? std::string() : decoded.failure().message;
    EXPECT_FALSE(text.empty()) << reason;
  };
  backend::HostLimits bad = order.limits;
  bad.limits.push_back({RLIMIT_NLIMITS, 1, 1});
  refused(bad, "an unknown resource");
  bad = order.limits;
  bad.limits.push_back(bad.limits.front());
  refused(bad, "a repeated resource");
  bad = order.limits;
  bad.limits[0].soft = 2;
  bad.limits[0].hard = 1;
  refused(bad, "soft above hard");
  bad = order.limits;
  bad.cpus.push_back(0);
  refused(bad, "an untrimmed CPU mask");
  bad = order.limits;
  bad.cpus.assign(backend::kMaxCpuMaskBytes + 1, 0xff);
  refused(bad, "an oversized CPU mask");
  bad = order.limits;
  bad.nice = 20;
  refused(bad, "nice 20");
  bad.nice = -21;
  refused(bad, "nice -21");
  // A header of another version is refused as such.
  std::vector<std::uint8_t> old = bytes;
  old[6] = 1;
  const auto old_header = sw::parse_header(old.data(), old.size());
  EXPECT_FALSE(old_header);
  if (!old_header) why = old_header.failure().message;
  EXPECT_NE(why.find("version"), std::string::npos) << why;
}

}  // namespace
}  // namespace hipacm::test
