// SPDX-License-Identifier: MIT
// cli_input_test.cpp - the CLI's input readers and printing on bytes: manifests, variants, escapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"
#include "tools/input/kernel_input.h"
#include "tools/input/manifest_reader.h"

namespace hipacm::cli {
namespace {

namespace fs = std::filesystem;

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "hipacm-cli-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
  }

 private:
  fs::path path_;
};

std::string manifest_of(const std::string& kernels) {
  return R"({"schema": "hipacm-examples-manifest-1", "kernels": [)" + kernels + "]}";
}

TEST(Trust10_ManifestVariants, EveryOptionVariantIsKeptAndLabelled) {
  ScratchDir dir;
  dir.write("v.hip", "extern \"C\" __global__ void k(float* x) { x[0] = V; }\n");
  dir.write("m.json", manifest_of(R"({"source": "v.hip", "options": ["-DV=1"]},
                                     {"source": "v.hip", "options": ["-DV=2"]},
                                     {"source": "v.hip", "options": ["-DV=1"]},
                                     {"source": "v.hip", "options": ["-DV=3"]})"));
  const auto kernels = collect_kernel_inputs({(dir.path() / "m.json").string()});
  ASSERT_EQ(kernels.size(), 3u);  // the exact duplicate of the first is dropped
  EXPECT_EQ(kernels[0].options, std::vector<std::string>{"-DV=1"});
  EXPECT_EQ(kernels[2].options, std::vector<std::string>{"-DV=3"});
  EXPECT_EQ(kernels[1].label, kernels[1].path + " [-DV=2]");
  EXPECT_NE(kernels[0].label, kernels[2].label);
}

TEST(Trust10_ManifestVariants, HeaderVariantsWithTheSameOptionsGetAnIndex) {
  ScratchDir dir;
  dir.write("k.hip", "#include \"v.h\"\n");
  dir.write("one.h", "1");
  dir.write("two.h", "2");
  dir.write("m.json", manifest_of(R"({"source": "k.hip", "headers": {"v.h": "one.h"}},
                                     {"source": "k.hip", "headers": {"v.h": "two.h"}})"));
  const auto kernels = collect_kernel_inputs({(dir.path() / "m.json").string()});
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].label, kernels[0].path + " [#1 no options]");
  EXPECT_EQ(kernels[1].label, kernels[1].path + " [#2 no options]");
}

std::string input_error_of(const std::string& text, const fs::path& dir) {
  try {
    read_manifest_text(text, dir, "m.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Trust13_ManifestText, DeepNestingIsRefusedEvenWhereTheValueWouldBeIgnored) {
  ScratchDir dir;
  dir.write("k.hip", "extern \"C\" __global__ void k() {}\n");
  const std::string deep = std::string(50000, '[') + std::string(50000, ']');
  EXPECT_NE(input_error_of(deep, dir.path()).find("nested deeper than 64 levels"),
            std::string::npos);
  // "description" is ignored, so only the depth limit can refuse this one.
  const std::string hidden = manifest_of(R"({"source": "k.hip", "description": )" + deep + "}");
  EXPECT_NE(input_error_of(hidden, dir.path()).find("nested deeper than 64 levels"),
            std::string::npos);
  const std::string at_limit = manifest_of(R"({"source": "k.hip", "description": )" +
                                           std::string(61, '[') + std::string(61, ']') + "}");
  EXPECT_EQ(input_error_of(at_limit, dir.path()), "");
}

TEST(Trust13_ManifestText, TypeErrorsAndBadTextAreInputErrors) {
  ScratchDir dir;
  dir.write("k.hip", "extern \"C\" __global__ void k() {}\n");
  for (const std::string& text :
       {std::string("not json"), std::string("[]"), std::string("{\"schema\": [1]}"),
        manifest_of("1"), manifest_of(R"({"source": "k.hip", "options": [1]})"),
        manifest_of(R"({"source": "k.hip", "headers": {"h.h": null}})"),
        manifest_of(R"({"source": "k.hip", "name_expressions": "x"})"),
        manifest_of(R"({"source": "missing.hip"})"), manifest_of(R"({"source": "."})"),
        std::string("{\"schema\": \"\xff\"}"), std::string("1e999999")}) {
    EXPECT_THROW(read_manifest_text(text, dir.path(), "m.json"), InputError) << text;
  }
  EXPECT_EQ(read_manifest_text(manifest_of(R"({"source": "k.hip"})"), dir.path(), "m").size(), 1u);
}

TEST(Trust15_Printable, EscapesControlsInvalidUtf8AndBidiControls) {
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\e[2Jb");
  EXPECT_EQ(printable("line\nnext\r"), "line\\nnext\\r");
  EXPECT_EQ(printable(std::string("nul\0bel\x07", 8)), "nul\\x00bel\\x07");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("\xc2\x9b"), "\\u{009B}");                // C1 CSI
  EXPECT_EQ(printable("x\xe2\x80\xae.hip"), "x\\u{202E}.hip");  // right-to-left override
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");           // cut short
}

TEST(Trust15_Printable, KeepsPrintableTextTabsAndValidUtf8) {
  EXPECT_EQ(printable("conv.hip [-DMODE=1]\tok"), "conv.hip [-DMODE=1]\tok");
  EXPECT_EQ(printable("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80"),
            "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(printable(printable("a\x1b")), printable("a\x1b"));  // escaping twice changes nothing
}

}  // namespace
}  // namespace hipacm::cli
