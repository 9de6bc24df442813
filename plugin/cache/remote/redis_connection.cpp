// SPDX-License-Identifier: MIT
// redis_connection.cpp - one hiredis connection: connect, AUTH and SELECT within a timeout, then
// the remote cache's commands, each sent in argv form (binary-safe) and bounded by that timeout.
#include "plugin/cache/remote/redis_connection.h"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "plugin/cache/remote/sigpipe_guard.h"

namespace hipacm::cache::remote {
namespace {

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

/// The longest server error text quoted in a message.
constexpr std::size_t kMaxQuotedError = 200;
/// INFO's largest accepted reply (a real one is a few KiB).
constexpr std::size_t kMaxInfoBytes = std::size_t{1} << 20;
/// Redis's own limit on a string value: a bound at or above it bounds nothing.
constexpr std::size_t kMaxRedisString = std::size_t{512} << 20;

// Deletes the key only while it holds the value: a claim or entry replaced by another machine's
// since is left alone.
constexpr std::string_view kCompareAndDelete =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) "
    "else return 0 end";

Failure unavailable(const std::string& server, const std::string& what) {
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, server + ": " + what};
}

timeval to_timeval(std::chrono::milliseconds timeout) {
  const auto ms = std::max<std::int64_t>(timeout.count(), 1);
  return timeval{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
}

/// hiredis 0.14 reports a socket timeout as EAGAIN's text; 1.x (newer distributions) may say so
/// with an error code of its own.
std::string io_reason(const redisContext& context) {
#ifdef REDIS_ERR_TIMEOUT
  if (context.err == REDIS_ERR_TIMEOUT) return "timed out (no reply within the limit)";
#endif
  const std::string text = context.errstr;
  if (text == std::strerror(EAGAIN) || text == std::strerror(EWOULDBLOCK))
    return "timed out (no reply within the limit)";
  return text.empty() ? "connection lost" : text;
}

/// Sends `args` and reads the reply. An I/O failure drops the connection (the context is freed,
/// so usable() turns false); a reply error comes back as a reply for the caller to judge.
/// A template so that it takes RedisConnection's private context type by deduction.
template <class ContextPtr>
Expected<Reply> command(ContextPtr& context, const std::string& server,
                        std::initializer_list<std::string_view> args) {
  const std::string name(*args.begin());
  if (!context || context->err != 0)
    return unavailable(server, name + " failed: the connection was lost earlier");
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const std::string_view arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  Reply reply;
  {
    const SigpipeGuard guard;
    reply.reset(static_cast<redisReply*>(redisCommandArgv(
        context.get(), static_cast<int>(argv.size()), argv.data(), lengths.data())));
  }
  if (!reply || context->err != 0) {
    Failure failure = unavailable(server, name + " failed: " + io_reason(*context));
    context.reset();
    return failure;
  }
  return reply;
}

/// The reply as a failure when it is an error reply, else nullopt.
std::optional<Failure> reply_error(const redisReply& reply, const std::string& server,
                                   std::string_view name) {
  if (reply.type != REDIS_REPLY_ERROR) return std::nullopt;
  const std::size_t length = std::min(reply.len, kMaxQuotedError);
  return unavailable(server, std::string(name) + " refused: " + std::string(reply.str, length));
}

Failure unexpected(const std::string& server, std::string_view name) {
  return unavailable(server, "unexpected reply to " + std::string(name));
}

/// An integer reply, or the failure.
Expected<std::int64_t> integer_of(Expected<Reply> reply, const std::string& server,
                                  std::string_view name) {
  if (!reply) return std::move(reply).failure();
  if (auto error = reply_error(*reply.value(), server, name)) return std::move(*error);
  if (reply.value()->type != REDIS_REPLY_INTEGER) return unexpected(server, name);
  return static_cast<std::int64_t>(reply.value()->integer);
}

std::string text_of(const redisReply& reply) { return std::string(reply.str, reply.len); }

}  // namespace

void RedisConnection::ContextDeleter::operator()(redisContext* context) const noexcept {
  redisFree(context);
}

RedisConnection::RedisConnection(std::unique_ptr<redisContext, ContextDeleter> context,
                                 std::string server)
    : context_(std::move(context)), server_(std::move(server)) {}
