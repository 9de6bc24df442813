// SPDX-License-Identifier: MIT
// include_scanner.cpp - probing include candidates within the bounds, and their digest.
#include "plugin/cache/key/include_scanner.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <utility>
#include <vector>

#include "support/bytes/sha256.h"

namespace hipacm::cache::input_scan {
namespace {

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

}  // namespace

void Scanner::resolve(const IncludeName& name, const std::string& includer_dir) {
  if (!ok()) return;
  if (name.computed) {
    stop("a computed #include (a macro names the header) cannot be followed");
    return;
  }
  if (name.name.front() == '/') {
    probe(name.name);
    return;
  }
  // Every directory the compiler could try, in any order: quoted and
  // angled forms, -iquote and -I alike. Probing more than the compiler
  // would only adds conditions to a hit.
  if (!includer_dir.empty()) probe(includer_dir + "/" + name.name);
  for (const std::string& dir : plan_.dirs) probe(dir + "/" + name.name);
}

void Scanner::run() {
  while (ok() && !queue_.empty()) {
    const std::string path = std::move(queue_.front());
    queue_.pop_front();
    const std::vector<IncludeName> includes = std::move(found_[path].includes);
    const std::string dir = directory_of(path);
    for (const IncludeName& name : includes) resolve(name, dir);
  }
}

std::string Scanner::digest() const {
  Sha256 sha;
  sha.add_field("hipacm-external-inputs-v1");
  sha.add_count(probes_.size());
  for (const auto& [path, state] : probes_) {
    sha.add_field(path);
    sha.add_field(state);
  }
  return sha.hex();
}

void Scanner::stop(std::string why) {
  if (why_not_.empty()) why_not_ = std::move(why);
}

void Scanner::probe(const std::string& path) {
  if (probes_.count(path) != 0) return;
  if (probes_.size() >= limits_.max_probes) {
    stop("more than " + std::to_string(limits_.max_probes) + " include candidates");
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int error = errno;
    probes_[path] = error == ENOENT || error == ENOTDIR ? "absent" : "error";
    observed_[path] = stat_state(nullptr, error);
    return;
  }
  observed_[path] = stat_state(&st, 0);
  if (!S_ISREG(st.st_mode)) {
    probes_[path] = "not-a-file";
    return;
  }
  if (found_.size() >= limits_.max_files) {
    stop("the include graph reaches more than " + std::to_string(limits_.max_files) + " files");
    return;
  }
  // Bounds apply to memoised files too: limits differ between callers.
  if (static_cast<std::uint64_t>(st.st_size) > limits_.max_file_bytes) {
    stop("included file " + path + " is larger than " + std::to_string(limits_.max_file_bytes) +
         " bytes");
    return;
  }
  total_bytes_ += static_cast<std::size_t>(st.st_size);
  if (total_bytes_ > limits_.max_total_bytes) {
    stop("the include graph holds more than " + std::to_string(limits_.max_total_bytes) + " bytes");
    return;
  }
  ScannedFile file;
  if (!scan_memo().find(path, identity_of(st), &file)) {
    std::string text;
    if (!read_file(path, limits_.max_file_bytes, &text, &file.identity)) {
      // The compiler could not read it either: record that, not a guess.
      probes_[path] = "unreadable";
      return;
    }
    file.hash = sha256_hex(text.data(), text.size());
    file.includes = include_names(text);
    scan_memo().put(path, file);
  }
  probes_[path] = "file:" + file.hash;
  queue_.push_back(path);
  found_[path] = std::move(file);
}

}  // namespace hipacm::cache::input_scan
