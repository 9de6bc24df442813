// SPDX-License-Identifier: MIT
// job_agreement.cpp - the item agreement and the cache bitmaps, through all-gathers.
#include "tools/cluster/mpi/job_agreement.h"

#include <fmt/core.h>

#include <stdexcept>

#include "tools/common/exit_codes.h"
#include "tools/warmup/dry_run.h"

namespace hipacm::cli::cluster_steps {
namespace {

Bytes u64_bytes(std::uint64_t a, std::uint64_t b) {
  Bytes out(16);
  for (int i = 0; i < 8; ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(a >> (8 * i));
    out[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(b >> (8 * i));
  }
  return out;
}

std::uint64_t u64_at(const Bytes& bytes, std::size_t at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= static_cast<std::uint64_t>(bytes.at(at + static_cast<std::size_t>(i))) << (8 * i);
  return value;
}

Bytes pack_bits(const std::vector<bool>& bits) {
  Bytes out((bits.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < bits.size(); ++i)
    if (bits[i]) out[i / 8] = static_cast<std::uint8_t>(out[i / 8] | (1u << (i % 8)));
  return out;
}

std::vector<bool> unpack_bits(const Bytes& bytes, std::size_t count, std::size_t rank) {
  if (bytes.size() != (count + 7) / 8)
    throw JobLost(fmt::format("rank {} sent a cache map of the wrong size", rank));
  std::vector<bool> bits(count);
  for (std::size_t i = 0; i < count; ++i) bits[i] = (bytes[i / 8] >> (i % 8)) & 1u;
  return bits;
}

}  // namespace

// Every rank must have been given the same kernels; a rank that was not would compile and send
// something else under the same item numbers.
void agree_on_items(Cluster& cluster, std::size_t count, std::uint64_t fingerprint) {
  const std::vector<Bytes> all = cluster.all_gather(u64_bytes(count, fingerprint));
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].size() != 16) throw JobLost(fmt::format("rank {} sent a malformed agreement", r));
    if (u64_at(all[r], 0) != count || u64_at(all[r], 8) != fingerprint)
      throw InputError(fmt::format(
          "rank {} was given other kernels than rank {} ({} compiles against {}): every rank "
          "must get the same arguments and files",
          r, cluster.rank(), u64_at(all[r], 0), count));
  }
}

CacheMap what_caches_hold(Cluster& cluster, const WarmupJob& job, std::size_t count) {
  CacheMap map;
  std::vector<bool> mine(count, false);
  const std::vector<DryRunEntry> entries = dry_run(*job.inputs, job.settings);
  if (entries.size() != count) throw std::logic_error("the dry run counted other items");
  for (std::size_t i = 0; i < count; ++i) {
    mine[i] = entries[i].cached;
    map.keys.push_back(entries[i].key);
  }
  const std::vector<Bytes> all = cluster.all_gather(pack_bits(mine));
  for (std::size_t r = 0; r < all.size(); ++r) map.held.push_back(unpack_bits(all[r], count, r));
  return map;
}

}  // namespace hipacm::cli::cluster_steps
