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

#include "support/byte_reader.h"

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

/// A length-prefixed string of at most `limit` bytes with no NUL (it becomes a C string).
bool take_string(ByteReader& in, std::size_t limit, const char* what, std::string* out,
                 std::string* why) {
  std::uint32_t length = 0;
  const std::uint8_t* bytes = nullptr;
  if (!in.le(&length) || length > limit || !in.take(length, &bytes)) {
    *why = std::string("bad ") + what + " length";
    return false;
  }
  out->assign(reinterpret_cast<const char*>(bytes), length);
  if (out->find('\0') != std::string::npos) {
    *why = std::string(what) + " contains a NUL byte";
    return false;
  }
  return true;
}

bool absolute(const std::string& path) { return !path.empty() && path.front() == '/'; }

int millis_left(bool limited, Clock::time_point deadline) {
  if (!limited) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<long long>(left, std::numeric_limits<int>::max()));
}

/// Waits for `events` on fd; false with *why on timeout or error.
bool wait_for(int fd, short events, bool limited, Clock::time_point deadline, std::string* why) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, millis_left(limited, deadline));
    if (n > 0) return true;
    if (n == 0) {
      *why = "the compile service did not answer in time";
      return false;
    }
    if (errno != EINTR) {
      *why = std::string("poll: ") + std::strerror(errno);
      return false;
    }
  }
}

}  // namespace

bool encode_order(const WorkerOrder& order, std::vector<std::uint8_t>* out, std::string* why) {
  if (order.arch.size() > kMaxArchBytes || order.cwd.size() > kMaxPathBytes ||
      order.temp_dir.size() > kMaxPathBytes || order.environment.size() > kMaxEnvironmentEntries) {
    *why = "the order is larger than the compile service accepts";
    return false;
  }
  std::vector<std::uint8_t> body;
  put_string(&body, order.arch);
  put_string(&body, order.cwd);
  put_string(&body, order.temp_dir);
  put_u32(&body, static_cast<std::uint32_t>(order.environment.size()));
  for (const std::string& entry : order.environment) put_string(&body, entry);
  encode_host_limits(order.limits, &body);
  if (body.size() > kMaxOrderBytes) {
    *why = "the environment is larger than the compile service accepts";
    return false;
  }
  *out = with_header(MessageType::kOrder, body);
  return true;
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

bool parse_header(const std::uint8_t* bytes, std::size_t size, Header* header, std::string* why) {
  ByteReader in(bytes, size);
  std::uint32_t magic = 0, length = 0;
  std::uint16_t type = 0, version = 0;
  if (!in.le(&magic) || !in.le(&type) || !in.le(&version) || !in.le(&length)) {
    *why = "short message header";
    return false;
  }
  if (magic != kMagic) {
    *why = "not a compile service message";
    return false;
  }
  if (version != kVersion) {
    *why = "compile service protocol version " + std::to_string(version) + ", expected " +
           std::to_string(kVersion);
    return false;
  }
  if (type < 1 || type > 4) {
    *why = "unknown message type " + std::to_string(type);
    return false;
  }
  header->type = static_cast<MessageType>(type);
  header->length = length;
  if (length > max_length(header->type)) {
    *why = "message of " + std::to_string(length) + " bytes is over its bound";
    return false;
  }
  return true;
}

bool decode_order(const std::uint8_t* data, std::size_t size, WorkerOrder* out, std::string* why) {
  ByteReader in(data, size);
  WorkerOrder order;
  std::uint32_t count = 0;
  if (!take_string(in, kMaxArchBytes, "arch", &order.arch, why) ||
      !take_string(in, kMaxPathBytes, "working directory", &order.cwd, why) ||
      !take_string(in, kMaxPathBytes, "temp directory", &order.temp_dir, why)) {
    return false;
  }
  if (!in.le(&count) || count > kMaxEnvironmentEntries) {
    *why = "bad environment count";
    return false;
  }
  order.environment.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    std::string entry;
    if (!take_string(in, kMaxOrderBytes, "environment entry", &entry, why)) return false;
    if (entry.find('=') == std::string::npos || entry.front() == '=') {
      *why = "an environment entry is not NAME=value";
      return false;
    }
    order.environment.push_back(std::move(entry));
  }
  if (!decode_host_limits(in, &order.limits, why)) return false;
  if (in.remaining() != 0) {
    *why = "trailing bytes after the order";
    return false;
  }
  if (!absolute(order.cwd) || !absolute(order.temp_dir)) {
    *why = "the working and temp directories must be absolute paths";
    return false;
  }
  *out = std::move(order);
  return true;
}