RedisConnection::RedisConnection(RedisConnection&&) noexcept = default;
RedisConnection& RedisConnection::operator=(RedisConnection&&) noexcept = default;
RedisConnection::~RedisConnection() = default;

Expected<RedisConnection> RedisConnection::open(const RemoteAddress& address,
                                                std::chrono::milliseconds timeout) {
  std::string server = address.display();
  const timeval limit = to_timeval(timeout);
  std::unique_ptr<redisContext, ContextDeleter> context(
      redisConnectWithTimeout(address.host.c_str(), address.port, limit));
  if (!context) return unavailable(server, "cannot connect: out of memory");
  if (context->err != 0) return unavailable(server, "cannot connect: " + io_reason(*context));
  // hiredis makes its socket without close-on-exec; a compiler worker must not inherit it.
  if (context->fd >= 0) fcntl(context->fd, F_SETFD, fcntl(context->fd, F_GETFD) | FD_CLOEXEC);
  if (redisSetTimeout(context.get(), limit) != REDIS_OK)
    return unavailable(server, "cannot set the command timeout");

  if (!address.password.empty()) {
    auto reply = address.user.empty()
                     ? command(context, server, {"AUTH", address.password})
                     : command(context, server, {"AUTH", address.user, address.password});
    if (!reply) return std::move(reply).failure();
    // The server's text (WRONGPASS, or the count of arguments an old server wanted) never
    // quotes the password.
    if (auto error = reply_error(*reply.value(), server, "AUTH")) return std::move(*error);
  }
  if (address.db != 0) {
    const std::string db = std::to_string(address.db);
    auto reply = command(context, server, {"SELECT", db});
    if (!reply) return std::move(reply).failure();
    if (auto error = reply_error(*reply.value(), server, "SELECT")) return std::move(*error);
  }
  return RedisConnection(std::move(context), std::move(server));
}

bool RedisConnection::usable() const noexcept { return context_ && context_->err == 0; }

Expected<std::optional<std::string>> RedisConnection::get(std::string_view key,
                                                          std::size_t max_bytes) {
  // GETRANGE's end is inclusive: at most max_bytes + 1 bytes come back, enough to tell "too
  // long" without moving the rest. A missing key reads as "", and no value is ever empty.
  const std::string last = std::to_string(std::min(max_bytes, kMaxRedisString));
  auto reply = command(context_, server_, {"GETRANGE", key, "0", last});
  if (!reply) return std::move(reply).failure();
  if (auto error = reply_error(*reply.value(), server_, "GETRANGE")) return std::move(*error);
  const redisReply& value = *reply.value();
  if (value.type == REDIS_REPLY_NIL) return std::optional<std::string>();
  if (value.type != REDIS_REPLY_STRING) return unexpected(server_, "GETRANGE");
  if (value.len == 0) return std::optional<std::string>();
  if (value.len > max_bytes)
    return unavailable(server_,
                       "a value is larger than the " + std::to_string(max_bytes) + "-byte limit");
  return std::optional<std::string>(text_of(value));
}

Expected<bool> RedisConnection::set(std::string_view key, std::string_view value, bool if_absent,
                                    std::chrono::milliseconds ttl) {
  const std::string ms = std::to_string(ttl.count());
  Expected<Reply> reply = Failure{};
  if (if_absent && ttl.count() > 0)
    reply = command(context_, server_, {"SET", key, value, "NX", "PX", ms});
  else if (if_absent)
    reply = command(context_, server_, {"SET", key, value, "NX"});
  else if (ttl.count() > 0)
    reply = command(context_, server_, {"SET", key, value, "PX", ms});
  else
    reply = command(context_, server_, {"SET", key, value});
  if (!reply) return std::move(reply).failure();
  // A full server (OOM under noeviction) answers an error here and stays connected.
  if (auto error = reply_error(*reply.value(), server_, "SET")) return std::move(*error);
  if (reply.value()->type == REDIS_REPLY_NIL) return false;
  if (reply.value()->type != REDIS_REPLY_STATUS) return unexpected(server_, "SET");
  return true;
}

