// SPDX-License-Identifier: MIT
// remote_address_test.cpp - redis:// URLs: the parts of good ones, percent-decoding, the refusal
// of hostile ones, and the password kept out of every message and display().
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugin/cache/remote/remote_address.h"

namespace hipacm::cache::remote {
namespace {

RemoteAddress parsed(const std::string& url) {
  auto address = parse_remote_address(url);
  EXPECT_TRUE(address.has_value()) << url << ": " << address.failure().message;
  return address ? address.value() : RemoteAddress{};
}

TEST(RemoteAddress, HostAlone) {
  const RemoteAddress address = parsed("redis://cache.example.org");
  EXPECT_EQ(address.host, "cache.example.org");
  EXPECT_EQ(address.port, 6379);
  EXPECT_EQ(address.db, 0u);
  EXPECT_TRUE(address.user.empty());
  EXPECT_TRUE(address.password.empty());
  EXPECT_EQ(address.display(), "redis://cache.example.org:6379/0");
}

TEST(RemoteAddress, EveryPart) {
  const RemoteAddress address = parsed("redis://ci:s3cret@10.0.0.7:6380/12");
  EXPECT_EQ(address.user, "ci");
  EXPECT_EQ(address.password, "s3cret");
  EXPECT_EQ(address.host, "10.0.0.7");
  EXPECT_EQ(address.port, 6380);
  EXPECT_EQ(address.db, 12u);
  EXPECT_EQ(address.display(), "redis://ci:***@10.0.0.7:6380/12");
}

TEST(RemoteAddress, PasswordWithoutUser) {
  const RemoteAddress address = parsed("redis://:pw@localhost:7000");
  EXPECT_TRUE(address.user.empty());
  EXPECT_EQ(address.password, "pw");
  EXPECT_EQ(address.display(), "redis://:***@localhost:7000/0");
}

TEST(RemoteAddress, UserWithoutPassword) {
  const RemoteAddress address = parsed("redis://reader@localhost/3");
  EXPECT_EQ(address.user, "reader");
  EXPECT_TRUE(address.password.empty());
  EXPECT_EQ(address.db, 3u);
  EXPECT_EQ(address.display(), "redis://reader@localhost:6379/3");
}

TEST(RemoteAddress, PercentDecodesUserAndPassword) {
  const RemoteAddress address = parsed("redis://us%65r%3Aname:p%40ss%2Fw%3a%25rd@host:1/0");
  EXPECT_EQ(address.user, "user:name");
  EXPECT_EQ(address.password, "p@ss/w:%rd");
  // The display form encodes the user again so that it parses back to the same one.
  EXPECT_EQ(address.display(), "redis://user%3Aname:***@host:1/0");
  EXPECT_EQ(parsed(address.display()).user, "user:name");
}

TEST(RemoteAddress, RawAtSignInPasswordEndsAtTheLastOne) {
  const RemoteAddress address = parsed("redis://:a@b@host:2");
  EXPECT_EQ(address.password, "a@b");
  EXPECT_EQ(address.host, "host");
  EXPECT_EQ(address.port, 2);
}

TEST(RemoteAddress, Ipv6InBrackets) {
  RemoteAddress address = parsed("redis://[::1]:6390/1");
  EXPECT_EQ(address.host, "::1");
  EXPECT_EQ(address.port, 6390);
  EXPECT_EQ(address.display(), "redis://[::1]:6390/1");
  address = parsed("redis://:pw@[2001:db8::7]");
  EXPECT_EQ(address.host, "2001:db8::7");
  EXPECT_EQ(address.port, 6379);
}

TEST(RemoteAddress, Bounds) {
  EXPECT_EQ(parsed("redis://h:1").port, 1);
  EXPECT_EQ(parsed("redis://h:65535").port, 65535);
  EXPECT_EQ(parsed("redis://h/1000000").db, 1000000u);
  EXPECT_EQ(parsed("redis://h/").db, 0u);
  EXPECT_EQ(parsed("REDIS://h").host, "h");
}

TEST(RemoteAddress, RefusesMalformedUrls) {
  const std::vector<std::string> bad = {
      "",
      "redis://",
      "redis:///0",
      "http://host:6379",
      "rediss://host:6380",
      "host:6379",
      "redis://host:0",
      "redis://host:65536",
      "redis://host:99999999999999999999",
      "redis://host:-1",
      "redis://host:+80",
      "redis://host:",
      "redis://host:80x",
      "redis://host/1000001",
      "redis://host/-1",
      "redis://host/1/2",
      "redis://host/db",
      "redis://host?db=1",
      "redis://host#x",
      "redis://ho st",
      "redis://host\n",
      std::string("redis://ho\0st", 13),
      "redis://::1:6379",
      "redis://[::1",
      "redis://[not-v6]:1",
      "redis://[::1]x",
      "redis://[127.0.0.1]",
      "redis://-host",
      "redis://h%41st",
      "redis://user:%zz@host",
      "redis://us%4@host",
      "redis://user:pw%@host",
      "redis://user:pw%00x@host",
      "redis://" + std::string(3000, 'a'),
  };
  for (const std::string& url : bad) {
    auto address = parse_remote_address(url);
    ASSERT_FALSE(address.has_value()) << "accepted: " << url;
    EXPECT_EQ(address.failure().status, HIPACM_ERROR_INVALID_ARGUMENT) << url;
    EXPECT_NE(address.failure().message.find("remote cache URL"), std::string::npos);
  }
}

TEST(RemoteAddress, NoMessageHoldsThePassword) {
  // Each password lands where a typo would put it: in the host, the port, the db, or next to
  // a malformed escape.
  const std::string secret = "Hunter2Secret";
  const std::vector<std::string> bad = {
      "redis://host:" + secret,
      "redis://host/" + secret,
      "redis://user:" + secret + "%zz@host",
      "redis://user:" + secret + "@host:0",
      "redis://user:" + secret + "@host?x",
      "redis://user:" + secret + "@[::1",
      "rediss://user:" + secret + "@host",
      "redis://user:" + secret + "@ho st",
      "redis://user:" + secret + "@host/" + std::string(3000, '1'),
  };
  for (std::size_t i = 0; i < bad.size(); ++i) {
    auto address = parse_remote_address(bad[i]);
    ASSERT_FALSE(address.has_value()) << i;
    EXPECT_EQ(address.failure().message.find(secret), std::string::npos)
        << address.failure().message;
  }
  const RemoteAddress good = parsed("redis://user:" + secret + "@host:1/2");
  EXPECT_EQ(good.password, secret);
  EXPECT_EQ(good.display().find(secret), std::string::npos);
  // A password made only of characters that also occur in the display form is still masked.
  const RemoteAddress plain = parsed("redis://u:6379@host:6379/0");
  EXPECT_EQ(plain.display(), "redis://u:***@host:6379/0");
}

}  // namespace
}  // namespace hipacm::cache::remote
