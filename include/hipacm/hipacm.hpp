// hipacm.hpp - a header-only C++17 RAII layer over the hipacm C ABI (hipacm.h).
#ifndef HIPACM_HIPACM_HPP
#define HIPACM_HIPACM_HPP

/*
 * Thin, exception-based C++ wrappers:
 *
 *   hipacm::Mode mode(hipacm::Config().arch("gfx90a"));     // claims the slot
 *   hipacm::Future f = mode.submit(hipacm::Request(src).key("vadd"));
 *   mode.exit();                        // throws hipacm::CompileError on a failed compile
 *   const hipacm_kernel& k = f.result(); // throws hipacm::Error
 *
 * - Mode is a guard: its destructor exits the mode (collecting every compile)
 *   and never throws; a failure is logged to stderr. So the slot is freed also
 *   while an exception unwinds.
 * - Future is a counted reference: copying retains, destruction releases. It
 *   stays valid after its mode has exited.
 * - Exceptions are thrown only on the C++ side, never through the C
 *   callbacks: a finalize callable that throws marks the future
 *   HIPACM_ERROR_FINALIZE_FAILED (the exception's what() becomes the
 *   message), and an exception from a cleanup callable is logged and dropped.
 * - Each submit hands the plugin its own copy of the request's finalize and
 *   cleanup callables. That copy is destroyed exactly once: right after it
 *   has run; or, when the plugin never attached it (the submit was a dedup
 *   hit) or never ran it, when the mode exits (for hipacm::compile, when the
 *   last Future copy is destroyed).
 */

#include <hipacm/hipacm.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hipacm {

/// hipacm_status as a scoped enum; the numbers are fixed by the ABI.
enum class Status : int {
  Success = HIPACM_SUCCESS,
  InvalidArgument = HIPACM_ERROR_INVALID_ARGUMENT,
  AbiMismatch = HIPACM_ERROR_ABI_MISMATCH,
  ModeAlreadyActive = HIPACM_ERROR_MODE_ALREADY_ACTIVE,
  ModeClosed = HIPACM_ERROR_MODE_CLOSED,
  Compilation = HIPACM_ERROR_COMPILATION,
  CompilerCrashed = HIPACM_ERROR_COMPILER_CRASHED,
  Timeout = HIPACM_ERROR_TIMEOUT,
  Cancelled = HIPACM_ERROR_CANCELLED,
  BackendUnavailable = HIPACM_ERROR_BACKEND_UNAVAILABLE,
  FinalizeFailed = HIPACM_ERROR_FINALIZE_FAILED,
  NotReady = HIPACM_ERROR_NOT_READY,
  OutOfMemory = HIPACM_ERROR_OUT_OF_MEMORY,
  Internal = HIPACM_ERROR_INTERNAL,
};

/// "HIPACM_ERROR_COMPILATION" etc.; never NULL.
inline const char* status_string(Status s) noexcept {
  return hipacm_status_string(static_cast<hipacm_status>(s));
}

/// A failed call or compile: status, message, and for a compile its key and log.
class Error : public std::runtime_error {
 public:
  Error(Status status, std::string message, std::string key = {}, std::string log = {})
      : std::runtime_error(message + " (" + status_string(status) + ")"),
        status_(status),
        message_(std::move(message)),
        key_(std::move(key)),
        log_(std::move(log)) {}

  Status status() const noexcept { return status_; }
  /// The plugin's message (hipacm_last_error_message / hipacm_future_error_message).
  const std::string& message() const noexcept { return message_; }
  /// The key of the compile that failed ("" when the error is not a compile's).
  const std::string& key() const noexcept { return key_; }
  /// The compiler log of the compile that failed ("" when none).
  const std::string& log() const noexcept { return log_; }

 private:
  Status status_;
  std::string message_;
  std::string key_;
  std::string log_;
};

class Future;
class Mode;

namespace detail {

inline std::string to_string(const char* s) {
  return s != nullptr ? std::string(s) : std::string();
}

/// An error from the call that just failed on this thread.
inline Error last_error(hipacm_status status) {
  return Error(static_cast<Status>(status), to_string(hipacm_last_error_message()));
}

/// Messages of finalize callables that failed, by future handle. One per mode
/// (or per compile() call); the mode keeps each of its futures alive until it
/// exits, so an address names one future here.
struct FinalizeErrors {
  std::mutex mutex;
  std::unordered_map<const void*, std::string> messages;

