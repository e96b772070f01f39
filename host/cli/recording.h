// Writing a simulation's recorded frames to a file: CSV (long format) or NumPy .npz.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/model.h"

namespace lockstep::cli {

// One recorded frame: the outputs of every world, world-major (component c of world w at
// [w * n + c]), which is the row order of both formats.
struct Frame {
  std::vector<double> time;                   // [worlds]
  std::vector<double> q, u, udot, z;          // [worlds * nq], [worlds * nu], [worlds * nu], [worlds * nz]
  std::vector<double> kinetic, potential;     // [worlds]
  std::vector<std::int32_t> status;           // [worlds], StatusFlag bits
};

class Recording {
 public:
  virtual ~Recording() = default;
  // Appends the next frame.
  virtual void write(const Frame& frame) = 0;
  // Completes the file. Throws std::runtime_error on I/O errors.
  virtual void finish() = 0;

  // Opens `path` for `frames` frames of `worlds` worlds, in the format its extension names
  // (.csv or .npz); throws std::runtime_error for any other extension or when it cannot be written.
  static std::unique_ptr<Recording> open(const std::string& path, const Model& model, std::int64_t worlds,
                                         int frames);
};

// True when `path` ends in an extension Recording::open accepts.
bool isRecordingPath(const std::string& path);

}  // namespace lockstep::cli
