// SPDX-License-Identifier: MIT
// mode.hpp - hipacm::Mode, the process-wide async compile mode as an RAII guard.
#ifndef HIPACM_CPP_MODE_HPP
#define HIPACM_CPP_MODE_HPP

#include <hipacm/cpp/callbacks.hpp>
#include <hipacm/cpp/config.hpp>
#include <hipacm/cpp/error.hpp>
#include <hipacm/cpp/future.hpp>
#include <hipacm/cpp/request.hpp>

#include <atomic>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hipacm {

/// The process-wide async compile mode, as an RAII guard.
///
/// The constructor claims the slot (throws hipacm::Error, e.g.
/// ModeAlreadyActive). The destructor exits the mode, collecting every
/// compile, and never throws: a failure is logged to stderr. exit() throws
/// hipacm::CompileError instead. submit() may be called from many threads.
class Mode {
 public:
  explicit Mode(const Config& config = Config()) : state_(std::make_unique<State>()) {
    const hipacm_mode_config cfg = config.to_c();
    hipacm_mode* raw = nullptr;
    const hipacm_status status = hipacm_mode_enter(&cfg, &raw);
    if (status != HIPACM_SUCCESS) throw detail::last_error(status);
    state_->raw.store(raw);
  }
  Mode(const Mode&) = delete;
  Mode& operator=(const Mode&) = delete;
  Mode(Mode&&) noexcept = default;
  Mode& operator=(Mode&& other) noexcept {
    if (this != &other) {
      exit_quietly();
      state_ = std::move(other.state_);
    }
    return *this;
  }
  ~Mode() { exit_quietly(); }

  /// Schedules a compile and returns at once. A key already in the mode
  /// returns the same future (a dedup hit) and attaches no callables: this
  /// submit's copies are destroyed unrun when the mode exits.
  Future submit(const Request& request) {
    hipacm_mode* raw = get();
    if (raw == nullptr)
      throw Error(Status::ModeClosed, "hipacm::Mode::submit: the mode has exited");
    std::vector<const char*> ptrs;
    hipacm_request req = request.to_c(ptrs);
    auto slot = request.make_slot(state_->errors);
    if (slot) {
      detail::attach(slot, req);
      // Kept before the call: once the plugin has the callbacks, keeping the
      // slot must not be able to fail.
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->slots.push_back(slot);
    }
    hipacm_future* out = nullptr;
    const hipacm_status status = hipacm_submit(raw, &req, &out);
    if (status != HIPACM_SUCCESS || out == nullptr) {
      Error error = detail::last_error(status);
      if (slot) {
        // A rejected submit attaches nothing: destroy the callables unrun.
        {
          std::lock_guard<std::mutex> lock(state_->mutex);
          auto& slots = state_->slots;
          for (auto it = slots.end(); it != slots.begin();) {
            if ((--it)->get() == slot.get()) {
              slots.erase(it);
              break;
            }
          }
        }
        slot->discard();
      }
      throw error;
    }
    Future future(out, state_->errors);
    return future;
  }

  /// Leaves the mode: the slot is freed first, then every compile is
  /// collected. Throws CompileError with the first failure (unless the
  /// config set ignore_errors). Afterwards the guard is inactive.
  void exit() {
    std::optional<CompileError> failure = exit_impl();
    if (failure) throw std::move(*failure);
  }

  bool active() const noexcept { return get() != nullptr; }
  /// The raw handle; NULL once the mode has exited.
  hipacm_mode* get() const noexcept { return state_ ? state_->raw.load() : nullptr; }

 private:
  struct State {
    // Atomic: a submit() racing exit() sees the mode or NULL (the plugin then
    // answers MODE_CLOSED), never a torn pointer.
    std::atomic<hipacm_mode*> raw{nullptr};
    std::mutex mutex;
    std::vector<std::shared_ptr<detail::Slot>> slots;
    std::shared_ptr<detail::FinalizeErrors> errors = std::make_shared<detail::FinalizeErrors>();
  };

  void exit_quietly() noexcept {
    try {
      std::optional<CompileError> failure = exit_impl();
      if (failure) {
        detail::log_line("mode exit: ", failure->what());
        if (!failure->log().empty())
          std::fprintf(stderr, "hipacm: compiler log of '%s':\n%s\n", failure->key().c_str(),
                       failure->log().c_str());
      }
    } catch (const std::exception& e) {
      detail::log_line("mode exit: ", e.what());
    } catch (...) {
      detail::log_line("mode exit failed");
    }
  }

  std::optional<CompileError> exit_impl() {
    if (!state_) return std::nullopt;
    hipacm_mode* raw = state_->raw.exchange(nullptr);
    if (raw == nullptr) return std::nullopt;
    hipacm_future* first = nullptr;
    const hipacm_status status = hipacm_mode_exit(raw, &first);
    Future first_failure(first, state_->errors);  // owns the reference from here on
    std::string message =
        status == HIPACM_SUCCESS ? std::string() : detail::to_string(hipacm_last_error_message());

    std::vector<std::shared_ptr<detail::Slot>> slots;
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      slots.swap(state_->slots);
    }
    if (status == HIPACM_SUCCESS || first != nullptr) {
      // Every future of the mode was collected: no callback can run any more.
      // What is left in a slot was never attached (dedup hits) or never run.
      for (auto& slot : slots) slot->discard();
      slots.clear();
    } else {
      // The exit call itself failed: the plugin might still hold these
      // callbacks, so leak them rather than free them under it.
      static_cast<void>(
          std::make_unique<std::vector<std::shared_ptr<detail::Slot>>>(std::move(slots)).release());
      detail::log_line("hipacm_mode_exit failed; leaking its callback slots");
    }
    if (status == HIPACM_SUCCESS) return std::nullopt;
    std::string key = first ? detail::to_string(hipacm_future_key(first)) : std::string();
    std::string log = first ? detail::to_string(hipacm_future_log(first)) : std::string();
    return CompileError(
        Error(static_cast<Status>(status), std::move(message), std::move(key), std::move(log)),
        std::move(first_failure));
  }

  std::unique_ptr<State> state_;
};

/// True while some mode is active in this process.
inline bool active_mode_is_set() noexcept { return hipacm_active_mode() != nullptr; }

}  // namespace hipacm

#endif  // HIPACM_CPP_MODE_HPP