  void record(const void* f, std::string message) {
    std::lock_guard<std::mutex> lock(mutex);
    messages[f] = std::move(message);
  }
  std::optional<std::string> find(const void* f) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = messages.find(f);
    if (it == messages.end()) return std::nullopt;
    return it->second;
  }
};

using FinalizeFn = std::function<void(const hipacm_kernel&)>;
using CleanupFn = std::function<void(const Error&)>;

/// The user_data of one submit: the callables, and where a finalize failure goes.
struct Slot {
  std::mutex mutex;
  FinalizeFn finalize;
  CleanupFn cleanup;
  std::optional<std::string> finalize_error;
  std::shared_ptr<FinalizeErrors> errors;

  /// Destroys the callables that never ran (outside the lock).
  void discard() noexcept {
    FinalizeFn f;
    CleanupFn c;
    {
      std::lock_guard<std::mutex> lock(mutex);
      f.swap(finalize);
      c.swap(cleanup);
    }
  }
};

inline void log_line(const char* what, const char* extra = "") noexcept {
  std::fprintf(stderr, "hipacm: %s%s\n", what, extra);
}

inline int finalize_trampoline(void* user_data, hipacm_future* f) noexcept {
  auto* slot = static_cast<Slot*>(user_data);
  FinalizeFn fn;
  {
    std::lock_guard<std::mutex> lock(slot->mutex);
    fn.swap(slot->finalize);
  }
  // Nothing may propagate into C: every exception is caught here.
  const char* failure = nullptr;
  std::string what;
  try {
    if (fn) {
      const hipacm_kernel* kernel = nullptr;
      // Inside its own callback this returns the compile outcome at once.
      if (hipacm_future_result(f, &kernel) != HIPACM_SUCCESS || kernel == nullptr)
        failure = "the kernel was not available to the finalize callback";
      else
        fn(*kernel);
    }
  } catch (const std::exception& e) {
    failure = "the finalize callback threw";
    try {
      what = e.what();
    } catch (...) {
    }
  } catch (...) {
    failure = "the finalize callback threw a non-std::exception";
  }
  fn = nullptr;
  if (failure == nullptr) {
    // Success: cleanup will never run; free it now.
    CleanupFn c;
    std::lock_guard<std::mutex> lock(slot->mutex);
    c.swap(slot->cleanup);
    return 0;
  }
  try {
    std::string message = what.empty() ? std::string(failure) : what;
    {
      std::lock_guard<std::mutex> lock(slot->mutex);
      slot->finalize_error = message;
    }
    if (slot->errors) slot->errors->record(f, std::move(message));
  } catch (...) {
    // Out of memory while recording: the status still says FINALIZE_FAILED.
  }
  return 1;
}

inline void cleanup_trampoline(void* user_data, hipacm_future* f) noexcept {
  auto* slot = static_cast<Slot*>(user_data);
  FinalizeFn unrun;
  CleanupFn fn;
  std::optional<std::string> finalize_error;
  {
    std::lock_guard<std::mutex> lock(slot->mutex);
    unrun.swap(slot->finalize);  // a failed compile never runs finalize
    fn.swap(slot->cleanup);
    finalize_error.swap(slot->finalize_error);
  }
  unrun = nullptr;
  if (!fn) return;
  try {
    const std::string key = to_string(hipacm_future_key(f));
    const std::string log = to_string(hipacm_future_log(f));
    if (finalize_error) {
      fn(Error(Status::FinalizeFailed,
               "the finalize callback of '" + key + "' failed: " + *finalize_error, key, log));
    } else {
      // During the callback the status is the compile's outcome.
      fn(Error(static_cast<Status>(hipacm_future_status(f)),
               to_string(hipacm_future_error_message(f)), key, log));
    }
  } catch (const std::exception& e) {
    log_line("the cleanup callback threw: ", e.what());
  } catch (...) {
    log_line("the cleanup callback threw a non-std::exception");
  }
}

inline void attach(const std::shared_ptr<Slot>& slot, hipacm_request& req) noexcept {
  req.finalize = &finalize_trampoline;
  req.cleanup = &cleanup_trampoline;
  req.user_data = slot.get();
}

}  // namespace detail

/// A counted reference to one compile's outcome. Copy = retain; destruction =
/// release. Valid after its mode has exited. Thread-safe like the C API.
class Future {
 public:
  Future() noexcept = default;

