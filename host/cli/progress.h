// A progress line with an estimate of the time left, on stderr when it is a terminal; used by the
// long-running subcommands.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace lockstep::cli {

// A progress line with an estimate of the time left, on stderr when it is a terminal.
class Progress {
 public:
  explicit Progress(int steps) : steps_(steps), enabled_(isatty(STDERR_FILENO) == 1) {}
  bool enabled() const { return enabled_; }
  void update(int done, double elapsed) {
    if (!enabled_) return;
    const double left = done > 0 ? elapsed * (steps_ - done) / done : 0;
    std::fprintf(stderr, "\r  step %d/%d (%3.0f%%), %.1f s elapsed, ETA %.1f s   ", done, steps_,
                 100.0 * done / std::max(1, steps_), elapsed, left);
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_) std::fprintf(stderr, "\r%70s\r", "");
  }

 private:
  int steps_;
  bool enabled_;
};

}  // namespace lockstep::cli
