// SPDX-License-Identifier: MIT
// signing_key_test.cpp - the remote cache's key file: which files are refused and why, the
// HMAC it computes, and its fingerprint.
#include "plugin/cache/remote/signing_key.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace hipacm::cache::remote {
namespace {

namespace fs = std::filesystem;

const std::string kKey = "k3y-for-the-shared-cache-0123456789abcdef";

class SigningKeyFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "hipacm-signing-key-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // A file of exactly `bytes` with exactly `mode` (the umask does not apply to fchmod).
  std::string write(const std::string& name, const std::string& bytes, mode_t mode = 0600) {
    const std::string path = (dir_ / name).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    EXPECT_EQ(::fchmod(fd, mode), 0);
    ::close(fd);
    return path;
  }

  // The failure of loading `path`, checked to be INVALID_ARGUMENT, naming the path and never
  // holding the key.
  std::string refusal(const std::string& path) {
    Expected<SigningKey> key = SigningKey::load(path);
    EXPECT_FALSE(key.has_value());
    if (key) return {};
    EXPECT_EQ(key.failure().status, HIPACM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(key.failure().message.find(path), std::string::npos) << key.failure().message;
    EXPECT_EQ(key.failure().message.find(kKey.substr(0, kMinKeyBytes)), std::string::npos);
    return key.failure().message;
  }

  fs::path dir_;
};

TEST_F(SigningKeyFile, PrivateFileLoadsAsItsBytes) {
  Expected<SigningKey> loaded = SigningKey::load(write("key", kKey));
  ASSERT_TRUE(loaded.has_value()) << loaded.failure().message;
  Expected<SigningKey> direct = SigningKey::from_bytes(kKey);
  ASSERT_TRUE(direct.has_value());
  EXPECT_EQ(loaded->mac("payload"), direct->mac("payload"));
  EXPECT_EQ(loaded->fingerprint(), direct->fingerprint());
  // Read-only for its owner is as private.
  EXPECT_TRUE(SigningKey::load(write("key0400", kKey, 0400)).has_value());
}

TEST_F(SigningKeyFile, OneTrailingNewlineIsNotPartOfTheKey) {
  const std::string want = SigningKey::from_bytes(kKey)->fingerprint();
  Expected<SigningKey> lf = SigningKey::load(write("lf", kKey + "\n"));
  ASSERT_TRUE(lf.has_value()) << lf.failure().message;
  EXPECT_EQ(lf->fingerprint(), want);
  Expected<SigningKey> crlf = SigningKey::load(write("crlf", kKey + "\r\n"));
  ASSERT_TRUE(crlf.has_value()) << crlf.failure().message;
  EXPECT_EQ(crlf->fingerprint(), want);
  // Only one: a second newline is part of the key.
  Expected<SigningKey> two = SigningKey::load(write("two", kKey + "\n\n"));
  ASSERT_TRUE(two.has_value());
  EXPECT_NE(two->fingerprint(), want);
  EXPECT_EQ(two->fingerprint(), SigningKey::from_bytes(kKey + "\n")->fingerprint());
}

TEST_F(SigningKeyFile, GroupOrOtherPermissionIsRefused) {
  const std::string message = refusal(write("shared", kKey, 0644));
  EXPECT_NE(message.find("mode 0644"), std::string::npos) << message;
  EXPECT_NE(message.find("chmod 600"), std::string::npos) << message;
  for (mode_t mode : {0640, 0604, 0620, 0602, 0610, 0601, 0660})
    EXPECT_NE(refusal(write("m", kKey, mode)).find("group or others"), std::string::npos) << mode;
}

TEST_F(SigningKeyFile, AnotherOwnersFileIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a file to another user";
  const std::string path = write("theirs", kKey);
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);  // nobody
  const std::string message = refusal(path);
  EXPECT_NE(message.find("owned by uid 65534"), std::string::npos) << message;
}

TEST_F(SigningKeyFile, SymbolicLinkIsRefused) {
  const std::string target = write("real", kKey);
  const std::string link = (dir_ / "link").string();
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_NE(refusal(link).find("symbolic link"), std::string::npos);
}

TEST_F(SigningKeyFile, DirectoryFifoAndMissingFileAreRefused) {
  const std::string dir = (dir_ / "sub").string();
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  EXPECT_NE(refusal(dir).find("is a directory"), std::string::npos);
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(refusal(fifo).find("not a regular file"), std::string::npos);  // and did not hang
  EXPECT_NE(refusal((dir_ / "absent").string()).find("cannot open"), std::string::npos);
}

