// SPDX-License-Identifier: MIT
// child_process.cpp - posix_spawnp of COMMAND, signal forwarding while it runs, and its wait status
// as an exit status.
#include "tools/run/child_process.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>

#include "support/c_strings.h"

namespace hipacm::cli {
namespace {

constexpr std::array kForwarded = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// The child the handler forwards to; 0 until it is started.
std::atomic<pid_t> forward_to{0};
// A signal that came before the child existed, sent to it once it does.
std::atomic<int> pending_signal{0};

// A signal sent to this process alone (kill(), sigqueue(), tgkill(): si_code <= 0) goes on to the
// child. One the kernel raised for the terminal (^C, ^\, a hangup) went to the whole foreground
// process group, the child included, and is not sent twice.
void forward_signal(int signal, siginfo_t* info, void*) {
  if (info == nullptr || info->si_code > 0) return;
  const pid_t child = forward_to.load();
  if (child > 0)
    kill(child, signal);
  else
    pending_signal.store(signal);
}

// Installs the forwarding handlers for its lifetime and puts the old ones back. They are in
// place before the child starts, so that no signal in between ends this process without it.
class SignalForwarding {
 public:
  SignalForwarding() {
    forward_to.store(0);
    pending_signal.store(0);
    struct sigaction action {};
    action.sa_sigaction = forward_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kForwarded.size(); ++i)
      sigaction(kForwarded[i], &action, &previous_[i]);
  }
  ~SignalForwarding() {
    for (std::size_t i = 0; i < kForwarded.size(); ++i)
      sigaction(kForwarded[i], &previous_[i], nullptr);
    forward_to.store(0);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

  /// From now on signals go to `child`, the one that came before it included.
  void start_forwarding(pid_t child) {
    forward_to.store(child);
    if (const int signal = pending_signal.exchange(0)) kill(child, signal);
  }

 private:
  std::array<struct sigaction, kForwarded.size()> previous_{};
};

// Spawn attributes: the child starts with no blocked signals and default dispositions for the
// forwarded ones, whatever this process had.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawnattr_init(&attributes_);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (const int signal : kForwarded) sigaddset(&defaults, signal);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&attributes_, &none);
    posix_spawnattr_setsigdefault(&attributes_, &defaults);
    posix_spawnattr_setflags(&attributes_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  const posix_spawnattr_t* get() const { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

}  // namespace

ChildOutcome run_child(const std::vector<std::string>& argv,
                       const std::vector<std::string>& environment) {
  ChildOutcome outcome;
  const std::vector<char*> args = exec_strings(argv);
  const std::vector<char*> env = exec_strings(environment);
  const SpawnAttributes attributes;
  SignalForwarding forwarding;
  pid_t child = -1;
  // glibc's posix_spawnp reports a failed exec here, with its errno, like a shell's lookup.
  const int error =
      posix_spawnp(&child, args[0], nullptr, attributes.get(), args.data(), env.data());
  if (error != 0) {
    outcome.exit_status = error == ENOENT ? kRunNotFound : kRunCannotExecute;
    outcome.error = error == ENOENT ? std::string("command not found") : strerror(error);
    return outcome;
  }
  forwarding.start_forwarding(child);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      outcome.exit_status = kRunSetupFailed;
      outcome.error = std::string("lost the command: ") + strerror(errno);
      return outcome;
    }
  }
  if (WIFSIGNALED(status))
    outcome.exit_status = kRunKilledBySignal + WTERMSIG(status);
  else
    outcome.exit_status = WEXITSTATUS(status);
  return outcome;
}

}  // namespace hipacm::cli
