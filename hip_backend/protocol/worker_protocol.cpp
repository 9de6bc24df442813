// SPDX-License-Identifier: MIT
// worker_protocol.cpp - encodes, decodes and transports host<->worker frames with hard limits.
#include "hip_backend/protocol/worker_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <utility>

#include "support/bytes/byte_reader.h"

namespace hipacm::backend::wire {
namespace {

// Statuses a result may carry: the ABI's fixed range.
constexpr std::int32_t kFirstStatus = HIPACM_SUCCESS;
constexpr std::int32_t kLastStatus = HIPACM_ERROR_INTERNAL;

// Grows the payload buffer at most this much ahead of the bytes received.
constexpr std::size_t kReadChunk = std::size_t{1} << 20;

/// Appends little-endian primitives; remembers the first limit it breaks.
class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>* out) : out_(out) {}

  void u16(std::uint16_t v) { bytes_le(v, 2); }
  void u32(std::uint32_t v) { bytes_le(v, 4); }
  void u64(std::uint64_t v) { bytes_le(v, 8); }

  void blob(const void* data, std::size_t size) {
    // Check before appending, so an absurd input never builds a huge buffer.
    if (size > kMaxPayloadSize || out_->size() + size > kHeaderSize + kMaxPayloadSize) {
      fail("payload would exceed the 256 MiB frame limit");
      return;
    }
    u32(static_cast<std::uint32_t>(size));
    const auto* p = static_cast<const std::uint8_t*>(data);
    out_->insert(out_->end(), p, p + size);
  }
  void str(const std::string& s) { blob(s.data(), s.size()); }

  void count(std::size_t n, const char* what) {
    if (n > kMaxListEntries) {
      fail(std::string("too many ") + what + " (" + std::to_string(n) + ", limit " +
           std::to_string(kMaxListEntries) + ")");
      return;
    }
    u32(static_cast<std::uint32_t>(n));
  }
  void strings(const std::vector<std::string>& list, const char* what) {
    count(list.size(), what);
    for (const std::string& s : list) str(s);
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
  }

 private:
  void bytes_le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_->push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t>* out_;
  std::string error_;
};

/// Reads the payload's primitives through the bounded ByteReader and names what did not fit.
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : bytes_(data, size) {}

  bool u32(std::uint32_t* v) { return bytes_.le(v); }
  bool u64(std::uint64_t* v) { return bytes_.le(v); }

  bool blob(const std::uint8_t** data, std::size_t* size, const char* what) {
    std::uint32_t n = 0;
    if (!u32(&n)) return fail(std::string("truncated length of ") + what);
    if (!bytes_.take(n, data)) return fail(std::string("length of ") + what + " exceeds the frame");
    *size = n;
    return true;
  }
  bool str(std::string* s, const char* what) {
    const std::uint8_t* d = nullptr;
    std::size_t n = 0;
    if (!blob(&d, &n, what)) return false;
    s->assign(reinterpret_cast<const char*>(d), n);
    return true;
  }
  /// A list count: within the hard limit, and small enough that every entry
  /// could still have its 4-byte length prefix. Only then may a caller reserve.
  bool count(std::uint32_t* n, const char* what) {
    if (!u32(n)) return fail(std::string("truncated count of ") + what);
    if (*n > kMaxListEntries) return fail(std::string("too many ") + what);
    if (*n > remaining() / 4) return fail(std::string("count of ") + what + " exceeds the frame");
    return true;
  }
  bool strings(std::vector<std::string>* list, const char* what) {
    std::uint32_t n = 0;
    if (!count(&n, what)) return false;
    list->clear();
    list->reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      list->emplace_back();
      if (!str(&list->back(), what)) return false;
    }
    return true;
  }

  bool finish() { return remaining() == 0 ? true : fail("trailing bytes after the payload"); }
  std::size_t remaining() const { return bytes_.remaining(); }
  const std::string& error() const { return error_; }
  bool fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }

 private:
  ByteReader bytes_;
  std::string error_;
};

