// SPDX-License-Identifier: MIT
// lazy_library.cpp - finds a library among its candidates and binds it, with one wording for
// every failure.
#include "support/libraries/lazy_library.h"

#include "support/environment.h"

namespace hipacm::backend {

namespace {

Failure unavailable(std::string message) {
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, std::move(message)};
}

std::string not_found_message(const LibrarySearch& search, std::size_t count,
                              const std::string& tried) {
  std::string message = search.not_found.empty() ? "cannot open " + search.name : search.not_found;
  message += " (tried " + std::to_string(count) + " libraries: " + tried + ")";
  if (!search.override_variable.empty())
    message += "; set " + search.override_variable + " to its path";
  return message;
}

}  // namespace

std::vector<std::string> LibrarySearch::candidates() const {
  if (!override_variable.empty()) {
    if (auto override_path = environment_value(override_variable.c_str())) return {*override_path};
  }
  return defaults;
}

std::string SymbolBinder::missing_message(std::string_view what) const {
  return std::string(what) + " library " + library_.path() + " is missing symbol " + missing_ +
         " (" + why_ + ")";
}

Expected<OpenedLibrary> open_and_bind(const LibrarySearch& search,
                                      const std::vector<std::string>& candidates,
                                      const std::function<void(SymbolBinder&)>& bind) {
  if (search.prefer_loaded) {
    for (const std::string& name : candidates) {
      auto library = DynamicLibrary::open_if_loaded(name, search.lifetime);
      if (!library) continue;
      SymbolBinder binder(library.value());
      bind(binder);
      if (binder.complete()) return OpenedLibrary{std::move(library).value(), name};
    }
  }
  std::string tried;
  for (const std::string& name : candidates) {
    auto library = DynamicLibrary::open(name, search.lifetime);
    if (!library) {
      tried += (tried.empty() ? "" : "; ") + library.failure().message;
      continue;
    }
    SymbolBinder binder(library.value());
    bind(binder);
    if (!binder.complete()) return unavailable(binder.missing_message(search.name));
    return OpenedLibrary{std::move(library).value(), name};
  }
  return unavailable(not_found_message(search, candidates.size(), tried));
}

}  // namespace hipacm::backend
