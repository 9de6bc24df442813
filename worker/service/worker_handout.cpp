// SPDX-License-Identifier: MIT
// worker_handout.cpp - answering an order: a waiting worker with the order's compiler warm, else
// a new one, set to the host's limits and handed over with its socket, output pipe and pidfd.
#include <signal.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "hip_backend/process/child_descriptors.h"
#include "worker/service/service_internal.h"

namespace hipacm::backend::service_internal {
namespace {

// More live orders than this from one user is a runaway host, not a workload.
constexpr std::size_t kMaxWorkers = 4096;

}  // namespace

void Service::handle_order(UniqueFd connection, sw::MessageReader& reader) {
  const sw::Header header = reader.header();
  const std::vector<std::uint8_t>& payload = reader.payload();
  const std::vector<UniqueFd>& unexpected = reader.fds();
  std::string why;
  sw::OrderReply reply;
  if (header.type != sw::MessageType::kOrder || !unexpected.empty()) {
    why = "expected a worker order";
  } else if (Expected<sw::WorkerOrder> decoded = sw::decode_order(payload.data(), payload.size());
             !decoded) {
    why = std::move(decoded).failure().message;
  } else {
    const sw::WorkerOrder& order = decoded.value();
    if (handed_.size() >= kMaxWorkers) {
      why = "the compile service already runs " + std::to_string(kMaxWorkers) + " workers";
    } else {
      UniqueFd host_socket, output, channel;
      std::set<std::string> warm_set;
      Expected<pid_t> provided = provide_worker(order, &host_socket, &output, &channel, &warm_set);
      const pid_t pid = provided ? provided.value() : -1;
      if (!provided) why = std::move(provided).failure().message;
      if (pid > 0) {
        UniqueFd pidfd(open_pidfd(pid));
        if (!pidfd) why = "pidfd_open: " + errno_text();
        reply.ok = pidfd.valid();
        reply.pid = pid;
        if (reply.ok) {
          const int handed[sw::kReplyDescriptors] = {host_socket.get(), output.get(), pidfd.get()};
          if (sw::send_message(connection.get(), sw::encode_reply(reply), handed,
                               sw::kReplyDescriptors, kNoticeSendMs)) {
            Handed& worker = handed_[pid];
            worker.connection = std::move(connection);
            worker.channel = std::move(channel);
            worker.warm = std::move(warm_set);
            return;
          }
        }
        ::kill(pid, SIGKILL);  // never handed over: no one else can end it
        return;
      }
    }
  }
  reply.ok = false;
  reply.error = why;
  (void)sw::send_message(connection.get(), sw::encode_reply(reply), nullptr, 0, kNoticeSendMs);
}

Expected<pid_t> Service::provide_worker(const sw::WorkerOrder& order, UniqueFd* host_socket,
                                        UniqueFd* output, UniqueFd* channel,
                                        std::set<std::string>* warm_set) {
  const std::string family = compiler_family(order.arch);
  // The worker takes on the host's limits, CPU set and nice value, as one the host spawned would
  // have them. One left with other settings than the service's never serves another host, and a
  // finite CPU time limit needs a worker that has used none of it.
  const bool fresh_only = needs_fresh_worker(order.limits);
  const bool bound = fresh_only || order.limits != own_limits_;
  // The most recently used worker that has this compiler warm: it has compiled before, so its
  // pages are mapped and its caches full, which a fresh fork's are not.
  for (;;) {
    const auto it = std::find_if(stock_.rbegin(), stock_.rend(), [&](const Stocked& w) {
      return order.arch.empty() || w.warm.count(family) != 0;
    });
    if (it == stock_.rend() || fresh_only) break;
    Stocked worker = std::move(*it);
    stock_.erase(std::next(it).base());
    if (!apply_host_limits(worker.pid, order.limits)) {
      ::kill(worker.pid, SIGKILL);  // half changed, it serves no one; a fresh one is tried
      break;
    }
    UniqueFd child_socket, output_write;
    if (Expected<void> ends = make_worker_ends(host_socket, &child_socket, output, &output_write);
        !ends)
      return std::move(ends).failure();
    Expected<std::vector<std::uint8_t>> assignment = sw::encode_order(order);
    if (!assignment) return std::move(assignment).failure();
    const int fds[2] = {child_socket.get(), output_write.get()};
    if (sw::send_message(worker.channel.get(), assignment.value(), fds, 2, kNoticeSendMs)) {
      *channel = std::move(worker.channel);
      *warm_set = std::move(worker.warm);
      if (!order.arch.empty()) warm_set->insert(family);
      if (bound) bound_to_host_.insert(worker.pid);
      return worker.pid;
    }
    ::kill(worker.pid, SIGKILL);  // it could not take the assignment; another one might
    host_socket->reset();
    output->reset();
  }
  warm_.warm(order.arch);
  *warm_set = zygote_.single_threaded() ? warm_.families() : std::set<std::string>{};
  // A worker is warm for what it has compiled once it comes back.
  if (!order.arch.empty()) warm_set->insert(family);
  Expected<pid_t> pid = zygote_.start_worker(order, host_socket, output, channel);
  if (!pid) return pid;
  if (Expected<void> applied = apply_host_limits(pid.value(), order.limits); !applied) {
    ::kill(pid.value(), SIGKILL);  // never handed over; the reap finds no one to tell
    host_socket->reset();
    output->reset();
    channel->reset();
    return std::move(applied).failure();
  }
  if (bound) bound_to_host_.insert(pid.value());
  return pid;
}

}  // namespace hipacm::backend::service_internal
