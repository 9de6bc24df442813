// SPDX-License-Identifier: MIT
// nvrtc_program_name_test.cpp - which CUDA programs are compiled under their file's name alone,
// and their logs given the program's name back (as NVRTC 13 writes it for each name).
#include "plugin/abi/nvrtc_program_name.h"

#include <gtest/gtest.h>

namespace hipacm {
namespace {

backend::CompileRequest program(std::string name, std::string source) {
  backend::CompileRequest request;
  request.source_name = std::move(name);
  request.source = std::move(source);
  return request;
}

constexpr const char* kKernel = "extern \"C\" __global__ void k(float* p) { p[0] = 1; }\n";

TEST(NvrtcProgramName, APathNameIsCompiledUnderItsFileName) {
  EXPECT_EQ(name_without_directory(program("/tmp/tmpab12cd/kern.cu", kKernel)), "kern.cu");
  EXPECT_EQ(name_without_directory(program("sub/dir/kern.cu", kKernel)), "kern.cu");
  // A given header is part of the program: it may be included.
  backend::CompileRequest with_header =
      program("/tmp/x/kern.cu", std::string("#include \"h.cuh\"\n") + kKernel);
  with_header.headers = {{"h.cuh", "#define H 1\n"}};
  EXPECT_EQ(name_without_directory(with_header), "kern.cu");
}

TEST(NvrtcProgramName, ANameTheProgramCanSeeIsKept) {
  EXPECT_EQ(name_without_directory(program("kern.cu", kKernel)), "");
  EXPECT_EQ(name_without_directory(program("/tmp/x/", kKernel)), "");
  for (const char* reader :
       {"__FILE__", "__FILE_NAME__", "__builtin_FILE()", "#line 3 \"a.cu\"", "assert(p)",
        "#include <cassert>", "#include \"missing.h\"", "#include HEADER"})
    EXPECT_EQ(
        name_without_directory(program("/tmp/x/kern.cu", std::string(reader) + "\n" + kKernel)), "")
        << reader;
  backend::CompileRequest header_reads = program("/tmp/x/kern.cu", kKernel);
  header_reads.headers = {{"h.cuh", "const char* f = __FILE__;\n"}};
  EXPECT_EQ(name_without_directory(header_reads), "");
  backend::CompileRequest same_name = program("/tmp/x/kern.cu", kKernel);
  same_name.headers = {{"kern.cu", "#define H 1\n"}};
  EXPECT_EQ(name_without_directory(same_name), "");
}

TEST(NvrtcProgramName, TheLogNamesTheProgramsPathWhereNvrtcWouldPrintIt) {
  const std::string compiled =
      "kern.cu(1): error: expression must have class type\n"
      "          detected during instantiation of \"T f(T)\" at line 3 of kern.cu\n"
      "h.cuh(2): warning: kern.cu( is not a file here\n"
      "\n"
      "1 error detected in the compilation of \"kern.cu\".\n";
  EXPECT_EQ(with_program_name(compiled, "kern.cu", "/tmp/tmpab/kern.cu"),
            "/tmp/tmpab/kern.cu(1): error: expression must have class type\n"
            "          detected during instantiation of \"T f(T)\" at line 3 of "
            "/tmp/tmpab/kern.cu\n"
            "h.cuh(2): warning: kern.cu( is not a file here\n"
            "\n"
            "1 error detected in the compilation of \"/tmp/tmpab/kern.cu\".\n");
  EXPECT_EQ(with_program_name("", "kern.cu", "/x/kern.cu"), "");
  EXPECT_EQ(with_program_name("kern.cu(1): no newline", "kern.cu", "/x/kern.cu"),
            "/x/kern.cu(1): no newline");
}

}  // namespace
}  // namespace hipacm