Expected<bool> RedisConnection::delete_if_equal(std::string_view key, std::string_view value) {
  auto deleted = integer_of(
      command(context_, server_, {"EVAL", kCompareAndDelete, "1", key, value}), server_, "EVAL");
  if (!deleted) return std::move(deleted).failure();
  return deleted.value() == 1;
}

Expected<bool> RedisConnection::expire(std::string_view key, std::chrono::milliseconds ttl) {
  const std::string ms = std::to_string(ttl.count());
  auto set = integer_of(command(context_, server_, {"PEXPIRE", key, ms}), server_, "PEXPIRE");
  if (!set) return std::move(set).failure();
  return set.value() == 1;
}

Expected<bool> RedisConnection::exists(std::string_view key) {
  auto count = integer_of(command(context_, server_, {"EXISTS", key}), server_, "EXISTS");
  if (!count) return std::move(count).failure();
  return count.value() > 0;
}

Expected<std::int64_t> RedisConnection::increment(std::string_view key) {
  return integer_of(command(context_, server_, {"INCR", key}), server_, "INCR");
}

Expected<RedisConnection::ScanPage> RedisConnection::scan(std::uint64_t cursor,
                                                          std::string_view pattern,
                                                          std::size_t count) {
  const std::string from = std::to_string(cursor);
  const std::string hint = std::to_string(std::max<std::size_t>(count, 1));
  auto reply = command(context_, server_, {"SCAN", from, "MATCH", pattern, "COUNT", hint});
  if (!reply) return std::move(reply).failure();
  if (auto error = reply_error(*reply.value(), server_, "SCAN")) return std::move(*error);
  const redisReply& page = *reply.value();
  if (page.type != REDIS_REPLY_ARRAY || page.elements != 2 ||
      page.element[0]->type != REDIS_REPLY_STRING || page.element[1]->type != REDIS_REPLY_ARRAY)
    return unexpected(server_, "SCAN");
  ScanPage out;
  const std::string next = text_of(*page.element[0]);
  const auto [end, error] = std::from_chars(next.data(), next.data() + next.size(), out.cursor);
  if (error != std::errc() || end != next.data() + next.size()) return unexpected(server_, "SCAN");
  const redisReply& keys = *page.element[1];
  out.keys.reserve(keys.elements);
  for (std::size_t i = 0; i < keys.elements; ++i) {
    if (keys.element[i]->type != REDIS_REPLY_STRING) return unexpected(server_, "SCAN");
    out.keys.push_back(text_of(*keys.element[i]));
  }
  return out;
}

Expected<std::string> RedisConnection::info(std::string_view section) {
  auto reply = command(context_, server_, {"INFO", section});
  if (!reply) return std::move(reply).failure();
  if (auto error = reply_error(*reply.value(), server_, "INFO")) return std::move(*error);
  const redisReply& text = *reply.value();
  if (text.type != REDIS_REPLY_STRING && text.type != REDIS_REPLY_STATUS)
    return unexpected(server_, "INFO");
  // hiredis 0.14 has no limit on a reply's size, so this bounds what is kept, not what is read.
  if (text.len > kMaxInfoBytes) return unavailable(server_, "INFO's reply is over 1 MiB");
  return text_of(text);
}

Expected<std::string> RedisConnection::config_get(std::string_view name) {
  auto reply = command(context_, server_, {"CONFIG", "GET", name});
  if (!reply) return std::move(reply).failure();
  const redisReply& pairs = *reply.value();
  // Managed servers often rename or forbid CONFIG: nothing to report, not a failure.
  if (pairs.type == REDIS_REPLY_ERROR) return std::string();
  if (pairs.type != REDIS_REPLY_ARRAY) return unexpected(server_, "CONFIG GET");
  if (pairs.elements < 2 || pairs.element[1]->type != REDIS_REPLY_STRING) return std::string();
  return text_of(*pairs.element[1]);
}

Expected<void> RedisConnection::ping() {
  auto reply = command(context_, server_, {"PING"});
  if (!reply) return std::move(reply).failure();
  if (auto error = reply_error(*reply.value(), server_, "PING")) return std::move(*error);
  if (reply.value()->type != REDIS_REPLY_STATUS) return unexpected(server_, "PING");
  return {};
}

}  // namespace hipacm::cache::remote
