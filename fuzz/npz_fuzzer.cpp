// libFuzzer target: the .npz reader of `lockstep plot`, `view` and `render` (host/cli/npz.h) on
// arbitrary bytes. Input that starts with NumPy's magic is one member, given to parseNpy; any other
// is written to a file and read as an archive by readNpz. Reading must either return arrays or
// throw std::runtime_error; a returned array must be whole (its bytes are its shape's elements),
// and every element, every string and every (frame, world, component) corner must read without a
// sanitizer report. Anything else (another exception, a crash, a report, a trap) is a bug. Built by
// fuzz/build.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>

#include "../host/cli/npz.h"

namespace {

// Reads every element and string of a returned array, and the corners of its recording shape.
void touch(const lockstep::cli::NpyArray& a) {
  const std::int64_t n = a.size();
  const std::int64_t item = a.descr == "<f8" ? 8 : a.descr == "<i4" ? 4 : 0;
  if (item && a.bytes.size() != static_cast<std::size_t>(n * item)) __builtin_trap();
  volatile double sink = 0;
  if (a.numeric()) {
    for (std::int64_t i = 0; i < n; ++i) sink = sink + a.flat(i);
    if (n > 0) sink = sink + a.at(a.frames() - 1, a.worlds() - 1, a.width() - 1);
  } else {
    sink = sink + static_cast<double>(a.strings().size());
  }
  // Outside the array: must throw, never read.
  try {
    sink = sink + a.flat(n);
    __builtin_trap();
  } catch (const std::runtime_error&) {
  }
}

std::string tempPath() {
  static const std::string path = "/tmp/npz_fuzzer_" + std::to_string(getpid()) + ".npz";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    if (bytes.compare(0, 6, "\x93NUMPY") == 0) {
      touch(lockstep::cli::parseNpy(bytes, "fuzz.npy"));
      return 0;
    }
    std::FILE* f = std::fopen(tempPath().c_str(), "wb");
    if (!f) return 0;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    for (const auto& [name, a] : lockstep::cli::readNpz(tempPath())) touch(a);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