  /// Adopts one reference (e.g. from hipacm_submit).
  explicit Future(hipacm_future* owned, std::shared_ptr<detail::FinalizeErrors> errors = nullptr,
                  std::shared_ptr<detail::Slot> slot = nullptr) noexcept
      : raw_(owned), errors_(std::move(errors)), slot_(std::move(slot)) {}

  Future(const Future& other) noexcept
      : raw_(other.raw_), errors_(other.errors_), slot_(other.slot_) {
    if (raw_ != nullptr) hipacm_future_retain(raw_);
  }
  Future(Future&& other) noexcept
      : raw_(std::exchange(other.raw_, nullptr)),
        errors_(std::move(other.errors_)),
        slot_(std::move(other.slot_)) {}
  Future& operator=(Future other) noexcept {
    swap(other);
    return *this;  // `other` releases the old reference, then drops the old slot
  }
  ~Future() {
    // Release first: the slot (compile() only) must outlive the handle.
    if (raw_ != nullptr) hipacm_future_release(raw_);
  }

  void swap(Future& other) noexcept {
    std::swap(raw_, other.raw_);
    errors_.swap(other.errors_);
    slot_.swap(other.slot_);
  }

  /// Blocks until done, runs finalize or cleanup exactly once (here, unless
  /// another thread got there first), and returns the kernel, owned by the
  /// future. Throws hipacm::Error with the status, key and log on failure.
  const hipacm_kernel& result() const {
    const hipacm_kernel* kernel = nullptr;
    const hipacm_status status = hipacm_future_result(raw_, &kernel);
    if (status == HIPACM_SUCCESS && kernel != nullptr) return *kernel;
    throw error(status);
  }

  /// Waits until done (whatever the outcome); false on timeout. Never runs callbacks.
  bool wait() const noexcept { return hipacm_future_wait(raw_, -1) == HIPACM_SUCCESS; }
  /// Rounded up to milliseconds; one too long for int64_t milliseconds
  /// (e.g. hours::max()) waits forever, and zero, negative or NaN only polls.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const noexcept {
    // Compared in floating point first: converting a huge duration to integer
    // milliseconds would overflow into a negative, i.e. no wait at all.
    const double ms = std::chrono::duration<double, std::milli>(timeout).count();
    if (!(ms > 0.0)) return hipacm_future_wait(raw_, 0) == HIPACM_SUCCESS;  // also NaN
    if (ms >= 9.0e18) return wait();
    const auto whole = static_cast<int64_t>(ms);
    return hipacm_future_wait(raw_, whole < ms ? whole + 1 : whole) == HIPACM_SUCCESS;
  }

  /// NotReady while pending, else the outcome.
  Status status() const noexcept { return static_cast<Status>(hipacm_future_status(raw_)); }
  bool done() const noexcept { return status() != Status::NotReady; }

  /// Owned by the future; never NULL.
  const char* key() const noexcept { return hipacm_future_key(raw_); }
  const char* log() const noexcept { return hipacm_future_log(raw_); }
  const char* error_message() const noexcept { return hipacm_future_error_message(raw_); }

  hipacm_future* get() const noexcept { return raw_; }
  explicit operator bool() const noexcept { return raw_ != nullptr; }
  /// The same compile (dedup hits compare equal).
  friend bool operator==(const Future& a, const Future& b) noexcept { return a.raw_ == b.raw_; }
  friend bool operator!=(const Future& a, const Future& b) noexcept { return a.raw_ != b.raw_; }

 private:
  Error error(hipacm_status status) const {
    std::string message = detail::to_string(hipacm_future_error_message(raw_));
    const std::string key = detail::to_string(hipacm_future_key(raw_));
    if (status == HIPACM_ERROR_FINALIZE_FAILED && errors_) {
      if (auto why = errors_->find(raw_))
        message = "the finalize callback of '" + key + "' failed: " + *why;
    }
    if (raw_ == nullptr) message = "empty hipacm::Future";
    return Error(static_cast<Status>(status), std::move(message), key,
                 detail::to_string(hipacm_future_log(raw_)));
  }

  hipacm_future* raw_ = nullptr;
  std::shared_ptr<detail::FinalizeErrors> errors_;
  std::shared_ptr<detail::Slot> slot_;
};

/// Thrown by Mode::exit(): the first failed compile, in completion order. The
/// mode slot is already free when this is thrown.
class CompileError : public Error {
 public:
  CompileError(Error error, Future first_failure)
      : Error(std::move(error)), first_failure_(std::move(first_failure)) {}
  /// The failed compile's future (empty when the exit call itself failed).
  const Future& first_failure() const noexcept { return first_failure_; }

