// Writing a simulation's recorded frames to a file: CSV (long format) or NumPy .npz, with the
// quantities of include/lockstep/engine/quantities.h as named arrays and columns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/quantities.h"

namespace lockstep::cli {

// One array of a recording: a recordable quantity (or one component of it), every world per frame.
struct RecordedArray {
  const Quantity* quantity;
  int part = -1;                      // -1: every component; else only component `part` of a per-world quantity
  std::string name;                   // the .npz member ("q", "bushing.X_FM")
  std::vector<std::string> columns;   // the CSV column of each component
  std::string namesMember;            // the .npz member with the column names; empty: none
  std::vector<std::string> names;     // what that member holds
  bool componentAxis = true;          // .npz shape [frames, worlds, n]; false: [frames, worlds] (one component)
  bool integer = false;               // int32 values (status bits)

  std::int64_t width(const Model& m) const { return part >= 0 ? 1 : quantity->count(m); }
};

// What a recording holds, in file order; the first array is always "time".
struct RecordingLayout {
  std::vector<RecordedArray> arrays;
};

// Without --record: time, q, u, udot, kinetic_energy, potential_energy, z and status, with the
// column names and .npz members of earlier versions ("q:joint1", "q_names", ...).
RecordingLayout defaultLayout(const Model& model);
// --record NAMES: time, then each named quantity (recordableQuantities(); "all" for every one),
// its columns named by their public names ("q.joint1", "bushing.bushing.X_FM.r00") and its .npz
// member NAME with NAME_names holding those same names. `where` prefixes the error of an unknown
// or repeated name (std::runtime_error), which lists the valid names.
RecordingLayout recordLayout(const Model& model, const std::vector<std::string>& names, const std::string& where);
// "q,u,bushing.X_FM" -> {"q", "u", "bushing.X_FM"} (spaces around names ignored; empty names refused).
std::vector<std::string> splitRecordList(const std::string& list, const std::string& where);

// One recorded frame: per array of the layout, the values of every world, world-major
// (component c of world w at [w * width + c]), which is the row order of both formats.
struct Frame {
  std::vector<std::vector<double>> arrays;
};
// The layout's values at the batch's host copy (after evaluate() and download()).
template <class T>
Frame readFrame(Batch<T>& batch, const RecordingLayout& layout);

class Recording {
 public:
  virtual ~Recording() = default;
  // Appends the next frame.
  virtual void write(const Frame& frame) = 0;
  // Completes the file. Throws std::runtime_error on I/O errors.
  virtual void finish() = 0;

  // Opens `path` for `frames` frames of `worlds` worlds, in the format its extension names
  // (.csv or .npz); throws std::runtime_error for any other extension or when it cannot be written.
  // The file is written as PATH.partial and renamed to PATH by finish(); a recording destroyed
  // before, or whose write fails (the first failed write throws, naming the file and the system's
  // reason), leaves neither.
  static std::unique_ptr<Recording> open(const std::string& path, const Model& model, const RecordingLayout& layout,
                                         std::int64_t worlds, int frames);
};

// What a recording will take on disk: its values, the file's bytes (.npz: the arrays exactly, the
// names at most, about 200 bytes of zip headers per member; .csv: at a typical width per number) and the most it holds on the file system of its
// folder while it is written (.npz: the arrays staged beside it plus the archive).
struct RecordingSize {
  double values = 0, bytes = 0, peakBytes = 0;
};
RecordingSize recordingSize(const std::string& path, const Model& model, const RecordingLayout& layout,
                            std::int64_t worlds, int frames);
// Throws std::runtime_error, naming `option`, both sizes and the free space, when the file system
// of `path`'s folder has less free space than the recording's peak.
void checkRecordingFits(const std::string& option, const std::string& path, const RecordingSize& size);

// True when `path` ends in an extension Recording::open accepts.
bool isRecordingPath(const std::string& path);

}  // namespace lockstep::cli
