// SPDX-License-Identifier: MIT
// loaded_objects_test.cpp - the mapped-object walk: build IDs read from memory match the files',
// DT_NEEDED names are read, and a damaged or foreign file gives no build ID.
#include "support/libraries/loaded_objects.h"

#include <gtest/gtest.h>
#include <math.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace hipacm::backend {
namespace {

TEST(LoadedObjects, LibcIsMappedWithItsFilesBuildId) {
  const auto libc = loaded_object_containing(reinterpret_cast<const void*>(&::getpid));
  ASSERT_TRUE(libc.has_value());
  EXPECT_NE(file_base_name(libc->path).find("libc.so"), std::string::npos) << libc->path;
  ASSERT_FALSE(libc->build_id.empty()) << "Debian's libc carries a GNU build ID";
  EXPECT_EQ(libc->build_id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(file_build_id(libc->path), libc->build_id);
}

TEST(LoadedObjects, NeededNamesAreRead) {
  const auto objects = loaded_objects();
  ASSERT_FALSE(objects.empty());
  // libm needs libc: the walk reads DT_NEEDED from the mapped dynamic section.
  const auto libm = loaded_object_containing(
      reinterpret_cast<const void*>(static_cast<double (*)(double)>(&::cos)));
  ASSERT_TRUE(libm.has_value());
  EXPECT_NE(std::find(libm->needed.begin(), libm->needed.end(), "libc.so.6"), libm->needed.end());
  EXPECT_TRUE(std::any_of(objects.begin(), objects.end(), [&](const LoadedObject& object) {
    return object.path == libm->path && object.build_id == libm->build_id;
  }));
}

TEST(LoadedObjects, NoBuildIdFromFilesThatAreNotElfOrAreTruncated) {
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(file_build_id(dir + "/does-not-exist.so"), "");
  const std::string text = dir + "/not-elf.so";
  std::ofstream(text) << "just text, long enough to cover an ELF header's 64 bytes ............";
  EXPECT_EQ(file_build_id(text), "");
  // The first 64 bytes of a real library: a valid header whose program headers are missing.
  const auto libc = loaded_object_containing(reinterpret_cast<const void*>(&::getpid));
  ASSERT_TRUE(libc.has_value());
  std::ifstream in(libc->path, std::ios::binary);
  std::string header(64, '\0');
  in.read(header.data(), 64);
  const std::string truncated = dir + "/truncated.so";
  std::ofstream(truncated, std::ios::binary) << header;
  EXPECT_EQ(file_build_id(truncated), "");
}

TEST(LoadedObjects, BaseName) {
  EXPECT_EQ(file_base_name("/usr/lib/libLLVM.so.21.1"), "libLLVM.so.21.1");
  EXPECT_EQ(file_base_name("libamd_comgr.so.3"), "libamd_comgr.so.3");
}

}  // namespace
}  // namespace hipacm::backend
