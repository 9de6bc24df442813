// SPDX-License-Identifier: MIT
// msgpack_writer.h - a few MessagePack encoders for the tests and fuzz seeds of the metadata
// readers: just the forms the AMDGPU metadata note uses, plus raw bytes for hostile inputs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hipacm::backend::testing {

using Msgpack = std::vector<std::uint8_t>;

inline void put_be(Msgpack& out, std::uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

inline Msgpack mp_uint(std::uint64_t v) {
  Msgpack out;
  if (v < 0x80) {
    out.push_back(static_cast<std::uint8_t>(v));
  } else if (v <= 0xffff) {
    out.push_back(0xcd);
    put_be(out, v, 2);
  } else {
    out.push_back(0xcf);
    put_be(out, v, 8);
  }
  return out;
}

inline Msgpack mp_str(const std::string& s) {
  Msgpack out;
  if (s.size() < 32) {
    out.push_back(static_cast<std::uint8_t>(0xa0 | s.size()));
  } else {
    out.push_back(0xda);
    put_be(out, s.size(), 2);
  }
  for (char c : s) out.push_back(static_cast<std::uint8_t>(c));
  return out;
}

inline Msgpack mp_bool(bool b) { return {static_cast<std::uint8_t>(b ? 0xc3 : 0xc2)}; }

inline Msgpack mp_array(const std::vector<Msgpack>& items) {
  Msgpack out{0xdc};
  put_be(out, items.size(), 2);
  for (const Msgpack& item : items) out.insert(out.end(), item.begin(), item.end());
  return out;
}

inline Msgpack mp_map(const std::vector<std::pair<std::string, Msgpack>>& entries) {
  Msgpack out{0xde};
  put_be(out, entries.size(), 2);
  for (const auto& [key, value] : entries) {
    const Msgpack k = mp_str(key);
    out.insert(out.end(), k.begin(), k.end());
    out.insert(out.end(), value.begin(), value.end());
  }
  return out;
}

/// A metadata document of the shape LLVM writes: version, target and `.kernels` entries.
inline Msgpack metadata_document(const std::vector<Msgpack>& kernels,
                                 const std::string& target = "amdgcn-amd-amdhsa--gfx90a") {
  return mp_map({{"amdhsa.kernels", mp_array(kernels)},
                 {"amdhsa.target", mp_str(target)},
                 {"amdhsa.version", mp_array({mp_uint(1), mp_uint(2)})}});
}

}  // namespace hipacm::backend::testing
