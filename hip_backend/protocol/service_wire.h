// SPDX-License-Identifier: MIT
// service_wire.h - the messages between a hipacm process and its user's compile service, each
// bounded, and descriptor passing over the service's Unix socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hip_backend/process/host_limits.h"
#include "support/failure.h"
#include "support/files/unique_fd.h"

namespace hipacm::backend::service_wire {

constexpr std::uint32_t kMagic = 0x43565348;  // "HSVC"
/// Bumped whenever a message's layout changes (2: orders carry the host's limits), so that a
/// service and a process of different builds refuse each other's messages.
constexpr std::uint16_t kVersion = 2;
constexpr std::size_t kHeaderBytes = 12;
/// An order carries the whole environment; nothing real comes near these.
constexpr std::size_t kMaxOrderBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxEnvironmentEntries = 8192;
constexpr std::size_t kMaxPathBytes = 4096;
constexpr std::size_t kMaxArchBytes = 128;
constexpr std::size_t kMaxErrorBytes = 4096;
/// A reply hands over the worker's socket, its output pipe and a pidfd.
constexpr std::size_t kReplyDescriptors = 3;

/// kOrder: a process asks for a worker, or the service assigns a waiting worker to a process
/// (then with the worker's socket and output pipe). kIdle: a worker tells the service that its
/// host let go of it.
enum class MessageType : std::uint16_t { kOrder = 1, kReply = 2, kExit = 3, kIdle = 4 };

struct Header {
  MessageType type = MessageType::kOrder;
  std::uint32_t length = 0;
};

/// What a process asks the service for: one worker, set up as a worker it spawned itself would
/// be (its environment, working directory, private TMPDIR, resource limits, CPU set and nice
/// value).
struct WorkerOrder {
  std::string arch;  ///< the first compile's arch: the compiler the service warms before forking
  std::string cwd;
  std::string temp_dir;
  std::vector<std::string> environment;  ///< NAME=value entries
  HostLimits limits;                     ///< the ordering thread's, as a spawned worker inherits
};

/// The service's answer; on success the worker's descriptors travel with it.
struct OrderReply {
  bool ok = false;
  std::int32_t pid = 0;
  std::string error;
};

/// How a worker that the service forked ended, sent on its order's connection.
struct ExitNotice {
  std::int32_t pid = 0;
  std::int32_t wait_status = 0;
};

/// Fails (INVALID_ARGUMENT) when the order is larger than the service accepts.
Expected<std::vector<std::uint8_t>> encode_order(const WorkerOrder& order);
std::vector<std::uint8_t> encode_reply(const OrderReply& reply);
std::vector<std::uint8_t> encode_exit(const ExitNotice& notice);
std::vector<std::uint8_t> encode_idle();

/// Checks magic, version, type and the type's length bound. Decoding failures are INTERNAL: the
/// peer broke the protocol.
Expected<Header> parse_header(const std::uint8_t* bytes, std::size_t size);
Expected<WorkerOrder> decode_order(const std::uint8_t* data, std::size_t size);
Expected<OrderReply> decode_reply(const std::uint8_t* data, std::size_t size);
Expected<ExitNotice> decode_exit(const std::uint8_t* data, std::size_t size);

/// Sends all of `bytes` on a socket (blocking or not), with `fds` attached to the first byte.
/// Waits at most timeout_ms (negative: no limit).
Expected<void> send_message(int fd, const std::vector<std::uint8_t>& bytes, const int* fds,
                            std::size_t fd_count, int timeout_ms);

/// How a read of one message ended: kClosed is a clean end of stream before its first byte.
enum class ReadEnd { kMessage, kClosed, kFailed };

/// What read_message() got, and why it failed (kFailed only; empty otherwise).
struct ReadResult {
  ReadEnd end = ReadEnd::kMessage;
  std::string error;
  explicit operator bool() const { return end == ReadEnd::kMessage; }
};

/// Reads one whole message within timeout_ms (negative: no limit): its header, its bounded
/// payload, and any descriptors that came with it (close-on-exec; more than kReplyDescriptors
/// is an error, and every one received is closed on any error).
ReadResult read_message(int fd, int timeout_ms, Header* header, std::vector<std::uint8_t>* payload,
                        std::vector<UniqueFd>* fds);

/// One message read in pieces as they arrive, never waiting: what lets the service read the
/// orders of many connections at once, so that one that sends nothing (or half a header) holds
/// up no other. The same checks and bounds as read_message().
class MessageReader {
 public:
  enum class Step { kMore, kDone, kFailed };

  /// Reads what `fd` holds now. kMore: the message is not whole yet (wait for POLLIN).
  /// kDone: header(), payload() and fds() hold it. kFailed: error() says why, empty on a clean
  /// end of stream before the first byte; every descriptor received is closed.
  Step read_available(int fd);

  const std::string& error() const { return error_; }
  const Header& header() const { return header_; }
  std::vector<std::uint8_t>& payload() { return body_; }
  std::vector<UniqueFd>& fds() { return fds_; }

 private:
  Step fail(std::string text);

  std::uint8_t head_[kHeaderBytes] = {};
  std::vector<std::uint8_t> body_;
  std::size_t got_ = 0;
  bool have_header_ = false;
  Header header_;
  std::vector<UniqueFd> fds_;
  std::string error_;
};

}  // namespace hipacm::backend::service_wire