TEST_F(SigningKeyFile, LengthBoundsHoldAfterTheNewlineIsStripped) {
  const std::string shortest(kMinKeyBytes, 's');
  EXPECT_TRUE(SigningKey::load(write("min", shortest)).has_value());
  EXPECT_TRUE(SigningKey::load(write("min_lf", shortest + "\n")).has_value());
  EXPECT_NE(refusal(write("short", shortest.substr(1))).find("at least 16"), std::string::npos);
  EXPECT_NE(refusal(write("short_lf", shortest.substr(1) + "\n")).find("holds 15 bytes"),
            std::string::npos);
  EXPECT_NE(refusal(write("empty", "")).find("holds 0 bytes"), std::string::npos);

  const std::string longest(kMaxKeyBytes, 'l');
  EXPECT_TRUE(SigningKey::load(write("max", longest)).has_value());
  EXPECT_TRUE(SigningKey::load(write("max_crlf", longest + "\r\n")).has_value());
  EXPECT_NE(refusal(write("long", longest + "l")).find("at most 4096"), std::string::npos);
  EXPECT_NE(refusal(write("huge", std::string(1 << 20, 'h'))).find("at most 4096"),
            std::string::npos);
}

TEST(SigningKey, FromBytesRefusesAShortKey) {
  Expected<SigningKey> key = SigningKey::from_bytes(std::string(kMinKeyBytes - 1, 'x'));
  ASSERT_FALSE(key.has_value());
  EXPECT_EQ(key.failure().status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_FALSE(SigningKey::from_bytes(std::string(kMaxKeyBytes + 1, 'x')).has_value());
}

TEST(SigningKey, MacIsHmacSha256) {
  // RFC 4231, test case 2's data under test case 1's 20-byte key.
  Expected<SigningKey> key = SigningKey::from_bytes(std::string(20, '\x0b'));
  ASSERT_TRUE(key.has_value());
  const std::string mac = key->mac("Hi There");
  ASSERT_EQ(mac.size(), kMacBytes);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : mac) {
    hex.push_back(kHex[c >> 4]);
    hex.push_back(kHex[c & 15]);
  }
  EXPECT_EQ(hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(SigningKey, VerifyAcceptsOnlyTheExactMac) {
  Expected<SigningKey> key = SigningKey::from_bytes(kKey);
  ASSERT_TRUE(key.has_value());
  const std::string mac = key->mac("data");
  EXPECT_TRUE(key->verify("data", mac));
  EXPECT_FALSE(key->verify("datA", mac));
  for (std::size_t i = 0; i < mac.size(); ++i) {
    std::string flipped = mac;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x80);
    EXPECT_FALSE(key->verify("data", flipped)) << i;
  }
  EXPECT_FALSE(key->verify("data", mac.substr(1)));
  EXPECT_FALSE(key->verify("data", mac + "x"));
  EXPECT_FALSE(key->verify("data", ""));
  Expected<SigningKey> other = SigningKey::from_bytes(kKey + "2");
  EXPECT_FALSE(other->verify("data", mac));
}

TEST(SigningKey, FingerprintTellsKeysApartWithoutShowingThem) {
  const std::string hex_key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  Expected<SigningKey> a = SigningKey::from_bytes(hex_key);
  Expected<SigningKey> b = SigningKey::from_bytes(hex_key.substr(0, 63) + "e");
  ASSERT_TRUE(a.has_value() && b.has_value());
  const std::string fa = a->fingerprint();
  EXPECT_EQ(fa.size(), 16u);
  EXPECT_EQ(fa.find_first_not_of("0123456789abcdef"), std::string::npos) << fa;
  EXPECT_NE(fa, b->fingerprint());
  EXPECT_EQ(fa, SigningKey::from_bytes(hex_key)->fingerprint());
  // Neither the key nor any 8 bytes of it appear in the fingerprint.
  for (std::size_t i = 0; i + 8 <= hex_key.size(); ++i)
    EXPECT_EQ(fa.find(hex_key.substr(i, 8)), std::string::npos) << i;
}

TEST(SigningKey, MovedKeyKeepsSigning) {
  Expected<SigningKey> made = SigningKey::from_bytes(kKey);
  ASSERT_TRUE(made.has_value());
  const std::string mac = made->mac("x");
  SigningKey moved(std::move(made.value()));
  EXPECT_EQ(moved.mac("x"), mac);
  SigningKey assigned = std::move(SigningKey::from_bytes(kKey + "other").value());
  assigned = std::move(moved);
  EXPECT_EQ(assigned.mac("x"), mac);
}

}  // namespace
}  // namespace hipacm::cache::remote
