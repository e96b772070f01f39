// The CPU backend's loop over work items on threads, and its choice of how many. Private to the
// backend.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace lockstep {

// Runs body(thread, k) for every k in [0, items) on `threads` threads, which take chunks of `chunk`
// items as they come free (a thread whose core is busy with other work does not hold the rest up).
// With one thread it is a plain loop on the calling thread, with no OpenMP region: entering one,
// even with `if` false, sets up a team and wakes a futex on every call (measured: 0.3 to 0.5 us per
// call for a batch of 1, about 8% of its RK4 step).
template <class F>
void forItemsOnThreads(int threads, std::int64_t items, std::int64_t chunk, F body) {
  if (threads <= 1) {
    for (std::int64_t k = 0; k < items; ++k) body(0, k);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
#pragma omp for schedule(dynamic, chunk)
    for (std::int64_t k = 0; k < items; ++k) body(t, k);
  }
}

// One thread or several, for the calls of one batch that have work enough for several: whichever
// ran faster lately. A region ends when its slowest thread does; on a machine busy with other work a
// thread descheduled while it holds a pack holds up the whole call, for milliseconds, and several
// threads can then be slower than one (measured: bench/README.md, "Threads under load"). Each way's
// seconds per unit of work are kept as a moving average; the faster runs, and the other is retried
// after kRetryFirst calls, then after twice as many each time the retry loses (at most kRetryMost:
// a retry on a busy machine can cost several calls' time), and after kRetryFirst again once it
// wins, so that a change of load is seen. Which threads run which worlds changes no bits, so
// neither does the choice.
class ThreadChoice {
 public:
  static constexpr std::int64_t kRetryFirst = 32, kRetryMost = 1024;

  // The threads of the next call that has work for `most` (1 or `most`).
  int threads(int most) {
    if (most <= 1) return 1;
    ++calls_;
    first_ = perWork_[0] == 0 || perWork_[1] == 0;
    if (perWork_[1] == 0) return most;  // each way once first
    if (perWork_[0] == 0) return 1;
    oneWasFaster_ = perWork_[0] < perWork_[1];
    retry_ = calls_ >= nextRetry_;
    return oneWasFaster_ != retry_ ? 1 : most;
  }
  // What the call on `threads` threads took, in seconds per unit of work: the way's new figure
  // after a retry (its old one is stale), else averaged into it.
  void record(int threads, double secondsPerWork) {
    double& d = perWork_[threads > 1 ? 1 : 0];
    if (first_) {
      d = secondsPerWork;
    } else if (retry_) {
      d = secondsPerWork;
      const bool lost = (perWork_[0] < perWork_[1]) == oneWasFaster_;
      interval_ = lost ? std::min(2 * interval_, kRetryMost) : kRetryFirst;
      nextRetry_ = calls_ + interval_;
    } else {
      d = 0.5 * (d + secondsPerWork);
    }
  }

 private:
  double perWork_[2] = {0, 0};  // one thread, several; 0: not run yet
  std::int64_t calls_ = 0, interval_ = kRetryFirst, nextRetry_ = kRetryFirst;
  bool first_ = false, retry_ = false, oneWasFaster_ = false;
};

}  // namespace lockstep
