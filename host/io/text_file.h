// Reading a whole input file for the scene, study and URDF readers; writing a whole output file.
#pragma once

#include <cstdint>
#include <string>

namespace lockstep::io {

// The largest input file read, in bytes (docs/scene-format.md, "Limits"): 256 MiB, or
// LOCKSTEP_MAX_INPUT_MB mebibytes when that environment variable is set (a positive integer).
// Throws InputError naming the variable when its value is not one.
std::uint64_t maxInputFileBytes();

// The file's contents. Throws InputError("<path>: <reason>") when it does not exist, is not a
// regular file (a directory, a device such as /dev/zero), is larger than maxInputFileBytes()
// (checked before reading) or cannot be read.
std::string readTextFile(const std::string& path);

// Writes `text` to `path` (created or replaced). Throws std::runtime_error("<path>: cannot write:
// <the system's reason>") at the first failed write or close (what it wrote is the caller's to
// remove: a PATH.partial that is renamed only when every file is written).
void writeTextFile(const std::string& path, const std::string& text);

}  // namespace lockstep::io
