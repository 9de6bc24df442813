// SPDX-License-Identifier: MIT
// nearest_name_test.cpp - edit distance and the "did you mean" suggestions built on it.
#include "support/nearest_name.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hipacm {
namespace {

const std::vector<std::string> kCommands = {"warmup", "inspect", "doctor", "cache"};
const std::vector<std::string> kArchs = {"gfx900", "gfx906",  "gfx908", "gfx90a",
                                         "gfx90c", "gfx1030", "gfx1100"};

TEST(EditDistance, CountsInsertionsDeletionsReplacementsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "ab"), 2u);
  EXPECT_EQ(edit_distance("gfx90a", "gfx90a"), 0u);
  EXPECT_EQ(edit_distance("gfx90", "gfx90a"), 1u);    // insertion
  EXPECT_EQ(edit_distance("gfx90aa", "gfx90a"), 1u);  // deletion
  EXPECT_EQ(edit_distance("gfx90b", "gfx90a"), 1u);   // replacement
  EXPECT_EQ(edit_distance("gfx9a0", "gfx90a"), 1u);   // swap of neighbours
  EXPECT_EQ(edit_distance("warmpu", "warmup"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("gfx1300x", "gfx1030"), 2u);  // a deletion and a swap
  EXPECT_EQ(edit_distance("abc", "xyz"), 3u);
}

TEST(NearestNames, SuggestsTheCommandATypoMeant) {
  EXPECT_EQ(nearest_names("warmpu", kCommands), std::vector<std::string>{"warmup"});
  EXPECT_EQ(nearest_names("doctr", kCommands), std::vector<std::string>{"doctor"});
  EXPECT_EQ(nearest_names("cahce", kCommands), std::vector<std::string>{"cache"});
  EXPECT_EQ(nearest_names("inspcet", kCommands), std::vector<std::string>{"inspect"});
}

TEST(NearestNames, NothingForExactMatchesEmptyFarOrOverlongNames) {
  EXPECT_TRUE(nearest_names("warmup", kCommands).empty());
  EXPECT_TRUE(nearest_names("", kCommands).empty());
  EXPECT_TRUE(nearest_names("frobnicate", kCommands).empty());
  EXPECT_TRUE(nearest_names("x", kCommands).empty());  // one letter is no evidence
  EXPECT_TRUE(nearest_names(std::string(kMaxNameLength + 1, 'w'), kCommands).empty());
  EXPECT_TRUE(nearest_names("gfx9999", kArchs).empty());
  EXPECT_TRUE(nearest_names("warmpu", {}).empty());
}

TEST(NearestNames, ASwapBeatsOtherEditsAndTiesAreAllNamed) {
  // gfx900 is also one edit from gfx9a0, but gfx90a holds the same characters.
  EXPECT_EQ(nearest_names("gfx9a0", kArchs), std::vector<std::string>{"gfx90a"});
  EXPECT_EQ(nearest_names("gfx90", kArchs),
            (std::vector<std::string>{"gfx900", "gfx906", "gfx908", "gfx90a", "gfx90c"}));
  EXPECT_EQ(nearest_names("gfx90", kArchs, 2), (std::vector<std::string>{"gfx900", "gfx906"}));
  EXPECT_EQ(nearest_names("gfx1300x", kArchs), (std::vector<std::string>{"gfx1030", "gfx1100"}));
  EXPECT_EQ(nearest_names("gfx1300", kArchs), std::vector<std::string>{"gfx1030"});
}

TEST(OneOf, JoinsNamesForAMessage) {
  EXPECT_EQ(one_of({}), "");
  EXPECT_EQ(one_of({"a"}), "a");
  EXPECT_EQ(one_of({"a", "b"}, "'"), "'a' or 'b'");
  EXPECT_EQ(one_of({"a", "b", "c"}), "a, b or c");
}

}  // namespace
}  // namespace hipacm
