// SPDX-License-Identifier: MIT
// lowered_name_match_test.cpp - name expressions against lowered names from real hipRTC compiles.
#include <gtest/gtest.h>

#include "plugin/cache/lowered_name_match.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

using cache::comparable_expression;
using cache::comparable_lowered_name;
using cache::lowered_names_match;

// scale<float> and scale<double> as hipRTC lowers them, compiled once.
class Trust06_LoweredNames : public CacheEnvironment {
 protected:
  static void SetUpTestSuite() {
    CompileSpec spec;
    spec.source = kTemplatedSource;
    spec.name_expressions = {"scale<float>", "scale<double>"};
    spec.policy = HIPACM_CACHE_OFF;
    const Outcome out = compile_in_mode("", spec);
    ASSERT_EQ(out.status, HIPACM_SUCCESS);
    ASSERT_EQ(out.lowered_names.size(), 2u);
    float_name_ = out.lowered_names[0];
    double_name_ = out.lowered_names[1];
  }
  static bool match(const std::vector<std::string>& expressions,
                    const std::vector<std::string>& lowered) {
    const Expected<void> matched = lowered_names_match(expressions, lowered);
    const std::string why = matched ? std::string() : matched.failure().message;
    const bool ok = matched.has_value();
    EXPECT_EQ(ok, why.empty()) << why;
    return ok;
  }
  static inline std::string float_name_;
  static inline std::string double_name_;
};

TEST_F(Trust06_LoweredNames, RealNamesDemangleToTheirExpressions) {
  EXPECT_EQ(comparable_lowered_name(float_name_), "scale<float>");
  EXPECT_EQ(comparable_lowered_name(double_name_), "scale<double>");
  EXPECT_TRUE(match({"scale<float>", "scale<double>"}, {float_name_, double_name_}));
}

TEST_F(Trust06_LoweredNames, SwappedNamesFail) {
  EXPECT_FALSE(match({"scale<float>", "scale<double>"}, {double_name_, float_name_}));
}

TEST_F(Trust06_LoweredNames, AnotherBuiltinTemplateArgumentFails) {
  EXPECT_FALSE(match({"scale<float>"}, {double_name_}));
  EXPECT_FALSE(match({"scale<double>", "scale<double>"}, {float_name_, double_name_}));
}

TEST_F(Trust06_LoweredNames, AnotherFunctionFails) {
  EXPECT_FALSE(match({"other<float>"}, {float_name_}));
  EXPECT_FALSE(match({"vadd"}, {"vsub"}));
}

TEST_F(Trust06_LoweredNames, SpellingVariantsOfTheSameNameMatch) {
  EXPECT_TRUE(match({"&scale<float>"}, {float_name_}));
  EXPECT_TRUE(match({" ::scale< float >"}, {float_name_}));
  EXPECT_TRUE(match({"(void(*)(float*, float, int))&scale<float>"}, {float_name_}));
  EXPECT_EQ(comparable_expression("&::ns::f< A<int> >"), "ns::f<A<int>>");
}

TEST_F(Trust06_LoweredNames, UndecidableArgumentsPassOnTheBaseIdentifier) {
  // A typedef: hipRTC resolved it, the expression spells it.
  EXPECT_TRUE(match({"scale<real_t>"}, {float_name_}));
  // Defaults the expression left out: void f<float, 4>().
  EXPECT_TRUE(match({"f<float>"}, {"_Z1fIfLi4EEvv"}));
  // But not when the names are swapped: each is the exact answer of the other
  // expression (void f<A>() and void f<B>()).
  EXPECT_TRUE(match({"f<A>", "f<B>"}, {"_Z1fI1AEvv", "_Z1fI1BEvv"}));
  EXPECT_FALSE(match({"f<A>", "f<B>"}, {"_Z1fI1BEvv", "_Z1fI1AEvv"}));
}

TEST_F(Trust06_LoweredNames, UnmangledNamesCompareAsTheyAre) {
  EXPECT_TRUE(match({"vadd"}, {"vadd"}));
  EXPECT_TRUE(match({"&counter"}, {"counter"}));
  EXPECT_EQ(comparable_lowered_name("_Znot_a_mangled_name"), "_Znot_a_mangled_name");
  EXPECT_EQ(comparable_lowered_name(std::string(100000, 'x')), std::string(100000, 'x'));
}

TEST_F(Trust06_LoweredNames, CountMismatchFails) {
  EXPECT_FALSE(match({"scale<float>"}, {float_name_, double_name_}));
  EXPECT_FALSE(match({"scale<float>", "scale<double>"}, {float_name_}));
}

}  // namespace
}  // namespace hipacm::cache_test
