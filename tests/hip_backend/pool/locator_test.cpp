// SPDX-License-Identifier: MIT
// locator_test.cpp - find_worker_binary: $HIPACM_WORKER, the places beside the binary, clear
// errors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "hip_backend/pool/worker_locator.h"
#include "support/files/unique_fd.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

/// What a search found: the worker's path ("" when none) and the reason when none.
struct Located {
  std::string path;
  std::string why;
};
Located located(const Expected<std::string>& found) {
  return found ? Located{found.value(), ""} : Located{"", found.failure().message};
}

TEST(WorkerLocator, EnvironmentVariableWins) {
  ScopedEnv env("HIPACM_WORKER", kWorkerPath);
  const auto [path, why] = located(backend::find_worker_binary());
  EXPECT_EQ(path, kWorkerPath) << why;
}

TEST(WorkerLocator, MissingEnvironmentTargetIsAClearError) {
  ScopedEnv env("HIPACM_WORKER", "/nonexistent/hipacm-worker");
  const auto [path, why] = located(backend::find_worker_binary());
  EXPECT_EQ(path, "");
  EXPECT_NE(why.find("HIPACM_WORKER=/nonexistent/hipacm-worker"), std::string::npos) << why;
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;
}

TEST(WorkerLocator, NonExecutableEnvironmentTargetIsRejected) {
  char path[] = "/tmp/hipacm-locator-XXXXXX";
  backend::UniqueFd fd(mkstemp(path));
  ASSERT_TRUE(fd);
  ASSERT_EQ(fchmod(fd.get(), 0644), 0);
  ScopedEnv env("HIPACM_WORKER", std::string(path));
  Located found = located(backend::find_worker_binary());
  EXPECT_EQ(found.path, "");
  EXPECT_NE(found.why.find("not usable"), std::string::npos) << found.why;
  ScopedEnv dir("HIPACM_WORKER", "/tmp");
  found = located(backend::find_worker_binary());
  EXPECT_EQ(found.path, "");
  EXPECT_NE(found.why.find("not a regular file"), std::string::npos) << found.why;
  unlink(path);
}

TEST(WorkerLocator, NoWorkerBesideTheBinaryNamesEveryPlaceTried) {
  // The tests link the backend statically, so "beside the binary" is the test
  // executable's directory, which holds no hipacm-worker.
  ScopedEnv env("HIPACM_WORKER", std::nullopt);
  const auto [path, why] = located(backend::find_worker_binary());
  EXPECT_EQ(path, "");
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  std::string dir = self;
  dir = dir.substr(0, dir.rfind('/'));
  EXPECT_NE(why.find(dir + "/hipacm-worker (No such file"), std::string::npos) << why;
  EXPECT_NE(why.find("libexec/hipacm/hipacm-worker"), std::string::npos) << why;
  EXPECT_NE(why.find("Set HIPACM_WORKER"), std::string::npos) << why;
}

TEST(WorkerLocator, SearchesBesideAGivenLibraryDirectory) {
  // What `hipacm doctor` asks: where would a libhipacm.so in this directory find its worker?
  ScopedEnv env("HIPACM_WORKER", std::nullopt);
  const std::string worker = kWorkerPath;
  Located found = located(backend::find_worker_binary_beside(worker.substr(0, worker.rfind('/'))));
  EXPECT_EQ(found.path, worker) << found.why;
  found = located(backend::find_worker_binary_beside("/nonexistent"));
  EXPECT_EQ(found.path, "");
  EXPECT_NE(found.why.find("/nonexistent/hipacm-worker (No such file"), std::string::npos)
      << found.why;
}

}  // namespace
}  // namespace hipacm::test
