// SPDX-License-Identifier: MIT
// service_wire.cpp - encodes and decodes the compile service's messages within fixed bounds;
// sends and receives them with their descriptors.
#include "hip_backend/protocol/service_wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

#include "support/bytes/byte_reader.h"

namespace hipacm::backend::service_wire {
namespace {

using Clock = std::chrono::steady_clock;

void put_u16(std::vector<std::uint8_t>* out, std::uint16_t v) {
  out->push_back(static_cast<std::uint8_t>(v));
  out->push_back(static_cast<std::uint8_t>(v >> 8));
}

void put_u32(std::vector<std::uint8_t>* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

void put_string(std::vector<std::uint8_t>* out, const std::string& s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out->insert(out->end(), s.begin(), s.end());
}

std::vector<std::uint8_t> with_header(MessageType type, const std::vector<std::uint8_t>& body) {
  std::vector<std::uint8_t> out;
  out.reserve(kHeaderBytes + body.size());
  put_u32(&out, kMagic);
  put_u16(&out, static_cast<std::uint16_t>(type));
  put_u16(&out, kVersion);
  put_u32(&out, static_cast<std::uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::size_t max_length(MessageType type) {
  switch (type) {
    case MessageType::kOrder:
      return kMaxOrderBytes;
    case MessageType::kReply:
      return 1 + 4 + 4 + kMaxErrorBytes;
    case MessageType::kExit:
      return 8;
    case MessageType::kIdle:
      return 0;
  }
  return 0;
}

/// A malformed message: the peer broke the protocol.
Failure malformed(std::string why) { return Failure{HIPACM_ERROR_INTERNAL, std::move(why)}; }

/// A length-prefixed string of at most `limit` bytes with no NUL (it becomes a C string).
Expected<std::string> take_string(ByteReader& in, std::size_t limit, const char* what) {
  std::uint32_t length = 0;
  const std::uint8_t* bytes = nullptr;
  if (!in.le(&length) || length > limit || !in.take(length, &bytes)) {
    return malformed(std::string("bad ") + what + " length");
  }
  std::string out(reinterpret_cast<const char*>(bytes), length);
  if (out.find('\0') != std::string::npos) {
    return malformed(std::string(what) + " contains a NUL byte");
  }
  return out;
}

bool absolute(const std::string& path) { return !path.empty() && path.front() == '/'; }

int millis_left(bool limited, Clock::time_point deadline) {
  if (!limited) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<long long>(left, std::numeric_limits<int>::max()));
}

/// Waits for `events` on fd; the Failure says why it timed out or failed.
Expected<void> wait_for(int fd, short events, bool limited, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, millis_left(limited, deadline));
    if (n > 0) return {};
    if (n == 0) return Failure{HIPACM_ERROR_TIMEOUT, "the compile service did not answer in time"};
    if (errno != EINTR) {
      return Failure{HIPACM_ERROR_INTERNAL, std::string("poll: ") + std::strerror(errno)};
    }
  }
}

}  // namespace

Expected<std::vector<std::uint8_t>> encode_order(const WorkerOrder& order) {
  if (order.arch.size() > kMaxArchBytes || order.cwd.size() > kMaxPathBytes ||
      order.temp_dir.size() > kMaxPathBytes || order.environment.size() > kMaxEnvironmentEntries) {
    return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                   "the order is larger than the compile service accepts"};
  }
  std::vector<std::uint8_t> body;
  put_string(&body, order.arch);
  put_string(&body, order.cwd);
  put_string(&body, order.temp_dir);
  put_u32(&body, static_cast<std::uint32_t>(order.environment.size()));
  for (const std::string& entry : order.environment) put_string(&body, entry);
  encode_host_limits(order.limits, &body);
  if (body.size() > kMaxOrderBytes) {
    return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                   "the environment is larger than the compile service accepts"};
  }
  return with_header(MessageType::kOrder, body);
}

