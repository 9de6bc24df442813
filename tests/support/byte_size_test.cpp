// SPDX-License-Identifier: MIT
// byte_size_test.cpp - byte counts as people write them ("512M", "1.5G") and as the tool shows
// them.
#include "support/bytes/byte_size.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace hipacm {
namespace {

constexpr std::int64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;

TEST(ByteSize, ReadsBytesAndPowersOf1024) {
  EXPECT_EQ(parse_byte_size("0"), 0);
  EXPECT_EQ(parse_byte_size("1073741824"), kGiB);
  EXPECT_EQ(parse_byte_size("4096B"), 4096);
  EXPECT_EQ(parse_byte_size("100K"), 100 * kKiB);
  EXPECT_EQ(parse_byte_size("100KiB"), 100 * kKiB);
  EXPECT_EQ(parse_byte_size("512M"), 512 * kMiB);
  EXPECT_EQ(parse_byte_size("512m"), 512 * kMiB);
  EXPECT_EQ(parse_byte_size("5G"), 5 * kGiB);
  EXPECT_EQ(parse_byte_size("5GiB"), 5 * kGiB);
  EXPECT_EQ(parse_byte_size("5gib"), 5 * kGiB);
  EXPECT_EQ(parse_byte_size("2T"), 2 * kTiB);
  EXPECT_EQ(parse_byte_size("1.5G"), kGiB + kGiB / 2);
  EXPECT_EQ(parse_byte_size("0.5K"), 512);
  EXPECT_EQ(parse_byte_size("1.0001K"), 1024);  // a fraction of a byte rounds down
  EXPECT_EQ(parse_byte_size("007M"), 7 * kMiB);
}

TEST(ByteSize, RefusesEverythingElse) {
  for (const char* bad :
       {"",     "G",     "-1",  "+5",  " 5G",   "5G ",   "5 G",        "5GB",
        "5gb",  "100kB", "5E",  "5Gi", "5GiBs", "1e9",   "0x10",       "1.5",
        "1.5B", "5.G",   ".5G", "nan", "inf",   "5..0G", "1.1234567G", "1234567890123456789"}) {
    EXPECT_EQ(parse_byte_size(bad), std::nullopt) << "'" << bad << "'";
  }
  // The largest count accepted is INT64_MAX, in any spelling.
  EXPECT_EQ(parse_byte_size("8388607T"), 8388607 * kTiB);
  EXPECT_EQ(parse_byte_size("8388608T"), std::nullopt);
  EXPECT_EQ(parse_byte_size("8388607.999999T"), 8388607 * kTiB + 999999 * kTiB / 1000000);
  EXPECT_EQ(parse_byte_size("999999999999999999"), 999999999999999999);
}

TEST(ByteSize, ProblemsSayWhatIsAccepted) {
  EXPECT_EQ(byte_size_problem("5GB"),
            "'5GB' is ambiguous: write G or GiB for powers of 1024 (e.g. 5G = 5GiB = 5368709120 "
            "bytes)");
  const std::string problem = byte_size_problem("lots");
  EXPECT_EQ(problem.rfind("'lots' is not a byte count", 0), 0u) << problem;
  EXPECT_NE(problem.find("512M, 1.5G"), std::string::npos) << problem;
  EXPECT_LT(byte_size_problem(std::string(10000, '9')).size(), 300u);
}

TEST(ByteSize, HumanBytesUsesPowersOf1024) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(2 * kGiB), "2.0 GiB");
  EXPECT_EQ(human_bytes(3 * kTiB), "3.0 TiB");
  EXPECT_EQ(human_bytes(5000 * kTiB), "5000.0 TiB");
}

}  // namespace
}  // namespace hipacm