/// Writes the header in front of a payload already appended after kHeaderSize
/// placeholder bytes.
Expected<std::vector<std::uint8_t>> seal_frame(FrameType type, std::uint32_t request_id,
                                               const Writer& w, std::vector<std::uint8_t> frame) {
  if (!w.ok()) return Failure{HIPACM_ERROR_INVALID_ARGUMENT, w.error()};
  const std::size_t payload = frame.size() - kHeaderSize;
  std::vector<std::uint8_t> header;
  Writer h(&header);
  h.u32(kMagic);
  h.u16(kVersion);
  h.u16(static_cast<std::uint16_t>(type));
  h.u32(request_id);
  h.u32(static_cast<std::uint32_t>(payload));
  std::memcpy(frame.data(), header.data(), kHeaderSize);
  return frame;
}

/// A malformed frame: the peer broke the protocol.
Failure bad_frame(std::string why) { return Failure{HIPACM_ERROR_INTERNAL, std::move(why)}; }

// What the frame's header promises, against the payload that came with it.
Expected<void> check_payload(const FrameHeader& header, FrameType want, std::size_t size) {
  if (header.type != want) return bad_frame("unexpected frame type");
  if (size != header.payload_size) {
    return bad_frame(size < header.payload_size ? "truncated frame payload"
                                                : "trailing bytes after the frame");
  }
  return {};
}

template <typename T, typename Decode>
Expected<Framed<T>> decode_frame(const std::uint8_t* data, std::size_t size, FrameType want,
                                 Decode decode) {
  if (size < kHeaderSize) return bad_frame("truncated frame header");
  Expected<FrameHeader> header = parse_header(data);
  if (!header) return std::move(header).failure();
  if (Expected<void> fits = check_payload(header.value(), want, size - kHeaderSize); !fits)
    return std::move(fits).failure();
  Expected<T> message = decode(data + kHeaderSize, header->payload_size);
  if (!message) return std::move(message).failure();
  return Framed<T>{header->request_id, std::move(message).value()};
}

// Decodes a whole payload into a T with `fields`, which ends with Reader::finish(); the
// failure names `what` ("compile request") and the first field that did not fit.
template <typename T, typename Fields>
Expected<T> decode_payload(const std::uint8_t* data, std::size_t size, const char* what,
                           Fields fields) {
  Reader r(data, size);
  T value;
  if (!fields(r, value)) return bad_frame(std::string("invalid ") + what + ": " + r.error());
  return value;
}

}  // namespace

Expected<std::vector<std::uint8_t>> encode_request_frame(std::uint32_t request_id,
                                                         const CompileRequest& request) {
  std::vector<std::uint8_t> frame(kHeaderSize, 0);
  Writer w(&frame);
  w.str(request.source);
  w.str(request.source_name);
  w.strings(request.options, "options");
  w.count(request.headers.size(), "headers");
  for (const auto& [name, contents] : request.headers) {
    w.str(name);
    w.str(contents);
  }
  w.strings(request.name_expressions, "name expressions");
  w.str(request.arch);
  w.strings(request.environment, "environment");
  return seal_frame(FrameType::kCompileRequest, request_id, w, std::move(frame));
}

Expected<std::vector<std::uint8_t>> encode_result_frame(std::uint32_t request_id,
                                                        const CompileResult& result) {
  std::vector<std::uint8_t> frame(kHeaderSize, 0);
  Writer w(&frame);
  w.u32(static_cast<std::uint32_t>(static_cast<std::int32_t>(result.status)));
  w.str(result.error_message);
  w.str(result.log);
  w.blob(result.code.data(), result.code.size());
  w.strings(result.lowered_names, "lowered names");
  w.u64(std::bit_cast<std::uint64_t>(result.compile_seconds));
  return seal_frame(FrameType::kCompileResult, request_id, w, std::move(frame));
}

