// SPDX-License-Identifier: MIT
// bounded_cbor.cpp - the CBOR shape check (RFC 8949 well-formedness, definite lengths only) and the
// bounded decode that every message between ranks goes through.
#include "tools/cluster/bounded_cbor.h"

#include <fmt/core.h>

#include <array>
#include <utility>

namespace hipacm::cli {
namespace {

using Json = nlohmann::json;

constexpr std::uint8_t kMajorBytes = 2;
constexpr std::uint8_t kMajorText = 3;
constexpr std::uint8_t kMajorArray = 4;
constexpr std::uint8_t kMajorMap = 5;
constexpr std::uint8_t kMajorTag = 6;
constexpr std::uint8_t kAdditionalIndefinite = 31;

/// One CBOR head: the major type and its argument (a value, a length or a count).
struct Head {
  std::uint8_t major = 0;
  std::uint64_t argument = 0;
};

class ShapeChecker {
 public:
  ShapeChecker(const std::uint8_t* bytes, std::size_t size) : bytes_(bytes), size_(size) {}

  /// Empty when the bytes are one well-formed item of the subset; else why not.
  std::string check() {
    if (size_ == 0) return "no bytes";
    // Items still owed by each open container, innermost last; the top level owes one item.
    std::array<std::uint64_t, kMaxCborDepth + 1> owed{};
    std::size_t open = 0;
    owed[0] = 1;
    while (true) {
      while (owed[open] == 0) {
        if (open == 0) {
          if (at_ != size_) return fmt::format("{} bytes follow the message", size_ - at_);
          return {};
        }
        --open;
      }
      --owed[open];
      const std::size_t start = at_;
      Head head;
      if (std::string why = read_head(&head); !why.empty()) return why;
      const std::uint64_t left = size_ - at_;
      switch (head.major) {
        case kMajorBytes:
        case kMajorText:
          if (head.argument > left)
            return fmt::format("a string at byte {} is longer than the bytes that follow", start);
          at_ += static_cast<std::size_t>(head.argument);
          break;
        case kMajorArray:
        case kMajorMap: {
          if (open + 1 > kMaxCborDepth)
            return fmt::format("nested deeper than {} levels at byte {}", kMaxCborDepth, start);
          // Each item takes at least one byte: a count beyond the bytes left is a lie.
          const std::uint64_t per_entry = head.major == kMajorMap ? 2 : 1;
          if (head.argument > left / per_entry)
            return fmt::format("a container at byte {} holds more items than the bytes that follow",
                               start);
          owed[++open] = head.argument * per_entry;
          break;
        }
        case kMajorTag:
          return fmt::format("a tag at byte {} (hipacm's messages carry none)", start);
        default:  // integers, simple values and floats: the head was the whole item
          break;
      }
    }
  }

 private:
  std::string read_head(Head* head) {
    const std::size_t start = at_;
    if (at_ >= size_) return fmt::format("the message ends inside an item at byte {}", start);
    const std::uint8_t initial = bytes_[at_++];
    head->major = static_cast<std::uint8_t>(initial >> 5);
    const std::uint8_t additional = initial & 0x1f;
    if (additional == kAdditionalIndefinite)
      return fmt::format(
          "an indefinite length or break at byte {} (hipacm's messages use definite lengths)",
          start);
    if (additional >= 28) return fmt::format("reserved additional information at byte {}", start);
    if (additional < 24) {
      head->argument = additional;
      return {};
    }
    const std::size_t width = std::size_t{1} << (additional - 24);  // 1, 2, 4 or 8 bytes
    if (size_ - at_ < width)
      return fmt::format("the message ends inside the head at byte {}", start);
    std::uint64_t argument = 0;
    for (std::size_t i = 0; i < width; ++i) argument = (argument << 8) | bytes_[at_++];
    head->argument = argument;
    return {};
  }

  const std::uint8_t* bytes_;
  std::size_t size_;
  std::size_t at_ = 0;
};

/// The DOM builder, refusing to nest deeper than kMaxCborDepth: a second bound behind the shape
/// check, since nlohmann's CBOR reader recurses once per level. A refusal ends the parse (the
/// reader stops at a handler that returns false) and too_deep() then says why.
class DepthBoundedSax : public nlohmann::detail::json_sax_dom_parser<Json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<Json>;
  explicit DepthBoundedSax(Json& result) : Base(result, true) {}
  bool start_object(std::size_t elements) { return deeper() && Base::start_object(elements); }
  bool end_object() { return shallower() && Base::end_object(); }
  bool start_array(std::size_t elements) { return deeper() && Base::start_array(elements); }
  bool end_array() { return shallower() && Base::end_array(); }
  bool too_deep() const { return too_deep_; }

 private:
  bool deeper() {
    too_deep_ = ++depth_ > kMaxCborDepth;
    return !too_deep_;
  }
  bool shallower() {
    --depth_;
    return true;
  }
  std::size_t depth_ = 0;
  bool too_deep_ = false;
};

Failure malformed(std::string message) {
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT, std::move(message)};
}

}  // namespace

Expected<void> check_cbor_shape(const std::uint8_t* bytes, std::size_t size) {
  std::string why = ShapeChecker(bytes, size).check();
  if (why.empty()) return {};
  return malformed(std::move(why));
}

Expected<Json> parse_bounded_cbor(const std::uint8_t* bytes, std::size_t size) {
  if (const Expected<void> shape = check_cbor_shape(bytes, size); !shape)
    return malformed("not a message: " + shape.failure().message);
  try {
    Json root;
    DepthBoundedSax sax(root);
    if (!Json::sax_parse(bytes, bytes + size, &sax, nlohmann::detail::input_format_t::cbor)) {
      if (sax.too_deep())
        return malformed(fmt::format("not a message: nested deeper than {} levels", kMaxCborDepth));
      return malformed("not CBOR");
    }
    return root;
  } catch (const Json::exception& e) {
    return malformed(std::string("not CBOR: ") + e.what());
  }
}

}  // namespace hipacm::cli
