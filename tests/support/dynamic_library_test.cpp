// SPDX-License-Identifier: MIT
// dynamic_library_test.cpp - DynamicLibrary: open, symbols, errors, move, and that handles are
// closed.
#include "support/libraries/dynamic_library.h"

#include <gtest/gtest.h>

#include <utility>

namespace hipacm::backend {
namespace {

// A glibc stub library that nothing in this test binary links.
constexpr const char* kUnusedLibrary = "libanl.so.1";

// The address, or nullptr when the lookup failed.
void* address_of(const Expected<void*>& symbol) { return symbol ? symbol.value() : nullptr; }

// The failure's message, or "" when there is none.
template <class T>
std::string message_of(const Expected<T>& result) {
  return result ? std::string() : result.failure().message;
}

TEST(DynamicLibrary, OpensLoadedLibraryAndFindsSymbol) {
  auto libc = DynamicLibrary::open("libc.so.6");
  ASSERT_TRUE(libc.has_value()) << libc.failure().message;
  const Expected<void*> strlen_address = libc->symbol("strlen");
  EXPECT_NE(address_of(strlen_address), nullptr) << message_of(strlen_address);
  EXPECT_EQ(libc->path().front(), '/') << libc->path();
  EXPECT_NE(libc->path().find("libc"), std::string::npos) << libc->path();
}

TEST(DynamicLibrary, MissingLibraryReportsDlerror) {
  auto missing = DynamicLibrary::open("libhipacm-no-such-library.so");
  EXPECT_FALSE(missing.has_value());
  const std::string error = message_of(missing);
  EXPECT_NE(error.find("libhipacm-no-such-library.so"), std::string::npos) << error;
}

TEST(DynamicLibrary, RejectsEmptyAndNulNames) {
  const auto empty = DynamicLibrary::open("");
  EXPECT_FALSE(empty.has_value());
  std::string error = message_of(empty);
  EXPECT_NE(error.find("empty"), std::string::npos) << error;
  const auto with_nul = DynamicLibrary::open(std::string("libc.so.6\0x", 11));
  EXPECT_FALSE(with_nul.has_value());
  error = message_of(with_nul);
  EXPECT_NE(error.find("NUL"), std::string::npos) << error;
}

TEST(DynamicLibrary, MissingSymbolReportsError) {
  auto libm = DynamicLibrary::open("libm.so.6");
  ASSERT_TRUE(libm.has_value()) << libm.failure().message;
  const Expected<void*> missing = libm->symbol("hipacm_no_such_symbol");
  EXPECT_EQ(address_of(missing), nullptr);
  const std::string error = message_of(missing);
  EXPECT_NE(error.find("hipacm_no_such_symbol"), std::string::npos) << error;
  EXPECT_EQ(address_of(libm->symbol("hipacm_no_such_symbol")), nullptr);
}

TEST(DynamicLibrary, MoveTransfersTheHandle) {
  auto opened = DynamicLibrary::open("libm.so.6");
  ASSERT_TRUE(opened.has_value()) << opened.failure().message;
  DynamicLibrary moved(std::move(opened.value()));
  EXPECT_EQ(address_of(opened->symbol("cos")), nullptr);
  EXPECT_NE(address_of(moved.symbol("cos")), nullptr) << message_of(moved.symbol("cos"));
  DynamicLibrary assigned = std::move(moved);
  EXPECT_NE(address_of(assigned.symbol("cos")), nullptr) << message_of(assigned.symbol("cos"));
}

TEST(DynamicLibrary, ClosesItsHandleUnlessPinned) {
  if (DynamicLibrary::open_if_loaded(kUnusedLibrary)) {
    GTEST_SKIP() << kUnusedLibrary << " is already loaded in this process";
  }
  {
    auto first = DynamicLibrary::open(kUnusedLibrary);
    ASSERT_TRUE(first.has_value()) << message_of(first);
    auto second = DynamicLibrary::open(kUnusedLibrary);  // the RTLD_NOLOAD path
    ASSERT_TRUE(second.has_value()) << message_of(second);
    EXPECT_EQ(first->path(), second->path());
  }
  // Both references were dropped, so the library is gone again.
  EXPECT_FALSE(DynamicLibrary::open_if_loaded(kUnusedLibrary).has_value());

  { ASSERT_TRUE(DynamicLibrary::open(kUnusedLibrary, DynamicLibrary::Lifetime::kPinned)); }
  EXPECT_TRUE(DynamicLibrary::open_if_loaded(kUnusedLibrary).has_value());
}

}  // namespace
}  // namespace hipacm::backend
