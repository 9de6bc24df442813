// SPDX-License-Identifier: MIT
// remote_fetch_bench.cpp - times RemoteTier::fetch, one verified remote hit at a time, against the
// Redis that $HIPACM_REMOTE_CACHE names (driven by bench/remote_cache_bench.py).
//
//   hipacm-remote-fetch-bench [--rounds N] [--duration-ms MS]
//
// The entries timed are every `entry_key` the server holds (found with SCAN), fetched in turn,
// `--rounds` times over. The first fetch, which opens the pooled connection, is reported on its
// own. With --duration-ms the loop instead runs for that long whatever each fetch returns, so a
// caller can kill the server partway: the report then splits the fetches into hits and the rest,
// with the slowest of each, to show how long a fetch may wait on a server that went away.
// Output: one JSON object on stdout.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "bench/common/bench_args.h"
#include "plugin/cache/remote/redis_connection.h"
#include "plugin/cache/remote/remote_settings.h"
#include "plugin/cache/remote/remote_tier.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace remote = hipacm::cache::remote;

struct Options {
  int rounds = 20;
  int duration_ms = 0;  // 0: count rounds
};

struct Sample {
  double ms = 0;
  bool hit = false;
};

// The cache keys of every entry the server holds.
std::vector<std::string> stored_cache_keys(const remote::RemoteSettings& settings) {
  auto redis = remote::RedisConnection::open(settings.address, settings.timeout);
  if (!redis) throw std::runtime_error("cannot reach " + settings.address.display());
  const std::string prefix = remote::entry_key("");
  std::vector<std::string> keys;
  std::uint64_t cursor = 0;
  do {
    auto page = redis.value().scan(cursor, prefix + "*", 256);
    if (!page) throw std::runtime_error("SCAN failed on " + settings.address.display());
    for (const std::string& key : page.value().keys) keys.push_back(key.substr(prefix.size()));
    cursor = page.value().cursor;
  } while (cursor != 0);
  std::sort(keys.begin(), keys.end());
  return keys;
}

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

Sample timed_fetch(remote::RemoteTier& tier, const std::string& key) {
  const Clock::time_point start = Clock::now();
  const bool hit = tier.fetch(key).has_value();
  return {elapsed_ms(start), hit};
}

// Median, p90, p99 and max of `ms`, which it sorts.
nlohmann::ordered_json summary(std::vector<double> ms) {
  if (ms.empty()) return {{"count", 0}};
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) {
    return ms[std::min(ms.size() - 1,
                       static_cast<std::size_t>(q * static_cast<double>(ms.size())))];
  };
  return {{"count", ms.size()},
          {"median_ms", at(0.5)},
          {"p90_ms", at(0.9)},
          {"p99_ms", at(0.99)},
          {"max_ms", ms.back()}};
}

int run(const Options& options) {
  std::optional<remote::RemoteSettings> settings = remote::resolve_remote_settings("");
  if (!settings) {
    std::fprintf(stderr, "set HIPACM_REMOTE_CACHE to the server to time\n");
    return 2;
  }
  const std::vector<std::string> keys = stored_cache_keys(*settings);
  if (keys.empty()) {
    std::fprintf(stderr, "%s holds no entries\n", settings->address.display().c_str());
    return 2;
  }
  remote::RemoteTier tier(*settings, "remote-fetch-bench");
  if (!tier.serves()) {
    std::fprintf(stderr, "no usable HIPACM_REMOTE_CACHE_KEY_FILE: the tier serves nothing\n");
    return 2;
  }
  const Sample first = timed_fetch(tier, keys.front());
  std::vector<Sample> samples;
  const Clock::time_point start = Clock::now();
  const auto more = [&](int round) {
    return options.duration_ms > 0 ? elapsed_ms(start) < options.duration_ms
                                   : round < options.rounds;
  };
  for (int round = 0; more(round); ++round) {
    for (const std::string& key : keys) samples.push_back(timed_fetch(tier, key));
    if (round == 0 && options.duration_ms > 0) {
      std::printf("{\"ready\": true}\n");  // the driver may kill the server from now on
      std::fflush(stdout);
    }
  }
  const double timeout_ms = static_cast<double>(settings->timeout.count());
  const auto count_over = [](const std::vector<double>& ms, double limit) {
    return std::count_if(ms.begin(), ms.end(), [&](double one) { return one > limit; });
  };
  std::vector<double> hits, others;
  for (const Sample& s : samples) (s.hit ? hits : others).push_back(s.ms);
  const nlohmann::ordered_json out = {
      {"server", settings->address.display()},
      {"timeout_ms", settings->timeout.count()},
      {"entries", keys.size()},
      {"first_fetch_ms", first.ms},
      {"first_fetch_hit", first.hit},
      {"hits", summary(hits)},
      {"not_hits", summary(others)},
      // A call that times out returns a little after the limit (the poll's wake-up): 0.9x marks
      // those that waited for it, 1.2x those that overran it.
      {"not_hits_at_timeout", count_over(others, 0.9 * timeout_ms)},
      {"not_hits_over_1_2x_timeout", count_over(others, 1.2 * timeout_ms)},
      {"seconds", elapsed_ms(start) / 1000.0}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options options;
    hipacm::bench::ArgReader args(argc, argv);
    while (args.next()) {
      if (args.take("--rounds", &options.rounds) ||
          args.take("--duration-ms", &options.duration_ms))
        continue;
      std::fprintf(stderr, "usage: %s [--rounds N] [--duration-ms MS]\n", argv[0]);
      return 2;
    }
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "remote_fetch_bench: %s\n", e.what());
    return 1;
  }
}
