// SPDX-License-Identifier: MIT
// cluster_messages_test.cpp - the messages between MPI ranks: a report survives its round trip,
// and values that a well-formed CBOR message can carry but a rank never sends are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/cluster/cluster_messages.h"

namespace hipacm::cli {
namespace {

using Json = nlohmann::json;

RankReport sample_report() {
  RankReport report;
  report.rank = 2;
  report.cache_dir = "/scratch/cache-2";
  ItemOutcome outcome;
  outcome.item = 3;
  outcome.status = 0;
  outcome.code_size = 4096;
  outcome.compile_seconds = 0.25;
  outcome.key = "ab12";
  outcome.kernels = {"axpy"};
  report.outcomes.push_back(outcome);
  report.arch_wall_seconds = {{"gfx90a", 1.5}};
  report.wall_seconds = 2.0;
  return report;
}

/// The sample report with one field changed through `edit`, encoded again.
std::vector<std::uint8_t> edited(void (*edit)(Json&)) {
  Json message = Json::from_cbor(encode_report(sample_report()));
  edit(message);
  return Json::to_cbor(message);
}

bool decodes(const std::vector<std::uint8_t>& bytes, std::string* error) {
  const Expected<RankReport> out = decode_report(bytes.data(), bytes.size(), 8);
  if (!out) *error = out.failure().message;
  return out.has_value();
}

TEST(ClusterMessages, AReportSurvivesItsRoundTrip) {
  const std::vector<std::uint8_t> bytes = encode_report(sample_report());
  const Expected<RankReport> decoded = decode_report(bytes.data(), bytes.size(), 8);
  ASSERT_TRUE(decoded) << decoded.failure().message;
  const RankReport& out = decoded.value();
  EXPECT_EQ(out.rank, 2);
  EXPECT_EQ(out.cache_dir, "/scratch/cache-2");
  ASSERT_EQ(out.outcomes.size(), 1u);
  EXPECT_EQ(out.outcomes[0].item, 3u);
  EXPECT_EQ(out.outcomes[0].code_size, 4096u);
  EXPECT_EQ(out.outcomes[0].kernels, std::vector<std::string>{"axpy"});
  ASSERT_EQ(out.arch_wall_seconds.size(), 1u);
  EXPECT_EQ(out.arch_wall_seconds[0].first, "gfx90a");
  // An item past the job's count is refused.
  EXPECT_FALSE(decode_report(bytes.data(), bytes.size(), 3));
}

TEST(ClusterMessages, AnUnsignedValueBeyondInt64IsRefusedNotWrapped) {
  std::string error;
  // 2^64 - 1 would read as -1, a status that passes every range check.
  EXPECT_FALSE(decodes(edited([](Json& m) {
                         m["outcomes"][0]["status"] = std::numeric_limits<std::uint64_t>::max();
                       }),
                       &error));
  EXPECT_NE(error.find("out of range"), std::string::npos) << error;
  EXPECT_FALSE(decodes(edited([](Json& m) { m["rank"] = std::uint64_t{1} << 63; }), &error));
  EXPECT_TRUE(decodes(edited([](Json& m) { m["outcomes"][0]["status"] = 7; }), &error)) << error;
}

TEST(ClusterMessages, PerArchWallTimesMustBeFiniteAndNotNegative) {
  std::string error;
  EXPECT_FALSE(decodes(edited([](Json& m) { m["arch_wall_seconds"][0][1] = NAN; }), &error));
  EXPECT_FALSE(decodes(edited([](Json& m) { m["arch_wall_seconds"][0][1] = -1.0; }), &error));
  EXPECT_FALSE(decodes(edited([](Json& m) { m["arch_wall_seconds"][0][1] = INFINITY; }), &error));
  EXPECT_TRUE(decodes(edited([](Json& m) { m["arch_wall_seconds"][0][1] = 3.0; }), &error))
      << error;
}

TEST(ClusterMessages, DeepNestingIsRefusedBeforeItCanExhaustTheStack) {
  // A map whose "v" holds arrays nested 200,000 deep: 200 KB that a recursive reader would follow
  // one stack frame per level.
  std::vector<std::uint8_t> bytes = {0xa1, 0x61, 'v'};
  bytes.insert(bytes.end(), 200000, 0x81);  // an array of one element
  bytes.push_back(0x00);
  std::string error;
  EXPECT_FALSE(decodes(bytes, &error));
  EXPECT_NE(error.find("nested deeper than"), std::string::npos) << error;
  EXPECT_FALSE(decode_entries(bytes.data(), bytes.size(), 8));
  // The real messages stay well inside the bound.
  EXPECT_TRUE(decodes(encode_report(sample_report()), &error)) << error;
}

}  // namespace
}  // namespace hipacm::cli
