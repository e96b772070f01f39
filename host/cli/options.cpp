#include "options.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "../io/text_file.h"
#include "lockstep/backends/backend.h"

namespace lockstep::cli {

namespace {

// What the valid values are, in plain numbers.
std::string wholeRange(std::int64_t lo, std::int64_t hi) {
  if (hi == std::numeric_limits<std::int64_t>::max()) return "a whole number >= " + std::to_string(lo);
  return "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
}

std::string realRange(double lo, bool loOpen, double hi) {
  char buf[96];
  if (hi < std::numeric_limits<double>::max())
    std::snprintf(buf, sizeof buf, "a finite number %s %.17g and <= %.17g", loOpen ? ">" : ">=", lo, hi);
  else
    std::snprintf(buf, sizeof buf, "a finite number %s %.17g", loOpen ? ">" : ">=", lo);
  return buf;
}

// A refused value: a parse error (so the fuzzer and --help see it while parsing) whose exit status
// is 1, as for every other bad input of `lockstep`.
[[noreturn]] void refuse(const std::string& option, const std::string& message) {
  throw CLI::ValidationError(option + ": " + message, 1);
}
[[noreturn]] void refuse(const std::string& option, const std::string& text, const std::string& why,
                         const std::string& range) {
  refuse(option, "'" + text + "' " + why + ": give " + range);
}

// Only the characters of a plain decimal number: no spaces, hexadecimal, "inf" or "nan".
bool decimalCharacters(const std::string& text, bool allowExponent) {
  if (text.empty()) return false;
  for (char c : text) {
    const bool digit = c >= '0' && c <= '9';
    const bool sign = c == '+' || c == '-';
    const bool other = allowExponent && (c == '.' || c == 'e' || c == 'E');
    if (!digit && !sign && !other) return false;
  }
  return true;
}

}  // namespace

std::int64_t parseWholeNumber(const std::string& option, const std::string& text, std::int64_t lo, std::int64_t hi) {
  const std::string range = wholeRange(lo, hi);
  if (!decimalCharacters(text, true)) refuse(option, text, "is not a whole number", range);
  const bool digitsOnly = text.find_first_of(".eE") == std::string::npos;
  char* end = nullptr;
  errno = 0;
  if (digitsOnly) {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (end != text.c_str() + text.size()) refuse(option, text, "is not a whole number", range);
    if (errno == ERANGE || v < lo || v > hi) refuse(option, text, "is out of range", range);
    return v;
  }
  // Scientific notation: exact as long as the value is a whole number below 2^53.
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v) || v != std::floor(v))
    refuse(option, text, "is not a whole number", range);
  if (!(v >= double(lo) && v <= double(hi))) refuse(option, text, "is out of range", range);
  if (std::abs(v) > 9007199254740992.0) refuse(option, text, "is beyond 2^53, where notation with an exponent is "
                                                             "not exact", "its digits instead");
  return static_cast<std::int64_t>(v);
}

double parseRealNumber(const std::string& option, const std::string& text, double lo, bool loOpen, double hi) {
  const std::string range = realRange(lo, loOpen, hi);
  char* end = nullptr;
  const double v = decimalCharacters(text, true) ? std::strtod(text.c_str(), &end) : 0.0;
  if (!end || end != text.c_str() + text.size()) refuse(option, text, "is not a number", range);
  if (!std::isfinite(v)) refuse(option, text, "is not a finite number", range);
  if ((loOpen ? !(v > lo) : !(v >= lo)) || !(v <= hi)) refuse(option, text, "is out of range", range);
  return v;
}

CLI::Option* addPositiveNumber(CLI::App& app, const std::string& name, double& target, const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [&target, name](const std::string& text) {
            target = parseRealNumber(name, text, 0.0, true, std::numeric_limits<double>::max());
          },
          help)
      ->type_name("NUMBER");
}

std::vector<std::int64_t> parseWholeNumberList(const std::string& option, const std::string& text, std::int64_t lo,
                                               std::int64_t hi) {
  std::vector<std::int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(parseWholeNumber(option, item, lo, hi));
  if (out.empty()) refuse(option, "'" + text + "' names no number: give a list such as 256,4096");
  return out;
}

