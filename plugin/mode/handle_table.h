// SPDX-License-Identifier: MIT
// handle_table.h - the live objects behind one kind of host handle, under never-reused ids.
#pragma once

#include <boost/thread/mutex.hpp>

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "plugin/mode/handle_ids.h"

namespace hipacm {

/// The registry of one handle kind: `Owned` keeps each live object alive, keyed by the id its
/// handle encodes (handle_ids.h). Ids are handed out by `next_id`, which only grows, so an id
/// below it that is no longer live names an object that is gone, never another one. Every member
/// is used under `mutex`. Kept in ForkGuarded (support/fork_epoch.h), which holds `mutex` across
/// fork().
template <class Owned, HandleKind Kind>
struct HandleTable {
  boost::mutex mutex;
  std::unordered_map<std::uint64_t, Owned> live;
  std::uint64_t next_id = 1;

  /// The id in `handle` if it is a handle of this kind; nullopt for NULL or anything else.
  static std::optional<std::uint64_t> id_of(const void* handle) noexcept {
    return decode_handle(handle, Kind);
  }

  /// The live entry `handle` names, or nullptr.
  Owned* find(const void* handle) noexcept {
    const std::optional<std::uint64_t> id = id_of(handle);
    if (!id) return nullptr;
    auto it = live.find(*id);
    return it == live.end() ? nullptr : &it->second;
  }

  /// Whether `id` was ever handed out.
  bool issued(std::uint64_t id) const noexcept { return id < next_id; }
};

}  // namespace hipacm
