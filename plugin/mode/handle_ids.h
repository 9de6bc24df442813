// SPDX-License-Identifier: MIT
// handle_ids.h - host handles as never-reused ids (a counter and a kind tag), never addresses.
#pragma once

#include <cstdint>
#include <optional>

namespace hipacm {

// A handle the host holds is not the object's address: an address comes back
// when the allocator reuses it, and a stale handle would then act on somebody
// else's object. The value is a per-kind id from a counter that only grows,
// shifted left, with the kind in the low bits. So a released future or an
// exited mode never names another object, a future handle is never a mode
// handle, and (being misaligned) no handle equals a real object's address.
enum class HandleKind : std::uintptr_t { kFuture = 1, kMode = 2 };

inline constexpr unsigned kHandleKindBits = 3;
inline constexpr std::uintptr_t kHandleKindMask = (std::uintptr_t{1} << kHandleKindBits) - 1;

// 61 bits of ids: at a billion handles a second, the counter lasts 73 years.
static_assert(sizeof(std::uintptr_t) >= sizeof(std::uint64_t),
              "handle ids need 64-bit pointers to be never reused");

/// The handle value for id (>= 1) of `kind`: non-zero and pointer-sized.
inline std::uintptr_t encode_handle(std::uint64_t id, HandleKind kind) noexcept {
  return (static_cast<std::uintptr_t>(id) << kHandleKindBits) | static_cast<std::uintptr_t>(kind);
}

/// The id inside `handle` if it is a handle of `kind`; nullopt for NULL, another
/// kind, or anything that was never a handle value.
inline std::optional<std::uint64_t> decode_handle(const void* handle, HandleKind kind) noexcept {
  const auto value = reinterpret_cast<std::uintptr_t>(handle);
  if ((value & kHandleKindMask) != static_cast<std::uintptr_t>(kind)) return std::nullopt;
  const std::uint64_t id = value >> kHandleKindBits;
  if (id == 0) return std::nullopt;
  return id;
}

}  // namespace hipacm