 private:
  Future first_failure_;
};

/// The lowered (mangled) names of a kernel, in name-expression order.
inline std::vector<std::string_view> lowered_names(const hipacm_kernel& k) {
  std::vector<std::string_view> names;
  for (size_t i = 0; i < k.num_lowered_names; ++i) names.emplace_back(k.lowered_names[i]);
  return names;
}

/// Where compiles run.
enum class Isolation : int32_t {
  Auto = HIPACM_ISOLATION_AUTO,
  InProcess = HIPACM_ISOLATION_IN_PROCESS,
  Process = HIPACM_ISOLATION_PROCESS,
};

/// Options for Mode; the defaults are the plugin's.
class Config {
 public:
  Config& max_workers(uint32_t n) {
    max_workers_ = n;
    return *this;
  }
  Config& ignore_errors(bool yes = true) {
    ignore_errors_ = yes;
    return *this;
  }
  Config& fail_fast(bool yes = true) {
    fail_fast_ = yes;
    return *this;
  }
  /// e.g. "gfx90a"; default: $HIPACM_ARCH, otherwise the device's.
  Config& arch(std::string a) {
    arch_ = std::move(a);
    return *this;
  }
  Config& isolation(Isolation i) {
    isolation_ = i;
    return *this;
  }
  /// Per-compile limit in worker processes (rounded up to ms); zero = none.
  template <class Rep, class Period>
  Config& compile_timeout(std::chrono::duration<Rep, Period> d) {
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
    compile_timeout_ms_ = ms <= 0                    ? 0u
                          : ms > int64_t{UINT32_MAX} ? UINT32_MAX
                                                     : static_cast<uint32_t>(ms);
    return *this;
  }

  /// The C struct; `arch` points into this Config.
  hipacm_mode_config to_c() const noexcept {
    hipacm_mode_config cfg;
    hipacm_mode_config_init(&cfg);  // the macro: sizeof(cfg) as this header declares it
    cfg.max_workers = max_workers_;
    cfg.ignore_errors = ignore_errors_ ? 1 : 0;
    cfg.fail_fast = fail_fast_ ? 1 : 0;
    cfg.arch = arch_ ? arch_->c_str() : nullptr;
    cfg.isolation = static_cast<int32_t>(isolation_);
    cfg.compile_timeout_ms = compile_timeout_ms_;
    return cfg;
  }

 private:
  uint32_t max_workers_ = 0;
  bool ignore_errors_ = false;
  bool fail_fast_ = false;
  std::optional<std::string> arch_;
  Isolation isolation_ = Isolation::Auto;
  uint32_t compile_timeout_ms_ = 0;
};

/// One compile request. Each submit copies the finalize/cleanup callables.
class Request {
 public:
  explicit Request(std::string source) : source_(std::move(source)) {}

  /// Dedup key (default: a SHA-256 content digest).
  Request& key(std::string k) {
    key_ = std::move(k);
    return *this;
  }
  /// Source file name (default "kernel.hip").
  Request& name(std::string n) {
    name_ = std::move(n);
    return *this;
  }
  Request& option(std::string o) {
    options_.push_back(std::move(o));
    return *this;
  }
  Request& options(std::vector<std::string> o) {
    for (auto& s : o) options_.push_back(std::move(s));
    return *this;
  }
  /// A header the source can #include "name".
  Request& header(std::string name, std::string source) {
    header_names_.push_back(std::move(name));
    header_sources_.push_back(std::move(source));
    return *this;
  }
  /// e.g. "scale<float>"; see hipacm::lowered_names().
  Request& name_expression(std::string e) {
    name_expressions_.push_back(std::move(e));
    return *this;
  }
  /// Runs once on the collecting thread after a successful compile; throwing
  /// marks the future FINALIZE_FAILED (what() becomes the message) and runs cleanup.
  Request& finalize(std::function<void(const hipacm_kernel&)> f) {
    finalize_ = std::move(f);
    return *this;
  }
  /// Runs once on the collecting thread after a failed, cancelled or
  /// finalize-failed compile. Exceptions from it are logged and dropped.
  Request& cleanup(std::function<void(const Error&)> c) {
    cleanup_ = std::move(c);
    return *this;
  }

 private:
  friend class Mode;
  friend Future compile(const Request&, const char*);

