// SPDX-License-Identifier: MIT
// worker_protocol.h - the binary, length-prefixed, versioned wire format between host and
// hipacm-worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "support/failure.h"

namespace hipacm::backend::wire {

// A frame is a 16-byte header followed by `payload_size` bytes. All integers
// are little-endian. Header layout:
//   u32 magic "HACM" | u16 version | u16 frame type | u32 request id | u32 payload size
// Payload primitives: u32-length-prefixed strings and byte blobs, u32 counts.
// The request id is echoed in the response, so a desynchronized stream is
// caught even when the bytes happen to parse.

inline constexpr std::uint32_t kMagic = 0x4d434148u;  // "HACM" in memory order
inline constexpr std::uint16_t kVersion = 2;
inline constexpr std::size_t kHeaderSize = 16;
/// Hard limits that both sides enforce before trusting a length or a count.
inline constexpr std::uint32_t kMaxPayloadSize = 256u << 20;  // 256 MiB
inline constexpr std::uint32_t kMaxListEntries = 65536;

/// hipacm-worker's exit codes besides 0 (the host closed the stream), so
/// that the host can say what went wrong.
inline constexpr int kWorkerExitUsage = 64;  ///< bad command line (EX_USAGE)
inline constexpr int kWorkerExitProtocolError =
    65;  ///< unreadable frame from the host (EX_DATAERR)
/// It served a compile whose options reach into the compiler (-Xclang, -mllvm, a plugin): what
/// that left in the process must reach no other compile, so the worker ends with its host
/// instead of going back to the compile service.
inline constexpr int kWorkerExitRetired = 66;

enum class FrameType : std::uint16_t {
  kCompileRequest = 1,  ///< host -> worker: a CompileRequest
  kCompileResult = 2,   ///< worker -> host: a CompileResult
};

struct FrameHeader {
  FrameType type = FrameType::kCompileRequest;
  std::uint32_t request_id = 0;
  std::uint32_t payload_size = 0;
};

/// Builds a whole frame (header and payload). Fails (INVALID_ARGUMENT) when the request would
/// break a limit (too many entries, payload over 256 MiB).
Expected<std::vector<std::uint8_t>> encode_request_frame(std::uint32_t request_id,
                                                         const CompileRequest& request);
Expected<std::vector<std::uint8_t>> encode_result_frame(std::uint32_t request_id,
                                                        const CompileResult& result);

/// Checks magic, version, type and the payload limit of kHeaderSize bytes. Decoding failures
/// are INTERNAL: the peer broke the protocol.
Expected<FrameHeader> parse_header(const std::uint8_t* bytes);

/// Decodes a payload; it must be consumed exactly (trailing bytes are an error).
Expected<CompileRequest> decode_request(const std::uint8_t* data, std::size_t size);
Expected<CompileResult> decode_result(const std::uint8_t* data, std::size_t size);

/// A decoded frame: the request id of its header and its message.
template <typename T>
struct Framed {
  std::uint32_t request_id = 0;
  T message;
};

/// Decodes one whole frame held in memory (header, payload, nothing after it)
/// of the expected type.
Expected<Framed<CompileRequest>> decode_request_frame(const std::uint8_t* data, std::size_t size);
Expected<Framed<CompileResult>> decode_result_frame(const std::uint8_t* data, std::size_t size);
/// The same for a frame whose header was already parsed (read_frame_from).
Expected<CompileResult> decode_result_frame(const FrameHeader& header,
                                            const std::vector<std::uint8_t>& payload);

// ---- reading frames from a stream: one reader for the worker's blocking socket and the
// host's polled one ----

/// Where read_frame_from gets its bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Fills exactly `size` bytes, or returns false (the source keeps why).
  virtual bool fill(std::uint8_t* buffer, std::size_t size) = 0;
};

enum class FrameRead {
  kFrame,      ///< *header and *payload hold a frame whose header is valid
  kNoHeader,   ///< the source failed before a whole header arrived
  kBadHeader,  ///< the header is invalid; FrameReadResult::error says why
  kNoPayload,  ///< the source failed inside the payload
};

/// What read_frame_from got, and why the header was refused (kBadHeader only).
struct FrameReadResult {
  FrameRead read = FrameRead::kFrame;
  std::string error;
};

/// Reads one header, checks it with parse_header, then reads its payload into *payload. The
/// buffer grows at most 1 MiB ahead of the bytes that arrived, so a header that promises 256 MiB
/// and then stops costs at most what was really sent.
FrameReadResult read_frame_from(ByteSource& source, FrameHeader* header,
                                std::vector<std::uint8_t>* payload);

// ---- blocking I/O, used by the worker ----

enum class ReadStatus {
  kFrame,  ///< *header and *payload hold a frame whose header is valid
  kEof,    ///< the peer closed the stream cleanly, between frames
  kError,  ///< I/O error, truncated frame or invalid header; ReadResult::error says which
};

/// What read_frame got, and why it failed (kError only).
struct ReadResult {
  ReadStatus status = ReadStatus::kFrame;
  std::string error;
};

/// read_frame_from on a blocking descriptor, retrying on EINTR and short reads.
ReadResult read_frame(int fd, FrameHeader* header, std::vector<std::uint8_t>* payload);

/// Writes all bytes to a blocking descriptor, retrying on EINTR and short
/// writes. Sockets are written with send(MSG_NOSIGNAL), so a closed peer is
/// EPIPE and never SIGPIPE. A failure is INTERNAL, "write failed: <errno text>".
Expected<void> write_all(int fd, const void* data, std::size_t size);

}  // namespace hipacm::backend::wire
