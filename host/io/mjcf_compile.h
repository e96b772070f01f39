// The first step of the MJCF import (mjcf.h): the file read and checked before MuJoCo's compiler
// sees it, then compiled. MuJoCo's compiler has no limits of its own (its time grows with the
// square of the elements; sizes such as nuser_body or a height field's rows and columns are
// allocated as given) and reads whatever a path names (a FIFO blocks it): the file and every file
// it includes must be regular files within LOCKSTEP_MAX_INPUT_MB (text_file.h), and the counts
// below hold, before it is compiled.
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lockstep::io {

// The largest MJCF models read: elements of one kind (bodies, composite bodies included, geoms,
// sites, joints, ...), elements in all, values per element of the <size> nuser_* attributes,
// keyframes, points of a height field (nrow x ncol) and of a built-in texture (width x height, six
// faces for a cube), and nested includes.
struct MjcfLimits {
  static constexpr std::int64_t kElementsOfOneKind = 10'000;
  static constexpr std::int64_t kElements = 50'000;
  static constexpr std::int64_t kUserValues = 1'000;
  static constexpr std::int64_t kKeyframes = 10'000;
  static constexpr std::int64_t kHeightFieldPoints = 16'000'000;
  static constexpr std::int64_t kTexturePixels = 64'000'000;
  static constexpr int kIncludeDepth = 8;
};

struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;

// Checks the file at `path` (and its includes) as above, then compiles it with MuJoCo's compiler.
// Throws InputError("<path>: <element>: <reason>") for what is refused, and "<path>: MuJoCo's
// compiler: ..." or "<path>: MuJoCo: ..." for what MuJoCo refuses (its error handler, which would
// end the process, throws instead). MuJoCo's warnings are appended to `warnings`.
MjModelPtr compileMjcf(const std::string& path, std::vector<std::string>* warnings);

// Checks what MuJoCo's compiler lets through and Lockstep cannot take, naming the element and the
// attribute (mjcf_checks.cpp): names that are not UTF-8 (they go into JSON, the web page and
// Python's str), a timestep that is not a positive number, orientations whose quaternion is zero
// (MuJoCo keeps quat="0 0 0 0" as it is) and values that are not finite. Throws InputError("<source>:
// <element>: <attribute>: <reason>").
void checkCompiledMjcf(const mjModel* m, const std::string& source);

}  // namespace lockstep::io
