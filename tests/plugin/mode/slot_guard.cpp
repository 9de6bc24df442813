// SPDX-License-Identifier: MIT
// slot_guard.cpp - fails any test that leaves a mode active, and frees the slot for the next one.
#include <gtest/gtest.h>
#include <hipacm/hipacm.h>

#include <cstdlib>

namespace {

class SlotGuard : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& info) override {
    hipacm_mode* leftover = hipacm_active_mode();
    if (leftover == nullptr) return;
    hipacm_mode_exit(leftover, nullptr);
    ADD_FAILURE() << info.name() << " left a mode active; it was exited so later tests can run";
  }
};

// Registered before main runs: a test binary, not the plugin, so a static
// initializer is fine here. These tests count and time real compiles, so the
// persistent cache stays off unless the environment asks for it.
const bool kRegistered = [] {
  setenv("HIPACM_CACHE", "off", /*overwrite=*/0);
  ::testing::UnitTest::GetInstance()->listeners().Append(new SlotGuard);
  return true;
}();

}  // namespace