int cappedCpuThreads(int requested, std::int64_t worlds) {
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  if (requested <= 0) return defaultCpuThreads();
  const int capped = static_cast<int>(std::min<std::int64_t>({requested, cores, std::max<std::int64_t>(worlds, 1)}));
  if (capped < requested) {
    std::fprintf(stderr, "lockstep: warning: --threads %d lowered to %d (%s)\n", requested, capped,
                 capped == cores ? (std::to_string(cores) + " cores").c_str()
                                 : (std::to_string(worlds) + " worlds").c_str());
  }
  return capped;
}

void checkWritable(const std::string& option, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw std::runtime_error(option + ": the file name is empty");
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw std::runtime_error(option + ": '" + path + "' is a folder, not a file name");
  try {
    io::refuseSpecialFile(path);  // a FIFO or a device would be replaced by the file renamed over it
  } catch (const std::exception& e) {
    throw std::runtime_error(option + ": " + e.what());
  }
  const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec))
    throw std::runtime_error(option + ": cannot write '" + path + "': the folder '" + folder.string() +
                             "' does not exist");
  if (fs::exists(p, ec) ? access(path.c_str(), W_OK) != 0 : access(folder.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error(option + ": cannot write '" + path + "': permission denied");
}

void checkMemory(const Model& model, Precision precision, std::int64_t worlds, Backend backend, int cpuThreads) {
  const BatchMemory need = batchMemory(model, precision, worlds, backend, cpuThreads);
  const MemoryAvailable have = memoryAvailable(backend == Backend::Cuda);
  const std::string why = whyBatchDoesNotFit(need, have);
  if (why.empty()) return;
  const std::int64_t fit = worldsThatFit(model, precision, backend, cpuThreads, have);
  throw std::runtime_error(std::to_string(worlds) + " worlds in " + precisionName(precision) + " do not fit: " + why +
                           "; at most " + std::to_string(fit) + " worlds fit (use --worlds)");
}

namespace {

const char* const kByteUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

// Bytes in kByteUnits[unit]: whole bytes, or one decimal.
std::string inByteUnit(double bytes, int unit) {
  char text[64];
  if (unit == 0) std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  else std::snprintf(text, sizeof text, "%.1f %s", bytes / std::pow(1024.0, unit), kByteUnits[unit]);
  return text;
}

}  // namespace

std::string gibText(double bytes) { return inByteUnit(bytes, 3); }

std::string bytesText(double bytes) {
  int unit = 0;
  for (double b = bytes; b >= 1024 && unit < 6; b /= 1024) ++unit;
  return inByteUnit(bytes, unit);
}

namespace {
volatile std::sig_atomic_t gInterruptSignal = 0;
extern "C" void noteInterrupt(int signal) { gInterruptSignal = signal; }
}  // namespace

void catchInterrupts() {
  struct sigaction a {};
  a.sa_handler = noteInterrupt;
  sigemptyset(&a.sa_mask);
  a.sa_flags = SA_RESTART | SA_RESETHAND;  // writes go on; the second signal acts as by default
  sigaction(SIGINT, &a, nullptr);
  sigaction(SIGTERM, &a, nullptr);
}

int interruptSignal() { return gInterruptSignal; }

Interrupted::Interrupted(int signal, const std::string& what)
    : std::runtime_error(std::string("interrupted by ") + (signal == SIGINT ? "SIGINT (Ctrl-C)" : strsignal(signal)) +
                         ": " + what),
      signal(signal) {}

std::string firstWorlds(const std::vector<std::int64_t>& worlds, std::size_t shown) {
  std::string out;
  for (std::size_t i = 0; i < worlds.size() && i < shown; ++i) out += (i ? ", " : "") + std::to_string(worlds[i]);
  if (worlds.size() > shown) out += ", ... (" + std::to_string(worlds.size()) + " in all)";
  return out;
}

}  // namespace lockstep::cli
