// SPDX-License-Identifier: MIT
// fuzz_findings_test.cpp - unit tests for the decoder fixes that fuzzing led to, pinning their
// behaviour.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hip_backend/codeobject/code_object_check.h"

namespace {

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

const std::string kPtxHeader = ".version 7.0\n.target sm_80\n.address_size 64\n";

// A "&var" name expression lowers to a data symbol: PTX declares it after a
// state space (.global/.const) on its line, and it needs no .entry.
TEST(Trust08_PtxCheck, DataSymbolDeclaredAfterItsStateSpaceIsAccepted) {
  const auto ptx = bytes(kPtxHeader + ".visible .global .align 4 .f32 scale_factor;\n" +
                         ".visible .const .align 8 .u64 table[4];\n");
  const auto scale_factor = hipacm::backend::check_code_object(ptx, "compute_80", {"scale_factor"});
  EXPECT_TRUE(scale_factor) << scale_factor.failure().message;
  const auto table = hipacm::backend::check_code_object(ptx, "compute_80", {"table"});
  EXPECT_TRUE(table) << table.failure().message;
}

TEST(Trust08_PtxCheck, NameOutsideADeclarationIsMissing) {
  // Before its state space, only as a prefix of a longer name, or on a line
  // without one, a name is not a declared variable.
  const auto ptx = bytes(kPtxHeader + "// scale_factor is mentioned here\n" +
                         "scale_factor .global .f32 other;\n" + ".global .f32 scale_factor_2;\n");
  const auto checked = hipacm::backend::check_code_object(ptx, "compute_80", {"scale_factor"});
  EXPECT_FALSE(checked);
  const std::string& why = checked.failure().message;
  EXPECT_NE(why.find("scale_factor"), std::string::npos) << why;
}

TEST(Trust08_PtxCheck, EmptyNameIsNeverADeclaredVariable) {
  const auto ptx = bytes(kPtxHeader + ".global .f32 x;\n");
  EXPECT_FALSE(hipacm::backend::check_code_object(ptx, "compute_80", {""}));
}

// Fuzzing found the check quadratic in the length of a line holding many
// copies of a wanted name (21 s for 48 KB). Answers must not change with the
// linear scan: a declaration at the end of a long line is still found.
TEST(Trust08_PtxCheck, DeclarationAtTheEndOfAVeryLongLineIsFound) {
  std::string line;
  for (int i = 0; i < 20000; ++i) line += "add_one ";
  const auto ptx = bytes(kPtxHeader + line + ".global .f32 add_one;\n");
  const auto declared = hipacm::backend::check_code_object(ptx, "compute_80", {"add_one"});
  EXPECT_TRUE(declared) << declared.failure().message;
  const auto no_declaration = bytes(kPtxHeader + line + "\n");
  EXPECT_FALSE(hipacm::backend::check_code_object(no_declaration, "compute_80", {"add_one"}));
}

}  // namespace
