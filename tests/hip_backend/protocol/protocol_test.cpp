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
#include "support/unique_fd.h"

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
  std::vector<std::uint8_t> frame;
  std::string error;
  bool encoded;
  if constexpr (kIsRequest<Message>)
    encoded = wire::encode_request_frame(id, message, &frame, &error);
  else
    encoded = wire::encode_result_frame(id, message, &frame, &error);
  EXPECT_TRUE(encoded) << error;
  return frame;
}

/// Encodes `message` in a frame with `id` and decodes the frame: both come back unchanged.
template <typename Message>
void expect_round_trip(const Message& message, std::uint32_t id) {
  const std::vector<std::uint8_t> frame = frame_of(id, message);
  std::uint32_t decoded_id = 0;
  Message decoded;
  std::string error;
  bool ok;
  if constexpr (kIsRequest<Message>)
    ok = wire::decode_request_frame(frame.data(), frame.size(), &decoded_id, &decoded, &error);
  else
    ok = wire::decode_result_frame(frame.data(), frame.size(), &decoded_id, &decoded, &error);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(decoded_id, id);
  expect_equal(decoded, message);
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
  std::vector<std::uint8_t> frame;
  ASSERT_TRUE(wire::encode_request_frame(1, CompileRequest{}, &frame, nullptr));
  CompileRequest decoded;
  ASSERT_TRUE(wire::decode_request_frame(frame.data(), frame.size(), nullptr, &decoded, nullptr));
  expect_equal(decoded, CompileRequest{});
}

TEST(WorkerProtocol, EveryTruncationIsRejected) {
  for (const auto& frame : {request_frame(), result_frame()}) {
    const bool is_request = frame[6] == static_cast<std::uint8_t>(wire::FrameType::kCompileRequest);
    for (std::size_t n = 0; n < frame.size(); ++n) {
      std::string error;
      CompileRequest req;
      CompileResult res;
      const bool ok = is_request
                          ? wire::decode_request_frame(frame.data(), n, nullptr, &req, &error)
                          : wire::decode_result_frame(frame.data(), n, nullptr, &res, &error);
      EXPECT_FALSE(ok) << "prefix of " << n << " bytes was accepted";
      EXPECT_FALSE(error.empty());
      // The payload alone, cut short, fails as well (no reliance on the header's size).
      if (n >= kHeaderSize) {
        const bool payload_ok =
            is_request
                ? wire::decode_request(frame.data() + kHeaderSize, n - kHeaderSize, &req, nullptr)
                : wire::decode_result(frame.data() + kHeaderSize, n - kHeaderSize, &res, nullptr);
        EXPECT_FALSE(payload_ok) << "payload prefix of " << n - kHeaderSize << " bytes accepted";
      }
    }
  }
}

TEST(WorkerProtocol, EveryTruncatedStreamIsAnErrorNotAFrame) {
  const auto frame = request_frame();
  for (std::size_t n = 0; n < frame.size(); ++n) {
    auto [writer, reader] = socket_pair();
    ASSERT_TRUE(wire::write_all(writer.get(), frame.data(), n, nullptr));
    writer.reset();  // EOF after n bytes
    wire::FrameHeader header;
    std::vector<std::uint8_t> payload;
    std::string error;
    const wire::ReadStatus status = wire::read_frame(reader.get(), &header, &payload, &error);
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
  EXPECT_FALSE(wire::decode_request_frame(frame.data(), frame.size(), nullptr, nullptr, nullptr));
  // A payload size that leaves bytes of the payload undecoded.
  auto inner = request_frame();
  inner.push_back(0);
  put_u32(inner, 12, static_cast<std::uint32_t>(inner.size() - kHeaderSize));
  CompileRequest req;
  std::string error;
  EXPECT_FALSE(wire::decode_request_frame(inner.data(), inner.size(), nullptr, &req, &error));
  EXPECT_NE(error.find("trailing"), std::string::npos) << error;
}

TEST(WorkerProtocol, WrongMagicVersionOrTypeIsRejected) {
  std::string error;
  auto frame = request_frame();
  auto bad = frame;
  bad[0] ^= 1;
  EXPECT_FALSE(wire::decode_request_frame(bad.data(), bad.size(), nullptr, nullptr, &error));
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
  bad = frame;
  bad[4] = static_cast<std::uint8_t>(wire::kVersion + 1);  // a version from another build
  EXPECT_FALSE(wire::decode_request_frame(bad.data(), bad.size(), nullptr, nullptr, &error));
  EXPECT_NE(error.find("version"), std::string::npos) << error;
  bad = frame;
  bad[6] = 9;  // unknown type
  EXPECT_FALSE(wire::decode_request_frame(bad.data(), bad.size(), nullptr, nullptr, &error));
  // A result frame is not a request.
  const auto result = result_frame();
  CompileRequest req;
  EXPECT_FALSE(wire::decode_request_frame(result.data(), result.size(), nullptr, &req, &error));
}

TEST(WorkerProtocol, RandomGarbageIsRejected) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::uint8_t> junk(rng() % 300);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    CompileRequest req;
    CompileResult res;
    EXPECT_FALSE(wire::decode_request_frame(junk.data(), junk.size(), nullptr, &req, nullptr));
    EXPECT_FALSE(wire::decode_result_frame(junk.data(), junk.size(), nullptr, &res, nullptr));
    // Behind a valid header, random payloads must fail or decode to something
    // that re-encodes to the very same bytes; never crash or over-read.
    const auto framed = frame_with_payload(wire::FrameType::kCompileResult, junk);
    if (wire::decode_result_frame(framed.data(), framed.size(), nullptr, &res, nullptr)) {
      std::vector<std::uint8_t> again;
      ASSERT_TRUE(wire::encode_result_frame(1, res, &again, nullptr));
      EXPECT_EQ(again, framed);
    }
  }
  // Random bit flips of a valid frame never crash the decoder either.
  const auto valid = request_frame();
  for (int i = 0; i < 20000; ++i) {
    auto flipped = valid;
    flipped[rng() % flipped.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    CompileRequest req;
    (void)wire::decode_request_frame(flipped.data(), flipped.size(), nullptr, &req, nullptr);
  }
}

