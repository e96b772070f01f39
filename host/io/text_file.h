// Reading a whole input file for the scene, study and URDF readers; writing a whole output file,
// or one written piece by piece under a temporary name (PartialFile).
#pragma once

#include <cstdint>
#include <cstdio>
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

// Throws std::runtime_error("<path>: ...") when `path` exists and is not a regular file (a FIFO, a
// device such as /dev/null, a socket, a folder): an output written beside and renamed over it would
// replace it with a regular file. A path that does not exist, or a regular file, passes.
void refuseSpecialFile(const std::string& path);

// An output file written as PATH.partial and renamed to PATH once complete (commit()), so that
// PATH never holds a part of it: PATH.partial is removed when the PartialFile is destroyed
// uncommitted (a failed write, an exception on the way). Errors throw std::runtime_error naming
// the file and the system's reason; the first failed write or close: "PATH: writing PATH.partial
// failed while <during>: <reason> (the partial file is removed)".
class PartialFile {
 public:
  explicit PartialFile(const std::string& path) : path_(path), partial_(path + ".partial") {}
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  ~PartialFile();

  const std::string& partial() const { return partial_; }

  // Creates PATH.partial and opens it for put().
  void open();
  // Creates PATH.partial empty, for another writer to fill before commit().
  void create();
  // Appends n bytes; `during` says what was being written ("writing frame 3 of 10").
  void put(const void* data, std::size_t n, const char* during);
  // Closes PATH.partial and renames it to PATH.
  void commit();
  // Throws the failed write's error (errno's reason, EIO's when errno is 0).
  [[noreturn]] void fail(const std::string& during) const;

 private:
  std::string path_, partial_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

}  // namespace lockstep::io
