// Checking what the command line asks for, shared by every subcommand: numbers parsed whole and
// within a range said in plain numbers, thread counts capped, output paths and memory checked
// before a run starts.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/study/throughput.h"

namespace lockstep::cli {

// A whole number from `text`, the value of `option`: decimal digits ("4096"), or a number in
// scientific notation whose value is a whole number ("1e6", "2.5e3"). Refuses anything else
// ("1e12x", "3.5", "nan", "", "0x10") and values outside [lo, hi], with a CLI::ValidationError
// (exit status 1) naming the option, what it got and the valid range, e.g.
// "--worlds: 0 is out of range: give a whole number from 1 to 1000000000000".
std::int64_t parseWholeNumber(const std::string& option, const std::string& text, std::int64_t lo, std::int64_t hi);

// A finite real number from `text`, at least `lo` (more than `lo` when `loOpen`), at most `hi`.
// Refuses NaN, infinities and trailing characters the same way.
double parseRealNumber(const std::string& option, const std::string& text, double lo, bool loOpen, double hi);

// The largest world count any option accepts; memory is the real limit (checkMemory).
constexpr std::int64_t kMaxWorlds = 1'000'000'000'000'000;
constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

// Adds an option that takes a whole number in [lo, hi] (parseWholeNumber) into `target`.
template <class Int>
CLI::Option* addWholeNumber(CLI::App& app, const std::string& name, Int& target, std::int64_t lo, std::int64_t hi,
                            const std::string& help) {
  return app
      .add_option_function<std::string>(
          name, [&target, name, lo, hi](const std::string& text) {
            target = static_cast<Int>(parseWholeNumber(name, text, lo, hi));
          },
          help)
      ->type_name("INT");
}

// Adds an option that takes a finite number > 0 (parseRealNumber) into `target`.
CLI::Option* addPositiveNumber(CLI::App& app, const std::string& name, double& target, const std::string& help);

// A comma-separated list of whole numbers in [lo, hi] ("1,256,1e6"), each as parseWholeNumber.
std::vector<std::int64_t> parseWholeNumberList(const std::string& option, const std::string& text, std::int64_t lo,
                                               std::int64_t hi);

// The CPU backend's thread count for a run of `worlds` worlds when `requested` threads are asked
// for (0: the backend's default): at most the machine's cores and at most one thread per world
// (for the batch's CpuOptions); says so on stderr when the request was lowered.
int cappedCpuThreads(int requested, std::int64_t worlds);

// Throws std::runtime_error naming `option` and `path` unless a file can be created at `path`
// (its folder exists and is writable). Creates nothing.
void checkWritable(const std::string& option, const std::string& path);

// Throws std::runtime_error, before anything is allocated, when a batch of `worlds` worlds of
// `model` does not fit in the memory available on `backend`; the message says how many worlds fit.
void checkMemory(const Model& model, Precision precision, std::int64_t worlds, Backend backend, int cpuThreads);

// Bytes for messages: in GiB with one decimal ("12.3 GiB"), as the engine's memory messages print
// them; or in the largest binary unit they reach ("812 bytes", "1.5 MiB", "12.3 GiB", up to EiB).
std::string gibText(double bytes);
std::string bytesText(double bytes);

// ---- interrupts --------------------------------------------------------------------------------
// While a run writes files, Ctrl-C (SIGINT) and SIGTERM ask it to stop: catchInterrupts() installs
// handlers that only note the signal (a second one ends the program at once, as by default); the run
// looks at interruptSignal() between steps and throws Interrupted, which removes its unfinished
// files on the way out; main() then says so and exits with 128 + the signal's number (130 for
// SIGINT), as a shell does for a program the signal ended.
void catchInterrupts();
int interruptSignal();  // the signal received since catchInterrupts(), 0 if none

class Interrupted : public std::runtime_error {
 public:
  Interrupted(int signal, const std::string& what);
  int signal;
};

// The first few entries of `worlds` as "3, 17, 42" (and "... (N in all)" when there are more).
std::string firstWorlds(const std::vector<std::int64_t>& worlds, std::size_t shown = 8);

}  // namespace lockstep::cli
