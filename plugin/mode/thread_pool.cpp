// SPDX-License-Identifier: MIT
// thread_pool.cpp - a Boost.Thread pool whose queued (not started) tasks can be cancelled.
#include "plugin/mode/thread_pool.h"

#include <boost/thread/lock_guard.hpp>

#include <stdexcept>

namespace hipacm {

ThreadPool::ThreadPool(unsigned max_threads) : max_threads_(max_threads == 0 ? 1 : max_threads) {}

ThreadPool::~ThreadPool() { join(); }

void ThreadPool::submit(Step run, Step cancel) {
  boost::unique_lock<boost::mutex> lock(mutex_);
  if (stopping_) throw std::logic_error("thread pool is joined");
  queue_.push_back(Task{std::move(run), std::move(cancel)});
  if (idle_ < queue_.size() && threads_.size() < max_threads_) {
    try {
      threads_.emplace_back([this] { worker_loop(); });
    } catch (...) {
      // With no thread at all the task would never run: undo and report.
      if (threads_.empty()) {
        queue_.pop_back();
        throw;
      }
    }
  }
  lock.unlock();
  work_available_.notify_one();
}

std::size_t ThreadPool::cancel_queued() {
  std::deque<Task> cancelled;
  {
    boost::lock_guard<boost::mutex> lock(mutex_);
    cancelled.swap(queue_);
  }
  for (Task& task : cancelled) task.cancel();
  return cancelled.size();
}

void ThreadPool::join() {
  std::vector<boost::thread> threads;
  {
    boost::lock_guard<boost::mutex> lock(mutex_);
    stopping_ = true;
    threads.swap(threads_);
  }
  work_available_.notify_all();
  for (boost::thread& t : threads) t.join();
}

std::size_t ThreadPool::thread_count() const {
  boost::lock_guard<boost::mutex> lock(mutex_);
  return threads_.size();
}

void ThreadPool::worker_loop() {
  boost::unique_lock<boost::mutex> lock(mutex_);
  for (;;) {
    ++idle_;
    work_available_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping and drained
    Task task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task.run();
    lock.lock();
  }
}

}  // namespace hipacm
