// SPDX-License-Identifier: MIT
// remote_cache_config_test.cpp - hipacm_mode_config.remote_cache (ABI 1.5) through
// libhipacm.so.1: a 1.4-sized config, malformed URLs, "off", and what the 1.5 init sets.
#include <hipacm/hipacm.h>

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

namespace {

// Where version 4 (ABI 1.4) of hipacm_mode_config ends: a 1.4 host's struct_size.
constexpr std::size_t kModeConfigV4Size =
    offsetof(hipacm_mode_config, reserved_1_4) + sizeof(int32_t);
static_assert(kModeConfigV4Size < sizeof(hipacm_mode_config), "remote_cache lies past version 4");

bool backend_available() {
  hipacm_backend_info info{};
  info.struct_size = sizeof(info);
  return hipacm_get_backend_info(&info) == HIPACM_SUCCESS && info.available != 0;
}

/// A fresh cache directory, removed with the fixture.
class RemoteCacheConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "hipacm-remote-cfg-XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    // The remote tier is resolved only while the cache is on; the suite runs with it off.
    unsetenv("HIPACM_REMOTE_CACHE");
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    EXPECT_EQ(hipacm_active_mode(), nullptr);
  }
  /// A 1.5 config reading the cache in dir_, with `remote_cache`.
  hipacm_mode_config config(const char* remote_cache) {
    hipacm_mode_config cfg;
    hipacm_mode_config_init_sized(&cfg, sizeof cfg);
    cfg.max_workers = 1;
    cfg.arch = "gfx90a";
    cfg.isolation = HIPACM_ISOLATION_IN_PROCESS;
    cfg.cache_dir = dir_.c_str();
    cfg.cache_policy = HIPACM_CACHE_READ;
    cfg.remote_cache = remote_cache;
    return cfg;
  }
  std::string dir_;
};

TEST_F(RemoteCacheConfig, InitSetsTheRemoteCacheToNull) {
  hipacm_mode_config cfg;
  std::memset(&cfg, 0xA5, sizeof cfg);
  hipacm_mode_config_init_sized(&cfg, sizeof cfg);
  EXPECT_EQ(cfg.struct_size, sizeof cfg);
  EXPECT_EQ(cfg.remote_cache, nullptr) << "NULL: $HIPACM_REMOTE_CACHE decides";

  // The 1.5 table's init fills version 5; 1.4's stops at version 4 and never writes past it.
  const hipacm_provider* p15 = hipacm_get_provider(HIPACM_ABI_VERSION_ENCODE(1, 5));
  ASSERT_NE(p15, nullptr);
  EXPECT_EQ(p15->abi_version, static_cast<uint32_t>(HIPACM_ABI_VERSION_ENCODE(1, 5)));
  std::memset(&cfg, 0xA5, sizeof cfg);
  p15->mode_config_init(&cfg);
  EXPECT_EQ(cfg.struct_size, sizeof cfg);
  EXPECT_EQ(cfg.remote_cache, nullptr);

  const hipacm_provider* p14 = hipacm_get_provider(HIPACM_ABI_VERSION_ENCODE(1, 4));
  ASSERT_NE(p14, nullptr);
  EXPECT_EQ(p14->abi_version, static_cast<uint32_t>(HIPACM_ABI_VERSION_ENCODE(1, 4)));
  std::memset(&cfg, 0xA5, sizeof cfg);
  p14->mode_config_init(&cfg);
  EXPECT_EQ(cfg.struct_size, kModeConfigV4Size);
  EXPECT_EQ(cfg.cache_failures, 0);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&cfg);
  for (std::size_t i = kModeConfigV4Size; i < sizeof cfg; ++i)
    EXPECT_EQ(bytes[i], 0xA5) << "byte " << i << " past version 4 was written";
}

// A host built against ABI 1.4: what lies where remote_cache would be is not the host's (here,
// a pointer of 0xA5 bytes, which would crash if read), and no remote tier is used.
TEST_F(RemoteCacheConfig, AVersionFourSizedConfigEntersWithoutARemote) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";
  hipacm_mode_config cfg = config(nullptr);
  std::memset(&cfg.remote_cache, 0xA5, sizeof cfg.remote_cache);
  cfg.struct_size = kModeConfigV4Size;
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  EXPECT_EQ(hipacm_active_mode(), mode);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
}

TEST_F(RemoteCacheConfig, AMalformedUrlFailsTheEnterAndLeavesTheSlotFree) {
  struct Case {
    const char* url;
    const char* why;  // in the message
  };
  for (const Case& c :
       {Case{"redis://host:99999", "port"}, Case{"http://x", "scheme"}, Case{"redis://", "host"}}) {
    hipacm_mode_config cfg = config(c.url);
    hipacm_mode* mode = reinterpret_cast<hipacm_mode*>(0x1);
    EXPECT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_ERROR_INVALID_ARGUMENT) << c.url;
    EXPECT_EQ(mode, nullptr) << c.url;
    EXPECT_EQ(hipacm_active_mode(), nullptr) << c.url;
    const std::string message = hipacm_last_error_message();
    EXPECT_NE(message.find("remote_cache"), std::string::npos) << message;
    EXPECT_NE(message.find(c.why), std::string::npos) << message;
  }
  // NULL takes $HIPACM_REMOTE_CACHE, checked the same way and named in the message.
  setenv("HIPACM_REMOTE_CACHE", "redis://host:0", 1);
  hipacm_mode_config cfg = config(nullptr);
  hipacm_mode* mode = nullptr;
  EXPECT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_ERROR_INVALID_ARGUMENT);
  unsetenv("HIPACM_REMOTE_CACHE");
  EXPECT_EQ(hipacm_active_mode(), nullptr);
  const std::string message = hipacm_last_error_message();
  EXPECT_NE(message.find("HIPACM_REMOTE_CACHE"), std::string::npos) << message;
}

TEST_F(RemoteCacheConfig, OffEntersWithoutARemote) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";
  // "off" wins over the environment's URL, malformed here so that reading it would fail.
  setenv("HIPACM_REMOTE_CACHE", "http://not-redis", 1);
  hipacm_mode_config cfg = config("off");
  hipacm_mode* mode = nullptr;
  const hipacm_status entered = hipacm_mode_enter(&cfg, &mode);
  unsetenv("HIPACM_REMOTE_CACHE");
  ASSERT_EQ(entered, HIPACM_SUCCESS) << hipacm_last_error_message();
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
}

// The URL is checked only where a remote tier would be used: with the cache off, none is.
TEST_F(RemoteCacheConfig, WithTheCacheOffTheUrlIsNotUsed) {
  if (!backend_available()) GTEST_SKIP() << "no compiler backend";
  hipacm_mode_config cfg = config("http://x");
  cfg.cache_policy = HIPACM_CACHE_OFF;
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
}

}  // namespace
