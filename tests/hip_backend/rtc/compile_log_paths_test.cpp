// SPDX-License-Identifier: MIT
// compile_log_paths_test.cpp - comgr's temporary paths in compiler logs become the request's names,
// and those names become a program's own comgr paths again.
#include "hip_backend/rtc/compile_log_paths.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/scoped_env.h"

namespace hipacm::backend {
namespace {

TEST(CompileLogPaths, MainSourceAndHeadersGetTheRequestNames) {
  const std::string log =
      "In file included from /tmp/hipacm-worker-EkbWOF/comgr-7fdb7a/input/CompileSource:2:\n"
      "/tmp/hipacm-worker-EkbWOF/comgr-7fdb7a/include/sub/h.h:1:27: error: undeclared 'nope'\n"
      "/tmp/comgr-59a247/input/CompileSource:3:49: error: no matching function for call to 'f'\n";
  EXPECT_EQ(with_request_file_names(log, "saxpy.hip"),
            "In file included from saxpy.hip:2:\n"
            "sub/h.h:1:27: error: undeclared 'nope'\n"
            "saxpy.hip:3:49: error: no matching function for call to 'f'\n");
}

// ROCm 6's comgr keeps the source's own name under input/ (and runs inside the worker's private
// TMPDIR); only the directories go.
TEST(CompileLogPaths, NewerComgrInputNamesKeepTheirName) {
  const std::string log =
      "In file included from /tmp/hipacm-worker-u84KWL/comgr-d9f2bb/input/saxpy_broken.hip:2:\n"
      "/tmp/hipacm-worker-u84KWL/comgr-1086e2/input/many_errors.hip:2:10: error: undeclared\n"
      "/tmp/comgr-ab12/input/CompileSourceX:1:1: another file\n"
      // A source named CompileSource.hip is not ROCm 5's main source followed by ".hip".
      "/tmp/comgr-ab12/input/CompileSource.hip:3:1: a third\n"
      // ROCm 7.2's directories carry the process id and a counter.
      "In file included from /tmp/comgr-28340-0-c3f35c/input/saxpy_broken.hip:2:\n"
      "/tmp/hipacm-worker-gbklue/comgr-28337-0-d29af9/include/helper.h:1:43: error: nope\n";
  EXPECT_EQ(with_request_file_names(log, "ignored.hip"),
            "In file included from saxpy_broken.hip:2:\n"
            "many_errors.hip:2:10: error: undeclared\n"
            "CompileSourceX:1:1: another file\n"
            "CompileSource.hip:3:1: a third\n"
            "In file included from saxpy_broken.hip:2:\n"
            "helper.h:1:43: error: nope\n");
}

TEST(CompileLogPaths, OtherTextIsKeptByteForByte) {
  for (const std::string& log : {
           std::string("saxpy.cu(3): error: identifier \"bad\" is undefined\n"),
           std::string("/usr/lib/llvm-15/lib/clang/15.0.7/include/x.h:9:8: note: here\n"),
           std::string("/tmp/comgr-/input/CompileSource:1:1: no id\n"),
           std::string("/tmp/comgr-ab12/input/\n"),
           std::string("/tmp/comgr-ab12/output/a.o\n"),
           std::string("file.hip:3:1: relative/comgr-ab12/input/CompileSource is not absolute\n"),
           std::string("x:/tmp/comgr-ab12/input/CompileSource after a colon\n"),
           std::string("/tmp/comgr-ab12/include/\n"),
           std::string(""),
       })
    EXPECT_EQ(with_request_file_names(log, "k.hip"), log);
}

TEST(CompileLogPaths, QuotedAndRepeatedPaths) {
  EXPECT_EQ(
      with_request_file_names("'/t/comgr-1/input/CompileSource' and \"/t/comgr-2/include/a.h\" and "
                              "(/t/comgr-1/input/CompileSource:1:2)",
                              "k.hip"),
      "'k.hip' and \"a.h\" and (k.hip:1:2)");
}

// Logs hipRTC 5.2.3 wrote (TMPDIR=/tmp/inv): a header given with the program that includes
// another (in a sub-directory), a warning, a template instantiation; names with '+' and '@' in
// the message text and in source lines; lambdas and unnamed structs, which clang names by place.
const char kNestedLog[] =
    "In file included from /tmp/inv/comgr-1ee990/input/CompileSource:1:\n"
    "In file included from /tmp/inv/comgr-1ee990/include/a.h:1:\n"
    "/tmp/inv/comgr-1ee990/include/sub/b.h:2:32: error: use of undeclared identifier "
    "'undeclared_b'\n"
    "__device__ int b_fn() { return undeclared_b; }\n"
    "                               ^\n"
    "In file included from /tmp/inv/comgr-1ee990/input/CompileSource:1:\n"
    "/tmp/inv/comgr-1ee990/include/a.h:2:32: error: use of undeclared identifier 'undeclared_a'\n"
    "__device__ int a_fn() { return undeclared_a; }\n"
    "                               ^\n"
    "/tmp/inv/comgr-1ee990/include/a.h:3:2: warning: hello from a [-W#warnings]\n"
    "#warning hello from a\n"
    " ^\n"
    "/tmp/inv/comgr-1ee990/input/CompileSource:3:38: error: use of undeclared identifier 'nope'\n"
    "__global__ void k(float* p) { p[0] = nope + a_fn() + b_fn(); }\n"
    "                                     ^\n"
    "/tmp/inv/comgr-1ee990/input/CompileSource:4:49: error: member reference base type 'int' is "
    "not a structure or union\n"
    "template<class T> __device__ T t(T x) { return x.q; }\n"
    "                                               ~^~\n"
    "/tmp/inv/comgr-1ee990/input/CompileSource:5:37: note: in instantiation of function template "
    "specialization 't<int>' requested here\n"
    "__global__ void k2(int* p) { p[0] = t(1); }\n"
    "                                    ^\n"
    "1 warning and 4 errors generated when compiling for gfx90a.\n";

const char kHostileLog[] =
    "In file included from /tmp/comgr-dda2e1/input/CompileSource:1:\n"
    "/tmp/comgr-dda2e1/include/d+x@1.h:1:2: warning: d+x@1.h:3 in a header [-W#warnings]\n"
    "#warning d+x@1.h:3 in a header\n"
    " ^\n"
    "/tmp/comgr-dda2e1/input/CompileSource:2:2: error: k.hip:1 and d+x@1.h:2 in text\n"
    "#error k.hip:1 and d+x@1.h:2 in text\n"
    " ^\n"
    "/tmp/comgr-dda2e1/input/CompileSource:3:91: error: no matching function for call to object "
    "of type '(lambda at /tmp/comgr-dda2e1/input/CompileSource:3:38)'\n"
    "__global__ void k(int* p) { auto f = [](int x) { return x; }; struct { int a; } s; p[0] = "
    "f(s); }\n"
    "                                                                                          ^\n"
    "/tmp/comgr-dda2e1/input/CompileSource:3:38: note: candidate function not viable: no known "
    "conversion from 'struct (unnamed struct at /tmp/comgr-dda2e1/input/CompileSource:3:63)' to "
    "'int' for 1st argument\n"
    "/tmp/comgr-dda2e1/input/CompileSource:3:38: note: conversion candidate of type 'int "
    "(*)(int)'\n"
    "1 warning and 2 errors generated when compiling for gfx90a.\n";

TEST(CompileLogPaths, ComgrNamesComeBackWhereTheRequestNamesWent) {
  const std::string nested = with_request_file_names(kNestedLog, "k.hip");
  EXPECT_EQ(nested.find("comgr"), std::string::npos);
  EXPECT_EQ(with_comgr_file_names(nested, "k.hip", {"a.h", "sub/b.h"}, "/tmp/inv/comgr-1ee990",
                                  ComgrShape::kRocm5),
            kNestedLog);
  // The names in the message text and in the source lines stay; the header's name is in its own
  // #warning's text.
  const std::string hostile = with_request_file_names(kHostileLog, "k.hip");
  EXPECT_NE(hostile.find("k.hip:2:2: error: k.hip:1 and d+x@1.h:2 in text\n"), std::string::npos);
  EXPECT_EQ(
      with_comgr_file_names(hostile, "k.hip", {"d+x@1.h"}, "/tmp/comgr-dda2e1", ComgrShape::kRocm5),
      kHostileLog);
}

// Logs hipRTC 6.4 and 7.2 wrote (TMPDIR=/tmp/progtmp): comgr keeps the source's own name under
// input/, and 7.2 names the directory comgr-PID-N-XXXXXX.
const char kRocm64Log[] =
    "In file included from /tmp/progtmp/comgr-e65f33/input/nested.hip:1:\n"
    "In file included from /tmp/progtmp/comgr-e65f33/include/a.h:1:\n"
    "/tmp/progtmp/comgr-e65f33/include/sub/b.h:2:32: error: use of undeclared identifier "
    "'undeclared_b'\n"
    "    2 | __device__ int b_fn() { return undeclared_b; }\n"
    "      |                                ^~~~~~~~~~~~\n"
    "In file included from /tmp/progtmp/comgr-e65f33/input/nested.hip:1:\n"
    "/tmp/progtmp/comgr-e65f33/include/a.h:2:32: error: use of undeclared identifier "
    "'undeclared_a'\n"
    "    2 | __device__ int a_fn() { return undeclared_a; }\n"
    "      |                                ^~~~~~~~~~~~\n"
    "/tmp/progtmp/comgr-e65f33/include/a.h:3:2: warning: hello from a [-W#warnings]\n"
    "    3 | #warning hello from a\n"
    "      |  ^\n"
    "/tmp/progtmp/comgr-e65f33/input/nested.hip:3:38: error: use of undeclared identifier 'nope'\n"
    "    3 | __global__ void k(float* p) { p[0] = nope + a_fn() + b_fn(); }\n"
    "      |                                      ^~~~\n"
    "/tmp/progtmp/comgr-e65f33/input/nested.hip:4:49: error: member reference base type 'int' is "
    "not a structure or union\n"
    "    4 | template<class T> __device__ T t(T x) { return x.q; }\n"
    "      |                                                ~^~\n"
    "/tmp/progtmp/comgr-e65f33/input/nested.hip:5:37: note: in instantiation of function template "
    "specialization 't<int>' requested here\n"
    "    5 | __global__ void k2(int* p) { p[0] = t(1); }\n"
    "      |                                     ^\n"
    "1 warning and 4 errors generated when compiling for gfx90a.\n";

const char kRocm72Log[] =
    "In file included from /tmp/progtmp/comgr-11564-1-be6ce7/input/hostile.hip:1:\n"
    "/tmp/progtmp/comgr-11564-1-be6ce7/include/d+x@1.h:1:2: warning: d+x@1.h:3 in a header "
    "[-W#warnings]\n"
    "    1 | #warning d+x@1.h:3 in a header\n"
    "      |  ^\n"
    "/tmp/progtmp/comgr-11564-1-be6ce7/input/hostile.hip:2:2: error: hostile.hip:1 and d+x@1.h:2 "
    "in text\n"
    "    2 | #error hostile.hip:1 and d+x@1.h:2 in text\n"
    "      |  ^\n"
    "1 warning and 1 error generated when compiling for gfx90a.\n";

TEST(CompileLogPaths, NewerComgrKeepsTheSourceNameUnderInput) {
  const std::string rocm6 = with_request_file_names(kRocm64Log, "nested.hip");
  EXPECT_EQ(rocm6.find("comgr"), std::string::npos);
  EXPECT_EQ(with_comgr_file_names(rocm6, "nested.hip", {"a.h", "sub/b.h"},
                                  "/tmp/progtmp/comgr-e65f33", ComgrShape::kRocm6),
            kRocm64Log);
  const std::string rocm7 = with_request_file_names(kRocm72Log, "hostile.hip");
  EXPECT_EQ(rocm7.find("comgr"), std::string::npos);
  EXPECT_EQ(with_comgr_file_names(rocm7, "hostile.hip", {"d+x@1.h"},
                                  "/tmp/progtmp/comgr-11564-1-be6ce7", ComgrShape::kRocm7),
            kRocm72Log);
}

TEST(CompileLogPaths, ComgrNamesNeedTheirPlaceAndTheWholeName) {
  const std::vector<std::string> headers = {"a.h", "a.h.inc", "", "x.*h", "[b].h"};
  const std::string log =
      "a.h.inc:1:2: a longer header wins\n"
      "a.h:1:2: error: a.h:3 is text\n"
      "xa.h:1:1: not a name\n"
      "a.h: no line\n"
      "a.hx:1:1: no\n"
      ":1:1: the empty name is never one\n"
      "x.*h:2:1: and [b].h:3:4 too\n"
      "[b].h:4:1: ok\n"
      "(lambda at a.h:1) wants a column and ')', (lambda at a.h:1:2 too\n"
      "In file included from k.hip:2:\n"
      "k.hip";
  EXPECT_EQ(with_comgr_file_names(log, "k.hip", headers, "/t/comgr-abcdef", ComgrShape::kRocm5),
            "/t/comgr-abcdef/include/a.h.inc:1:2: a longer header wins\n"
            "/t/comgr-abcdef/include/a.h:1:2: error: a.h:3 is text\n"
            "xa.h:1:1: not a name\n"
            "a.h: no line\n"
            "a.hx:1:1: no\n"
            ":1:1: the empty name is never one\n"
            "/t/comgr-abcdef/include/x.*h:2:1: and [b].h:3:4 too\n"
            "/t/comgr-abcdef/include/[b].h:4:1: ok\n"
            "(lambda at a.h:1) wants a column and ')', (lambda at a.h:1:2 too\n"
            "In file included from /t/comgr-abcdef/input/CompileSource:2:\n"
            "k.hip");
  EXPECT_EQ(with_comgr_file_names("", "k.hip", headers, "/t/comgr-1", ComgrShape::kRocm5), "");
  // The source's name wins over a header of the same name, as the forward rewrite names both so.
  EXPECT_EQ(with_comgr_file_names("k.hip:1:1: x\n", "k.hip", {"k.hip"}, "/t/c", ComgrShape::kRocm6),
            "/t/c/input/k.hip:1:1: x\n");
}

TEST(CompileLogPaths, TheProgramsComgrDirectory) {
  const test::ScopedEnv tmpdir("TMPDIR", "/scratch/me/");
  const std::string a = program_comgr_directory(ComgrShape::kRocm5, 0);
  EXPECT_TRUE(std::regex_match(a, std::regex("/scratch/me/comgr-[0-9a-f]{6}"))) << a;
  EXPECT_NE(a, program_comgr_directory(ComgrShape::kRocm6, 0));  // fresh every compile
  EXPECT_TRUE(std::regex_match(
      program_comgr_directory(ComgrShape::kRocm7, 3),
      std::regex("/scratch/me/comgr-" + std::to_string(getpid()) + "-3-[0-9a-f]{6}")));
  {
    // LLVM takes the first variable set, TMPDIR, TMP, TEMP, TEMPDIR, else /tmp.
    const test::ScopedEnv no_tmpdir("TMPDIR", std::nullopt);
    const test::ScopedEnv tmp("TMP", "/t2");
    EXPECT_EQ(program_comgr_directory(ComgrShape::kRocm5, 0).rfind("/t2/comgr-", 0), 0u);
    const test::ScopedEnv no_tmp("TMP", std::nullopt);
    const test::ScopedEnv no_temp("TEMP", std::nullopt);
    const test::ScopedEnv no_tempdir("TEMPDIR", std::nullopt);
    EXPECT_EQ(program_comgr_directory(ComgrShape::kRocm5, 0).rfind("/tmp/comgr-", 0), 0u);
  }
  ComgrShape shape{};
  EXPECT_TRUE(comgr_shape_of_release("ROCm 5.2", &shape));
  EXPECT_EQ(shape, ComgrShape::kRocm5);
  EXPECT_TRUE(comgr_shape_of_release("6.4.1", &shape));
  EXPECT_EQ(shape, ComgrShape::kRocm6);
  EXPECT_TRUE(comgr_shape_of_release("7", &shape));
  EXPECT_EQ(shape, ComgrShape::kRocm7);
  EXPECT_FALSE(comgr_shape_of_release("13.0", &shape));
  EXPECT_FALSE(comgr_shape_of_release("", &shape));
  EXPECT_FALSE(comgr_shape_of_release("ROCm ", &shape));
}

}  // namespace
}  // namespace hipacm::backend
