// SPDX-License-Identifier: MIT
// external_inputs.cpp - the files on disk a compile may read beyond its request, folded into the
// key.
#include "plugin/cache/key/external_inputs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "hip_backend/compiler_environment.h"
#include "plugin/cache/key/path_options.h"
#include "support/failure.h"
#include "support/no_destructor.h"
#include "support/sha256.h"

namespace hipacm::cache {
namespace {

// ---- options -------------------------------------------------------------

struct SearchPlan {
  std::vector<std::string> dirs;             ///< every include directory, in order
  std::vector<std::string> forced_includes;  ///< -include / -imacros names
  std::vector<std::string> environment;      ///< "NAME=VALUE" of each compiler variable set
  bool cacheable = true;
  std::string why_not;
};

// The options that name include directories and forced includes (path_options.h).
constexpr const auto& kDirOptions = kIncludeDirOptions;
// Options through which the compiler reads files or arguments hipacm does not
// model: a request using one is compiled, never cached.
constexpr std::string_view kOpaqueOptions[] = {
    "@",
    "-include-pch",
    "-Xclang",
    "-Xpreprocessor",
    "-Xarch",
    "-Xoffload",
    "-Wp,",
    "-iprefix",
    "-iwithprefix",
    "-iwithsysroot",
    "-isysroot",
    "--sysroot",
    "-ivfsoverlay",
    "-iframework",
    "-F",
    "-fmodule",
    "-fprebuilt-module-path",
    "-fimplicit-module-maps",
    "-fplugin",
    "-fpass-plugin",
    "-load",
    "-B",
    "-resource-dir",
    "--gcc-toolchain",
    "--gcc-install-dir",
    "--rocm-path",
    "--hip-path",
    "--rocm-device-lib-path",
    "--hip-device-lib",
    "--cuda-path",
    "-mlink-builtin-bitcode",
    "-mlink-bitcode-file",
    "-fembed-offload-object",
    "-fprofile-use",
    "-fprofile-instr-use",
    "-fprofile-sample-use",
    "-fprofile-list",
    "-fsanitize-blacklist",
    "-fsanitize-ignorelist",
    "-fxray-always-instrument",
    "-fxray-never-instrument",
    "-fxray-attr-list",
    "--config",
    "--pch",
    "--use-pch",
    "--create-pch",
    "--instantiate-templates-in-pch",
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string absolute_dir(const std::string& dir) {
  if (!dir.empty() && dir.front() == '/') return dir;
  std::string cwd(4096, '\0');
  if (getcwd(cwd.data(), cwd.size()) == nullptr) return dir;
  cwd.resize(std::char_traits<char>::length(cwd.c_str()));
  return cwd + "/" + dir;
}

void not_cacheable(SearchPlan* plan, std::string why) {
  if (plan->cacheable) plan->why_not = std::move(why);
  plan->cacheable = false;
}

// An option value that names something on disk which no rule above accounts
// for (an unknown option with a path) makes the request uncacheable.
void check_unknown_value(std::string_view option, SearchPlan* plan) {
  std::string_view value = option;
  const std::size_t eq = option.find('=');
  if (eq != std::string_view::npos) value = option.substr(eq + 1);
  if (value.find('/') == std::string_view::npos) return;
  struct stat st {};
  if (::stat(std::string(value).c_str(), &st) == 0)
    not_cacheable(plan, "option '" + std::string(option) + "' names a path on disk");
}

SearchPlan plan_search(const std::vector<std::string>& options) {
  SearchPlan plan;
  for (std::size_t i = 0; i < options.size(); ++i) {
    // The compiler sees surrounding whitespace as part of the option, so it
    // is kept: " -Ifoo" is not an include directory to it, nor to us.
    const std::string_view option = options[i];
    // Values of -D/-U are macro text, never read from disk.
    if (starts_with(option, "-D") || starts_with(option, "-U")) {
      if (option.size() == 2) ++i;
      continue;
    }
    bool handled = false;
    for (std::string_view opaque : kOpaqueOptions) {
      if (starts_with(option, opaque)) {
        not_cacheable(&plan, "option '" + std::string(option) +
                                 "' makes the compiler read input hipacm cannot account for");
        handled = true;
        break;
      }
    }
    if (handled) continue;
    const auto take_value = [&](std::string_view prefix, std::string* out) {
      if (!starts_with(option, prefix)) return false;
      std::string_view value = option.substr(prefix.size());
      if (!value.empty() && value.front() == '=') value.remove_prefix(1);
      if (value.empty()) {
        if (i + 1 >= options.size()) return true;  // the compiler rejects it
        value = options[++i];
      }
      *out = std::string(value);
      return true;
    };
    std::string value;
    for (std::string_view prefix : kDirOptions) {
      if (take_value(prefix, &value)) {
        if (!value.empty()) plan.dirs.push_back(absolute_dir(value));
        handled = true;
        break;
      }
    }
    if (handled) continue;
    for (std::string_view prefix : kForcedIncludeOptions) {
      if (take_value(prefix, &value)) {
        if (!value.empty()) plan.forced_includes.push_back(value);
        handled = true;
        break;
      }
    }
    if (!handled) check_unknown_value(option, &plan);
  }
  return plan;
}

// The compiler variables of the request (compiler_environment.h): include lists are searched as
// include directories, every value that is set is keyed, and one through which the compiler
// reads what no key sees makes the request uncacheable.
void plan_environment(const std::vector<std::string>& environment, SearchPlan* plan) {
  for (const std::string& entry : environment) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;  // not set
    const std::string name = entry.substr(0, eq);
    const std::string_view value = std::string_view(entry).substr(eq + 1);
    const backend::CompilerVariable* variable = backend::find_compiler_variable(name);
    if (variable == nullptr) continue;
    switch (variable->use) {
      case backend::CompilerVariableUse::kOpaque:
        if (!value.empty())
          not_cacheable(plan, "the environment variable " + name +
                                  " makes the compiler read input hipacm cannot account for");
        continue;
      case backend::CompilerVariableUse::kIncludePath:
        for (std::size_t at = 0; at <= value.size();) {
          std::size_t colon = value.find(':', at);
          if (colon == std::string_view::npos) colon = value.size();
          const std::string_view dir = value.substr(at, colon - at);
          // An empty entry means the working directory to the driver, as does a relative one.
          if (!value.empty() && (dir.empty() || dir.front() != '/'))
            not_cacheable(plan, "the environment variable " + name +
                                    " names a directory relative to the working directory");
          else if (!dir.empty())
            plan->dirs.emplace_back(dir);
          at = colon + 1;
        }
        break;
      case backend::CompilerVariableUse::kKeyed:
        break;
    }
    plan->environment.push_back(entry);
  }
}

// ---- include directives ----------------------------------------------------

struct IncludeName {
  std::string name;
  bool computed = false;  ///< `#include MACRO`: the name is unknown here
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r'; }
bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Skips blanks and /* */ comments inside one logical line.
std::size_t skip_blanks(std::string_view line, std::size_t at) {
  while (at < line.size()) {
    if (is_space(line[at])) {
      ++at;
    } else if (line.compare(at, 2, "/*") == 0) {
      const std::size_t end = line.find("*/", at + 2);
      at = end == std::string_view::npos ? line.size() : end + 2;
    } else {
      break;
    }
  }
  return at;
}

// Reads `"name"` or `<name>` at `at`; anything else is a computed name.
IncludeName read_header_name(std::string_view line, std::size_t at) {
  at = skip_blanks(line, at);
  if (at < line.size() && (line[at] == '"' || line[at] == '<')) {
    const char close = line[at] == '"' ? '"' : '>';
    const std::size_t end = line.find(close, at + 1);
    if (end != std::string_view::npos && end > at + 1)
      return {std::string(line.substr(at + 1, end - at - 1)), false};
  }
  return {"", true};
}

// One logical line: backslash-newline continuations joined.
void scan_logical_line(std::string_view line, std::vector<IncludeName>* out) {
  std::size_t at = skip_blanks(line, 0);
  std::size_t after_hash = std::string_view::npos;
  if (line.compare(at, 1, "#") == 0) after_hash = at + 1;
  if (line.compare(at, 2, "%:") == 0 || line.compare(at, 3, "?\?=") == 0)
    after_hash = at + (line[at] == '%' ? 2 : 3);
  if (after_hash != std::string_view::npos) {
    std::size_t word = skip_blanks(line, after_hash);
    std::size_t end = word;
    while (end < line.size() && is_identifier_char(line[end])) ++end;
    const std::string_view directive = line.substr(word, end - word);
    if (directive == "include" || directive == "include_next" || directive == "import") {
      IncludeName name = read_header_name(line, end);
      // `#include` with nothing after it is an error the compiler reports.
      if (!name.computed || skip_blanks(line, end) < line.size()) out->push_back(std::move(name));
    }
  }
  static constexpr std::string_view kHasInclude = "__has_include";
  for (std::size_t found = line.find(kHasInclude); found != std::string_view::npos;
       found = line.find(kHasInclude, found + kHasInclude.size())) {
    std::size_t next = found + kHasInclude.size();
    if (line.compare(next, 5, "_next") == 0) next += 5;
    if (next < line.size() && is_identifier_char(line[next])) continue;
    next = skip_blanks(line, next);
    if (next >= line.size() || line[next] != '(') continue;  // `#ifdef __has_include`
    out->push_back(read_header_name(line, next + 1));
  }
}

std::vector<IncludeName> include_names(std::string_view text) {
  std::vector<IncludeName> out;
  // Only lines that can hold a directive are assembled; most are skipped by
  // the cheap test below.
  std::string logical;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view physical = text.substr(at, end - at);
    at = end + 1;
    if (!physical.empty() && physical.back() == '\r') physical.remove_suffix(1);
    if (!physical.empty() && physical.back() == '\\') {
      logical.append(physical.substr(0, physical.size() - 1));
      continue;
    }
    if (logical.empty()) {
      if (physical.find("include") != std::string_view::npos ||
          physical.find("import") != std::string_view::npos)
        scan_logical_line(physical, &out);
    } else {
      logical.append(physical);
      scan_logical_line(logical, &out);
      logical.clear();
    }
  }
  if (!logical.empty()) scan_logical_line(logical, &out);
  return out;
}

// ---- files ---------------------------------------------------------------

struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileIdentity& o) const {
    return std::tie(device, inode, size, mtime_ns, ctime_ns) ==
           std::tie(o.device, o.inode, o.size, o.mtime_ns, o.ctime_ns);
  }
};