std::vector<std::uint8_t> encode_reply(const OrderReply& reply) {
  std::vector<std::uint8_t> body;
  body.push_back(reply.ok ? 1 : 0);
  put_u32(&body, static_cast<std::uint32_t>(reply.pid));
  put_string(&body, reply.error.substr(0, kMaxErrorBytes));
  return with_header(MessageType::kReply, body);
}

std::vector<std::uint8_t> encode_exit(const ExitNotice& notice) {
  std::vector<std::uint8_t> body;
  put_u32(&body, static_cast<std::uint32_t>(notice.pid));
  put_u32(&body, static_cast<std::uint32_t>(notice.wait_status));
  return with_header(MessageType::kExit, body);
}

std::vector<std::uint8_t> encode_idle() { return with_header(MessageType::kIdle, {}); }

Expected<Header> parse_header(const std::uint8_t* bytes, std::size_t size) {
  ByteReader in(bytes, size);
  std::uint32_t magic = 0, length = 0;
  std::uint16_t type = 0, version = 0;
  if (!in.le(&magic) || !in.le(&type) || !in.le(&version) || !in.le(&length)) {
    return malformed("short message header");
  }
  if (magic != kMagic) return malformed("not a compile service message");
  if (version != kVersion) {
    return malformed("compile service protocol version " + std::to_string(version) + ", expected " +
                     std::to_string(kVersion));
  }
  if (type < 1 || type > 4) return malformed("unknown message type " + std::to_string(type));
  Header header;
  header.type = static_cast<MessageType>(type);
  header.length = length;
  if (length > max_length(header.type)) {
    return malformed("message of " + std::to_string(length) + " bytes is over its bound");
  }
  return header;
}

Expected<WorkerOrder> decode_order(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  WorkerOrder order;
  std::uint32_t count = 0;
  Expected<std::string> arch = take_string(in, kMaxArchBytes, "arch");
  if (!arch) return std::move(arch).failure();
  Expected<std::string> cwd = take_string(in, kMaxPathBytes, "working directory");
  if (!cwd) return std::move(cwd).failure();
  Expected<std::string> temp_dir = take_string(in, kMaxPathBytes, "temp directory");
  if (!temp_dir) return std::move(temp_dir).failure();
  order.arch = std::move(arch).value();
  order.cwd = std::move(cwd).value();
  order.temp_dir = std::move(temp_dir).value();
  if (!in.le(&count) || count > kMaxEnvironmentEntries) return malformed("bad environment count");
  order.environment.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    Expected<std::string> entry = take_string(in, kMaxOrderBytes, "environment entry");
    if (!entry) return std::move(entry).failure();
    if (entry->find('=') == std::string::npos || entry->front() == '=') {
      return malformed("an environment entry is not NAME=value");
    }
    order.environment.push_back(std::move(entry).value());
  }
  Expected<HostLimits> limits = decode_host_limits(in);
  if (!limits) return std::move(limits).failure();
  order.limits = std::move(limits).value();
  if (in.remaining() != 0) return malformed("trailing bytes after the order");
  if (!absolute(order.cwd) || !absolute(order.temp_dir)) {
    return malformed("the working and temp directories must be absolute paths");
  }
  return order;
}

Expected<OrderReply> decode_reply(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  std::uint8_t ok = 0;
  std::uint32_t pid = 0;
  OrderReply reply;
  if (!in.le(&ok) || ok > 1 || !in.le(&pid)) return malformed("malformed reply");
  Expected<std::string> error = take_string(in, kMaxErrorBytes, "error");
  if (!error) return std::move(error).failure();
  if (in.remaining() != 0) return malformed("malformed reply");
  reply.error = std::move(error).value();
  reply.ok = ok == 1;
  reply.pid = static_cast<std::int32_t>(pid);
  if (reply.ok && reply.pid <= 0) return malformed("a reply without a worker pid");
  return reply;
}

