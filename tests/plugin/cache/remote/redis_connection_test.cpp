// SPDX-License-Identifier: MIT
// redis_connection_test.cpp - RedisConnection against a private redis-server: authentication,
// the commands the remote tier uses, bounded reads, and faults (a killed server, a stalled one,
// a full one) that must fail the call, never hang it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "plugin/cache/remote/redis_connection.h"
#include "plugin/cache/remote/remote_address.h"
#include "tests/support/redis_server.h"

namespace hipacm::cache::remote {
namespace {

using std::chrono::milliseconds;
using test::DelayProxy;
using test::RedisServer;

constexpr milliseconds kTimeout{250};

RemoteAddress address_of(const RedisServer& server) {
  auto address = parse_remote_address(server.url());
  EXPECT_TRUE(address.has_value());
  return address ? address.value() : RemoteAddress{};
}

RemoteAddress via(const RemoteAddress& address, int port) {
  RemoteAddress copy = address;
  copy.port = static_cast<std::uint16_t>(port);
  return copy;
}

/// The value of `name` in INFO text ("name:value" lines).
std::uint64_t info_number(const std::string& info, const std::string& name) {
  const std::size_t at = info.find("\n" + name + ":");
  if (at == std::string::npos) return 0;
  return std::stoull(info.substr(at + name.size() + 2));
}

/// Opens a connection to the test's server as `name`, or fails the test.
#define OPEN_OR_FAIL(name)                                                   \
  auto name##_opened = RedisConnection::open(address_, kTimeout);            \
  ASSERT_TRUE(name##_opened.has_value()) << name##_opened.failure().message; \
  RedisConnection& name = name##_opened.value()

/// A port that nothing listens on: bound, read back, and released.
int unused_port() {
  test::DelayProxy probe(0);
  return probe.port();
}

class RedisConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HIPACM_REQUIRE_REDIS_SERVER();
    server_ = std::make_unique<RedisServer>();
    ASSERT_TRUE(server_->running()) << server_->error();
    address_ = address_of(*server_);
  }
  std::unique_ptr<RedisServer> server_;
  RemoteAddress address_;
};

TEST_F(RedisConnectionTest, WrongPasswordIsRefusedWithoutQuotingIt) {
  RemoteAddress wrong = address_;
  wrong.password = "not-the-password-" + server_->password().substr(0, 4);
  auto connection = RedisConnection::open(wrong, kTimeout);
  ASSERT_FALSE(connection.has_value());
  EXPECT_EQ(connection.failure().status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(connection.failure().message.find(wrong.display()), std::string::npos)
      << connection.failure().message;
  EXPECT_EQ(connection.failure().message.find(wrong.password), std::string::npos);
  EXPECT_NE(connection.failure().message.find("AUTH refused"), std::string::npos)
      << connection.failure().message;
}

TEST_F(RedisConnectionTest, NoPasswordConnectsButEveryCommandIsRefused) {
  RemoteAddress anonymous = address_;
  anonymous.password.clear();
  auto connection = RedisConnection::open(anonymous, kTimeout);
  ASSERT_TRUE(connection.has_value()) << connection.failure().message;
  auto pong = connection->ping();
  ASSERT_FALSE(pong.has_value());
  EXPECT_EQ(pong.failure().status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(pong.failure().message.find("NOAUTH"), std::string::npos) << pong.failure().message;
  // A reply error leaves the connection usable.
  EXPECT_TRUE(connection->usable());
}

TEST_F(RedisConnectionTest, UserAuthenticatesThroughAcl) {
  RemoteAddress with_user = address_;
  with_user.user = "default";
  auto connection = RedisConnection::open(with_user, kTimeout);
  ASSERT_TRUE(connection.has_value()) << connection.failure().message;
  EXPECT_TRUE(connection->ping().has_value());
  with_user.user = "nobody";
  auto refused = RedisConnection::open(with_user, kTimeout);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.failure().message.find(server_->password()), std::string::npos);
}

TEST_F(RedisConnectionTest, SetGetAndSetIfAbsent) {
  OPEN_OR_FAIL(redis);
  ASSERT_TRUE(redis.ping().has_value());
  auto absent = redis.get("k", 1024);
  ASSERT_TRUE(absent.has_value()) << absent.failure().message;
  EXPECT_FALSE(absent.value().has_value());

  auto set = redis.set("k", "first", /*if_absent=*/true);
  ASSERT_TRUE(set.has_value()) << set.failure().message;
  EXPECT_TRUE(set.value());
  auto duplicate = redis.set("k", "second", /*if_absent=*/true);
  ASSERT_TRUE(duplicate.has_value());
  EXPECT_FALSE(duplicate.value());
  auto value = redis.get("k", 1024);
  ASSERT_TRUE(value.has_value() && value.value().has_value());
  EXPECT_EQ(*value.value(), "first");

  auto replaced = redis.set("k", "third", /*if_absent=*/false);
  ASSERT_TRUE(replaced.has_value() && replaced.value());
  EXPECT_EQ(*redis.get("k", 1024).value(), "third");
  EXPECT_TRUE(redis.exists("k").value());
  EXPECT_FALSE(redis.exists("other").value());
}

TEST_F(RedisConnectionTest, ValuesAndKeysAreBinarySafe) {
  OPEN_OR_FAIL(redis);
  const std::string key("key with spaces\r\n%s\0", 20);
  std::string value;
  for (int i = 0; i < 256; ++i) value += static_cast<char>(i);
  value += "\r\n$5\r\nSET\r\n%s%n";
  ASSERT_TRUE(redis.set(key, value, false).value());
  auto back = redis.get(key, value.size());
  ASSERT_TRUE(back.has_value() && back.value().has_value());
  EXPECT_EQ(*back.value(), value);
}

TEST_F(RedisConnectionTest, ValueOverTheLimitIsRefusedWithoutReadingIt) {
  OPEN_OR_FAIL(redis);
  const std::string big(4 << 20, 'x');
  ASSERT_TRUE(redis.set("big", big, false).value());
  ASSERT_TRUE(redis.set("exact", std::string(1000, 'y'), false).value());
  EXPECT_EQ(redis.get("exact", 1000).value()->size(), 1000u);
  auto over = redis.get("exact", 999);
  ASSERT_FALSE(over.has_value());
  EXPECT_NE(over.failure().message.find("999"), std::string::npos) << over.failure().message;

  const auto before = info_number(redis.info("stats").value(), "total_net_output_bytes");
  auto refused = redis.get("big", 1024);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.failure().status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  const auto after = info_number(redis.info("stats").value(), "total_net_output_bytes");
  ASSERT_GT(before, 0u);
  // The server sent the first 1025 bytes and an INFO reply, not the 4 MiB value.
  EXPECT_LT(after - before, 64u * 1024) << before << " -> " << after;
  // A refused value is no I/O failure: the connection goes on.
  EXPECT_TRUE(redis.usable());
  EXPECT_TRUE(redis.ping().has_value());
}

TEST_F(RedisConnectionTest, DeleteIfEqualOnlyWithTheSameValue) {
  OPEN_OR_FAIL(redis);
  ASSERT_TRUE(redis.set("claim", "token-a", true).value());
  auto other = redis.delete_if_equal("claim", "token-b");
  ASSERT_TRUE(other.has_value()) << other.failure().message;
  EXPECT_FALSE(other.value());
  EXPECT_TRUE(redis.exists("claim").value());
  auto mine = redis.delete_if_equal("claim", "token-a");
  ASSERT_TRUE(mine.has_value());
  EXPECT_TRUE(mine.value());
  EXPECT_FALSE(redis.exists("claim").value());
  EXPECT_FALSE(redis.delete_if_equal("claim", "token-a").value());
}

TEST_F(RedisConnectionTest, ExpireAndTimeToLive) {
  OPEN_OR_FAIL(redis);
  EXPECT_FALSE(redis.expire("missing", milliseconds(1000)).value());
  ASSERT_TRUE(redis.set("short", "v", false, milliseconds(60000)).value());
  ASSERT_TRUE(redis.expire("short", milliseconds(30)).value());
  ASSERT_TRUE(redis.set("px", "v", true, milliseconds(30)).value());
  // Both go within a bounded wait (no timing is asserted, only that they do go).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((redis.exists("short").value() || redis.exists("px").value()) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(10));
  EXPECT_FALSE(redis.exists("short").value());
  EXPECT_FALSE(redis.exists("px").value());
}

TEST_F(RedisConnectionTest, IncrementAndItsReplyError) {
  OPEN_OR_FAIL(redis);
  EXPECT_EQ(redis.increment("counter").value(), 1);
  EXPECT_EQ(redis.increment("counter").value(), 2);
  ASSERT_TRUE(redis.set("text", "abc", false).value());
  auto error = redis.increment("text");
  ASSERT_FALSE(error.has_value());
  EXPECT_NE(error.failure().message.find("INCR refused"), std::string::npos)
      << error.failure().message;
  EXPECT_TRUE(redis.usable());
}

TEST_F(RedisConnectionTest, ScanVisitsEveryMatchingKey) {
  OPEN_OR_FAIL(redis);
  std::set<std::string> wanted;
  for (int i = 0; i < 40; ++i) {
    wanted.insert("hipacm:e:" + std::to_string(i));
    ASSERT_TRUE(redis.set("hipacm:e:" + std::to_string(i), "v", false).value());
  }
  for (int i = 0; i < 7; ++i)
    ASSERT_TRUE(redis.set("other:" + std::to_string(i), "v", false).value());
  std::set<std::string> seen;
  std::uint64_t cursor = 0;
  int pages = 0;
  do {
    auto page = redis.scan(cursor, "hipacm:e:*", 5);
    ASSERT_TRUE(page.has_value()) << page.failure().message;
    seen.insert(page->keys.begin(), page->keys.end());
    cursor = page->cursor;
    ASSERT_LT(++pages, 1000);
  } while (cursor != 0);
  EXPECT_EQ(seen, wanted);
  EXPECT_GT(pages, 1);
}

TEST_F(RedisConnectionTest, SelectsItsDatabase) {
  RemoteAddress other = address_;
  other.db = 3;
  auto in_three = RedisConnection::open(other, kTimeout);
  ASSERT_TRUE(in_three.has_value()) << in_three.failure().message;
  ASSERT_TRUE(in_three->set("where", "three", false).value());
  OPEN_OR_FAIL(in_zero);
  EXPECT_FALSE(in_zero.exists("where").value());
  EXPECT_TRUE(in_three->exists("where").value());
  other.db = 1000000;
  auto refused = RedisConnection::open(other, kTimeout);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.failure().message.find("SELECT"), std::string::npos);
}

TEST_F(RedisConnectionTest, InfoAndConfig) {
  OPEN_OR_FAIL(redis);
  auto info = redis.info("server");
  ASSERT_TRUE(info.has_value()) << info.failure().message;
  EXPECT_NE(info->find("redis_version:"), std::string::npos);
  auto policy = redis.config_get("maxmemory-policy");
  ASSERT_TRUE(policy.has_value());
  EXPECT_FALSE(policy->empty());
  auto unknown = redis.config_get("no-such-setting");
  ASSERT_TRUE(unknown.has_value());
  EXPECT_TRUE(unknown->empty());
}

TEST_F(RedisConnectionTest, KilledServerFailsTheNextCallAndItNeverHangs) {
  OPEN_OR_FAIL(redis);
  OPEN_OR_FAIL(writer);
  ASSERT_TRUE(redis.ping().has_value());
  ASSERT_TRUE(writer.ping().has_value());
  server_->kill();
  auto pong = redis.ping();
  ASSERT_FALSE(pong.has_value());
  EXPECT_EQ(pong.failure().status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(pong.failure().message.find(address_.display()), std::string::npos);
  EXPECT_EQ(pong.failure().message.find(server_->password()), std::string::npos);
  EXPECT_FALSE(redis.usable());
  // Later calls fail at once, without touching the dropped socket.
  EXPECT_FALSE(redis.get("k", 10).has_value());
  EXPECT_FALSE(redis.usable());
  // A large write into the dead socket raises EPIPE, which must not become a SIGPIPE that
  // kills this process.
  auto set = writer.set("k", std::string(8 << 20, 'z'), false);
  EXPECT_FALSE(set.has_value());
  EXPECT_FALSE(writer.usable());
  // Nothing listens now: a new connection is refused.
  auto again = RedisConnection::open(address_, kTimeout);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.failure().status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  ASSERT_TRUE(server_->restart()) << server_->error();
  auto fresh = RedisConnection::open(address_, kTimeout);
  ASSERT_TRUE(fresh.has_value()) << fresh.failure().message;
  EXPECT_TRUE(fresh->ping().has_value());
}

TEST_F(RedisConnectionTest, StalledServerFailsConnectWithinTheTimeout) {
  DelayProxy proxy(server_->port());
  ASSERT_GT(proxy.port(), 0);
  proxy.stall();
  const auto start = std::chrono::steady_clock::now();
  auto connection = RedisConnection::open(via(address_, proxy.port()), kTimeout);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(connection.has_value());
  EXPECT_EQ(connection.failure().status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(connection.failure().message.find("timed out"), std::string::npos)
      << connection.failure().message;
  EXPECT_EQ(proxy.accepted(), 1u);
  // Generous: this catches a hang, not a slow machine.
  EXPECT_LT(took, 10 * kTimeout);
}

TEST_F(RedisConnectionTest, StalledServerFailsACommandWithinTheTimeout) {
  DelayProxy proxy(server_->port());
  auto connection = RedisConnection::open(via(address_, proxy.port()), kTimeout);
  ASSERT_TRUE(connection.has_value()) << connection.failure().message;
  ASSERT_TRUE(connection->set("k", "v", false).value());
  proxy.stall();
  const auto start = std::chrono::steady_clock::now();
  auto value = connection->get("k", 10);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(value.has_value());
  EXPECT_NE(value.failure().message.find("timed out"), std::string::npos)
      << value.failure().message;
  EXPECT_FALSE(connection->usable());
  EXPECT_LT(took, 10 * kTimeout);
}

TEST_F(RedisConnectionTest, SlowServerWithinTheTimeoutStillAnswers) {
  DelayProxy proxy(server_->port(), milliseconds(20));
  auto connection = RedisConnection::open(via(address_, proxy.port()), milliseconds(1000));
  ASSERT_TRUE(connection.has_value()) << connection.failure().message;
  ASSERT_TRUE(connection->set("k", "slow", false).value());
  EXPECT_EQ(*connection->get("k", 10).value(), "slow");
  // Slower than the limit: the call fails.
  proxy.set_delay(milliseconds(2000));
  EXPECT_FALSE(connection->ping().has_value());
  EXPECT_FALSE(connection->usable());
}

TEST(RedisConnection, NothingListeningIsRefused) {
  const int port = unused_port();
  ASSERT_GT(port, 0);
  RemoteAddress address;
  address.host = "127.0.0.1";
  address.port = static_cast<std::uint16_t>(port);
  address.password = "irrelevant-password";
  auto connection = RedisConnection::open(address, kTimeout);
  ASSERT_FALSE(connection.has_value());
  EXPECT_EQ(connection.failure().status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(connection.failure().message.find("irrelevant-password"), std::string::npos);
  EXPECT_NE(connection.failure().message.find(address.display()), std::string::npos)
      << connection.failure().message;
}

TEST(RedisConnectionFull, FullServerRefusesWritesAndStaysUsable) {
  HIPACM_REQUIRE_REDIS_SERVER();
  RedisServer server(test::RedisServerOptions{"4mb"});
  ASSERT_TRUE(server.running()) << server.error();
  auto connection = RedisConnection::open(address_of(server), kTimeout);
  ASSERT_TRUE(connection.has_value()) << connection.failure().message;
  EXPECT_EQ(connection->config_get("maxmemory-policy").value(), "noeviction");
  const std::string chunk(512 * 1024, 'f');
  std::optional<Failure> refused;
  int stored = 0;
  for (int i = 0; i < 64 && !refused; ++i) {
    auto set = connection->set("fill:" + std::to_string(i), chunk, false);
    if (set.has_value())
      ++stored;
    else
      refused = set.failure();
  }
  ASSERT_TRUE(refused.has_value()) << "64 half-MiB values fitted in 4mb";
  EXPECT_EQ(refused->status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(refused->message.find("OOM"), std::string::npos) << refused->message;
  EXPECT_TRUE(connection->usable());
  EXPECT_TRUE(connection->ping().has_value());
  ASSERT_GT(stored, 0);
  // What was stored before is still served.
  EXPECT_EQ(connection->get("fill:0", chunk.size()).value()->size(), chunk.size());
}

}  // namespace
}  // namespace hipacm::cache::remote
