// SPDX-License-Identifier: MIT
// compile_log_paths_test.cpp - comgr's temporary paths in compiler logs become the request's names.
#include "hip_backend/rtc/compile_log_paths.h"

#include <gtest/gtest.h>

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
      // ROCm 7.2's directories carry the process id and a counter.
      "In file included from /tmp/comgr-28340-0-c3f35c/input/saxpy_broken.hip:2:\n"
      "/tmp/hipacm-worker-gbklue/comgr-28337-0-d29af9/include/helper.h:1:43: error: nope\n";
  EXPECT_EQ(with_request_file_names(log, "ignored.hip"),
            "In file included from saxpy_broken.hip:2:\n"
            "many_errors.hip:2:10: error: undeclared\n"
            "CompileSourceX:1:1: another file\n"
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

}  // namespace
}  // namespace hipacm::backend
