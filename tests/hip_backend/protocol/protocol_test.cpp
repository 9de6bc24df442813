// SPDX-License-Identifier: MIT
// protocol_test.cpp - the worker wire format: round trips, truncations, garbage and hostile sizes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/thread/thread.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "hip_backend/protocol/worker_protocol.h"
#include "support/files/unique_fd.h"

namespace hipacm::backend {
namespace {

using wire::kHeaderSize;

/// Peak resident set (VmHWM) in KiB, after resetting it when `reset` is set.
/// A hostile size that got allocated and zero-filled would show up here;
/// replacing operator new instead clashes with comgr's own allocations.
long peak_rss_kib(bool reset) {
  if (reset) {
    FILE* f = std::fopen("/proc/self/clear_refs", "w");
    if (f) {
      std::fputs("5", f);  // 5: reset the peak RSS to the current RSS
      std::fclose(f);
    }
  }
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::atol(line + 6);
  }
  std::fclose(f);
  return kib;
}

CompileRequest sample_request() {
  return {
      .source = std::string("extern \"C\" __global__ void k() {}\n") + '\0' + "\xff binary tail",
      .source_name = "sample.hip",
      .options = {"-O3", "", "--std=c++17"},
      .headers = {{"a.h", "#define A 1\n"}, {"b.h", ""}},
      .name_expressions = {"scale<float>", "&dev_var"},
      .arch = "gfx90a:xnack-",
      .environment = {"CPATH=/opt/inc:/usr/local/inc", "ROCM_PATH"}};
}

CompileResult sample_result() {
  CompileResult r;
  r.status = HIPACM_ERROR_COMPILATION;
  r.error_message = "it failed";
  r.log = "line 1\nline 2\n";
  r.code = {0x7f, 'E', 'L', 'F', 0, 0, 1, 2, 0xff};
  r.lowered_names = {"_Z5scaleIfEvPT_S0_i", ""};
  r.compile_seconds = 1.25;
  return r;
}

/// The fields of a request or a result that travel on the wire, to compare a decoded one.
auto wire_fields(const CompileRequest& r) {
  return std::tie(r.source, r.source_name, r.options, r.headers, r.name_expressions, r.arch,
                  r.environment);
}
auto wire_fields(const CompileResult& r) {
  return std::tie(r.status, r.error_message, r.log, r.code, r.lowered_names, r.compile_seconds);
}

template <typename Message>
void expect_equal(const Message& a, const Message& b) {
  EXPECT_EQ(wire_fields(a), wire_fields(b));
}

template <typename Message>
constexpr bool kIsRequest = std::is_same_v<Message, CompileRequest>;

/// `message` (a request or a result) in a frame with `id`.
template <typename Message>
std::vector<std::uint8_t> frame_of(std::uint32_t id, const Message& message) {
  Expected<std::vector<std::uint8_t>> encoded = [&] {
    if constexpr (kIsRequest<Message>)
      return wire::encode_request_frame(id, message);
    else
      return wire::encode_result_frame(id, message);
  }();
  EXPECT_TRUE(encoded) << encoded.failure().message;
  return encoded ? std::move(encoded).value() : std::vector<std::uint8_t>();
}

/// Encodes `message` in a frame with `id` and decodes the frame: both come back unchanged.
template <typename Message>
void expect_round_trip(const Message& message, std::uint32_t id) {
  const std::vector<std::uint8_t> frame = frame_of(id, message);
  Expected<wire::Framed<Message>> decoded = [&] {
    if constexpr (kIsRequest<Message>)
      return wire::decode_request_frame(frame.data(), frame.size());
    else
      return wire::decode_result_frame(frame.data(), frame.size());
  }();
  ASSERT_TRUE(decoded) << decoded.failure().message;
  EXPECT_EQ(decoded->request_id, id);
  expect_equal(decoded->message, message);
}

std::vector<std::uint8_t> request_frame(std::uint32_t id = 7) {
  return frame_of(id, sample_request());
}

std::vector<std::uint8_t> result_frame(std::uint32_t id = 9) {
  return frame_of(id, sample_result());
}

void put_u32(std::vector<std::uint8_t>& buf, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) buf[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

/// A header for `payload`, followed by it.
std::vector<std::uint8_t> frame_with_payload(wire::FrameType type,
                                             const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> frame(kHeaderSize + payload.size());
  std::copy(payload.begin(), payload.end(), frame.begin() + kHeaderSize);
  put_u32(frame, 0, wire::kMagic);
  put_u32(frame, 4, wire::kVersion | (static_cast<std::uint32_t>(type) << 16));
  put_u32(frame, 8, 1);
  put_u32(frame, 12, static_cast<std::uint32_t>(payload.size()));
  return frame;
}

std::pair<UniqueFd, UniqueFd> socket_pair() {
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  return {UniqueFd(sv[0]), UniqueFd(sv[1])};
}

TEST(WorkerProtocol, RequestRoundTrip) { expect_round_trip(sample_request(), 42); }

TEST(WorkerProtocol, ResultRoundTrip) { expect_round_trip(sample_result(), 43); }

TEST(WorkerProtocol, EmptyRequestRoundTrips) {
  const Expected<std::vector<std::uint8_t>> frame = wire::encode_request_frame(1, CompileRequest{});
  ASSERT_TRUE(frame);
  const auto decoded = wire::decode_request_frame(frame->data(), frame->size());
  ASSERT_TRUE(decoded);
  expect_equal(decoded->message, CompileRequest{});
}

TEST(WorkerProtocol, EveryTruncationIsRejected) {
  for (const auto& frame : {request_frame(), result_frame()}) {
    const bool is_request = frame[6] == static_cast<std::uint8_t>(wire::FrameType::kCompileRequest);
    for (std::size_t n = 0; n < frame.size(); ++n) {
      std::string error;
      bool ok;
      if (is_request) {
        const auto req = wire::decode_request_frame(frame.data(), n);
        ok = req.has_value();
        if (!ok) error = req.failure().message;
      } else {
        const auto res = wire::decode_result_frame(frame.data(), n);
        ok = res.has_value();
        if (!ok) error = res.failure().message;
      }
      EXPECT_FALSE(ok) << "prefix of " << n << " bytes was accepted";
      EXPECT_FALSE(error.empty());
      // The payload alone, cut short, fails as well (no reliance on the header's size).
      if (n >= kHeaderSize) {
        const bool payload_ok =
            is_request
                ? wire::decode_request(frame.data() + kHeaderSize, n - kHeaderSize).has_value()
                : wire::decode_result(frame.data() + kHeaderSize, n - kHeaderSize).has_value();
        EXPECT_FALSE(payload_ok) << "payload prefix of " << n - kHeaderSize << " bytes accepted";
      }
    }
  }
}

TEST(WorkerProtocol, EveryTruncatedStreamIsAnErrorNotAFrame) {
  const auto frame = request_frame();
  for (std::size_t n = 0; n < frame.size(); ++n) {
    auto [writer, reader] = socket_pair();
    ASSERT_TRUE(wire::write_all(writer.get(), frame.data(), n));
    writer.reset();  // EOF after n bytes
    wire::FrameHeader header;
    std::vector<std::uint8_t> payload;
    const wire::ReadStatus status = wire::read_frame(reader.get(), &header, &payload).status;
    if (n == 0) {
      EXPECT_EQ(status, wire::ReadStatus::kEof);
    } else {
      EXPECT_EQ(status, wire::ReadStatus::kError) << "after " << n << " bytes";
    }
  }
}

TEST(WorkerProtocol, TrailingBytesAreRejected) {
  auto frame = request_frame();
  frame.push_back(0);
  EXPECT_FALSE(wire::decode_request_frame(frame.data(), frame.size()));
  // A payload size that leaves bytes of the payload undecoded.
  auto inner = request_frame();
  inner.push_back(0);
  put_u32(inner, 12, static_cast<std::uint32_t>(inner.size() - kHeaderSize));
  const auto req = wire::decode_request_frame(inner.data(), inner.size());
  EXPECT_FALSE(req);
  const std::string error = req ? std::string() : req.failure().message;
  EXPECT_NE(error.find("trailing"), std::string::npos) << error;
}

TEST(WorkerProtocol, WrongMagicVersionOrTypeIsRejected) {
  std::string error;
  // Decodes `bytes` as a request frame; keeps the failure's message in `error`.
  const auto decodes = [&](const std::vector<std::uint8_t>& bytes) {
    const auto req = wire::decode_request_frame(bytes.data(), bytes.size());
    if (!req) error = req.failure().message;
    return req.has_value();
  };
  auto frame = request_frame();
  auto bad = frame;
  bad[0] ^= 1;
  EXPECT_FALSE(decodes(bad));
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
  bad = frame;
  bad[4] = static_cast<std::uint8_t>(wire::kVersion + 1);  // a version from another build
  EXPECT_FALSE(decodes(bad));
  EXPECT_NE(error.find("version"), std::string::npos) << error;
  bad = frame;
  bad[6] = 9;  // unknown type
  EXPECT_FALSE(decodes(bad));
  // A result frame is not a request.
  const auto result = result_frame();
  EXPECT_FALSE(decodes(result));
}

TEST(WorkerProtocol, RandomGarbageIsRejected) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::uint8_t> junk(rng() % 300);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    EXPECT_FALSE(wire::decode_request_frame(junk.data(), junk.size()));
    EXPECT_FALSE(wire::decode_result_frame(junk.data(), junk.size()));
    // Behind a valid header, random payloads must fail or decode to something
    // that re-encodes to the very same bytes; never crash or over-read.
    const auto framed = frame_with_payload(wire::FrameType::kCompileResult, junk);
    if (const auto res = wire::decode_result_frame(framed.data(), framed.size())) {
      const auto again = wire::encode_result_frame(1, res->message);
      ASSERT_TRUE(again);
      EXPECT_EQ(again.value(), framed);
    }
  }
  // Random bit flips of a valid frame never crash the decoder either.
  const auto valid = request_frame();
  for (int i = 0; i < 20000; ++i) {
    auto flipped = valid;
    flipped[rng() % flipped.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    (void)wire::decode_request_frame(flipped.data(), flipped.size());
  }
}

TEST(WorkerProtocol, OversizeLengthsAndCountsAreRejectedWithoutAllocating) {
  std::string error;
  // A header promising more than 256 MiB.
  auto frame = request_frame();
  put_u32(frame, 12, wire::kMaxPayloadSize + 1);
  const auto parsed = wire::parse_header(frame.data());
  EXPECT_FALSE(parsed);
  if (!parsed) error = parsed.failure().message;
  EXPECT_NE(error.find("256 MiB"), std::string::npos) << error;

  const long rss_before = peak_rss_kib(true);
  // A string length near 4 GiB.
  std::vector<std::uint8_t> payload(8, 0);
  put_u32(payload, 0, 0xfffffff0u);
  EXPECT_FALSE(wire::decode_request(payload.data(), payload.size()));
  // A list count of 4 billion, just over the limit, and at the limit but beyond the frame.
  for (std::uint32_t count : {0xffffffffu, wire::kMaxListEntries + 1, wire::kMaxListEntries}) {
    std::vector<std::uint8_t> p(16, 0);  // source "", name "", then the options count
    put_u32(p, 8, count);
    EXPECT_FALSE(wire::decode_request(p.data(), p.size())) << count;
    std::vector<std::uint8_t> q(24, 0);  // status, message "", log "", code "", then the count
    put_u32(q, 16, count);
    EXPECT_FALSE(wire::decode_result(q.data(), q.size())) << count;
  }
  // A stream whose header promises 200 MiB and then stops after a few bytes.
  {
    auto [writer, reader] = socket_pair();
    std::vector<std::uint8_t> big = frame_with_payload(wire::FrameType::kCompileRequest, {1, 2, 3});
    put_u32(big, 12, 200u << 20);
    ASSERT_TRUE(wire::write_all(writer.get(), big.data(), big.size()));
    writer.reset();
    wire::FrameHeader header;
    std::vector<std::uint8_t> got;
    EXPECT_EQ(wire::read_frame(reader.get(), &header, &got).status, wire::ReadStatus::kError);
    // The buffer grew with the bytes that came, not with the promise.
    EXPECT_LE(got.capacity(), std::size_t{1} << 20);
  }
  EXPECT_LT(peak_rss_kib(false) - rss_before, 16 * 1024) << "a hostile size was allocated";
}

TEST(WorkerProtocol, EncoderEnforcesTheLimits) {
  CompileRequest req;
  req.options.assign(wire::kMaxListEntries + 1, "-O1");
  const auto refused = wire::encode_request_frame(1, req);
  EXPECT_FALSE(refused);
  const std::string error = refused ? std::string() : refused.failure().message;
  EXPECT_NE(error.find("too many options"), std::string::npos) << error;
  req.options.assign(wire::kMaxListEntries, "");
  const auto encoded = wire::encode_request_frame(1, req);
  EXPECT_TRUE(encoded) << encoded.failure().message;
}

TEST(WorkerProtocol, LargeFrameCrossesASocketInPieces) {
  CompileRequest req = sample_request();
  req.source.assign(5u << 20, 'x');  // far beyond the socket buffer: many short writes/reads
  const auto encoded = wire::encode_request_frame(5, req);
  ASSERT_TRUE(encoded);
  const std::vector<std::uint8_t>& frame = encoded.value();
  auto [writer, reader] = socket_pair();
  bool wrote = false;
  boost::thread sender([&, fd = writer.get()] {
    wrote = wire::write_all(fd, frame.data(), frame.size()).has_value();
  });
  wire::FrameHeader header;
  std::vector<std::uint8_t> payload;
  const wire::ReadResult read = wire::read_frame(reader.get(), &header, &payload);
  ASSERT_EQ(read.status, wire::ReadStatus::kFrame) << read.error;
  sender.join();
  EXPECT_TRUE(wrote);
  EXPECT_EQ(header.request_id, 5u);
  const auto decoded = wire::decode_request(payload.data(), payload.size());
  ASSERT_TRUE(decoded) << decoded.failure().message;
  expect_equal(decoded.value(), req);
}

TEST(WorkerProtocol, WritingToAClosedPeerIsEpipeNotSigpipe) {
  struct sigaction before {};
  ASSERT_EQ(sigaction(SIGPIPE, nullptr, &before), 0);
  auto [writer, reader] = socket_pair();
  reader.reset();
  const auto frame = request_frame();
  const Expected<void> written = wire::write_all(writer.get(), frame.data(), frame.size());
  EXPECT_FALSE(written);
  const std::string error = written ? std::string() : written.failure().message;
  EXPECT_NE(error.find("Broken pipe"), std::string::npos) << error;
  struct sigaction after {};
  ASSERT_EQ(sigaction(SIGPIPE, nullptr, &after), 0);
  EXPECT_EQ(before.sa_handler, after.sa_handler) << "the signal disposition was changed";
}

}  // namespace
}  // namespace hipacm::backend
