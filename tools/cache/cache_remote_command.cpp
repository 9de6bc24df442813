// SPDX-License-Identifier: MIT
// cache_remote_command.cpp - `hipacm cache remote stats|push|pull`: the options they share, and
// `stats` (is the server there, how full, how it evicts, how many entries it holds).
#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "plugin/cache/remote/remote_tier.h"
#include "plugin/cache/remote/signing_key.h"
#include "support/bytes/byte_size.h"
#include "support/settings.h"
#include "tools/cache/cache_remote.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"
#include "tools/common/option_checks.h"
#include "tools/common/remote_cache_option.h"
#include "tools/common/terminal_text.h"

namespace hipacm::cli {

using cache::remote::RedisConnection;
using cache::remote::RemoteSettings;

RemoteSettings require_remote(const RemoteCommandOptions& options) {
  std::optional<RemoteSettings> remote =
      command_remote_settings(options.url, options.mode, options.key_file);
  if (!remote)
    throw InputError(fmt::format("no remote cache: pass --remote-cache redis://HOST:PORT or set {}",
                                 settings::name(settings::Id::kRemoteCache)));
  return std::move(*remote);
}

Expected<RedisConnection> connect(const RemoteSettings& remote) {
  return RedisConnection::open(remote.address, remote.timeout);
}

namespace {

// How long stats counts entries: a large remote is counted in part, and says so.
constexpr std::chrono::seconds kScanBudget{5};
constexpr std::size_t kScanPage = 1000;

// One field of an INFO reply ("name:value" lines), or "".
std::string info_field(std::string_view info, std::string_view name) {
  std::size_t at = 0;
  while (at < info.size()) {
    std::size_t end = info.find('\n', at);
    if (end == std::string_view::npos) end = info.size();
    std::string_view line = info.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > name.size() && line.substr(0, name.size()) == name &&
        line[name.size()] == ':')
      return std::string(line.substr(name.size() + 1));
    at = end + 1;
  }
  return "";
}

std::optional<std::int64_t> info_number(std::string_view info, std::string_view name) {
  const std::string text = info_field(info, name);
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// What an eviction policy means for hipacm's entries, which are put without an expiry; "" when
// it suits a cache.
std::string policy_note(const std::string& policy, std::int64_t maxmemory) {
  if (policy.rfind("volatile-", 0) == 0)
    return fmt::format(
        "{} evicts only keys with an expiry, and hipacm's entries have none: once maxmemory is "
        "reached new entries are refused (writes fail, counted) while the old ones stay; use an "
        "allkeys-* policy (allkeys-lru) for a cache",
        policy);
  if (policy == "noeviction" && maxmemory > 0)
    return "noeviction: once maxmemory is reached Redis refuses new entries (writes fail, "
           "counted) until entries are deleted";
  if (maxmemory == 0 && !policy.empty())
    return "no maxmemory: Redis grows until the machine's memory runs out; set maxmemory with "
           "an allkeys-* policy (allkeys-lru) for a cache";
  return "";
}

// A SCAN pattern that matches `prefix` literally, then anything.
std::string glob_prefix(const std::string& prefix) {
  std::string pattern;
  for (const char c : prefix) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
    pattern += c;
  }
  return pattern + "*";
}

nlohmann::ordered_json or_null(const std::string& text) {
  return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
}
template <class T>
nlohmann::ordered_json or_null(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

struct KeyState {
  std::string file;
  std::string fingerprint;  ///< "" when there is no usable key
  std::string error;
};

KeyState key_state(const RemoteSettings& remote) {
  KeyState state{remote.key_file, "", ""};
  if (remote.key_file.empty()) return state;
  Expected<cache::remote::SigningKey> key = cache::remote::SigningKey::load(remote.key_file);
  if (key)
    state.fingerprint = key.value().fingerprint();
  else
    state.error = key.failure().message;
  return state;
}

struct ServerState {
  bool reachable = false;
  std::string error;
  std::string version;
  std::optional<std::int64_t> used_memory, maxmemory;
  std::string policy;
  std::optional<std::int64_t> entries;
  bool entries_complete = false;
};

ServerState probe_server(const RemoteSettings& remote) {
  ServerState state;
  Expected<RedisConnection> opened = connect(remote);
  if (!opened) {
    state.error = opened.failure().message;
    return state;
  }
  RedisConnection& redis = opened.value();
  state.reachable = true;
  if (Expected<std::string> server = redis.info("server"))
    state.version = info_field(server.value(), "redis_version");
  if (Expected<std::string> memory = redis.info("memory")) {
    state.used_memory = info_number(memory.value(), "used_memory");
    state.maxmemory = info_number(memory.value(), "maxmemory");
    state.policy = info_field(memory.value(), "maxmemory_policy");
  }
  // Servers before 4.0 leave the policy out of INFO.
  if (state.policy.empty())
    if (Expected<std::string> policy = redis.config_get("maxmemory-policy"))
      state.policy = policy.value();
  const std::string pattern = glob_prefix(cache::remote::entry_key(""));
  const auto until = std::chrono::steady_clock::now() + kScanBudget;
  std::uint64_t cursor = 0;
  std::int64_t count = 0;
  do {
    Expected<RedisConnection::ScanPage> page = redis.scan(cursor, pattern, kScanPage);
    if (!page) {
      state.error = page.failure().message;
      return state;
    }
    count += static_cast<std::int64_t>(page.value().keys.size());
    cursor = page.value().cursor;
  } while (cursor != 0 && std::chrono::steady_clock::now() < until);
  state.entries = count;
  state.entries_complete = cursor == 0;
  return state;
}

int run_remote_stats(const RemoteCommandOptions& options) {
  const RemoteSettings remote = require_remote(options);
  const KeyState key = key_state(remote);
  const ServerState server = probe_server(remote);
  const std::string note = policy_note(server.policy, server.maxmemory.value_or(0));
  if (options.json) {
    write_json({{"schema", "hipacm-cache-remote-stats-1"},
                {"remote", remote.address.display()},
                {"mode", remote_mode_word(remote.mode)},
                {"timeout_ms", remote.timeout.count()},
                {"key",
                 {{"file", or_null(key.file)},
                  {"fingerprint", or_null(key.fingerprint)},
                  {"error", or_null(key.error)}}},
                {"reachable", server.reachable},
                {"error", or_null(server.error)},
                {"server_version", or_null(server.version)},
                {"used_memory", or_null(server.used_memory)},
                {"maxmemory", or_null(server.maxmemory)},
                {"maxmemory_policy", or_null(server.policy)},
                {"policy_note", or_null(note)},
                {"entries", or_null(server.entries)},
                {"entries_complete", server.entries_complete}},
               "-");
  } else {
    fmt::print("remote:      {} ({})\n", printable(remote.address.display()),
               remote_mode_word(remote.mode));
    if (!key.fingerprint.empty())
      fmt::print("key:         {} (fingerprint {})\n", printable(key.file), key.fingerprint);
    else if (!key.error.empty())
      fmt::print("key:         unusable: {}; nothing from the remote cache is served\n",
                 printable(key.error));
    else
      fmt::print("key:         none: nothing from the remote cache is served\n");
    if (!server.reachable) {
      fmt::print("reachable:   no: {}\n", printable(server.error));
    } else {
      fmt::print("reachable:   yes, Redis {}\n",
                 server.version.empty() ? "(version not reported)" : printable(server.version));
      if (server.used_memory)
        fmt::print("memory:      {} used, {}\n", human_bytes(*server.used_memory),
                   server.maxmemory.value_or(0) > 0 ? "maxmemory " + human_bytes(*server.maxmemory)
                                                    : std::string("no maxmemory"));
      if (!server.policy.empty()) fmt::print("eviction:    {}\n", printable(server.policy));
      if (!note.empty()) fmt::print("note:        {}\n", printable(note));
      if (server.entries)
        fmt::print("entries:     {}{}\n", server.entries_complete ? "" : "at least ",
                   *server.entries);
      if (!server.error.empty()) fmt::print("error:       {}\n", printable(server.error));
    }
  }
  return server.reachable && server.error.empty() ? kExitOk : kExitFailures;
}

}  // namespace

void add_cache_remote_command(CLI::App* cache_cmd, std::shared_ptr<CacheOptions> cache,
                              AppContext& context) {
  auto options = std::make_shared<RemoteCommandOptions>();
  CLI::App* remote = cache_cmd->add_subcommand(
      "remote",
      "The shared remote cache (Redis): its state, pushing this cache to it, pulling from it "
      "what request files need");
  remote->require_subcommand(1);
  add_non_empty_option(
      remote, "--remote-cache", options->url,
      fmt::format("redis://[USER@]HOST[:PORT][/DB] (default: ${}); never with a password, which "
                  "any user could read in the command line: give it in ${} or ${}",
                  settings::name(settings::Id::kRemoteCache),
                  settings::name(settings::Id::kRemoteCachePasswordFile),
                  settings::name(settings::Id::kRemoteCache)));
  add_non_empty_option(remote, "--key-file", options->key_file,
                       fmt::format("The HMAC key that signs and verifies entries, a 0600 file "
                                   "(default: ${})",
                                   settings::name(settings::Id::kRemoteCacheKeyFile)));
  remote
      ->add_option("--mode", options->mode,
                   fmt::format("read or read-write (default: ${}, else read); push needs "
                               "read-write",
                               settings::name(settings::Id::kRemoteCacheMode)))
      ->check(CLI::IsMember({"read", "read-write"}));
  remote->footer(examples_footer(
      {"hipacm cache remote --remote-cache redis://cache.example:6380 stats",
       "hipacm cache remote --mode read-write --key-file ci.key push",
       "hipacm cache remote pull app.record --key-file fleet.key"},
      "0 ok, 1 the remote is unreachable (stats), or an entry failed (push) or was refused "
      "(pull), 2 usage error, no remote named, or no key where one is needed."));

  auto add = [&](const char* name, const char* help, const char* example,
                 int (*run)(const CacheOptions&, const RemoteCommandOptions&)) {
    CLI::App* sub = remote->add_subcommand(name, help);
    sub->add_flag("--json", options->json, "Print a JSON document instead of text");
    sub->footer(fmt::format("Example:\n  {}", example));
    sub->callback([cache, options, &context, run] {
      cache->quiet = context.quiet;
      cache->verbose = context.verbose;
      run_guarded(context, [&] { return run(*cache, *options); });
    });
    return sub;
  };
  add("stats",
      "Whether the server answers, its version, memory and eviction policy, and how many "
      "hipacm entries it holds (counted for at most 5 s)",
      "hipacm cache remote stats --json",
      [](const CacheOptions&, const RemoteCommandOptions& o) { return run_remote_stats(o); });
  add("push",
      "Sign every valid entry of this cache and put it to the remote unless it is there "
      "(needs read-write and the key)",
      "hipacm cache remote --mode read-write push --dry-run", run_remote_push)
      ->add_flag("--dry-run", options->dry_run, "Count what would be pushed; write nothing");
  CLI::App* pull =
      add("pull",
          "Fetch from the remote what manifests, record files or kernel files need, verify it "
          "against the key and each request, and store it in this cache",
          "hipacm cache remote pull kernels.json --arch gfx90a", run_remote_pull);
  pull->add_option("paths", options->paths, "Manifests (.json), record files, kernel files")
      ->required();
  pull->add_option("--arch", options->archs,
                   "The archs to pull for (comma-separated or repeated); a recorded request "
                   "is pulled for its own arch without it");
  pull->add_flag("--allow-compiler-plugins", options->allow_compiler_plugins,
                 "As warmup's: allow options read from files that load code into the compiler");
}

}  // namespace hipacm::cli
