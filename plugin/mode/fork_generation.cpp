// fork_generation.cpp - counts fork()s and keeps the plugin's locks consistent across them.
#include "plugin/mode/fork_generation.h"

#include <pthread.h>

#include <atomic>

#include "plugin/cache/registry.h"
#include "plugin/mode/future_registry.h"
#include "plugin/mode/mode_registry.h"

namespace hipacm {
namespace {

std::atomic<std::uint64_t> g_generation{0};
std::atomic<bool> g_installed{false};

// The registries' locks are held across fork() so that the child never
// inherits one locked by a thread that does not exist there.
void prepare() noexcept {
  mode_registry_prepare_fork();
  future_registry_prepare_fork();
  cache::cache_registry_prepare_fork();
}

void in_parent() noexcept {
  cache::cache_registry_after_fork();
  future_registry_after_fork();
  mode_registry_parent_after_fork();
}

void in_child() noexcept {
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  cache::cache_registry_after_fork();
  future_registry_after_fork();
  mode_registry_child_after_fork();
}

}  // namespace

std::uint64_t fork_generation() noexcept { return g_generation.load(std::memory_order_acquire); }

void install_fork_handlers() noexcept {
  bool expected = false;
  if (g_installed.compare_exchange_strong(expected, true, std::memory_order_acq_rel))
    pthread_atfork(&prepare, &in_parent, &in_child);
}

}  // namespace hipacm
