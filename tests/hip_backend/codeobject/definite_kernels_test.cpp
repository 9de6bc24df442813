// SPDX-License-Identifier: MIT
// definite_kernels_test.cpp - the kernels every compile of a request must hold, never more.
#include "hip_backend/codeobject/definite_kernels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hipacm::backend {
namespace {

using Names = std::vector<std::string>;

Names definite(const std::string& source, std::vector<std::string> options = {},
               std::vector<std::pair<std::string, std::string>> headers = {}) {
  CompileRequest request;
  request.source = source;
  request.options = std::move(options);
  request.headers = std::move(headers);
  request.arch = "gfx90a";
  return definite_extern_c_kernels(request);
}

TEST(Trust06_DefiniteKernels, UnconditionalDefinitionsAreRequired) {
  EXPECT_EQ(definite("extern \"C\" __global__ void plain(int* p) { *p = 1; }\n"
                     "extern \"C\" __global__ void __launch_bounds__(256) bounded(int* p) {}\n"
                     "extern \"C\" { __global__ void in_block(int*) {} }\n"
                     "extern \"C\" __global__ void declared_only(int*);\n"
                     "// extern \"C\" __global__ void commented(int*) {}\n"
                     "const char* s = \"extern \\\"C\\\" __global__ void quoted() {}\";\n"),
            (Names{"plain", "bounded", "in_block"}));
}

TEST(Trust06_DefiniteKernels, NothingBehindAConditionOrAMacroIsRequired) {
  EXPECT_EQ(definite("#ifdef X\nextern \"C\" __global__ void a(int*) {}\n#else\n"
                     "extern \"C\" __global__ void b(int*) {}\n#endif\n"
                     "#if !FLAG\nextern \"C\" __global__ void c(int*) {}\n#endif\n"
                     "#if defined(__gfx90a__)\nextern \"C\" __global__ void d(int*) {}\n#endif\n"
                     "#define NAME renamed\nextern \"C\" __global__ void NAME(int*) {}\n"
                     "#define MAKE(x) x##_k\nextern \"C\" __global__ void MAKE(e)(int*) {}\n"
                     "extern \"C\" __global__ void kept(int*) {}\n"),
            Names{"kept"});
  // A name #define'd in any branch of a conditional may be the one compiled.
  EXPECT_EQ(definite("#if defined(__gfx90a__)\n#define KNAME cdna_kernel\n#else\n"
                     "#define KNAME other_kernel\n#endif\n"
                     "extern \"C\" __global__ void KNAME(int*) {}\n"),
            Names{});
  // Names a -D option or a request header could define are not required.
  EXPECT_EQ(definite("extern \"C\" __global__ void KNAME(int*) {}\n", {"-DKNAME=other"}), Names{});
  EXPECT_EQ(definite("extern \"C\" __global__ void KNAME(int*) {}\n", {"-D", "KNAME"}), Names{});
  EXPECT_EQ(definite("#include \"n.h\"\nextern \"C\" __global__ void HNAME(int*) {}\n", {},
                     {{"n.h", "#define HNAME from_header\n"}}),
            Names{});
}

TEST(Trust06_DefiniteKernels, HostileInputEndsInLinearTime) {
  std::string noise(1 << 20, '{');
  std::string attempts;
  for (int i = 0; i < 100000; ++i) attempts += "extern \"C\" __global__ void f(";
  std::string unbalanced = "#if 1\n" + std::string(100000, '#') + "\n#endif\n#endif\n#endif\n";
  EXPECT_EQ(definite(noise), Names{});
  EXPECT_EQ(definite(attempts), Names{});
  EXPECT_EQ(definite(unbalanced + "extern \"C\" __global__ void after(int*) {}\n"), Names{"after"});
}

}  // namespace
}  // namespace hipacm::backend