Expected<FrameHeader> parse_header(const std::uint8_t* bytes) {
  Reader r(bytes, kHeaderSize);
  std::uint32_t magic = 0, version_and_type = 0, id = 0, size = 0;
  r.u32(&magic);
  r.u32(&version_and_type);
  r.u32(&id);
  r.u32(&size);
  if (magic != kMagic) return bad_frame("bad frame magic (not a hipacm-worker stream)");
  const auto version = static_cast<std::uint16_t>(version_and_type & 0xffffu);
  const auto type = static_cast<std::uint16_t>(version_and_type >> 16);
  if (version != kVersion) {
    return bad_frame("protocol version " + std::to_string(version) + ", expected " +
                     std::to_string(kVersion) +
                     " (hipacm-worker and the plugin come from different builds)");
  }
  if (type != static_cast<std::uint16_t>(FrameType::kCompileRequest) &&
      type != static_cast<std::uint16_t>(FrameType::kCompileResult)) {
    return bad_frame("unknown frame type " + std::to_string(type));
  }
  if (size > kMaxPayloadSize) {
    return bad_frame("frame payload of " + std::to_string(size) +
                     " bytes exceeds the 256 MiB limit");
  }
  FrameHeader header;
  header.type = static_cast<FrameType>(type);
  header.request_id = id;
  header.payload_size = size;
  return header;
}

Expected<CompileRequest> decode_request(const std::uint8_t* data, std::size_t size) {
  return decode_payload<CompileRequest>(
      data, size, "compile request", [](Reader& r, CompileRequest& req) {
        std::uint32_t num_headers = 0;
        if (!(r.str(&req.source, "source") && r.str(&req.source_name, "source name") &&
              r.strings(&req.options, "options") && r.count(&num_headers, "headers")))
          return false;
        req.headers.reserve(num_headers);
        for (std::uint32_t i = 0; i < num_headers; ++i) {
          auto& h = req.headers.emplace_back();
          if (!r.str(&h.first, "header name") || !r.str(&h.second, "header contents")) return false;
        }
        return r.strings(&req.name_expressions, "name expressions") && r.str(&req.arch, "arch") &&
               r.strings(&req.environment, "environment") && r.finish();
      });
}

Expected<CompileResult> decode_result(const std::uint8_t* data, std::size_t size) {
  return decode_payload<CompileResult>(
      data, size, "compile result", [](Reader& r, CompileResult& res) {
        std::uint32_t status = 0;
        std::uint64_t seconds_bits = 0;
        const std::uint8_t* code = nullptr;
        std::size_t code_size = 0;
        if (!((r.u32(&status) || r.fail("truncated status")) &&
              r.str(&res.error_message, "error message") && r.str(&res.log, "log") &&
              r.blob(&code, &code_size, "code object") &&
              r.strings(&res.lowered_names, "lowered names") &&
              (r.u64(&seconds_bits) || r.fail("truncated compile time")) && r.finish()))
          return false;
        const auto s = static_cast<std::int32_t>(status);
        const double seconds = std::bit_cast<double>(seconds_bits);
        if (s < kFirstStatus || s > kLastStatus)
          return r.fail("unknown status " + std::to_string(s));
        if (!std::isfinite(seconds) || seconds < 0) return r.fail("invalid compile time");
        res.status = static_cast<hipacm_status>(s);
        res.compile_seconds = seconds;
        res.code.assign(code, code + code_size);
        return true;
      });
}

Expected<Framed<CompileRequest>> decode_request_frame(const std::uint8_t* data, std::size_t size) {
  return decode_frame<CompileRequest>(data, size, FrameType::kCompileRequest, decode_request);
}

Expected<Framed<CompileResult>> decode_result_frame(const std::uint8_t* data, std::size_t size) {
  return decode_frame<CompileResult>(data, size, FrameType::kCompileResult, decode_result);
}