TEST(WorkerProtocol, OversizeLengthsAndCountsAreRejectedWithoutAllocating) {
  std::string error;
  // A header promising more than 256 MiB.
  auto frame = request_frame();
  put_u32(frame, 12, wire::kMaxPayloadSize + 1);
  wire::FrameHeader header;
  EXPECT_FALSE(wire::parse_header(frame.data(), &header, &error));
  EXPECT_NE(error.find("256 MiB"), std::string::npos) << error;

  CompileRequest req;
  CompileResult res;
  const long rss_before = peak_rss_kib(true);
  // A string length near 4 GiB.
  std::vector<std::uint8_t> payload(8, 0);
  put_u32(payload, 0, 0xfffffff0u);
  EXPECT_FALSE(wire::decode_request(payload.data(), payload.size(), &req, &error));
  // A list count of 4 billion, just over the limit, and at the limit but beyond the frame.
  for (std::uint32_t count : {0xffffffffu, wire::kMaxListEntries + 1, wire::kMaxListEntries}) {
    std::vector<std::uint8_t> p(16, 0);  // source "", name "", then the options count
    put_u32(p, 8, count);
    EXPECT_FALSE(wire::decode_request(p.data(), p.size(), &req, &error)) << count;
    std::vector<std::uint8_t> q(24, 0);  // status, message "", log "", code "", then the count
    put_u32(q, 16, count);
    EXPECT_FALSE(wire::decode_result(q.data(), q.size(), &res, &error)) << count;
  }
  // A stream whose header promises 200 MiB and then stops after a few bytes.
  {
    auto [writer, reader] = socket_pair();
    std::vector<std::uint8_t> big = frame_with_payload(wire::FrameType::kCompileRequest, {1, 2, 3});
    put_u32(big, 12, 200u << 20);
    ASSERT_TRUE(wire::write_all(writer.get(), big.data(), big.size(), nullptr));
    writer.reset();
    std::vector<std::uint8_t> got;
    EXPECT_EQ(wire::read_frame(reader.get(), &header, &got, &error), wire::ReadStatus::kError);
    // The buffer grew with the bytes that came, not with the promise.
    EXPECT_LE(got.capacity(), std::size_t{1} << 20);
  }
  EXPECT_LT(peak_rss_kib(false) - rss_before, 16 * 1024) << "a hostile size was allocated";
}

TEST(WorkerProtocol, EncoderEnforcesTheLimits) {
  CompileRequest req;
  req.options.assign(wire::kMaxListEntries + 1, "-O1");
  std::vector<std::uint8_t> frame;
  std::string error;
  EXPECT_FALSE(wire::encode_request_frame(1, req, &frame, &error));
  EXPECT_NE(error.find("too many options"), std::string::npos) << error;
  req.options.assign(wire::kMaxListEntries, "");
  EXPECT_TRUE(wire::encode_request_frame(1, req, &frame, &error)) << error;
}

TEST(WorkerProtocol, LargeFrameCrossesASocketInPieces) {
  CompileRequest req = sample_request();
  req.source.assign(5u << 20, 'x');  // far beyond the socket buffer: many short writes/reads
  std::vector<std::uint8_t> frame;
  ASSERT_TRUE(wire::encode_request_frame(5, req, &frame, nullptr));
  auto [writer, reader] = socket_pair();
  bool wrote = false;
  boost::thread sender(
      [&, fd = writer.get()] { wrote = wire::write_all(fd, frame.data(), frame.size(), nullptr); });
  wire::FrameHeader header;
  std::vector<std::uint8_t> payload;
  std::string error;
  ASSERT_EQ(wire::read_frame(reader.get(), &header, &payload, &error), wire::ReadStatus::kFrame)
      << error;
  sender.join();
  EXPECT_TRUE(wrote);
  EXPECT_EQ(header.request_id, 5u);
  CompileRequest decoded;
  ASSERT_TRUE(wire::decode_request(payload.data(), payload.size(), &decoded, &error)) << error;
  expect_equal(decoded, req);
}

TEST(WorkerProtocol, WritingToAClosedPeerIsEpipeNotSigpipe) {
  struct sigaction before {};
  ASSERT_EQ(sigaction(SIGPIPE, nullptr, &before), 0);
  auto [writer, reader] = socket_pair();
  reader.reset();
  const auto frame = request_frame();
  std::string error;
  EXPECT_FALSE(wire::write_all(writer.get(), frame.data(), frame.size(), &error));
  EXPECT_NE(error.find("Broken pipe"), std::string::npos) << error;
  struct sigaction after {};
  ASSERT_EQ(sigaction(SIGPIPE, nullptr, &after), 0);
  EXPECT_EQ(before.sa_handler, after.sa_handler) << "the signal disposition was changed";
}

}  // namespace
}  // namespace hipacm::backend
