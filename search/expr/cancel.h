// Cancellation: a request to stop work early (Ctrl-C), apart from errors.
//
// Cancel is the request, owned by whoever may make it (a signal handler, a
// test); the layers that stop on it hold a Cancel::Token, a copyable view
// that a default-constructed options struct leaves never cancelled. A
// layer that sees the request while it waits deep inside a call (a compile,
// a GPU job) throws Cancelled to unwind to the one that owns the run, which
// returns what finished and says it was interrupted. Cancelled is not a
// ktune::Error nor a std::exception, so no error handler takes it for a
// failure, and a real error raised after the request stays that error.
#pragma once

#include <atomic>

namespace ktune {

class Cancel {
 public:
  class Token {
   public:
    Token() = default;
    bool requested() const noexcept { return flag_ && flag_->load(std::memory_order_relaxed); }

   private:
    friend class Cancel;
    explicit Token(const std::atomic<bool>* flag) : flag_(flag) {}
    const std::atomic<bool>* flag_ = nullptr;
  };

  Cancel() = default;
  Cancel(const Cancel&) = delete;
  Cancel& operator=(const Cancel&) = delete;

  // Async-signal-safe: a lock-free store.
  void request() noexcept { flag_.store(true, std::memory_order_relaxed); }
  void clear() noexcept { flag_.store(false, std::memory_order_relaxed); }
  bool requested() const noexcept { return flag_.load(std::memory_order_relaxed); }
  // REQUIRES: this Cancel outlives the token.
  Token token() const noexcept { return Token(&flag_); }

 private:
  static_assert(std::atomic<bool>::is_always_lock_free);
  std::atomic<bool> flag_{false};
};

// Thrown where a layer sees the request while it waits; see above.
struct Cancelled {};

}  // namespace ktune
