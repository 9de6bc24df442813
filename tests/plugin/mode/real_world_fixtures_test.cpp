// SPDX-License-Identifier: MIT
// real_world_fixtures_test.cpp - every MIOpen-style fixture program that plain hipRTC compiles
// also compiles through hipacm, with the same kernels in its code object.
#include <gtest/gtest.h>
#include <hipacm/hipacm.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/hiprtc/backend_lock.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "tests/plugin/plugin_test_support.h"

namespace hipacm::test {
namespace {

const std::string kFixtureDir = HIPACM_FIXTURES_DIR "/miopen_style";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Variant {
  std::string source_name;
  std::string source;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> name_expressions;
};

std::vector<Variant> manifest_variants() {
  const auto manifest = nlohmann::json::parse(read_text(kFixtureDir + "/manifest.json"));
  std::vector<Variant> out;
  for (const auto& kernel : manifest.at("kernels")) {
    Variant v;
    v.source_name = kernel.at("source").get<std::string>();
    v.source = read_text(kFixtureDir + "/" + v.source_name);
    v.options = kernel.at("options").get<std::vector<std::string>>();
    for (const auto& [name, path] : kernel.at("headers").items())
      v.headers.emplace_back(name, read_text(kFixtureDir + "/" + path.get<std::string>()));
    v.name_expressions = kernel.at("name_expressions").get<std::vector<std::string>>();
    out.push_back(std::move(v));
  }
  return out;
}

// Plain hipRTC, with no check of hipacm's: the reference for "a valid program".
struct RawCompile {
  bool ok = false;
  std::vector<std::uint8_t> code;
  std::string log;
};

RawCompile compile_with_plain_hiprtc(const Variant& v, const std::string& arch) {
  RawCompile out;
  const auto loaded = backend::load_hiprtc();
  if (!loaded) {
    out.log = loaded.failure().message;
    return out;
  }
  const backend::HiprtcApi* api = loaded.value();
  const backend::RocmBackendLock lock;
  std::vector<const char*> names, contents;
  for (const auto& [name, text] : v.headers) {
    names.push_back(name.c_str());
    contents.push_back(text.c_str());
  }
  backend::hiprtc_program program = nullptr;
  if (api->hiprtcCreateProgram(&program, v.source.c_str(), v.source_name.c_str(),
                               static_cast<int>(names.size()), contents.data(),
                               names.data()) != backend::kHiprtcSuccess)
    return out;
  for (const auto& expression : v.name_expressions)
    api->hiprtcAddNameExpression(program, expression.c_str());
  std::vector<std::string> options = v.options;
  options.push_back("--gpu-architecture=" + arch);
  std::vector<const char*> argv;
  for (const auto& option : options) argv.push_back(option.c_str());
  out.ok = api->hiprtcCompileProgram(program, static_cast<int>(argv.size()), argv.data()) ==
           backend::kHiprtcSuccess;
  std::size_t log_size = 0;
  if (api->hiprtcGetProgramLogSize(program, &log_size) == backend::kHiprtcSuccess && log_size > 0) {
    out.log.assign(log_size + 1, '\0');
    api->hiprtcGetProgramLog(program, out.log.data());
  }
  std::size_t size = 0;
  if (out.ok && api->hiprtcGetCodeSize(program, &size) == backend::kHiprtcSuccess) {
    out.code.resize(size);
    api->hiprtcGetCode(program, reinterpret_cast<char*>(out.code.data()));
  }
  api->hiprtcDestroyProgram(&program);
  return out;
}

struct HipacmCompile {
  hipacm_status status = HIPACM_ERROR_INTERNAL;
  std::string message;
  std::vector<std::string> kernels;
  std::size_t lowered_names = 0;
};

HipacmCompile compile_with_hipacm(const Variant& v, const std::string& arch) {
  Request request(v.source);
  request.source_name = v.source_name;
  request.headers = v.headers;
  request.with_options(v.options).with_name_expressions(v.name_expressions);
  HipacmCompile out;
  hipacm_future* future = nullptr;
  out.status = hipacm_compile(request.get(), arch.c_str(), &future);
  if (future == nullptr) {
    out.message = hipacm_last_error_message();
    return out;
  }
  out.message = hipacm_future_error_message(future);
  const hipacm_kernel* kernel = nullptr;
  if (hipacm_future_result(future, &kernel) == HIPACM_SUCCESS) {
    const auto* bytes = static_cast<const std::uint8_t*>(kernel->code);
    out.kernels = backend::code_object_kernels({bytes, bytes + kernel->code_size}, arch);
    out.lowered_names = kernel->num_lowered_names;
  }
  hipacm_future_release(future);
  return out;
}

// The same variant with its headers reached through -I instead of the request.
Variant through_include_dir(Variant v) {
  v.headers.clear();
  v.options.push_back("-I" + kFixtureDir + "/include");
  return v;
}

std::string describe(const Variant& v, const std::string& arch) {
  std::string text = v.source_name + " [" + arch;
  for (const auto& option : v.options) text += " " + option;
  return text + "]";
}

TEST(Trust09_RealWorldFixtures, EveryProgramPlainHiprtcCompilesCompilesThroughHipacm) {
  const std::vector<Variant> variants = manifest_variants();
  ASSERT_EQ(variants.size(), 14u);
  int compared = 0;
  for (const std::string arch : {"gfx90a", "gfx1030"}) {
    for (const Variant& listed : variants) {
      for (const Variant& v : {listed, through_include_dir(listed)}) {
        const RawCompile raw = compile_with_plain_hiprtc(v, arch);
        ASSERT_TRUE(raw.ok) << describe(v, arch) << " is a valid fixture\n" << raw.log;
        const HipacmCompile ours = compile_with_hipacm(v, arch);
        EXPECT_EQ(ours.status, HIPACM_SUCCESS) << describe(v, arch) << ": " << ours.message;
        EXPECT_EQ(ours.kernels, backend::code_object_kernels(raw.code, arch)) << describe(v, arch);
        EXPECT_EQ(ours.lowered_names, v.name_expressions.size());
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 56);
}

TEST(Trust09_RealWorldFixtures, KernelsBehindConditionsAndMacrosAreTheOnesTheCompilerKept) {
  const std::vector<Variant> variants = manifest_variants();
  // tensor_ops with MS_OP_ID=2, USE_FWD=0: only the macro-named backward kernel exists.
  const HipacmCompile bwd = compile_with_hipacm(variants[5], "gfx90a");
  ASSERT_EQ(bwd.status, HIPACM_SUCCESS) << bwd.message;
  EXPECT_EQ(bwd.kernels, std::vector<std::string>{"OpTensorBwdMax"});
  // arch_conv chooses its kernel by target; its templates come from name expressions.
  const auto has = [](const std::vector<std::string>& kernels, const std::string& name) {
    return std::find(kernels.begin(), kernels.end(), name) != kernels.end();
  };
  const HipacmCompile cdna = compile_with_hipacm(variants[10], "gfx90a");
  const HipacmCompile rdna = compile_with_hipacm(variants[10], "gfx1030");
  EXPECT_TRUE(has(cdna.kernels, "naive_conv_fwd_cdna") &&
              !has(cdna.kernels, "naive_conv_fwd_rdna"));
  EXPECT_TRUE(has(rdna.kernels, "naive_conv_fwd_rdna") &&
              !has(rdna.kernels, "naive_conv_fwd_cdna"));
  EXPECT_EQ(cdna.kernels.size(), 3u);
  EXPECT_EQ(cdna.lowered_names, 2u);
  // pooling's average kernel, with the max kernel and the #if 0 one compiled out.
  EXPECT_EQ(compile_with_hipacm(variants[13], "gfx90a").kernels,
            std::vector<std::string>{"mloPoolingAveFwd"});
}

}  // namespace
}  // namespace hipacm::test
