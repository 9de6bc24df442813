// extern_c_scan_test.cpp - the lexical scan for extern "C" kernels: forms it finds, text it skips,
// hostile input.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "hip_backend/code_object_check.h"

namespace hipacm::backend {
namespace {

using Names = std::vector<std::string>;

TEST(ExternCScan, FindsCommonForms) {
  const std::string source = R"(
extern "C" __global__ void plain(float* x) { x[0] = 1; }
extern "C" __global__ __launch_bounds__(256) void bounded_before(int* x) {}
extern "C" __global__ void __launch_bounds__(128, 2) bounded_after(int* x) {}
extern "C" __attribute__((visibility("default"))) __global__ void with_attr() {}
extern "C"
__global__
void
split_lines
(
  int n
)
{
}
extern "C" [[gnu::used]] __global__ void std_attr(int) noexcept {}
)";
  EXPECT_EQ(extern_c_kernel_names(source), (Names{"plain", "bounded_before", "bounded_after",
                                                  "with_attr", "split_lines", "std_attr"}));
}

TEST(ExternCScan, FindsKernelsInExternCBlocks) {
  const std::string source = R"(
extern "C" {
__device__ int helper() { return 1; }
__global__ void first(float* x) { if (x) { x[0] = helper(); } }
struct S { int a; };
__global__ void __launch_bounds__(64) second() {}
int host_function(int);
}
__global__ void outside() {}
)";
  EXPECT_EQ(extern_c_kernel_names(source), (Names{"first", "second"}));
}

TEST(ExternCScan, SkipsCommentsLiteralsAndDisabledCode) {
  const std::string source = R"SRC(
// extern "C" __global__ void in_line_comment() {}
/* extern "C" __global__ void in_block_comment() {} */
const char* s = "extern \"C\" __global__ void in_string() {}";
const char* r = R"x(extern "C" __global__ void in_raw_string() {})x";
char c = '"'; int n = 1'000'000;
#if 0
extern "C" __global__ void disabled() {}
don't mind the apostrophe
#if 1
extern "C" __global__ void nested_disabled() {}
#endif
#endif
#define KERNEL extern "C" __global__ void in_macro() {}
extern "C" __global__ void real() {}
)SRC";
  EXPECT_EQ(extern_c_kernel_names(source), (Names{"real"}));
}

TEST(ExternCScan, IgnoresNonKernelsAndDeclarations) {
  const std::string source = R"(
extern "C" __global__ void declared_only(int*);
extern "C" __device__ void device_function() {}
extern "C" int host_function() { return 0; }
extern "C" __global__ int* not_void() { return 0; }
extern "C++" __global__ void cpp_linkage() {}
template <typename T> __global__ void templated(T*) {}
__global__ void not_extern_c() {}
extern "C" __global__ void defined_twice() {}
extern "C" __global__ void defined_twice();
)";
  EXPECT_EQ(extern_c_kernel_names(source), (Names{"defined_twice"}));
}

TEST(ExternCScan, NeverCrashesOnHostileInput) {
  for (const std::string& source :
       {std::string(), std::string("extern"), std::string("extern \"C\""),
        std::string("extern \"C\" {"), std::string("extern \"C\" __global__ void k("),
        std::string("extern \"C\" __global__ void k() "), std::string("/* unterminated"),
        std::string("\"unterminated"), std::string("R\"abc(unterminated raw"),
        std::string("#if 0\n"), std::string("#endif\n#else\n}}}}"), std::string("'"),
        std::string("extern \"C\" { }}}} extern \"C\" {{{{"), std::string("\\"),
        std::string("\xff\xfe\x80 extern \"C\" __global__ void \xc3\x28() {}")}) {
    EXPECT_NO_THROW(extern_c_kernel_names(source)) << source;
  }
  EXPECT_EQ(extern_c_kernel_names("\xff extern \"C\" __global__ void k\xe9() {}"), Names{"k\xe9"});
}

TEST(ExternCScan, StaysLinearOnLargeAndAdversarialSources) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::string noise(5 << 20, '\0');
  for (char& c : noise) c = static_cast<char>(byte(random));

  std::string nested = "extern \"C\" {";
  while (nested.size() < (5u << 20)) nested += "{}f(";
  std::string attempts;
  while (attempts.size() < (5u << 20)) attempts += "extern \"C\" __global__ void k(";

  std::string many_kernels;
  for (int i = 0; i < 20000; ++i) {
    many_kernels +=
        "extern \"C\" __global__ void k" + std::to_string(i) + "(int* p) { p[0] = 1; }\n";
  }

  const auto start = std::chrono::steady_clock::now();
  extern_c_kernel_names(noise);
  extern_c_kernel_names(nested);
  extern_c_kernel_names(attempts);
  EXPECT_EQ(extern_c_kernel_names(many_kernels).size(), 20000u);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // About 2 s optimized and 15 s under ASan; a quadratic scan of these inputs
  // would take hours, so the bound only has to separate those.
  EXPECT_LT(seconds, 60.0);
}

}  // namespace
}  // namespace hipacm::backend