FileIdentity identity_of(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size,
          std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec,
          std::int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec};
}

struct ScannedFile {
  FileIdentity identity;
  std::string hash;
  std::vector<IncludeName> includes;
};

// Reading and hashing a header is the expensive part of a lookup, and the
// same headers come back for every kernel of a warm-up. A file is reused only
// while its inode, size, mtime and ctime are unchanged; any write to it moves
// ctime, which no user call can set back.
class ScanMemo {
 public:
  bool find(const std::string& path, const FileIdentity& id, ScannedFile* out) {
    boost::lock_guard<boost::mutex> lock(mutex_);
    const auto it = files_.find(path);
    if (it == files_.end() || !(it->second.identity == id)) return false;
    *out = it->second;
    return true;
  }
  void put(const std::string& path, const ScannedFile& file) {
    boost::lock_guard<boost::mutex> lock(mutex_);
    if (files_.size() >= kMaxEntries) files_.clear();
    files_[path] = file;
  }

 private:
  static constexpr std::size_t kMaxEntries = 16384;
  boost::mutex mutex_;
  std::unordered_map<std::string, ScannedFile> files_;
};

ScanMemo& scan_memo() {
  static backend::NoDestructor<ScanMemo> memo;
  return *memo;
}

// Reads a regular file of at most `limit` bytes; false for anything else.
bool read_file(const std::string& path, std::size_t limit, std::string* out, FileIdentity* id) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            static_cast<std::uint64_t>(st.st_size) <= limit;
  if (ok) {
    *id = identity_of(st);
    out->assign(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t done = 0;
    while (done < out->size()) {
      const ssize_t n = ::read(fd, out->data() + done, out->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) ok = false;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    out->resize(done);  // a file that shrank while read: hash what is there
  }
  ::close(fd);
  return ok;
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

class Scanner {
 public:
  Scanner(const SearchPlan& plan, const ExternalInputLimits& limits)
      : plan_(plan), limits_(limits) {}

  /// Resolves `name` as included from `includer_dir` ("" for in-memory text).
  void resolve(const IncludeName& name, const std::string& includer_dir) {
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

  void run() {
    while (ok() && !queue_.empty()) {
      const std::string path = std::move(queue_.front());
      queue_.pop_front();
      const std::vector<IncludeName> includes = std::move(found_[path].includes);
      const std::string dir = directory_of(path);
      for (const IncludeName& name : includes) resolve(name, dir);
    }
  }

  bool ok() const { return why_not_.empty(); }
  const std::string& why_not() const { return why_not_; }
  std::size_t files() const { return found_.size(); }
  bool probed_anything() const { return !probes_.empty(); }

  std::string digest() const {
    Sha256 sha;
    sha.add_field("hipacm-external-inputs-v1");
    sha.add_count(probes_.size());
    for (const auto& [path, state] : probes_) {
      sha.add_field(path);
      sha.add_field(state);
    }
    return sha.hex();
  }

 private:
  void stop(std::string why) {
    if (why_not_.empty()) why_not_ = std::move(why);
  }

  void probe(const std::string& path) {
    if (probes_.count(path) != 0) return;
    if (probes_.size() >= limits_.max_probes) {
      stop("more than " + std::to_string(limits_.max_probes) + " include candidates");
      return;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      probes_[path] = errno == ENOENT || errno == ENOTDIR ? "absent" : "error";
      return;
    }
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
      stop("the include graph holds more than " + std::to_string(limits_.max_total_bytes) +
           " bytes");
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

  const SearchPlan& plan_;
  const ExternalInputLimits& limits_;
  std::map<std::string, std::string> probes_;  // path -> state; sorted for the digest
  std::map<std::string, ScannedFile> found_;
  std::deque<std::string> queue_;
  std::size_t total_bytes_ = 0;
  std::string why_not_;
};

}  // namespace

ExternalInputs scan_external_inputs(const backend::CompileRequest& request,
                                    const ExternalInputLimits& limits) noexcept {
  ExternalInputs out;
  try {
    SearchPlan plan = plan_search(request.options);
    plan_environment(request.environment, &plan);
    if (!plan.cacheable) {
      out.cacheable = false;
      out.why_not = plan.why_not;
      return out;
    }
    // The compiler's driver loads <name>.pch or <name>.gch (a file or a directory) in place of a
    // forced include where one exists: a file the key does not see.
    for (const std::string& name : plan.forced_includes) {
      for (const char* suffix : {".pch", ".gch"}) {
        struct stat st {};
        if (::lstat((name + suffix).c_str(), &st) == 0) {
          out.cacheable = false;
          out.why_not = "a precompiled header " + name + suffix + " stands beside forced include " +
                        name + " and would be loaded in its place";
          return out;
        }
      }
    }
    Scanner scanner(plan, limits);
    for (const std::string& name : plan.forced_includes) scanner.resolve({name, false}, "");
    for (const IncludeName& name : include_names(request.source)) scanner.resolve(name, "");
    for (const auto& header : request.headers)
      for (const IncludeName& name : include_names(header.second)) scanner.resolve(name, "");
    scanner.run();
    if (!scanner.ok()) {
      out.cacheable = false;
      out.why_not = scanner.why_not();
      return out;
    }
    out.files_read = scanner.files();
    if (scanner.probed_anything()) out.digest = scanner.digest();
    if (!plan.environment.empty()) {
      Sha256 sha;
      sha.add_field("hipacm-compiler-environment");
      sha.add_count(plan.environment.size());
      for (const std::string& entry : plan.environment) sha.add_field(entry);
      sha.add_field(out.digest);
      out.digest = sha.hex();
    }
  } catch (...) {
    out = ExternalInputs{};
    out.cacheable = false;
    out.why_not = failure_from_current_exception("the include scan failed").message;
  }
  return out;
}

}  // namespace hipacm::cache
