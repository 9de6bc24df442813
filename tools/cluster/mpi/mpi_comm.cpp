// SPDX-License-Identifier: MIT
// mpi_comm.cpp - non-blocking collectives polled against a stop flag, and progress messages.
#include "tools/cluster/mpi/mpi_comm.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <numeric>
#include <thread>

#include "tools/cluster/cluster_messages.h"

namespace hipacm::cli {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

constexpr int kTagProgress = 101;
constexpr int kTagStopped = 102;
constexpr auto kPollInterval = std::chrono::milliseconds(2);
// Open MPI's launcher sends SIGKILL a second after SIGTERM; the note and the naming fit in it.
constexpr double kStoppedNoteWait = 0.4;
constexpr double kHeartbeatSeconds = 1.0;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string mpi_error_text(int status) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(status, text, &length) != MPI_SUCCESS)
    return fmt::format("error {}", status);
  return std::string(text, static_cast<std::size_t>(length));
}

int as_count(std::size_t size) {
  if (size > kMaxMessageBytes)
    throw std::runtime_error(
        fmt::format("a message of {} bytes is over the bound of {}", size, kMaxMessageBytes));
  return static_cast<int>(size);
}

// Fills `offsets` with where each rank's part starts in the one buffer of a v-collective, from
// the sizes the ranks sent (a negative one loses the job); returns the buffer's size.
std::size_t offsets_of(const std::vector<int>& sizes, std::vector<int>& offsets) {
  std::size_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    if (sizes[r] < 0) throw JobLost("a rank sent a negative size");
    offsets[r] = as_count(total);
    total += static_cast<std::size_t>(sizes[r]);
  }
  return total;
}

// The buffer of a v-collective, cut into each rank's part.
std::vector<std::vector<std::uint8_t>> parts_of(const std::vector<std::uint8_t>& all,
                                                const std::vector<int>& sizes,
                                                const std::vector<int>& offsets) {
  std::vector<std::vector<std::uint8_t>> out(sizes.size());
  for (std::size_t r = 0; r < sizes.size(); ++r)
    out[r].assign(all.begin() + offsets[r], all.begin() + offsets[r] + sizes[r]);
  return out;
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  // Only the main thread calls MPI; the plugin's threads never do.
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Init_thread failed: is this running under mpirun or srun?");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

Cluster::Cluster() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  const auto ranks = static_cast<std::size_t>(size_);
  done_.assign(ranks, 0);
  failed_.assign(ranks, 0);
  finished_.assign(ranks, false);
}

void Cluster::check(int status, const char* what) {
  if (status != MPI_SUCCESS)
    throw JobLost(
        fmt::format("rank {}: MPI failed in {}: {}", rank_, what, mpi_error_text(status)));
}

