// SPDX-License-Identifier: MIT
// external_inputs_test.cpp - files reached through -I and absolute includes are part of the key.
#include "plugin/cache/key/external_inputs.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "cache_test_support.h"
#include "hip_backend/codeobject/code_object_check.h"

namespace hipacm::cache_test {
namespace {

using cache::ExternalInputLimits;
using cache::scan_external_inputs;

void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

backend::CompileRequest request_with(std::string source, std::vector<std::string> options) {
  backend::CompileRequest request;
  request.source = std::move(source);
  request.options = std::move(options);
  request.arch = kArch;
  return request;
}

std::string digest_of(const backend::CompileRequest& request) {
  const cache::ExternalInputs inputs = scan_external_inputs(request);
  EXPECT_TRUE(inputs.cacheable) << inputs.why_not;
  return inputs.digest;
}

TEST(Trust04_ExternalInputs, RequestWithoutDiskIncludesKeepsItsPlainKey) {
  const auto inputs =
      scan_external_inputs(request_with("#include <hip/hip_runtime.h>\n" + kernel_source(), {}));
  EXPECT_TRUE(inputs.cacheable);
  EXPECT_EQ(inputs.digest, "");
  EXPECT_EQ(inputs.files_read, 0u);
}

TEST(Trust04_ExternalInputs, NestedHeaderChangeThroughIncludeDirChangesTheDigest) {
  TempDir dir;
  write_file(dir.path() + "/inc/outer.h", "#pragma once\n#include \"detail/inner.h\"\n");
  write_file(dir.path() + "/inc/detail/inner.h", "#define SCALE 2\n");
  const auto request = request_with("#include \"outer.h\"\n", {"-I" + dir.path() + "/inc"});
  const std::string before = digest_of(request);
  EXPECT_NE(before, "");
  EXPECT_EQ(scan_external_inputs(request).files_read, 2u);
  write_file(dir.path() + "/inc/detail/inner.h", "#define SCALE 3\n");
  const std::string after = digest_of(request);
  EXPECT_NE(after, before);
  write_file(dir.path() + "/inc/detail/inner.h", "#define SCALE 2\n");
  EXPECT_EQ(digest_of(request), before) << "the digest depends on contents, not on times";
}

TEST(Trust04_ExternalInputs, SeparateAndLongIncludeOptionsAreFollowed) {
  TempDir dir;
  write_file(dir.path() + "/a/x.h", "1");
  write_file(dir.path() + "/b/y.h", "2");
  write_file(dir.path() + "/c/z.h", "3");
  const auto request =
      request_with("#include <x.h>\n#include <y.h>\n#include \"z.h\"\n",
                   {"-I", dir.path() + "/a", "--include-directory=" + dir.path() + "/b", "-isystem",
                    dir.path() + "/c"});
  EXPECT_EQ(scan_external_inputs(request).files_read, 3u);
}

TEST(Trust04_ExternalInputs, NvrtcSpellingsAreFollowedToo) {
  TempDir dir;
  write_file(dir.path() + "/inc/n.h", "1");
  write_file(dir.path() + "/pre.h", "2");
  const auto request = request_with("#include <n.h>\n", {"--include-path=" + dir.path() + "/inc",
                                                         "--pre-include=" + dir.path() + "/pre.h"});
  EXPECT_EQ(scan_external_inputs(request).files_read, 2u);
  EXPECT_FALSE(scan_external_inputs(request_with("", {"--use-pch=" + dir.path()})).cacheable);
}

TEST(Trust04_ExternalInputs, AFileThatWouldShadowAnIncludeChangesTheDigest) {
  TempDir dir;
  write_file(dir.path() + "/second/config.h", "#define A 1\n");
  std::filesystem::create_directories(dir.path() + "/first");
  const auto request = request_with("#include <config.h>\n",
                                    {"-I" + dir.path() + "/first", "-I" + dir.path() + "/second"});
  const std::string before = digest_of(request);
  write_file(dir.path() + "/first/config.h", "#define A 2\n");
  EXPECT_NE(digest_of(request), before);
}

TEST(Trust04_ExternalInputs, AbsoluteIncludesAndForcedIncludesAreCovered) {
  TempDir dir;
  write_file(dir.path() + "/abs.h", "#define V 1\n");
  write_file(dir.path() + "/forced.h", "#define W 1\n");
  const auto absolute = request_with("#include \"" + dir.path() + "/abs.h\"\n", {});
  const auto forced = request_with("int x;\n", {"-include", dir.path() + "/forced.h"});
  const std::string abs_before = digest_of(absolute);
  const std::string forced_before = digest_of(forced);
  EXPECT_NE(abs_before, "");
  EXPECT_NE(forced_before, "");
  write_file(dir.path() + "/abs.h", "#define V 2\n");
  write_file(dir.path() + "/forced.h", "#define W 2\n");
  EXPECT_NE(digest_of(absolute), abs_before);
  EXPECT_NE(digest_of(forced), forced_before);
}

TEST(Trust04_ExternalInputs, IncludesInEveryBranchAndSpellingAreCovered) {
  TempDir dir;
  for (const char* name : {"a.h", "b.h", "c.h", "d.h", "e.h", "f.h"})
    write_file(dir.path() + "/inc/" + name, name);
  const std::string source =
      "#if 0\n#include \"a.h\"\n#endif\n"
      "#ifdef NEVER\n  #  include <b.h>\n#endif\n"
      "#if __has_include(\"c.h\")\n#endif\n"
      "#include \\\n  \"d.h\"\n"
      "%:include \"e.h\"\n"
      "#/**/include_next <f.h>\n";
  const auto request = request_with(source, {"-I" + dir.path() + "/inc"});
  EXPECT_EQ(scan_external_inputs(request).files_read, 6u);
}

TEST(Trust04_ExternalInputs, IncludesInsideRequestHeadersAreFollowed) {
  TempDir dir;
  write_file(dir.path() + "/inc/deep.h", "#define D 1\n");
  auto request = request_with("#include \"virtual.h\"\n", {"-I" + dir.path() + "/inc"});
  request.headers.emplace_back("virtual.h", "#include \"deep.h\"\n");
  const std::string before = digest_of(request);
  EXPECT_EQ(scan_external_inputs(request).files_read, 1u);
  write_file(dir.path() + "/inc/deep.h", "#define D 2\n");
  EXPECT_NE(digest_of(request), before);
}

TEST(Trust04_ExternalInputs, ReadsThatCannotBeAccountedForAreNotCached) {
  TempDir dir;
  write_file(dir.path() + "/opts.rsp", "-DX=1\n");
  const std::vector<std::vector<std::string>> opaque = {
      {"@" + dir.path() + "/opts.rsp"},
      {"-Xclang", "-mlink-bitcode-file"},
      {"--rocm-path=" + dir.path()},
      {"-include-pch", dir.path() + "/x.pch"},
      {"-fsomething=" + dir.path() + "/opts.rsp"},  // an unknown option naming a file
  };
  for (const auto& options : opaque) {
    const auto inputs = scan_external_inputs(request_with(kernel_source(), options));
    EXPECT_FALSE(inputs.cacheable) << options.front();
    EXPECT_NE(inputs.why_not, "");
  }
  const auto computed = scan_external_inputs(request_with("#define H <x.h>\n#include H\n", {}));
  EXPECT_FALSE(computed.cacheable);
  EXPECT_NE(computed.why_not.find("computed #include"), std::string::npos) << computed.why_not;
  // -D values are macro text, even when they look like paths.
  EXPECT_TRUE(scan_external_inputs(
                  request_with(kernel_source(), {"-DROOT=" + dir.path(), "-D", dir.path()}))
                  .cacheable);
}

TEST(Trust04_ExternalInputs, AnIncludeGraphPastTheBoundsIsNotCached) {
  TempDir dir;
  write_file(dir.path() + "/inc/a.h", "#include \"b.h\"\n");
  write_file(dir.path() + "/inc/b.h", "#include \"c.h\"\n");
  write_file(dir.path() + "/inc/c.h", "#include \"a.h\"\n");  // a cycle ends too
  const auto request = request_with("#include \"a.h\"\n", {"-I" + dir.path() + "/inc"});
  EXPECT_EQ(scan_external_inputs(request).files_read, 3u);
  ExternalInputLimits limits;
  limits.max_files = 2;
  EXPECT_FALSE(scan_external_inputs(request, limits).cacheable);
  limits = {};
  limits.max_file_bytes = 4;
  EXPECT_FALSE(scan_external_inputs(request, limits).cacheable);
}

// ---- through the C ABI, with real hipRTC compiles and a real cache ----------

struct Compiled {
  hipacm_status status = HIPACM_ERROR_INTERNAL;
  bool from_cache = false;
  std::vector<std::string> kernels;
};

Compiled compile_with_options(const std::string& cache_dir, const std::string& source,
                              const std::vector<std::string>& options) {
  CompileSpec spec;
  spec.source = source;
  spec.options = options;
  const Outcome outcome = compile_in_mode(cache_dir, spec);
  return {outcome.status, outcome.from_cache, backend::code_object_kernels(outcome.code, kArch)};
}

class Trust04_StaleIncludes : public CacheEnvironment {};

TEST_F(Trust04_StaleIncludes, AChangedHeaderBehindIncludeDirIsRecompiledNotServed) {
  TempDir cache_dir;
  TempDir headers;
  const std::string header = headers.path() + "/names.h";
  write_file(header, "#define KERNEL_NAME first_kernel\n");
  const std::string source =
      "#include \"names.h\"\n"
      "extern \"C\" __global__ void KERNEL_NAME(float* x) { x[threadIdx.x] = 1.0f; }\n";
  const std::vector<std::string> options = {"-I" + headers.path()};
  CountingFactory factory;

  Compiled cold = compile_with_options(cache_dir.path(), source, options);
  ASSERT_EQ(cold.status, HIPACM_SUCCESS);
  EXPECT_FALSE(cold.from_cache);
  EXPECT_EQ(cold.kernels, std::vector<std::string>{"first_kernel"});
  Compiled warm = compile_with_options(cache_dir.path(), source, options);
  EXPECT_TRUE(warm.from_cache);
  EXPECT_EQ(factory.compiles.load(), 1);

  write_file(header, "#define KERNEL_NAME second_kernel\n");
  Compiled changed = compile_with_options(cache_dir.path(), source, options);
  ASSERT_EQ(changed.status, HIPACM_SUCCESS);
  EXPECT_FALSE(changed.from_cache) << "a stale object was served after the header changed";
  EXPECT_EQ(changed.kernels, std::vector<std::string>{"second_kernel"});
  EXPECT_EQ(factory.compiles.load(), 2);
  Compiled again = compile_with_options(cache_dir.path(), source, options);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.kernels, std::vector<std::string>{"second_kernel"});
}

TEST_F(Trust04_StaleIncludes, ARequestWithAComputedIncludeIsCompiledEveryTime) {
  TempDir cache_dir;
  TempDir headers;
  write_file(headers.path() + "/names.h", "#define KERNEL_NAME computed_kernel\n");
  const std::string source =
      "#define NAMES_HEADER \"names.h\"\n#include NAMES_HEADER\n"
      "extern \"C\" __global__ void KERNEL_NAME(float* x) { x[threadIdx.x] = 1.0f; }\n";
  CountingFactory factory;
  for (int i = 0; i < 2; ++i) {
    Compiled out = compile_with_options(cache_dir.path(), source, {"-I" + headers.path()});
    ASSERT_EQ(out.status, HIPACM_SUCCESS);
    EXPECT_FALSE(out.from_cache);
    EXPECT_EQ(out.kernels, std::vector<std::string>{"computed_kernel"});
  }
  EXPECT_EQ(factory.compiles.load(), 2);
}

}  // namespace
}  // namespace hipacm::cache_test
