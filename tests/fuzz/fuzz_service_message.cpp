// SPDX-License-Identifier: MIT
// fuzz_service_message.cpp - fuzz target: the compile service's message reader and its decoders
// (orders from processes, with their resource limits, CPU set and nice value; replies and exit
// notices from the service).
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "hip_backend/protocol/service_wire.h"
#include "support/files/unique_fd.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace sw = hipacm::backend::service_wire;
using hipacm::backend::UniqueFd;
using hipacm::fuzz::accepted_or_explained;
using hipacm::fuzz::invariant_broken;

// An accepted message is exactly what the encoder writes for what it decoded to.
void decode_payload(const sw::Header& header, const std::vector<std::uint8_t>& payload,
                    const std::vector<std::uint8_t>& whole) {
  std::vector<std::uint8_t> again;
  switch (header.type) {
    case sw::MessageType::kOrder: {
      const auto order = sw::decode_order(payload.data(), payload.size());
      if (!accepted_or_explained(order, "an order was refused without a reason")) return;
      auto encoded = sw::encode_order(order.value());
      if (!encoded)
        invariant_broken("an accepted order cannot be encoded again: " + encoded.failure().message);
      again = std::move(encoded).value();
      break;
    }
    case sw::MessageType::kReply: {
      const auto reply = sw::decode_reply(payload.data(), payload.size());
      if (!accepted_or_explained(reply, "a reply was refused without a reason")) return;
      again = sw::encode_reply(reply.value());
      break;
    }
    case sw::MessageType::kIdle:
      again = sw::encode_idle();
      break;
    case sw::MessageType::kExit: {
      const auto notice = sw::decode_exit(payload.data(), payload.size());
      if (!notice) return;
      again = sw::encode_exit(notice.value());
      break;
    }
  }
  if (again != whole) invariant_broken("an accepted message is not what the encoder writes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // In memory: the header, then the payload it announces.
  if (size >= sw::kHeaderBytes) {
    const auto parsed = sw::parse_header(data, size);
    if (parsed && parsed->length == size - sw::kHeaderBytes) {
      decode_payload(parsed.value(),
                     std::vector<std::uint8_t>(data + sw::kHeaderBytes, data + size),
                     std::vector<std::uint8_t>(data, data + size));
    }
  }
  // Through a socket, as the service and its clients read: one message, bounded, then stop.
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) invariant_broken("socketpair");
  UniqueFd reader(sv[0]), writer(sv[1]);
  std::thread feed([&] {
    std::size_t sent = 0;
    while (sent < size) {
      const ssize_t n = ::send(writer.get(), data + sent, size - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    ::shutdown(writer.get(), SHUT_WR);
  });
  sw::Header header;
  std::vector<std::uint8_t> payload;
  std::vector<UniqueFd> fds;
  if (sw::read_message(reader.get(), 5000, &header, &payload, &fds)) {
    if (payload.size() != header.length) invariant_broken("a payload of the wrong size");
    if (!fds.empty()) invariant_broken("descriptors appeared from nowhere");
  }
  reader.reset();  // a reader that stopped early must not leave the feeder blocked
  feed.join();
  return 0;
}