void Cluster::wait(MPI_Request* request, const char* what) {
  for (;;) {
    int done = 0;
    check(MPI_Test(request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    if (g_stop_signal != 0) on_stop();
    std::this_thread::sleep_for(kPollInterval);
  }
}

// The launcher ends every rank when one dies. The others tell rank 0 they were stopped, so rank
// 0 can name the ranks that did not: the ones that died.
void Cluster::on_stop() {
  const double deadline = now_seconds() + kStoppedNoteWait;
  if (rank_ != 0) {
    int note = rank_;
    MPI_Request request = MPI_REQUEST_NULL;
    if (MPI_Isend(&note, 1, MPI_INT, 0, kTagStopped, MPI_COMM_WORLD, &request) == MPI_SUCCESS) {
      int done = 0;
      while (!done && now_seconds() < deadline) {
        if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
        std::this_thread::sleep_for(kPollInterval);
      }
    }
    throw JobLost(
        fmt::format("rank {}: stopped by the launcher: another rank of the job failed "
                    "(rank 0 names it)",
                    rank_));
  }
  std::vector<bool> answered(static_cast<std::size_t>(size_), false);
  answered[0] = true;
  while (now_seconds() < deadline) {
    int arrived = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kTagStopped, MPI_COMM_WORLD, &arrived, &status) != MPI_SUCCESS)
      break;
    if (!arrived) {
      if (std::count(answered.begin(), answered.end(), false) == 0) break;
      std::this_thread::sleep_for(kPollInterval);
      continue;
    }
    int note = 0;
    MPI_Recv(&note, 1, MPI_INT, status.MPI_SOURCE, kTagStopped, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    answered[static_cast<std::size_t>(status.MPI_SOURCE)] = true;
  }
  std::string lost;
  for (std::size_t r = 0; r < answered.size(); ++r)
    if (!answered[r]) lost += fmt::format("{}{}", lost.empty() ? "" : ", ", r);
  const std::string message =
      lost.empty()
          ? fmt::format("the launcher stopped the job (signal {})", static_cast<int>(g_stop_signal))
          : fmt::format(
                "rank {} of {} stopped without finishing (it died or was "
                "killed), and the launcher ended the job; every cache holds "
                "whole entries only",
                lost, size_);
  throw JobLost(message);
}

std::vector<std::vector<std::uint8_t>> Cluster::all_gather(const std::vector<std::uint8_t>& mine) {
  const auto ranks = static_cast<std::size_t>(size_);
  int my_size = as_count(mine.size());
  std::vector<int> sizes(ranks);
  MPI_Request request;
  check(MPI_Iallgather(&my_size, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD, &request),
        "all_gather sizes");
  wait(&request, "all_gather sizes");
  std::vector<int> offsets(ranks);
  const std::size_t total = offsets_of(sizes, offsets);
  as_count(total);
  std::vector<std::uint8_t> all(total);
  check(MPI_Iallgatherv(mine.data(), my_size, MPI_BYTE, all.data(), sizes.data(), offsets.data(),
                        MPI_BYTE, MPI_COMM_WORLD, &request),
        "all_gather");
  wait(&request, "all_gather");
  traffic_.control_bytes_sent += mine.size() + sizeof my_size;
  return parts_of(all, sizes, offsets);
}

std::vector<std::uint8_t> Cluster::broadcast(std::vector<std::uint8_t> bytes) {
  int size = rank_ == 0 ? as_count(bytes.size()) : 0;
  MPI_Request request;
  check(MPI_Ibcast(&size, 1, MPI_INT, 0, MPI_COMM_WORLD, &request), "broadcast size");
  wait(&request, "broadcast size");
  if (size < 0) throw JobLost("rank 0 sent a negative size");
  bytes.resize(static_cast<std::size_t>(size));
  check(MPI_Ibcast(bytes.data(), size, MPI_BYTE, 0, MPI_COMM_WORLD, &request), "broadcast");
  wait(&request, "broadcast");
  if (rank_ == 0) traffic_.control_bytes_sent += bytes.size();
  return bytes;
}

std::vector<std::vector<std::uint8_t>> Cluster::gather_to_root(
    const std::vector<std::uint8_t>& mine) {
  const auto ranks = static_cast<std::size_t>(size_);
  int my_size = as_count(mine.size());
  std::vector<int> sizes(ranks);
  MPI_Request request;
  check(MPI_Igather(&my_size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &request),
        "gather sizes");
  wait(&request, "gather sizes");
  std::vector<int> offsets(ranks);
  const std::size_t total = rank_ == 0 ? offsets_of(sizes, offsets) : 0;
  std::vector<std::uint8_t> all(total);
  check(MPI_Igatherv(mine.data(), my_size, MPI_BYTE, all.data(), sizes.data(), offsets.data(),
                     MPI_BYTE, 0, MPI_COMM_WORLD, &request),
        "gather");
  wait(&request, "gather");
  traffic_.control_bytes_sent += mine.size();
  if (rank_ != 0) return {};
  return parts_of(all, sizes, offsets);
}

bool Cluster::any(bool mine) {
  const int in = mine ? 1 : 0;
  int out = 0;
  MPI_Request request;
  check(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD, &request), "agree on more");
  wait(&request, "agree on more");
  traffic_.control_bytes_sent += sizeof in;
  return out != 0;
}

