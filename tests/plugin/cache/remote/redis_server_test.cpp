// SPDX-License-Identifier: MIT
// redis_server_test.cpp - the test support itself (tests/support/redis_server.h): a private
// server that restarts on its port, is reaped when killed, and a proxy that leaves no thread or
// descriptor behind.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <string>
#include <thread>

#include "plugin/cache/remote/redis_connection.h"
#include "plugin/cache/remote/remote_address.h"
#include "tests/support/redis_server.h"

namespace hipacm::cache::remote {
namespace {

using std::chrono::milliseconds;

std::size_t entries(const char* directory) {
  std::size_t count = 0;
  if (DIR* dir = ::opendir(directory)) {
    while (::readdir(dir) != nullptr) ++count;
    ::closedir(dir);
  }
  return count;
}

TEST(RedisServerSupport, PasswordProtectedRestartsOnItsPortAndIsReaped) {
  HIPACM_REQUIRE_REDIS_SERVER();
  test::RedisServer server;
  ASSERT_TRUE(server.running()) << server.error();
  EXPECT_EQ(server.password().size(), 32u);
  EXPECT_EQ(server.url(),
            "redis://:" + server.password() + "@127.0.0.1:" + std::to_string(server.port()));
  auto address = parse_remote_address(server.url());
  ASSERT_TRUE(address.has_value());
  auto connection = RedisConnection::open(address.value(), milliseconds(1000));
  ASSERT_TRUE(connection.has_value()) << connection.failure().message;
  ASSERT_TRUE(connection->set("k", "v", false).value());
  // No persistence: a restarted server is empty, on the same port, with the same password.
  EXPECT_EQ(connection->config_get("save").value(), "");
  EXPECT_EQ(connection->config_get("appendonly").value(), "no");
  const pid_t first = server.pid();
  const int port = server.port();
  server.kill();
  EXPECT_FALSE(server.running());
  // Reaped: no zombie is left to wait for.
  errno = 0;
  EXPECT_EQ(::waitpid(first, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  ASSERT_TRUE(server.restart()) << server.error();
  EXPECT_EQ(server.port(), port);
  auto again = RedisConnection::open(address.value(), milliseconds(1000));
  ASSERT_TRUE(again.has_value()) << again.failure().message;
  EXPECT_FALSE(again->exists("k").value());
}

TEST(RedisServerSupport, ProxyCountsConnectionsAndLeavesNothingBehind) {
  HIPACM_REQUIRE_REDIS_SERVER();
  test::RedisServer server;
  ASSERT_TRUE(server.running()) << server.error();
  auto address = parse_remote_address(server.url());
  ASSERT_TRUE(address.has_value());
  // A sanitizer's runtime may start a thread of its own at the process's first thread (TSan's
  // background thread): one thread made and joined first keeps it out of the count.
  std::thread([] {}).join();
  const std::size_t fds = entries("/proc/self/fd");
  const std::size_t threads = entries("/proc/self/task");
  {
    test::DelayProxy proxy(server.port(), milliseconds(1));
    ASSERT_GT(proxy.port(), 0);
    address.value().port = static_cast<std::uint16_t>(proxy.port());
    for (int i = 0; i < 3; ++i) {
      auto connection = RedisConnection::open(address.value(), milliseconds(1000));
      ASSERT_TRUE(connection.has_value()) << connection.failure().message;
      EXPECT_TRUE(connection->ping().has_value());
    }
    proxy.stall();
    EXPECT_FALSE(RedisConnection::open(address.value(), milliseconds(100)).has_value());
    EXPECT_EQ(proxy.accepted(), 4u);
  }
  {
    test::SilentServer silent;
    address.value().port = static_cast<std::uint16_t>(silent.port());
    EXPECT_FALSE(RedisConnection::open(address.value(), milliseconds(100)).has_value());
    EXPECT_EQ(silent.accepted(), 1u);
  }
  EXPECT_EQ(entries("/proc/self/fd"), fds);
  EXPECT_EQ(entries("/proc/self/task"), threads);
}

}  // namespace
}  // namespace hipacm::cache::remote
