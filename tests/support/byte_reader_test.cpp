// SPDX-License-Identifier: MIT
// byte_reader_test.cpp - ByteView and ByteReader never reach past the end, whatever the offset,
// length or count.
#include "support/bytes/byte_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace hipacm::backend {
namespace {

const std::vector<std::uint8_t> kBytes = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 'h', 'i'};

TEST(ByteView, ContainsRejectsRangesPastTheEndWithoutOverflow) {
  const ByteView view(kBytes.data(), kBytes.size());
  EXPECT_TRUE(view.contains(0, kBytes.size()));
  EXPECT_TRUE(view.contains(kBytes.size(), 0));
  EXPECT_FALSE(view.contains(kBytes.size(), 1));
  EXPECT_FALSE(view.contains(1, kBytes.size()));
  constexpr std::uint64_t kHuge = std::numeric_limits<std::uint64_t>::max();
  EXPECT_FALSE(view.contains(kHuge, 2));  // offset + length wraps around
  EXPECT_FALSE(view.contains(2, kHuge));
}

TEST(ByteView, ReadsLittleEndianAndZeroOutside) {
  const ByteView view(kBytes.data(), kBytes.size());
  EXPECT_EQ(view.le<std::uint8_t>(0), 0x01u);
  EXPECT_EQ(view.le<std::uint16_t>(0), 0x0201u);
  EXPECT_EQ(view.le<std::uint32_t>(1), 0x05040302u);
  EXPECT_EQ(view.le<std::uint64_t>(0), 0x0807060504030201u);
  EXPECT_EQ(view.le<std::uint64_t>(3), 0u);  // would end past the last byte
  EXPECT_EQ(view.le<std::uint32_t>(std::numeric_limits<std::uint64_t>::max() - 1), 0u);
}

TEST(ByteView, TextAndAtOnlyInside) {
  const ByteView view(kBytes.data(), kBytes.size());
  EXPECT_EQ(view.text(8, 2), "hi");
  EXPECT_EQ(view.text(8, 3), "");
  EXPECT_EQ(view.at(8, 2), kBytes.data() + 8);
  EXPECT_EQ(view.at(9, 2), nullptr);
}

TEST(ByteReader, AReadThatDoesNotFitConsumesNothing) {
  ByteReader reader(kBytes.data(), kBytes.size());
  std::uint64_t u64 = 0;
  ASSERT_TRUE(reader.le(&u64));
  EXPECT_EQ(u64, 0x0807060504030201u);
  EXPECT_EQ(reader.remaining(), 2u);
  std::uint32_t u32 = 7;
  EXPECT_FALSE(reader.le(&u32));
  EXPECT_EQ(u32, 7u);
  EXPECT_EQ(reader.remaining(), 2u);
  const std::uint8_t* taken = nullptr;
  EXPECT_FALSE(reader.take(3, &taken));
  EXPECT_EQ(reader.remaining(), 2u);
  ASSERT_TRUE(reader.take(2, &taken));
  EXPECT_EQ(taken, kBytes.data() + 8);
  EXPECT_EQ(reader.remaining(), 0u);
  std::uint8_t u8 = 0;
  EXPECT_FALSE(reader.le(&u8));
}

TEST(ByteReader, EmptyInputReadsNothing) {
  ByteReader reader(nullptr, 0);
  std::uint16_t value = 0;
  EXPECT_FALSE(reader.le(&value));
  const std::uint8_t* taken = nullptr;
  EXPECT_TRUE(reader.take(0, &taken));
  EXPECT_EQ(reader.remaining(), 0u);
}

}  // namespace
}  // namespace hipacm::backend