Expected<CompileResult> decode_result_frame(const FrameHeader& header,
                                            const std::vector<std::uint8_t>& payload) {
  if (Expected<void> fits = check_payload(header, FrameType::kCompileResult, payload.size()); !fits)
    return std::move(fits).failure();
  return decode_result(payload.data(), payload.size());
}

FrameReadResult read_frame_from(ByteSource& source, FrameHeader* header,
                                std::vector<std::uint8_t>* payload) {
  std::uint8_t head[kHeaderSize];
  if (!source.fill(head, kHeaderSize)) return {FrameRead::kNoHeader, {}};
  Expected<FrameHeader> parsed = parse_header(head);
  if (!parsed) return {FrameRead::kBadHeader, std::move(parsed).failure().message};
  *header = parsed.value();
  payload->clear();
  // Grow as bytes arrive: a header that promises 256 MiB and then stops costs only what came.
  std::size_t got = 0;
  while (got < header->payload_size) {
    const std::size_t want = std::min<std::size_t>(header->payload_size - got, kReadChunk);
    payload->resize(got + want);
    if (!source.fill(payload->data() + got, want)) return {FrameRead::kNoPayload, {}};
    got += want;
  }
  return {FrameRead::kFrame, {}};
}

namespace {

/// A blocking descriptor, read with EINTR and short reads retried.
class BlockingSource final : public ByteSource {
 public:
  explicit BlockingSource(int fd) : fd_(fd) {}

  bool fill(std::uint8_t* buffer, std::size_t size) override {
    std::size_t got = 0;
    while (got < size) {
      const ssize_t n = ::read(fd_, buffer + got, size - got);
      if (n > 0) {
        got += static_cast<std::size_t>(n);
      } else if (n == 0) {
        break;
      } else if (errno != EINTR) {
        read_errno_ = errno;
        return false;
      }
    }
    nothing_read_ = got == 0;
    return got == size;
  }

  /// After a failed fill: the peer closed the stream before it sent a byte of it.
  bool clean_eof() const { return read_errno_ == 0 && nothing_read_; }
  /// After a failed fill: why, where `part` ("header") is what was being read.
  std::string why(const char* part) const {
    if (read_errno_ != 0) return std::string("read failed: ") + std::strerror(read_errno_);
    return std::string("stream ended inside a frame ") + part;
  }

 private:
  int fd_;
  int read_errno_ = 0;
  bool nothing_read_ = false;
};

}  // namespace

ReadResult read_frame(int fd, FrameHeader* header, std::vector<std::uint8_t>* payload) {
  BlockingSource source(fd);
  FrameReadResult read = read_frame_from(source, header, payload);
  switch (read.read) {
    case FrameRead::kFrame:
      return {ReadStatus::kFrame, {}};
    case FrameRead::kNoHeader:
      if (source.clean_eof()) return {ReadStatus::kEof, {}};
      return {ReadStatus::kError, source.why("header")};
    case FrameRead::kNoPayload:
      return {ReadStatus::kError, source.why("payload")};
    case FrameRead::kBadHeader:
      break;
  }
  return {ReadStatus::kError, std::move(read.error)};
}

Expected<void> write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  bool is_socket = true;
  while (size > 0) {
    const ssize_t n = is_socket ? ::send(fd, p, size, MSG_NOSIGNAL) : ::write(fd, p, size);
    if (n >= 0) {
      p += n;
      size -= static_cast<std::size_t>(n);
    } else if (errno == ENOTSOCK && is_socket) {
      is_socket = false;  // a pipe or file: plain write (the worker ignores SIGPIPE)
    } else if (errno != EINTR) {
      return Failure{HIPACM_ERROR_INTERNAL, std::string("write failed: ") + std::strerror(errno)};
    }
  }
  return {};
}

}  // namespace hipacm::backend::wire
