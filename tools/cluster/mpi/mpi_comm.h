// SPDX-License-Identifier: MIT
// mpi_comm.h - MPI for the distributed warmup: start and end, byte collectives that notice a
// lost rank, progress forwarding, and the stopped-job protocol that names the rank that died.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <stdexcept>
#include <string>
#include <vector>

namespace hipacm::cli {

/// The job cannot go on: a rank died or the launcher stopped it. The message, already printed
/// by the rank that could name who was lost, says what happened.
class JobLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// MPI_Init_thread and MPI_Finalize, and errors that return (never abort) on MPI_COMM_WORLD. Also
/// catches SIGTERM and SIGINT: a launcher that lost a rank ends the others with SIGTERM, and
/// they then report who is missing before its SIGKILL comes.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

/// The counts of traffic this rank caused, for the report and the cost model.
struct Traffic {
  std::uint64_t control_bytes_sent = 0;
  std::uint64_t messages_sent = 0;  ///< exchange() payloads, one per rank with something to get
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_sent = 0;  ///< exchange() payload bytes
  std::uint64_t bytes_received = 0;
};

/// MPI_COMM_WORLD, as the warmup uses it. Every call is collective unless it says otherwise, and
/// every wait polls: a stop (SIGTERM) or an MPI error ends it with JobLost.
class Cluster {
 public:
  Cluster();
  int rank() const { return rank_; }
  int size() const { return size_; }
  Traffic& traffic() { return traffic_; }

  /// Every rank's `mine`, in rank order.
  std::vector<std::vector<std::uint8_t>> all_gather(const std::vector<std::uint8_t>& mine);
  /// Rank 0's `bytes`, on every rank.
  std::vector<std::uint8_t> broadcast(std::vector<std::uint8_t> bytes);
  /// On rank 0, every rank's `mine`; elsewhere nothing.
  std::vector<std::vector<std::uint8_t>> gather_to_root(const std::vector<std::uint8_t>& mine);
  /// Sends to_each[r] to rank r (empty ones are no message) and returns what each rank sent
  /// here. A payload over kMaxMessageBytes is refused before anything is sent.
  std::vector<std::vector<std::uint8_t>> exchange(
      const std::vector<std::vector<std::uint8_t>>& to_each);
  /// Whether `mine` is true on any rank.
  bool any(bool mine);

  /// Not collective. Another rank: sends its counts to rank 0 when they changed (and at least
  /// every second, which rank 0 shows as life). Rank 0: takes in what arrived. Both: a stop
  /// becomes JobLost. `finished` is the rank's last call.
  void report_progress(std::uint64_t done, std::uint64_t failed, bool finished);
  /// Rank 0: the job's counts so far, its own included.
  std::uint64_t job_done() const;
  std::uint64_t job_failed() const;
  /// Rank 0: waits until every rank sent its last progress, calling `tick` as counts arrive.
  template <class Tick>
  void wait_for_all_finished(Tick&& tick) {
    while (!all_finished()) {
      poll_progress(true);
      tick();
    }
  }

  /// When this rank must stop on its own (a fatal error), so that the others learn why.
  [[noreturn]] void abort_job(int code);

 private:
  void wait(MPI_Request* request, const char* what);
  void check(int status, const char* what);
  void on_stop();
  bool all_finished() const;
  void poll_progress(bool block_briefly);

  int rank_ = 0;
  int size_ = 1;
  Traffic traffic_;
  std::vector<std::uint64_t> done_, failed_;
  std::vector<bool> finished_;
  std::uint64_t last_sent_done_ = ~std::uint64_t{0};
  double last_sent_at_ = 0.0;
  // Progress messages in flight: a buffer must live until its send completes.
  struct PendingSend {
    std::array<std::uint64_t, 3> counts{};
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<PendingSend> pending_sends_;
};

}  // namespace hipacm::cli
