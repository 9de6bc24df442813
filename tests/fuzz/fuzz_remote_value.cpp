// SPDX-License-Identifier: MIT
// fuzz_remote_value.cpp - fuzz target: a value read from a shared Redis, as it arrives and, signed
// with the right key, as the parser behind the signature sees it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "plugin/cache/integrity.h"
#include "plugin/cache/remote/remote_value.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/remote_value_fuzz_key.h"

namespace {

namespace remote = hipacm::cache::remote;
using hipacm::fuzz::invariant_broken;

// An accepted value is for the asked key, its checksum holds, it is refused for any other key,
// and it is exactly what encoding its entry produces (one spelling per entry).
void check(std::string_view value, const remote::SigningKey& key) {
  const auto decoded =
      remote::decode_remote_value(value, hipacm::fuzz::kRemoteValueFuzzEntryKey, key);
  if (!hipacm::fuzz::accepted_or_explained(decoded, "a remote value refused without a reason"))
    return;
  const hipacm::cache::CacheEntry& entry = decoded.value();
  if (entry.info.key != hipacm::fuzz::kRemoteValueFuzzEntryKey)
    invariant_broken("a remote value accepted for another key");
  if (hipacm::cache::entry_checksum(entry) != entry.checksum)
    invariant_broken("a remote value accepted with a checksum that does not hold");
  if (entry.info.size != hipacm::cache::payload_size(entry))
    invariant_broken("a remote value's entry has a size other than its payload's");
  if (remote::encode_remote_value(entry, key) != value)
    invariant_broken("an accepted remote value is not how its own entry encodes");
  std::string other(hipacm::fuzz::kRemoteValueFuzzEntryKey);
  other[0] = other[0] == '0' ? '1' : '0';
  if (remote::decode_remote_value(value, other, key))
    invariant_broken("a remote value accepted under a key it was not made for");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const remote::SigningKey key =
      std::move(remote::SigningKey::from_bytes(hipacm::fuzz::kRemoteValueFuzzKey).value());
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // As it arrives: nearly always refused by its signature, unless it is a signed seed.
  check(input, key);
  // Signed as a writer holding the key would: every parser check is reached.
  std::string signed_value(input);
  signed_value += key.mac(input);
  check(signed_value, key);
  return 0;
}
