// SPDX-License-Identifier: MIT
// rocm_paths_test.cpp - ROCm install trees (ROCM_PATH, HIP_PATH, /opt/rocm, /opt/rocm-X.Y.Z
// newest first) and the candidate lists and release names built from them.
#include "hip_backend/rocm_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

namespace fs = std::filesystem;
using testing::ScopedEnv;

// A fake /opt with the given rocm trees (each with a lib/ folder) and some other entries.
struct FakeOpt {
  explicit FakeOpt(const std::vector<std::string>& trees) {
    root = fs::path(::testing::TempDir()) /
           ("opt-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root);
    for (const std::string& tree : trees) fs::create_directories(root / tree / "lib");
    fs::create_directories(root / "rocm-not-a-version" / "lib");
    fs::create_directories(root / "other");
  }
  ~FakeOpt() { fs::remove_all(root); }
  std::string path(const std::string& tree) const { return (root / tree).string(); }
  fs::path root;
  static inline int counter = 0;
};

TEST(RocmPaths, OptTreesComeNewestFirstAfterPlainRocm) {
  ScopedEnv rocm("ROCM_PATH", std::nullopt);
  ScopedEnv hip("HIP_PATH", std::nullopt);
  const FakeOpt opt({"rocm-6.4.1", "rocm-7.0.0", "rocm", "rocm-6.10.0", "rocm-5.7.1"});
  EXPECT_EQ(
      rocm_install_trees(opt.root.string()),
      (std::vector<std::string>{opt.path("rocm"), opt.path("rocm-7.0.0"), opt.path("rocm-6.10.0"),
                                opt.path("rocm-6.4.1"), opt.path("rocm-5.7.1")}));
}

TEST(RocmPaths, NamedInstallsComeFirstAndOnlyOnce) {
  const FakeOpt opt({"rocm-6.4.1", "rocm-7.0.0"});
  ScopedEnv rocm("ROCM_PATH", opt.path("rocm-6.4.1") + "/");
  ScopedEnv hip("HIP_PATH", std::string("/nonexistent/hip"));
  const auto trees = rocm_install_trees(opt.root.string());
  EXPECT_EQ(trees, (std::vector<std::string>{opt.path("rocm-6.4.1"), opt.path("rocm-7.0.0")}));

  const auto candidates =
      rocm_library_candidates({"libhiprtc.so.7", "libhiprtc.so.6"}, opt.root.string());
  EXPECT_EQ(candidates, (std::vector<std::string>{
                            opt.path("rocm-6.4.1") + "/lib/libhiprtc.so.7",
                            opt.path("rocm-6.4.1") + "/lib/libhiprtc.so.6",
                            "libhiprtc.so.7",
                            "libhiprtc.so.6",
                            opt.path("rocm-7.0.0") + "/lib/libhiprtc.so.7",
                            opt.path("rocm-7.0.0") + "/lib/libhiprtc.so.6",
                        }));
}

TEST(RocmPaths, WithoutInstallsTheLinkerSearchAlone) {
  ScopedEnv rocm("ROCM_PATH", std::nullopt);
  ScopedEnv hip("HIP_PATH", std::nullopt);
  EXPECT_EQ(rocm_library_candidates({"libamd_comgr.so.3"}, "/nonexistent-opt"),
            std::vector<std::string>{"libamd_comgr.so.3"});
}

TEST(RocmPaths, ReleaseAndTreeOfALibrary) {
  EXPECT_EQ(rocm_release_of("/opt/rocm-6.4.1/lib/libhiprtc.so.6.4.60401"), "ROCm 6.4.1");
  EXPECT_EQ(rocm_release_of("/usr/lib/x86_64-linux-gnu/libhiprtc.so.7.2.53211"), "ROCm 7.2");
  EXPECT_EQ(rocm_release_of("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.50203"), "ROCm 5.2");
  EXPECT_EQ(rocm_release_of("/usr/lib/x86_64-linux-gnu/libamd_comgr.so.3.0.0"), "");
  EXPECT_EQ(rocm_release_of("/usr/lib/libhiprtc.so"), "");
  EXPECT_EQ(rocm_tree_of("/opt/rocm-7.0.0/lib/libamd_comgr.so.3"), "/opt/rocm-7.0.0");
  EXPECT_EQ(rocm_tree_of("/opt/rocm/lib/libhiprtc.so.6"), "/opt/rocm");
  EXPECT_EQ(rocm_tree_of("/usr/lib/x86_64-linux-gnu/libhiprtc.so.6"), "");
  EXPECT_EQ(rocm_tree_of("/home/me/rocm-notes/lib/libhiprtc.so.6"), "");
}

}  // namespace
}  // namespace hipacm::backend