std::vector<std::vector<std::uint8_t>> Cluster::exchange(
    const std::vector<std::vector<std::uint8_t>>& to_each) {
  const auto ranks = static_cast<std::size_t>(size_);
  std::vector<int> send_sizes(ranks), send_offsets(ranks), recv_sizes(ranks), recv_offsets(ranks);
  std::size_t send_total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    send_sizes[r] = as_count(to_each.at(r).size());
    send_offsets[r] = as_count(send_total);
    send_total += to_each[r].size();
  }
  MPI_Request request;
  check(MPI_Ialltoall(send_sizes.data(), 1, MPI_INT, recv_sizes.data(), 1, MPI_INT, MPI_COMM_WORLD,
                      &request),
        "exchange sizes");
  wait(&request, "exchange sizes");
  const std::size_t recv_total = offsets_of(recv_sizes, recv_offsets);
  // One buffer each way, as MPI_Alltoallv takes them; int offsets bound each to 2 GiB.
  as_count(send_total);
  as_count(recv_total);
  std::vector<std::uint8_t> send(send_total), recv(recv_total);
  for (std::size_t r = 0; r < ranks; ++r)
    std::copy(to_each[r].begin(), to_each[r].end(), send.begin() + send_offsets[r]);
  check(MPI_Ialltoallv(send.data(), send_sizes.data(), send_offsets.data(), MPI_BYTE, recv.data(),
                       recv_sizes.data(), recv_offsets.data(), MPI_BYTE, MPI_COMM_WORLD, &request),
        "exchange");
  wait(&request, "exchange");
  traffic_.control_bytes_sent += ranks * sizeof(int);
  for (std::size_t r = 0; r < ranks; ++r) {
    if (send_sizes[r] > 0) {
      ++traffic_.messages_sent;
      traffic_.bytes_sent += static_cast<std::uint64_t>(send_sizes[r]);
    }
    if (recv_sizes[r] > 0) {
      ++traffic_.messages_received;
      traffic_.bytes_received += static_cast<std::uint64_t>(recv_sizes[r]);
    }
  }
  return parts_of(recv, recv_sizes, recv_offsets);
}

void Cluster::report_progress(std::uint64_t done, std::uint64_t failed, bool finished) {
  if (g_stop_signal != 0) on_stop();
  if (rank_ == 0) {
    done_[0] = done;
    failed_[0] = failed;
    finished_[0] = finished_[0] || finished;
    poll_progress(false);
    return;
  }
  pending_sends_.remove_if([](PendingSend& send) {
    int complete = 0;
    MPI_Test(&send.request, &complete, MPI_STATUS_IGNORE);
    return complete != 0;
  });
  const double now = now_seconds();
  if (!finished && done == last_sent_done_ && now - last_sent_at_ < kHeartbeatSeconds) return;
  last_sent_done_ = done;
  last_sent_at_ = now;
  PendingSend& send = pending_sends_.emplace_back();
  send.counts = {done, failed, finished ? 1u : 0u};
  check(MPI_Isend(send.counts.data(), 3, MPI_UINT64_T, 0, kTagProgress, MPI_COMM_WORLD,
                  &send.request),
        "progress");
  traffic_.control_bytes_sent += sizeof send.counts;
  if (finished) {
    for (PendingSend& pending : pending_sends_) wait(&pending.request, "progress");
    pending_sends_.clear();
  }
}

void Cluster::poll_progress(bool block_briefly) {
  const double until = now_seconds() + (block_briefly ? 0.1 : 0.0);
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, kTagProgress, MPI_COMM_WORLD, &arrived, &status), "progress");
    if (!arrived) {
      if (g_stop_signal != 0) on_stop();
      if (!block_briefly || now_seconds() >= until || all_finished()) return;
      std::this_thread::sleep_for(kPollInterval);
      continue;
    }
    std::array<std::uint64_t, 3> counts{};
    int received = 0;
    check(MPI_Recv(counts.data(), 3, MPI_UINT64_T, status.MPI_SOURCE, kTagProgress, MPI_COMM_WORLD,
                   &status),
          "progress");
    MPI_Get_count(&status, MPI_UINT64_T, &received);
    if (received != 3)
      throw JobLost(fmt::format("rank {} sent a malformed progress message", status.MPI_SOURCE));
    const auto from = static_cast<std::size_t>(status.MPI_SOURCE);
    done_[from] = counts[0];
    failed_[from] = counts[1];
    finished_[from] = finished_[from] || counts[2] != 0;
  }
}

bool Cluster::all_finished() const {
  return std::count(finished_.begin(), finished_.end(), false) == 0;
}

std::uint64_t Cluster::job_done() const {
  return std::accumulate(done_.begin(), done_.end(), std::uint64_t{0});
}

std::uint64_t Cluster::job_failed() const {
  return std::accumulate(failed_.begin(), failed_.end(), std::uint64_t{0});
}

void Cluster::abort_job(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace hipacm::cli