  /// The C view; every pointer points into this Request or into `ptrs`.
  hipacm_request to_c(std::vector<const char*>& ptrs) const {
    ptrs.clear();
    ptrs.reserve(options_.size() + 2 * header_names_.size() + name_expressions_.size());
    const size_t o = ptrs.size();
    for (auto& s : options_) ptrs.push_back(s.c_str());
    const size_t hs = ptrs.size();
    for (auto& s : header_sources_) ptrs.push_back(s.c_str());
    const size_t hn = ptrs.size();
    for (auto& s : header_names_) ptrs.push_back(s.c_str());
    const size_t ne = ptrs.size();
    for (auto& s : name_expressions_) ptrs.push_back(s.c_str());
    auto at = [&](size_t offset, size_t count) {
      return count == 0 ? nullptr : ptrs.data() + offset;
    };

    hipacm_request req{};
    req.struct_size = sizeof(hipacm_request);
    req.key = key_ ? key_->c_str() : nullptr;
    req.source = source_.c_str();
    req.source_name = name_ ? name_->c_str() : nullptr;
    req.options = at(o, options_.size());
    req.num_options = options_.size();
    req.header_sources = at(hs, header_sources_.size());
    req.header_names = at(hn, header_names_.size());
    req.num_headers = header_names_.size();
    req.name_expressions = at(ne, name_expressions_.size());
    req.num_name_expressions = name_expressions_.size();
    return req;
  }

  /// A fresh slot holding copies of the callables, or null without any.
  std::shared_ptr<detail::Slot> make_slot(std::shared_ptr<detail::FinalizeErrors> errors) const {
    if (!finalize_ && !cleanup_) return nullptr;
    auto slot = std::make_shared<detail::Slot>();
    slot->finalize = finalize_;
    slot->cleanup = cleanup_;
    slot->errors = std::move(errors);
    return slot;
  }

  std::string source_;
  std::optional<std::string> key_;
  std::optional<std::string> name_;
  std::vector<std::string> options_;
  std::vector<std::string> header_names_;
  std::vector<std::string> header_sources_;
  std::vector<std::string> name_expressions_;
  std::function<void(const hipacm_kernel&)> finalize_;
  std::function<void(const Error&)> cleanup_;
};

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
      new std::vector<std::shared_ptr<detail::Slot>>(std::move(slots));
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

/// Compiles synchronously, without a mode. arch NULL: $HIPACM_ARCH, else the
/// device's. Returns a finished future whenever the plugin accepted the
/// request, also for a failed compile (result() then throws; that is also
/// when the callables run). Throws hipacm::Error when the request is rejected.
inline Future compile(const Request& request, const char* arch = nullptr) {
  std::vector<const char*> ptrs;
  hipacm_request req = request.to_c(ptrs);
  auto errors = std::make_shared<detail::FinalizeErrors>();
  auto slot = request.make_slot(errors);
  if (slot) detail::attach(slot, req);
  hipacm_future* out = nullptr;
  const hipacm_status status = hipacm_compile(&req, arch, &out);
  if (out == nullptr) {
    Error error = status == HIPACM_SUCCESS
                      ? Error(Status::Internal, "hipacm_compile returned no future")
                      : detail::last_error(status);
    if (slot) slot->discard();
    throw error;
  }
  // The slot lives until the last Future copy has released its handle.
  return Future(out, std::move(errors), std::move(slot));
}

inline Future compile(const Request& request, const std::string& arch) {
  return compile(request, arch.c_str());
}

/// True while some mode is active in this process.
inline bool active_mode_is_set() noexcept { return hipacm_active_mode() != nullptr; }

/// What the plugin found (strings owned by the plugin, alive until it is unloaded).
struct BackendInfo {
  bool available = false;
  std::string compiler;
  std::string version;
  std::string library_path;
  std::string default_arch;
  std::string error;  // why it is unavailable, when it is
};

inline BackendInfo backend_info() {
  hipacm_backend_info raw{};
  raw.struct_size = sizeof raw;
  const hipacm_status status = hipacm_get_backend_info(&raw);
  BackendInfo info;
  if (status != HIPACM_SUCCESS) info.error = detail::to_string(hipacm_last_error_message());
  info.available = raw.available != 0;
  info.compiler = detail::to_string(raw.compiler);
  info.version = detail::to_string(raw.version);
  info.library_path = detail::to_string(raw.library_path);
  info.default_arch = detail::to_string(raw.default_arch);
  return info;
}

}  // namespace hipacm

#endif  // HIPACM_HIPACM_HPP
