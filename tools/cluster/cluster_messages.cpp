// SPDX-License-Identifier: MIT
// cluster_messages.cpp - CBOR messages between ranks, and their bounded, checked decoding.
#include "tools/cluster/cluster_messages.h"

#include <fmt/core.h>

#include <cstdint>

#include <limits>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "support/status_error.h"

namespace hipacm::cli {
namespace {

using Json = nlohmann::json;
constexpr int kEntriesVersion = 1;
constexpr int kReportVersion = 1;

// A malformed message throws this (the checks sit deep in the walk over the message); decode_*
// turn it into their failure.
[[noreturn]] void malformed(std::string message) {
  throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, message);
}

const Json& field(const Json& object, const char* name) {
  const auto found = object.find(name);
  if (found == object.end()) malformed(fmt::format("no field '{}'", name));
  return *found;
}

std::string text(const Json& object, const char* name, std::size_t max_bytes) {
  const Json& value = field(object, name);
  if (!value.is_string()) malformed(fmt::format("'{}' is not a string", name));
  const std::string& out = value.get_ref<const std::string&>();
  if (out.size() > max_bytes)
    malformed(fmt::format("'{}' is longer than {} bytes", name, max_bytes));
  return out;
}

std::vector<std::string> names(const Json& object, const char* name) {
  const Json& value = field(object, name);
  if (!value.is_array() || value.size() > kMaxNames)
    malformed(fmt::format("'{}' is not a list of at most {} names", name, kMaxNames));
  std::vector<std::string> out;
  for (const Json& one : value) {
    if (!one.is_string() || one.get_ref<const std::string&>().size() > cache::kMaxLabelBytes)
      malformed(fmt::format("'{}' holds something other than a name", name));
    out.push_back(one.get<std::string>());
  }
  return out;
}

std::uint64_t count(const Json& object, const char* name) {
  const Json& value = field(object, name);
  if (!value.is_number_unsigned()) malformed(fmt::format("'{}' is not a count", name));
  return value.get<std::uint64_t>();
}

std::int64_t integer(const Json& object, const char* name) {
  const Json& value = field(object, name);
  if (!value.is_number_integer()) malformed(fmt::format("'{}' is not an integer", name));
  // CBOR carries unsigned values up to 2^64 - 1; read as int64 they would wrap to negatives.
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    malformed(fmt::format("'{}' is out of range", name));
  return value.get<std::int64_t>();
}

// A time: a number of seconds from 0 up to 1e9 (NaN, infinities and negatives are refused).
double seconds_of(const Json& value, const char* name) {
  if (!value.is_number()) malformed(fmt::format("'{}' is not a number", name));
  const double out = value.get<double>();
  if (!(out >= 0.0 && out < 1e9)) malformed(fmt::format("'{}' is out of range", name));
  return out;
}

double seconds(const Json& object, const char* name) {
  return seconds_of(field(object, name), name);
}

bool flag(const Json& object, const char* name) {
  const Json& value = field(object, name);
  if (!value.is_boolean()) malformed(fmt::format("'{}' is not a boolean", name));
  return value.get<bool>();
}

std::size_t item_of(const Json& object, std::size_t item_count) {
  const std::uint64_t item = count(object, "item");
  if (item >= item_count)
    malformed(fmt::format("item {} is past the job's {} items", item, item_count));
  return static_cast<std::size_t>(item);
}

// Calls `fn(map, item)` for each map of the list `name` in `message`: at most `item_count` maps
// (the bound's message ends in `unit`), each for an item of the job. `one` names a map in the
// message for one that is not.
template <class Fn>
void for_each_item(const Json& message, const char* name, const char* unit, const char* one,
                   std::size_t item_count, Fn&& fn) {
  const Json& list = field(message, name);
  if (!list.is_array() || list.size() > item_count)
    malformed(fmt::format("'{}' is not a list of at most {}{}", name, item_count, unit));
  for (const Json& map : list) {
    if (!map.is_object()) malformed(fmt::format("{} is not a map", one));
    fn(map, item_of(map, item_count));
  }
}

// The counters of a RankReport under their names in the message, in the order the decoder reads
// them: one list for encode and decode.
constexpr std::pair<const char*, std::uint64_t RankReport::*> kReportCounts[] = {
    {"entries_sent", &RankReport::entries_sent},
    {"entries_received", &RankReport::entries_received},
    {"duplicates_received", &RankReport::duplicates_received},
    {"rejected_received", &RankReport::rejected_received},
    {"messages_sent", &RankReport::messages_sent},
    {"messages_received", &RankReport::messages_received},
    {"bytes_sent", &RankReport::bytes_sent},
    {"bytes_received", &RankReport::bytes_received},
    {"control_bytes_sent", &RankReport::control_bytes_sent},
    {"missing_after", &RankReport::missing_after},
};

Json parse(const std::uint8_t* bytes, std::size_t size, int version) {
  if (size > kMaxMessageBytes)
    malformed(fmt::format("{} bytes, over the bound of {}", size, kMaxMessageBytes));
  Expected<Json> parsed = parse_bounded_cbor(bytes, size);
  if (!parsed) malformed(std::move(parsed).failure().message);
  Json message = std::move(parsed).value();
  if (!message.is_object()) malformed("not a CBOR map");
  if (integer(message, "v") != version)
    malformed(fmt::format("version {} where {} was expected", field(message, "v").dump(), version));
  return message;
}

// `fn` builds the decoded value; a malformed message becomes an INVALID_ARGUMENT failure.
template <class Fn>
auto decoding(Fn&& fn) -> Expected<decltype(fn())> {
  try {
    return fn();
  } catch (const StatusError& e) {
    return Failure{e.status(), e.what()};
  } catch (const Json::exception& e) {
    return Failure{HIPACM_ERROR_INVALID_ARGUMENT, e.what()};
  }
}

std::vector<std::uint8_t> to_cbor(const Json& message) {
  std::vector<std::uint8_t> out = Json::to_cbor(message);
  if (out.size() > kMaxMessageBytes)
    throw std::runtime_error(
        fmt::format("a message of {} bytes is over the bound of {}: run with fewer kernels per job",
                    out.size(), kMaxMessageBytes));
  return out;
}

}  // namespace