Expected<ExitNotice> decode_exit(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  std::uint32_t pid = 0, status = 0;
  if (!in.le(&pid) || !in.le(&status) || in.remaining() != 0 ||
      static_cast<std::int32_t>(pid) <= 0) {
    return malformed("malformed exit notice");
  }
  ExitNotice notice;
  notice.pid = static_cast<std::int32_t>(pid);
  notice.wait_status = static_cast<std::int32_t>(status);
  return notice;
}

Expected<void> send_message(int fd, const std::vector<std::uint8_t>& bytes, const int* fds,
                            std::size_t fd_count, int timeout_ms) {
  const bool limited = timeout_ms >= 0;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kReplyDescriptors)] = {};
  if (fd_count > kReplyDescriptors) {
    return Failure{HIPACM_ERROR_INVALID_ARGUMENT, "too many descriptors for one message"};
  }
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    iovec iov{const_cast<std::uint8_t*>(bytes.data() + sent), bytes.size() - sent};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (sent == 0 && fd_count > 0) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fd_count);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fd_count);
      std::memcpy(CMSG_DATA(c), fds, sizeof(int) * fd_count);
    }
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (Expected<void> ready = wait_for(fd, POLLOUT, limited, deadline); !ready) return ready;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return Failure{HIPACM_ERROR_INTERNAL, std::string("send: ") + std::strerror(errno)};
    }
  }
  return {};
}

ReadResult read_message(int fd, int timeout_ms, Header* header, std::vector<std::uint8_t>* payload,
                        std::vector<UniqueFd>* fds) {
  const bool limited = timeout_ms >= 0;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  fds->clear();
  MessageReader reader;
  for (;;) {
    switch (reader.read_available(fd)) {
      case MessageReader::Step::kDone:
        *header = reader.header();
        *payload = std::move(reader.payload());
        *fds = std::move(reader.fds());
        return {ReadEnd::kMessage, {}};
      case MessageReader::Step::kFailed:
        if (reader.error().empty()) return {ReadEnd::kClosed, {}};
        return {ReadEnd::kFailed, reader.error()};
      case MessageReader::Step::kMore:
        if (Expected<void> ready = wait_for(fd, POLLIN, limited, deadline); !ready) {
          return {ReadEnd::kFailed, std::move(ready).failure().message};
        }
        break;
    }
  }
}

MessageReader::Step MessageReader::fail(std::string text) {
  fds_.clear();
  body_.clear();
  error_ = std::move(text);
  return Step::kFailed;
}

MessageReader::Step MessageReader::read_available(int fd) {
  error_.clear();
  // Room for more descriptors than a message may carry, so that extras are seen and closed.
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 16)];
  for (;;) {
    const std::size_t want = have_header_ ? header_.length : kHeaderBytes;
    if (got_ == want) {
      if (have_header_) return Step::kDone;
      Expected<Header> parsed = parse_header(head_, kHeaderBytes);
      if (!parsed) return fail(std::move(parsed).failure().message);
      header_ = parsed.value();
      have_header_ = true;
      body_.resize(header_.length);  // bounded by parse_header
      got_ = 0;
      continue;
    }
    iovec iov{have_header_ ? body_.data() + got_ : head_ + got_, want - got_};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    // MSG_DONTWAIT: never waits, whether or not the socket is non-blocking.
    const ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Step::kMore;
      return fail(std::string("receive: ") + std::strerror(errno));
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int received = -1;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds_.emplace_back(received);
      }
    }
    if ((msg.msg_flags & MSG_CTRUNC) != 0 || fds_.size() > kReplyDescriptors) {
      return fail("a message came with more descriptors than it may carry");
    }
    if (n == 0) {
      if (!have_header_ && got_ == 0) return fail("");
      return fail("the connection closed in the middle of a message");
    }
    got_ += static_cast<std::size_t>(n);
  }
}

}  // namespace hipacm::backend::service_wire
