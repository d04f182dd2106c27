// ThreadOwned: an object that lives on a thread of its own.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace ktune {

// An object made, used and destroyed on a thread of its own, which runs one
// task at a time on it until retired (or its factory fails: the thread then
// ends at once). For objects bound to the thread that made them, such as a
// GPU evaluator whose worker process dies with that thread.
template <class T>
class ThreadOwned {
 public:
  using Make = std::function<std::unique_ptr<T>()>;
  using Task = std::function<void(T&)>;

  explicit ThreadOwned(Make make) { thread_ = std::thread([this, make = std::move(make)] { loop(make); }); }
  ~ThreadOwned() { retire(); }
  ThreadOwned(const ThreadOwned&) = delete;
  ThreadOwned& operator=(const ThreadOwned&) = delete;

  // Waits until the object is made; its factory's exception, if any.
  std::exception_ptr made() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return made_; });
    return make_error_;
  }
  void post(Task task) {
    {
      std::lock_guard lock(mutex_);
      task_ = std::move(task);
    }
    changed_.notify_all();
  }
  // Waits until the posted task is done; its exception, if any.
  std::exception_ptr wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !task_ && !running_; });
    return std::exchange(error_, nullptr);
  }
  void run(Task task) {
    post(std::move(task));
    if (std::exception_ptr e = wait()) std::rethrow_exception(e);
  }
  // Ends the thread, the object destroyed on it; nothing is posted after.
  void retire() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
    retired_ = true;
  }
  bool retired() const { return retired_; }
  // The object, for calls another thread may make while this one's task
  // runs, where T allows them; null once retired. REQUIRES: made.
  T* get() {
    std::lock_guard lock(mutex_);
    return object_;
  }

 private:
  void loop(const Make& make) {
    std::unique_ptr<T> object;
    std::exception_ptr error;
    try {
      object = make();
    } catch (...) {
      error = std::current_exception();
    }
    std::unique_lock lock(mutex_);
    made_ = true;
    make_error_ = error;
    object_ = object.get();
    changed_.notify_all();
    if (!object) return;
    for (;;) {
      changed_.wait(lock, [&] { return stopping_ || task_; });
      if (!task_) break;  // stopping
      Task task = std::move(task_);
      task_ = nullptr;
      running_ = true;
      lock.unlock();
      try {
        task(*object);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      running_ = false;
      error_ = std::exchange(error, nullptr);
      changed_.notify_all();
    }
    object_ = nullptr;
    lock.unlock();
    object.reset();  // on this thread
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  Task task_;
  bool running_ = false, made_ = false, stopping_ = false, retired_ = false;
  std::exception_ptr error_, make_error_;
  T* object_ = nullptr;
  std::thread thread_;
};

}  // namespace ktune
