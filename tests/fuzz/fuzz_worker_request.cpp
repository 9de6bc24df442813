// SPDX-License-Identifier: MIT
// fuzz_worker_request.cpp - fuzz target: hipacm-worker reading and decoding the host's request
// frames.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hip_backend/protocol/worker_protocol.h"
#include "hip_backend/raw_nvrtc.h"
#include "support/files/unique_fd.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using hipacm::backend::UniqueFd;
namespace wire = hipacm::backend::wire;
using hipacm::fuzz::invariant_broken;

// One whole frame in memory: an accepted frame is exactly what the encoder
// writes for the request it decodes to, so nothing is dropped or invented.
void decode_in_memory(const std::uint8_t* data, std::size_t size) {
  const auto decoded = wire::decode_request_frame(data, size);
  if (!decoded) {
    if (decoded.failure().message.empty())
      invariant_broken("a request frame was refused without a reason");
    return;
  }
  const auto again = wire::encode_request_frame(decoded->request_id, decoded->message);
  if (!again)
    invariant_broken("an accepted request cannot be encoded again: " + again.failure().message);
  if (again.value() != std::vector<std::uint8_t>(data, data + size))
    invariant_broken("an accepted request frame is not what the encoder writes for it");
  // A raw NVRTC marker names the file a worker would load: only an absolute path with no NUL,
  // and only one that the marker made for it names again.
  const std::string file = hipacm::backend::raw_nvrtc_library(decoded->message.options);
  if (!file.empty()) {
    if (file.front() != '/' || file.find('\0') != std::string::npos)
      invariant_broken("a raw NVRTC marker named a file that is no absolute path");
    if (decoded->message.options.front() != hipacm::backend::raw_nvrtc_option(file))
      invariant_broken("a raw NVRTC marker decodes to a file whose marker is another");
  }
}

// The bytes as a stream, read the way the worker's serve loop reads its
// socket: frame after frame until the end or the first error.
void decode_as_stream(const std::uint8_t* data, std::size_t size) {
  UniqueFd fd(::memfd_create("hipacm-fuzz-frames", MFD_CLOEXEC));
  if (!fd) invariant_broken("memfd_create failed");
  if (const auto written = wire::write_all(fd.get(), data, size); !written)
    invariant_broken(written.failure().message);
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) invariant_broken("lseek failed");
  wire::FrameHeader header;
  std::vector<std::uint8_t> payload;
  // Every frame is at least a header, so the loop ends within size / 16 frames.
  for (;;) {
    const wire::ReadStatus status = wire::read_frame(fd.get(), &header, &payload).status;
    if (status != wire::ReadStatus::kFrame) break;
    if (payload.size() != header.payload_size)
      invariant_broken("read_frame returned a payload of the wrong size");
    if (header.type != wire::FrameType::kCompileRequest) break;
    if (!wire::decode_request(payload.data(), payload.size())) break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  decode_in_memory(data, size);
  decode_as_stream(data, size);
  return 0;
}