std::vector<std::uint8_t> encode_entries(const std::vector<const EntryForItem*>& entries) {
  Json list = Json::array();
  for (const EntryForItem* one : entries) {
    const cache::CacheEntry& e = one->entry;
    Json message = {{"item", one->item},
                    {"created_us", e.info.created_us},
                    {"lowered_names", e.lowered_names},
                    {"expected_kernels", e.expected_kernels},
                    {"log", e.log},
                    {"code", Json::binary(e.code)},
                    {"checksum", e.checksum}};
    cache::for_each_label(
        e.info, [&](const char* name, const std::string& label) { message[name] = label; });
    list.push_back(std::move(message));
  }
  return to_cbor({{"v", kEntriesVersion}, {"entries", std::move(list)}});
}

Expected<std::vector<EntryForItem>> decode_entries(const std::uint8_t* bytes, std::size_t size,
                                                   std::size_t item_count) {
  return decoding([&] {
    std::vector<EntryForItem> out;
    const Json message = parse(bytes, size, kEntriesVersion);
    const auto read_entry = [&](const Json& one, std::size_t item) {
      EntryForItem got;
      got.item = item;
      cache::CacheEntry& e = got.entry;
      cache::for_each_label(e.info, [&](const char* name, std::string& label) {
        label = text(one, name, cache::kMaxLabelBytes);
      });
      e.info.created_us = integer(one, "created_us");
      e.lowered_names = names(one, "lowered_names");
      e.expected_kernels = names(one, "expected_kernels");
      e.log = text(one, "log", kMaxLogBytes);
      const Json& code = field(one, "code");
      if (!code.is_binary() || code.get_binary().size() > kMaxCodeBytes)
        malformed(fmt::format("'code' is not bytes, at most {}", kMaxCodeBytes));
      e.code.assign(code.get_binary().begin(), code.get_binary().end());
      e.checksum = text(one, "checksum", cache::kMaxLabelBytes);
      e.info.size = cache::payload_size(e);
      out.push_back(std::move(got));
    };
    for_each_item(message, "entries", " entries", "an entry", item_count, read_entry);
    return out;
  });
}

