// SPDX-License-Identifier: MIT
// cuda_code_object.cpp - decides whether an NVIDIA code object (CUBIN or PTX) is usable.
#include "hip_backend/codeobject/cuda_code_object.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>
#include <utility>

#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/codeobject/symbol_check.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

namespace {

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' || c == '.';
}

// Names PTX declares as data (".global .align 4 .f32 name"), which a name
// expression like "&var" lowers to; they have no .entry. Line by line, so the
// work stays linear in the text however often the name occurs on one line.
bool ptx_declares_variable(std::string_view text, const std::string& name) {
  if (name.empty()) return false;
  constexpr std::string_view kGlobal = ".global", kConst = ".const";
  for (std::size_t line_start = 0; line_start < text.size();) {
    const std::size_t line_end = std::min(text.find('\n', line_start), text.size());
    const std::string_view line = text.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    // The declared name comes after the state space.
    std::size_t after = std::string_view::npos;
    if (const std::size_t g = line.find(kGlobal); g != std::string_view::npos)
      after = g + kGlobal.size();
    if (const std::size_t c = line.find(kConst); c != std::string_view::npos)
      after = std::min(after, c + kConst.size());
    if (after == std::string_view::npos) continue;
    for (std::size_t at = line.find(name, after); at != std::string_view::npos;
         at = line.find(name, at + 1)) {
      const std::size_t next = at + name.size();
      if (next >= line.size() || !is_identifier_char(line[next])) return true;
    }
  }
  return false;
}

Expected<void> check_ptx(const std::vector<std::uint8_t>& code,
                         const std::vector<std::string>& expected_kernels) {
  const std::string_view text(reinterpret_cast<const char*>(code.data()), code.size());
  if (text.find(".target") == std::string_view::npos ||
      text.find(".version") == std::string_view::npos) {
    return check_failure("code object is not PTX text (no .version/.target directive)");
  }
  const std::vector<std::string> entries = ptx_entry_names(code);
  const std::vector<std::string> missing =
      missing_names(expected_kernels, [&](const std::string& name) {
        return std::binary_search(entries.begin(), entries.end(), name) ||
               ptx_declares_variable(text, name);
      });
  if (!missing.empty()) {
    return check_failure("PTX lacks .entry " + join_names(missing) +
                         "; entries present: " + join_names(entries));
  }
  return {};
}

}  // namespace

std::vector<std::string> ptx_entry_names(const std::vector<std::uint8_t>& ptx) {
  static constexpr std::string_view kEntry = ".entry";
  const std::string_view text(reinterpret_cast<const char*>(ptx.data()), ptx.size());
  std::set<std::string> names;
  for (std::size_t at = text.find(kEntry); at != std::string_view::npos;
       at = text.find(kEntry, at + kEntry.size())) {
    std::size_t begin = at + kEntry.size();
    if (begin >= text.size() || std::isspace(static_cast<unsigned char>(text[begin])) == 0)
      continue;
    while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin])) != 0)
      ++begin;
    std::size_t end = begin;
    while (end < text.size() && is_identifier_char(text[end])) ++end;
    if (end > begin) names.emplace(text.substr(begin, end - begin));
  }
  return {names.begin(), names.end()};
}

Expected<void> check_cuda_code_object(const std::vector<std::uint8_t>& code,
                                      const std::string& arch,
                                      const std::vector<std::string>& expected_kernels) {
  if (is_ptx_arch(arch)) return check_ptx(code, expected_kernels);
  Expected<CodeObjectInfo> read =
      read_object_for_machine(code, kElfMachineCuda, "EM_CUDA (190) for '" + arch + "'");
  if (!read) return std::move(read).failure();
  const CodeObjectInfo& info = read.value();
  const std::vector<std::string> missing =
      missing_symbols(info, info.cuda_kernels, expected_kernels);
  if (!missing.empty()) {
    return check_failure("CUBIN lacks kernel(s) " + join_names(missing) +
                         "; kernels present: " + join_names(info.cuda_kernels));
  }
  return {};
}

}  // namespace hipacm::backend
