// SPDX-License-Identifier: MIT
// thread_pool.h - a Boost.Thread pool whose queued (not started) tasks can be cancelled.
#pragma once

#include <boost/thread/condition_variable.hpp>
#include <boost/thread/mutex.hpp>
#include <boost/thread/thread.hpp>

#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

namespace hipacm {

/// Threads start lazily, one per submit while none is idle, up to
/// max_threads: a mode that never submits starts no thread. Each task has a
/// run step and a cancel step; cancel_queued() runs the cancel step of every
/// task that has not started, on the calling thread, outside the lock.
class ThreadPool {
 public:
  using Step = std::function<void()>;

  explicit ThreadPool(unsigned max_threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  /// Runs what is queued, then joins.
  ~ThreadPool();

  /// Queues a task. Throws (leaving nothing queued) if no thread can run it.
  void submit(Step run, Step cancel);

  /// Cancels every queued task; returns how many.
  std::size_t cancel_queued();

  /// Lets queued tasks finish, then joins every thread. Idempotent.
  void join();

  std::size_t thread_count() const;

 private:
  struct Task {
    Step run;
    Step cancel;
  };
  void worker_loop();

  const unsigned max_threads_;
  mutable boost::mutex mutex_;
  boost::condition_variable work_available_;
  std::deque<Task> queue_;
  std::vector<boost::thread> threads_;
  unsigned idle_ = 0;
  bool stopping_ = false;
};

}  // namespace hipacm
