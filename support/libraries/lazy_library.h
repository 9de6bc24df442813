// SPDX-License-Identifier: MIT
// lazy_library.h - the one way a library is loaded at run time: candidates with an environment
// override, entry points bound by name, at most one load per process.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/failure.h"
#include "support/libraries/dynamic_library.h"

// For X-macro tables of entry points, (name, return type, parameter list) each:
// HIPACM_LIBRARY_FIELD declares a struct's function pointer; HIPACM_LIBRARY_REQUIRE and
// HIPACM_LIBRARY_OPTIONAL bind it with a SymbolBinder `binder` into the table `api` (a pointer).
#define HIPACM_LIBRARY_FIELD(name, ret, params) ret(*name) params = nullptr;
#define HIPACM_LIBRARY_REQUIRE(name, ret, params) binder.require(#name, &api->name);
#define HIPACM_LIBRARY_OPTIONAL(name, ret, params) binder.optional(#name, &api->name);

namespace hipacm::backend {

/// Where one library is looked for, and what messages call it. Every member has a default, so a
/// designated initializer names only what differs.
struct LibrarySearch {
  /// "hipRTC": messages say "cannot open hipRTC (...)" and "hipRTC library <file> is missing ...".
  std::string name{};
  /// When this environment variable is set and non-empty, its value is the only candidate.
  /// Empty: the library has no override.
  std::string override_variable{};
  /// Tried in order when there is no override.
  std::vector<std::string> defaults{};
  /// What a failure to open any candidate begins with; "cannot open <name>" when empty.
  std::string not_found{};
  /// Runtimes start threads and register exit handlers, so they are pinned by default.
  DynamicLibrary::Lifetime lifetime = DynamicLibrary::Lifetime::kPinned;
  /// Before opening anything, reuse a candidate that this process has already loaded and that
  /// binds: two copies of one runtime in a process misbehave.
  bool prefer_loaded = false;

  /// $override_variable alone when set and non-empty, otherwise `defaults`.
  std::vector<std::string> candidates() const;
};

/// Binds a library's entry points into typed function pointers and remembers the first required
/// one that is missing.
class SymbolBinder {
 public:
  explicit SymbolBinder(const DynamicLibrary& library) : library_(library) {}

  /// *fn = the address of `name`; when it is missing the whole binding fails. After the first
  /// missing symbol nothing more is looked up.
  template <class Fn>
  void require(const char* name, Fn* fn) {
    if (!complete()) return;
    if (Expected<void> bound = library_.bind(name, fn); !bound) {
      missing_ = name;
      why_ = std::move(bound).failure().message;
    }
  }

  /// *fn = the address of `name`, or nullptr: the caller copes without it.
  template <class Fn>
  void optional(const char* name, Fn* fn) {
    if (!library_.bind(name, fn)) *fn = nullptr;
  }

  bool complete() const { return missing_.empty(); }
  /// "<what> library <file> is missing symbol <name> (<dlerror>)".
  std::string missing_message(std::string_view what) const;

 private:
  const DynamicLibrary& library_;
  std::string missing_;
  std::string why_;
};

/// A library that was found, with its table of entry points.
template <class Api>
struct BoundLibrary {
  DynamicLibrary library;  ///< library.path(): the file dlopen opened (what doctor reports)
  std::string candidate;   ///< the candidate that found it, as the list spells it
  Api api;
};

/// The candidate that opened, before its table is copied out.
struct OpenedLibrary {
  DynamicLibrary library;
  std::string candidate;
};

/// The search behind find_library with the table left out: `bind` fills the caller's table from
/// a library and may be called more than once (each time from scratch).
Expected<OpenedLibrary> open_and_bind(const LibrarySearch& search,
                                      const std::vector<std::string>& candidates,
                                      const std::function<void(SymbolBinder&)>& bind);

/// Uncached: with prefer_loaded, first a candidate the process already has that binds; then the
/// candidates in order, stopping at the first that opens, whether or not it binds. Failures are
/// BACKEND_UNAVAILABLE: "cannot open <name> (tried N libraries: <dlerror>; ...)", followed by
/// "; set <override_variable> to its path" when there is one, or the missing-symbol message.
/// A table with a `library_path` member gets the opened file there; then `finish` (may be null)
/// reads what the table wants to know once, such as a version.
template <class Api>
Expected<BoundLibrary<Api>> find_library(const LibrarySearch& search,
                                         const std::vector<std::string>& candidates,
                                         void (*bind)(SymbolBinder&, Api*),
                                         void (*finish)(Api*) = nullptr) {
  Api api;
  auto opened = open_and_bind(search, candidates, [&](SymbolBinder& binder) {
    api = Api{};
    bind(binder, &api);
  });
  if (!opened) return std::move(opened).failure();
  if constexpr (requires { api.library_path = opened.value().library.path(); }) {
    api.library_path = opened.value().library.path();
  }
  if (finish != nullptr) finish(&api);
  return BoundLibrary<Api>{std::move(opened.value().library), std::move(opened.value().candidate),
                           std::move(api)};
}

/// How to load one library: where to look, what to bind, and what to read once it is bound.
/// Plain function pointers, so a constexpr LibrarySpec needs no constructor at start-up.
template <class Api>
struct LibrarySpec {
  LibrarySearch (*search)();
  void (*bind)(SymbolBinder&, Api*);
  void (*finish)(Api*) = nullptr;

  /// search()'s candidates: the override alone, or the defaults.
  std::vector<std::string> candidates() const { return search().candidates(); }
  /// find_library over explicit candidates (tests, doctor).
  Expected<BoundLibrary<Api>> find(const std::vector<std::string>& list) const {
    return find_library(search(), list, bind, finish);
  }
};

/// A library loaded on first use, at most once per process however many threads ask, and never
/// unloaded. Keep it in a function-local NoDestructor: code that runs during exit may still call
/// into it.
template <class Api>
class LazyLibrary {
 public:
  using Load = Expected<BoundLibrary<Api>> (*)();

  /// `context` begins the message of an exception that escapes the load, e.g. "cannot load
  /// hipRTC". The spec's own candidates are searched.
  LazyLibrary(const char* context, const LibrarySpec<Api>& spec)
      : context_(context), load_([spec] { return spec.find(spec.candidates()); }) {}
  /// The same with a load of its own, for a library that counts as loaded only after more than
  /// binding (the CUDA driver's cuInit).
  LazyLibrary(const char* context, Load load) : context_(context), load_(load) {}
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  /// The library, or the failure that kept it from loading (the same every time). The first
  /// call loads it.
  const Expected<BoundLibrary<Api>>& get() const {
    std::call_once(once_, [this] {
      try {
        result_.emplace(load_());
      } catch (...) {
        result_.emplace(failure_from_current_exception(context_));
      }
    });
    return *result_;
  }

  /// get()'s table of entry points, or its failure.
  Expected<const Api*> api() const {
    const Expected<BoundLibrary<Api>>& bound = get();
    if (!bound) return bound.failure();
    return &bound.value().api;
  }

 private:
  const char* context_;
  std::function<Expected<BoundLibrary<Api>>()> load_;
  mutable std::once_flag once_;
  mutable std::optional<Expected<BoundLibrary<Api>>> result_;
};

}  // namespace hipacm::backend
