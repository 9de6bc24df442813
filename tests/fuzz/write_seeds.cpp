// SPDX-License-Identifier: MIT
// write_seeds.cpp - writes the structured seed inputs of the fuzz corpora with hipacm's own
// encoders.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "hip_backend/protocol/service_wire.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "hip_backend/raw_nvrtc.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/remote/remote_value.h"
#include "tests/fuzz/cache_row.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/remote_value_fuzz_key.h"
#include "tests/hip_backend/codeobject/synthetic_code_objects.h"
#include "tools/cluster/cluster_messages.h"

namespace {

namespace fs = std::filesystem;
namespace wire = hipacm::backend::wire;
using hipacm::backend::CompileRequest;
using hipacm::backend::CompileResult;
using hipacm::fuzz::FuzzOutput;

void write(const fs::path& file, const std::vector<std::uint8_t>& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> request_frame(std::uint32_t id, const CompileRequest& request) {
  auto frame = wire::encode_request_frame(id, request);
  return frame ? std::move(frame).value() : std::vector<std::uint8_t>();
}

std::vector<std::uint8_t> result_frame(std::uint32_t id, const CompileResult& result) {
  auto frame = wire::encode_result_frame(id, result);
  return frame ? std::move(frame).value() : std::vector<std::uint8_t>();
}

CompileRequest sample_request() {
  return {
      .source =
          "#include \"scale.h\"\nextern \"C\" __global__ void add_one(float* x) { x[0] += 1; }\n",
      .source_name = "tiny.hip",
      .options = {"-O3", "-DSCALE=2"},
      .headers = {{"scale.h", "#define FACTOR 2\n"}},
      .name_expressions = {"scale<float>"},
      .arch = "gfx90a",
      .environment = {"CPATH=/opt/include", "ROCM_PATH"}};
}

// The request reader target's layout (fuzz_request_reader.cpp): struct size
// choice, which strings are present, the strings, list sizes, then each list.
std::vector<std::uint8_t> c_request(const CompileRequest& r, std::uint8_t list_flags) {
  FuzzOutput out;
  out.u16(0);
  out.u8(6);  // source and source name, no key
  out.str("");
  out.str(r.source);
  out.str(r.source_name);
  out.u8(static_cast<std::uint8_t>(r.options.size()));
  out.u8(static_cast<std::uint8_t>(r.headers.size()));
  out.u8(static_cast<std::uint8_t>(r.name_expressions.size()));
  out.u8(list_flags);
  for (const auto& o : r.options) out.str(o);
  if ((list_flags & 4) != 0) out.u64(0);
  out.u8(0);
  for (const auto& h : r.headers) out.str(h.second);
  out.u8(0);
  for (const auto& h : r.headers) out.str(h.first);
  out.u8(0);
  for (const auto& n : r.name_expressions) out.str(n);
  return out.bytes();
}

std::vector<std::uint8_t> text(const std::string& s) { return {s.begin(), s.end()}; }

// The cluster message target's layout (fuzz_cluster_message.cpp): a byte holding the job's item
// count and which message follows (0 entries, 1 a report), then the message.
std::vector<std::uint8_t> cluster_message(std::size_t item_count, bool report,
                                          const std::vector<std::uint8_t>& message) {
  std::vector<std::uint8_t> out{static_cast<std::uint8_t>((item_count << 1) | (report ? 1 : 0))};
  out.insert(out.end(), message.begin(), message.end());
  return out;
}

hipacm::cli::EntryForItem cluster_entry(std::size_t item, const std::string& key,
                                        const std::string& arch, const std::string& lowered,
                                        std::vector<std::uint8_t> code) {
  hipacm::cli::EntryForItem one;
  one.item = item;
  hipacm::cache::CacheEntry& e = one.entry;
  e.info.key = key;
  e.info.arch = arch;
  e.info.source_name = "tiny.hip";
  e.info.backend = "hiprtc";
  e.info.compiler_version = "hiprtc 5.2.3";
  e.info.plugin_version = "0.1.0";
  e.info.created_us = 1764750000000000;
  e.lowered_names = {lowered};
  e.log = item == 0 ? "warning: unused variable\n" : "";
  e.code = std::move(code);
  e.info.size = hipacm::cache::payload_size(e);
  e.checksum = hipacm::cache::entry_checksum(e);
  return one;
}

// Entries messages with none, one (the gfx90a code object) and three entries; a report with
// compiled, cached and failed outcomes and a rejection, and an empty one.
void write_cluster_seeds(const fs::path& dir, const std::vector<std::uint8_t>& elf,
                         const std::string& key, const std::string& lowered) {
  namespace cli = hipacm::cli;
  write(dir / "entries_none", cluster_message(4, false, cli::encode_entries({})));
  const cli::EntryForItem tiny = cluster_entry(2, key, "gfx90a", lowered, elf);
  write(dir / "entries_one", cluster_message(4, false, cli::encode_entries({&tiny})));
  const cli::EntryForItem a = cluster_entry(0, std::string(64, 'a'), "gfx90a", lowered, {1, 2, 3});
  const cli::EntryForItem b =
      cluster_entry(1, std::string(64, 'b'), "gfx1030", "add_one", {0x7f, 'E', 'L', 'F'});
  const cli::EntryForItem c = cluster_entry(3, std::string(64, 'c'), "sm_80", "add_one", {});
  write(dir / "entries_several", cluster_message(4, false, cli::encode_entries({&a, &b, &c})));

  cli::RankReport report;
  report.rank = 1;
  report.cache_dir = "/scratch/cache-1";
  cli::ItemOutcome compiled;
  compiled.item = 0;
  compiled.code_size = 5176;
  compiled.compile_seconds = 0.41;
  compiled.key = key;
  compiled.log = "warning: unused variable\n";
  compiled.kernels = {"add_one", lowered};
  cli::ItemOutcome cached = compiled;
  cached.item = 2;
  cached.from_cache = true;
  cached.compile_seconds = 0.0;
  cached.log.clear();
  cli::ItemOutcome failed;
  failed.item = 3;
  failed.status = HIPACM_ERROR_COMPILATION;
  failed.compile_seconds = 0.25;
  failed.key = std::string(64, 'f');
  failed.error = "hipRTC failed";
  failed.log = "tiny.hip:1:1: error: unknown type name 'x'\n";
  report.outcomes = {compiled, cached, failed};
  report.arch_wall_seconds = {{"gfx90a", 1.5}, {"sm_80", 0.75}};
  report.compile_wall_seconds = 1.25;
  report.wall_seconds = 2.5;
  report.entries_sent = 2;
  report.entries_received = 1;
  report.duplicates_received = 1;
  report.rejected_received = 1;
  report.messages_sent = 2;
  report.messages_received = 2;
  report.bytes_sent = 10400;
  report.bytes_received = 5300;
  report.control_bytes_sent = 180;
  report.missing_after = 1;
  report.rejections = {"item 1: the entry's key is not the key of the kernel"};
  write(dir / "report", cluster_message(4, true, cli::encode_report(report)));
  write(dir / "report_empty", cluster_message(0, true, cli::encode_report(cli::RankReport{})));
}

namespace sw = hipacm::backend::service_wire;

std::vector<std::uint8_t> order_message(const sw::WorkerOrder& order) {
  auto bytes = sw::encode_order(order);
  if (!bytes) {
    std::fprintf(stderr, "order: %s\n", bytes.failure().message.c_str());
    return {};
  }
  return std::move(bytes).value();
}

// The compile service's messages: orders (a host's usual limits on 16 CPUs; a host under
// `ulimit -v`, `ulimit -t`, `taskset` and `nice`; one with nothing), replies, exit notices, idle.
void write_service_seeds(const fs::path& dir) {
  constexpr std::uint64_t kNone = ~std::uint64_t{0};  // RLIM_INFINITY
  sw::WorkerOrder order;
  order.arch = "gfx90a";
  order.cwd = "/home/user/project";
  order.temp_dir = "/tmp/hipacm-worker-abc123";
  order.environment = {"PATH=/usr/bin:/bin", "TMPDIR=/tmp/hipacm-worker-abc123",
                       "AMD_COMGR_CACHE=0"};
  const std::uint64_t usual[16][2] = {
      {kNone, kNone},     {kNone, kNone}, {kNone, kNone},   {8 << 20, kNone},
      {0, kNone},         {kNone, kNone}, {255000, 255000}, {1024, 1048576},
      {8 << 20, 8 << 20}, {kNone, kNone}, {kNone, kNone},   {255000, 255000},
      {819200, 819200},   {0, 0},         {0, 0},           {kNone, kNone}};
  for (std::uint32_t r = 0; r < 16; ++r)
    order.limits.limits.push_back({r, usual[r][0], usual[r][1]});
  order.limits.cpus = {0xff, 0xff};
  write(dir / "order", order_message(order));

  sw::WorkerOrder limited = order;
  limited.limits.limits[0].soft = 3600;                      // RLIMIT_CPU
  limited.limits.limits[9] = {9, 68719476736, 68719476736};  // RLIMIT_AS
  limited.limits.cpus = {0x00, 0x08};                        // CPU 11
  limited.limits.nice = 5;
  write(dir / "order_limited", order_message(limited));

  sw::WorkerOrder bare;
  bare.arch = "sm_90";
  bare.cwd = "/";
  bare.temp_dir = "/tmp/w";
  bare.limits.nice = -20;
  write(dir / "order_sm90", order_message(bare));

  write(dir / "reply_ok", sw::encode_reply({true, 4242, ""}));
  write(dir / "reply_refused",
        sw::encode_reply({false, 0, "the compile service already runs 4096 workers"}));
  write(dir / "exit_code", sw::encode_exit({4242, 7 << 8}));
  write(dir / "exit_signal", sw::encode_exit({4242, 11}));
  write(dir / "idle", sw::encode_idle());
}

// The compile log target's layout (fuzz_compile_log_paths.cpp): header count, ROCm 7's directory
// counter, a release, the source's and the headers' names, then the log.
std::vector<std::uint8_t> compile_log(const std::string& release, const std::string& source_name,
                                      const std::vector<std::string>& headers,
                                      const std::string& log) {
  FuzzOutput out;
  out.u8(static_cast<std::uint8_t>(headers.size()));
  out.u32(1);
  out.str(release);
  out.str(source_name);
  for (const std::string& header : headers) out.str(header);
  out.raw(text(log));
  return out.bytes();
}

// Logs of the shapes hipRTC 5.2, 6.4 and 7.2 write (compile_log_paths_test.cpp), each as comgr
// wrote it and as hipacm hands it back, with the request's names.
void write_compile_log_seeds(const fs::path& dir) {
  write(dir / "rocm5_comgr_paths",
        compile_log("ROCm 5.2", "k.hip", {"a.h", "sub/b.h"},
                    "In file included from /tmp/inv/comgr-1ee990/input/CompileSource:1:\n"
                    "In file included from /tmp/inv/comgr-1ee990/include/a.h:1:\n"
                    "/tmp/inv/comgr-1ee990/include/sub/b.h:2:32: error: use of undeclared "
                    "identifier 'undeclared_b'\n"
                    "/tmp/inv/comgr-1ee990/input/CompileSource:3:91: error: no matching function "
                    "for call to object of type '(lambda at "
                    "/tmp/inv/comgr-1ee990/input/CompileSource:3:38)'\n"
                    "1 warning and 2 errors generated when compiling for gfx90a.\n"));
  write(dir / "rocm5_request_names",
        compile_log("5.2.3", "k.hip", {"d+x@1.h"},
                    "In file included from k.hip:1:\n"
                    "d+x@1.h:1:2: warning: d+x@1.h:3 in a header [-W#warnings]\n"
                    "k.hip:2:2: error: k.hip:1 and d+x@1.h:2 in text\n"
                    "k.hip:3:38: note: candidate function not viable: no known conversion from "
                    "'struct (unnamed struct at k.hip:3:63)' to 'int' for 1st argument\n"));
  write(dir / "rocm6_request_names",
        compile_log("6.4.1", "nested.hip", {"a.h", "a.h.inc", "sub/b.h"},
                    "In file included from nested.hip:1:\n"
                    "In file included from a.h:1:\n"
                    "sub/b.h:2:32: error: use of undeclared identifier 'undeclared_b'\n"
                    "    2 | __device__ int b_fn() { return undeclared_b; }\n"
                    "      |                                ^~~~~~~~~~~~\n"
                    "a.h.inc:3:2: warning: hello from a [-W#warnings]\n"
                    "nested.hip:5:37: note: in instantiation of function template "
                    "specialization 't<int>' requested here\n"));
  write(dir / "rocm7_comgr_paths",
        compile_log("ROCm 7.2", "hostile.hip", {"d+x@1.h"},
                    "In file included from /tmp/progtmp/comgr-11564-1-be6ce7/input/hostile.hip:1:\n"
                    "/tmp/progtmp/comgr-11564-1-be6ce7/include/d+x@1.h:1:2: warning: d+x@1.h:3 in "
                    "a header [-W#warnings]\n"
                    "'/t/comgr-1/input/CompileSource' and x:/tmp/comgr-ab12/input/CompileSource\n"
                    "1 warning and 1 error generated when compiling for gfx90a.\n"));
}

// The CUDA program name target's layout (fuzz_nvrtc_program_name.cpp): header count, the
// program's name, its source, the headers, the compiled and the given name, then the log.
std::vector<std::uint8_t> program_name_case(
    const std::string& program, const std::string& source,
    const std::vector<std::pair<std::string, std::string>>& headers, const std::string& log) {
  FuzzOutput out;
  out.u8(static_cast<std::uint8_t>(headers.size()));
  out.str(program);
  out.str(source);
  for (const auto& [name, header] : headers) {
    out.str(name);
    out.str(header);
  }
  out.str("kern.cu");
  out.str(program);
  out.raw(text(log));
  return out.bytes();
}

// Programs named as CuPy names them, one that may lose its directory and two that keep it, with
// NVRTC's log shapes.
void write_program_name_seeds(const fs::path& dir) {
  const std::string program = "/tmp/tmpk3x9q2ab/kern.cu";
  write(dir / "temporary_path",
        program_name_case(program,
                          "#include \"scale.h\"\nextern \"C\" __global__ void k(float* x) "
                          "{ x[0] = undeclared; }\n",
                          {{"scale.h", "#define SCALE 2\n"}},
                          "kern.cu(2): error: identifier \"undeclared\" is undefined\n"
                          "  extern \"C\" __global__ void k(float* x) { x[0] = undeclared; }\n"
                          "                                                ^\n\n"
                          "1 error detected in the compilation of \"kern.cu\".\n"));
  write(dir / "reads_its_name",
        program_name_case(program,
                          "#include <assert.h>\nextern \"C\" __global__ void k(int* x) "
                          "{ assert(x); }\n",
                          {}, "kern.cu(1): catastrophic error: cannot open source file\n"));
  write(dir / "header_of_its_name",
        program_name_case(program, "#include \"kern.cu\"\n", {{"kern.cu", "int x;\n"}},
                          "  detected during instantiation of \"f<T>\" at line 3 of kern.cu\n"));
}

}  // namespace

// Signed values of the remote cache (fuzz_remote_value.cpp), under the target's key and for its
// cache key: the code object with two lowered names, a bare entry, and one body without its MAC
// (the target signs its input, so that one parses whole).
void write_remote_value_seeds(const fs::path& dir, const std::vector<std::uint8_t>& elf,
                              const std::string& lowered) {
  namespace remote = hipacm::cache::remote;
  const remote::SigningKey key =
      std::move(remote::SigningKey::from_bytes(hipacm::fuzz::kRemoteValueFuzzKey).value());
  auto value_of = [&](hipacm::cache::CacheEntry entry) {
    entry.info.size = hipacm::cache::payload_size(entry);
    entry.checksum = hipacm::cache::entry_checksum(entry);
    return remote::encode_remote_value(entry, key);
  };
  hipacm::cache::CacheEntry entry;
  entry.info.key = std::string(hipacm::fuzz::kRemoteValueFuzzEntryKey);
  entry.info.arch = "gfx90a";
  entry.info.source_name = "tiny.hip";
  entry.info.backend = "hiprtc";
  entry.info.compiler_version = "hiprtc 5.2.3";
  entry.info.plugin_version = "0.1.0";
  entry.lowered_names = {lowered, "add_one"};
  entry.log = "warning: unused variable\n";
  entry.code = elf;
  const std::string full = value_of(entry);
  write(dir / "full", text(full));
  write(dir / "full_body", text(full.substr(0, full.size() - remote::kMacBytes)));
  hipacm::cache::CacheEntry bare;
  bare.info.key = entry.info.key;
  write(dir / "bare", text(value_of(bare)));
}

// write_seeds CORPUS_DIR ELF KEY: ELF is a small gfx90a code object defining
// add_one and scale<float>, compiled from tiny.hip; KEY is its cache key.
int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: write_seeds CORPUS_DIR GFX90A_ELF KEY\n");
    return 2;
  }
  const fs::path dir = argv[1];
  std::ifstream elf_in(argv[2], std::ios::binary);
  const std::vector<std::uint8_t> elf{std::istreambuf_iterator<char>(elf_in),
                                      std::istreambuf_iterator<char>()};
  const std::string key = argv[3];
  const std::string lowered = "_Z5scaleIfEvPT_S0_";

  const CompileRequest request = sample_request();
  write(dir / "worker_request" / "full", request_frame(7, request));
  CompileRequest minimal;
  minimal.source = "x";
  minimal.arch = "gfx90a";
  write(dir / "worker_request" / "minimal", request_frame(1, minimal));
  std::vector<std::uint8_t> two = request_frame(1, minimal);
  const std::vector<std::uint8_t> second = request_frame(2, request);
  two.insert(two.end(), second.begin(), second.end());
  write(dir / "worker_request" / "two_frames", two);
  // A CUDA program's own compile (`hipacm run`): the raw NVRTC marker names the NVRTC file.
  CompileRequest raw;
  raw.source = "extern \"C\" __global__ void k(float* p) { p[0] = 1; }\n";
  raw.source_name = "kern.cu";
  raw.arch = "sm_90";
  raw.options = {hipacm::backend::raw_nvrtc_option("/usr/local/cuda/lib64/libnvrtc.so.13"),
                 "-arch=sm_90"};
  write(dir / "worker_request" / "raw_nvrtc", request_frame(3, raw));

  CompileResult ok;
  ok.status = HIPACM_SUCCESS;
  ok.log = "warning: unused variable\n";
  ok.code = elf;
  ok.lowered_names = {lowered};
  ok.compile_seconds = 0.41;
  write(dir / "worker_result" / "success", result_frame(7, ok));
  CompileResult failed;
  failed.status = HIPACM_ERROR_COMPILATION;
  failed.error_message = "hipRTC failed";
  failed.log = "tiny.hip:1:1: error: unknown type name 'x'\n";
  write(dir / "worker_result" / "compile_error", result_frame(1, failed));

  write(dir / "code_object" / "tiny.gfx90a.co", elf);
  // What no local hipRTC writes: SPIR-V for amdgcnspirv, bare and in an offload bundle, and a
  // code object v6 for a generic processor.
  namespace synthetic = hipacm::backend::testing;
  const std::vector<std::uint8_t> spirv =
      synthetic::kernel_module({"add_one", lowered}, "table").bytes();
  write(dir / "code_object" / "add_one.amdgcnspirv.spv", spirv);
  write(dir / "code_object" / "add_one.amdgcnspirv.hipfb",
        synthetic::make_offload_bundle({{"host-x86_64-unknown-linux-gnu-", {}},
                                        {"hip-spirv64-amd-amdhsa--amdgcnspirv", spirv}}));
  write(dir / "code_object" / "add_one.gfx11-generic.v6.co",
        synthetic::make_amdgpu_elf(6, 0x1000054, {"add_one", lowered}));
  write(dir / "code_object" / "add_one.ptx",
        text(".version 7.0\n.target sm_80\n.address_size 64\n\n.visible .entry add_one(\n"
             "\t.param .u64 add_one_param_0\n)\n{\n\tret;\n}\n"));

  hipacm::fuzz::CacheRow row;
  row.key = key;
  row.arch = "gfx90a";
  row.source_name = "tiny.hip";
  row.backend = "hiprtc";
  row.compiler_version = "hiprtc 5.2.3";
  row.plugin_version = "0.1.0";
  row.lowered_names = lowered + "\n";
  row.expected_kernels = "add_one\n" + lowered + "\n";
  row.size = static_cast<std::int64_t>(elf.size() + lowered.size());
  row.created_us = row.last_used_us = 1764750000000000;
  row.flags = hipacm::fuzz::kRowFixChecksum;
  row.code = elf;
  FuzzOutput valid;
  write_cache_row(row, valid);
  write(dir / "cache_entry" / "valid", valid.bytes());
  row.flags = hipacm::fuzz::kRowFixChecksum | hipacm::fuzz::kRowSizeAsText;
  row.size = std::int64_t{1} << 40;
  FuzzOutput forged;
  write_cache_row(row, forged);
  write(dir / "cache_entry" / "forged_size", forged.bytes());

  write(dir / "request_reader" / "full", c_request(request, 0));
  write(dir / "request_reader" / "count_over_limit", c_request(request, 4));

  write(dir / "manifest" / "two_kernels.json",
        text(R"({"schema": "hipacm-examples-manifest-1", "kernels": [)"
             R"({"source": "k.hip", "options": ["-O3", "-DSCALE=2"], )"
             R"("headers": {"scale.h": "include/scale.h"}, "name_expressions": ["k"]}, )"
             R"({"source": "k.hip"}]})"));
  write(dir / "manifest" / "empty.json",
        text(R"({"schema": "hipacm-examples-manifest-1", "kernels": []})"));

  write_cluster_seeds(dir / "cluster_message", elf, key, lowered);
  write_service_seeds(dir / "service_message");
  write_compile_log_seeds(dir / "compile_log_paths");
  write_program_name_seeds(dir / "nvrtc_program_name");
  write_remote_value_seeds(dir / "remote_value", elf, lowered);
  return 0;
}
