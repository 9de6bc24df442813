// SPDX-License-Identifier: MIT
// dynamic_library_test.cpp - DynamicLibrary: open, symbols, errors, move, and that handles are
// closed.
#include "support/dynamic_library.h"

#include <gtest/gtest.h>

#include <utility>

namespace hipacm::backend {
namespace {

// A glibc stub library that nothing in this test binary links.
constexpr const char* kUnusedLibrary = "libanl.so.1";

TEST(DynamicLibrary, OpensLoadedLibraryAndFindsSymbol) {
  std::string error;
  auto libc = DynamicLibrary::open("libc.so.6", &error);
  ASSERT_TRUE(libc.has_value()) << error;
  EXPECT_NE(libc->symbol("strlen", &error), nullptr) << error;
  EXPECT_EQ(libc->path().front(), '/') << libc->path();
  EXPECT_NE(libc->path().find("libc"), std::string::npos) << libc->path();
}

TEST(DynamicLibrary, MissingLibraryReportsDlerror) {
  std::string error;
  auto missing = DynamicLibrary::open("libhipacm-no-such-library.so", &error);
  EXPECT_FALSE(missing.has_value());
  EXPECT_NE(error.find("libhipacm-no-such-library.so"), std::string::npos) << error;
}

TEST(DynamicLibrary, RejectsEmptyAndNulNames) {
  std::string error;
  EXPECT_FALSE(DynamicLibrary::open("", &error).has_value());
  EXPECT_NE(error.find("empty"), std::string::npos) << error;
  EXPECT_FALSE(DynamicLibrary::open(std::string("libc.so.6\0x", 11), &error).has_value());
  EXPECT_NE(error.find("NUL"), std::string::npos) << error;
}

TEST(DynamicLibrary, MissingSymbolReportsError) {
  std::string error;
  auto libm = DynamicLibrary::open("libm.so.6", &error);
  ASSERT_TRUE(libm.has_value()) << error;
  EXPECT_EQ(libm->symbol("hipacm_no_such_symbol", &error), nullptr);
  EXPECT_NE(error.find("hipacm_no_such_symbol"), std::string::npos) << error;
  EXPECT_EQ(libm->symbol("hipacm_no_such_symbol", nullptr), nullptr);
}

TEST(DynamicLibrary, MoveTransfersTheHandle) {
  std::string error;
  auto opened = DynamicLibrary::open("libm.so.6", &error);
  ASSERT_TRUE(opened.has_value()) << error;
  DynamicLibrary moved(std::move(*opened));
  EXPECT_EQ(opened->symbol("cos", &error), nullptr);
  EXPECT_NE(moved.symbol("cos", &error), nullptr) << error;
  DynamicLibrary assigned = std::move(moved);
  EXPECT_NE(assigned.symbol("cos", &error), nullptr) << error;
}

TEST(DynamicLibrary, ClosesItsHandleUnlessPinned) {
  if (DynamicLibrary::open_if_loaded(kUnusedLibrary, nullptr)) {
    GTEST_SKIP() << kUnusedLibrary << " is already loaded in this process";
  }
  std::string error;
  {
    auto first = DynamicLibrary::open(kUnusedLibrary, &error);
    ASSERT_TRUE(first.has_value()) << error;
    auto second = DynamicLibrary::open(kUnusedLibrary, &error);  // the RTLD_NOLOAD path
    ASSERT_TRUE(second.has_value()) << error;
    EXPECT_EQ(first->path(), second->path());
  }
  // Both references were dropped, so the library is gone again.
  EXPECT_FALSE(DynamicLibrary::open_if_loaded(kUnusedLibrary, nullptr).has_value());

  { ASSERT_TRUE(DynamicLibrary::open(kUnusedLibrary, &error, DynamicLibrary::Lifetime::kPinned)); }
  EXPECT_TRUE(DynamicLibrary::open_if_loaded(kUnusedLibrary, nullptr).has_value());
}

}  // namespace
}  // namespace hipacm::backend