bool decode_reply(const std::uint8_t* data, std::size_t size, OrderReply* out, std::string* why) {
  ByteReader in(data, size);
  std::uint8_t ok = 0;
  std::uint32_t pid = 0;
  OrderReply reply;
  if (!in.le(&ok) || ok > 1 || !in.le(&pid) ||
      !take_string(in, kMaxErrorBytes, "error", &reply.error, why) || in.remaining() != 0) {
    if (why->empty()) *why = "malformed reply";
    return false;
  }
  reply.ok = ok == 1;
  reply.pid = static_cast<std::int32_t>(pid);
  if (reply.ok && reply.pid <= 0) {
    *why = "a reply without a worker pid";
    return false;
  }
  *out = std::move(reply);
  return true;
}

bool decode_exit(const std::uint8_t* data, std::size_t size, ExitNotice* out, std::string* why) {
  ByteReader in(data, size);
  std::uint32_t pid = 0, status = 0;
  if (!in.le(&pid) || !in.le(&status) || in.remaining() != 0 ||
      static_cast<std::int32_t>(pid) <= 0) {
    *why = "malformed exit notice";
    return false;
  }
  out->pid = static_cast<std::int32_t>(pid);
  out->wait_status = static_cast<std::int32_t>(status);
  return true;
}

bool send_message(int fd, const std::vector<std::uint8_t>& bytes, const int* fds,
                  std::size_t fd_count, int timeout_ms, std::string* why) {
  const bool limited = timeout_ms >= 0;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kReplyDescriptors)] = {};
  if (fd_count > kReplyDescriptors) {
    *why = "too many descriptors for one message";
    return false;
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
      if (!wait_for(fd, POLLOUT, limited, deadline, why)) return false;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      *why = std::string("send: ") + std::strerror(errno);
      return false;
    }
  }
  return true;
}

bool read_message(int fd, int timeout_ms, Header* header, std::vector<std::uint8_t>* payload,
                  std::vector<UniqueFd>* fds, std::string* why) {
  const bool limited = timeout_ms >= 0;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  fds->clear();
  why->clear();
  MessageReader reader;
  for (;;) {
    switch (reader.read_available(fd, why)) {
      case MessageReader::Step::kDone:
        *header = reader.header();
        *payload = std::move(reader.payload());
        *fds = std::move(reader.fds());
        return true;
      case MessageReader::Step::kFailed:
        return false;
      case MessageReader::Step::kMore:
        if (!wait_for(fd, POLLIN, limited, deadline, why)) return false;
        break;
    }
  }
}

MessageReader::Step MessageReader::fail(std::string text, std::string* why) {
  fds_.clear();
  body_.clear();
  *why = std::move(text);
  return Step::kFailed;
}

MessageReader::Step MessageReader::read_available(int fd, std::string* why) {
  why->clear();
  // Room for more descriptors than a message may carry, so that extras are seen and closed.
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 16)];
  for (;;) {
    const std::size_t want = have_header_ ? header_.length : kHeaderBytes;
    if (got_ == want) {
      if (have_header_) return Step::kDone;
      if (!parse_header(head_, kHeaderBytes, &header_, why)) return fail(*why, why);
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
      return fail(std::string("receive: ") + std::strerror(errno), why);
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
      return fail("a message came with more descriptors than it may carry", why);
    }
    if (n == 0) {
      if (!have_header_ && got_ == 0) return fail("", why);
      return fail("the connection closed in the middle of a message", why);
    }
    got_ += static_cast<std::size_t>(n);
  }
}

}  // namespace hipacm::backend::service_wire