std::vector<std::uint8_t> encode_report(const RankReport& report) {
  Json outcomes = Json::array();
  for (const ItemOutcome& o : report.outcomes)
    outcomes.push_back({{"item", o.item},
                        {"status", o.status},
                        {"from_cache", o.from_cache},
                        {"code_size", o.code_size},
                        {"compile_seconds", o.compile_seconds},
                        {"key", o.key},
                        {"error", o.error},
                        {"log", o.log},
                        {"kernels", o.kernels}});
  Json walls = Json::array();
  for (const auto& [arch, wall] : report.arch_wall_seconds) walls.push_back({arch, wall});
  Json message = {{"v", kReportVersion},
                  {"rank", report.rank},
                  {"cache_dir", report.cache_dir},
                  {"outcomes", std::move(outcomes)},
                  {"arch_wall_seconds", std::move(walls)},
                  {"compile_wall_seconds", report.compile_wall_seconds},
                  {"wall_seconds", report.wall_seconds},
                  {"rejections", report.rejections}};
  for (const auto& [name, member] : kReportCounts) message[name] = report.*member;
  return to_cbor(message);
}

Expected<RankReport> decode_report(const std::uint8_t* bytes, std::size_t size,
                                   std::size_t item_count) {
  return decoding([&] {
    RankReport report;
    RankReport* out = &report;
    const Json message = parse(bytes, size, kReportVersion);
    const std::int64_t rank = integer(message, "rank");
    if (rank < 0 || rank > std::numeric_limits<std::int32_t>::max())
      malformed("'rank' is out of range");
    out->rank = static_cast<std::int32_t>(rank);
    out->cache_dir = text(message, "cache_dir", cache::kMaxLabelBytes);
    const auto read_outcome = [&](const Json& one, std::size_t item) {
      ItemOutcome o;
      o.item = item;
      const std::int64_t status = integer(one, "status");
      if (status < -1000 || status > 1000) malformed("'status' is out of range");
      o.status = static_cast<std::int32_t>(status);
      o.from_cache = flag(one, "from_cache");
      o.code_size = count(one, "code_size");
      o.compile_seconds = seconds(one, "compile_seconds");
      o.key = text(one, "key", cache::kMaxLabelBytes);
      o.error = text(one, "error", kMaxReportLogBytes);
      o.log = text(one, "log", kMaxReportLogBytes);
      o.kernels = names(one, "kernels");
      out->outcomes.push_back(std::move(o));
    };
    for_each_item(message, "outcomes", "", "an outcome", item_count, read_outcome);
    const Json& walls = field(message, "arch_wall_seconds");
    if (!walls.is_array() || walls.size() > kMaxNames)
      malformed("'arch_wall_seconds' is not a list");
    for (const Json& wall : walls) {
      if (!wall.is_array() || wall.size() != 2 || !wall[0].is_string() || !wall[1].is_number() ||
          wall[0].get_ref<const std::string&>().size() > cache::kMaxLabelBytes)
        malformed("an arch wall time is not [arch, seconds]");
      out->arch_wall_seconds.emplace_back(wall[0].get<std::string>(),
                                          seconds_of(wall[1], "arch_wall_seconds"));
    }
    out->compile_wall_seconds = seconds(message, "compile_wall_seconds");
    out->wall_seconds = seconds(message, "wall_seconds");
    for (const auto& [name, member] : kReportCounts) out->*member = count(message, name);
    const std::vector<std::string> rejections = names(message, "rejections");
    out->rejections = rejections;
    return report;
  });
}

}  // namespace hipacm::cli
