// NumPy .npz archives, written and read back side by side: the recordings of `lockstep simulate
// --out` and the outcomes of `lockstep study --outcomes` (docs/outputs.md), which `lockstep plot`,
// `view` and `render` read. An archive is a stored (uncompressed) zip of .npy version 1.0 arrays
// in C order: little-endian doubles ("<f8"), int32s ("<i4") or fixed-width UTF-32 strings ("<U").
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

struct zip;         // libzip's zip_t
struct zip_source;  // libzip's zip_source_t

namespace lockstep::cli {

// ---- writing ------------------------------------------------------------------------------------

// The .npy version 1.0 header of a C-order array of `descr` ("<f8") and `shape` (NumPy's
// format.rst): magic, version, header length, then a dict padded with spaces and ended by '\n' so
// that the data starts 64-aligned.
std::string npyHeader(const std::string& descr, const std::vector<std::int64_t>& shape);

// A 1-D array of strings as NumPy stores it: UTF-8 decoded to code points (invalid bytes become
// U+FFFD), each padded with zeros to the longest (at least 1): "<U<width>", and the data.
struct NpyStrings {
  std::string descr;
  std::string data;
};
NpyStrings npyStrings(const std::vector<std::string>& strings);

// A stored archive written at `file` (libzip writes it beside, then renames), with the fixed entry
// time 1980-01-01 00:00, so that the same arrays give the same bytes. Every error throws
// std::runtime_error("<name>: <libzip's reason>"), `name` being the file the user asked for; an
// archive destroyed before close() leaves nothing at `file`.
class NpzArchive {
 public:
  NpzArchive(const std::string& name, const std::string& file);
  NpzArchive(const NpzArchive&) = delete;
  NpzArchive& operator=(const NpzArchive&) = delete;
  ~NpzArchive();

  // Adds member NAME.npy holding `npy` (header and data), which must stay alive until close().
  void add(const std::string& name, const std::string& npy);
  // Adds member NAME.npy holding the first `bytes` bytes of `file`, which the archive then owns
  // and closes (also when this throws).
  void add(const std::string& name, std::FILE* file, std::uint64_t bytes);
  // Writes the archive.
  void close();

  [[noreturn]] void fail(const std::string& what);  // discards the archive, throws "<name>: <what>"

 private:
  void store(const std::string& name, ::zip_source* source);
  std::string name_;
  ::zip* archive_ = nullptr;
};

// One array of a .npz archive written at once (writeNpz): doubles ("<f8"), int32 ("<i4") or, when
// strings is not empty, a 1-D array of strings ("<U").
struct NpzMember {
  std::string name;  // without ".npy"
  std::vector<std::int64_t> shape;
  std::vector<double> doubles;
  std::vector<std::int32_t> ints;
  bool integer = false;
  std::vector<std::string> strings;
};
// Writes `members` as an archive at `path`. Throws std::runtime_error when it cannot be written.
void writeNpz(const std::string& path, const std::vector<NpzMember>& members);

// ---- reading ------------------------------------------------------------------------------------

// One .npy member, as its header says and its bytes, checked when read (readNpz): a known element
// type, a shape of non-negative whole numbers whose elements are exactly the bytes that follow.
// Every access is bounds-checked: an index outside the array throws std::runtime_error naming it.
struct NpyArray {
  std::string where;  // "<file>: <member>", for messages
  std::string descr;
  std::vector<std::int64_t> shape;
  std::string bytes;

  std::int64_t size() const;  // the number of elements
  bool numeric() const { return descr == "<f8" || descr == "<i4"; }
  bool text() const { return descr.rfind("<U", 0) == 0; }
  // Recordings are [frames, worlds, components] ([frames, worlds] and [frames] read as width 1).
  std::int64_t frames() const { return shape.empty() ? 1 : shape[0]; }
  std::int64_t worlds() const { return shape.size() > 1 ? shape[1] : 1; }
  std::int64_t width() const { return shape.size() > 2 ? shape[2] : 1; }
  // Element (frame f, world w, component c) as a double; throws for a numeric member read outside
  // its shape, or a member that is not numeric.
  double at(std::int64_t f, std::int64_t w, std::int64_t c) const;
  // The element at flat index i as a double (checked the same way).
  double flat(std::int64_t i) const;
  std::vector<std::string> strings() const;  // "<U..": ASCII names (others as '?'); throws for another type
  // Throws "<where>: <what>" (std::runtime_error).
  [[noreturn]] void fail(const std::string& what) const;
};

// Every .npy member by name (without ".npy"). Throws std::runtime_error naming the file, and the
// member and its fault, for what cannot be read: not a regular file, not a zip archive, a member
// larger than LOCKSTEP_MAX_INPUT_MB (io/text_file.h) or together larger, a header that is not
// NumPy's version 1.0, 2.0 or 3.0 format, an element type other than "<f8", "<i4" and "<U<n>", a
// shape that is not a tuple of whole numbers >= 0 or does not match the member's bytes.
std::map<std::string, NpyArray> readNpz(const std::string& path);
// One member's bytes (header and data) as readNpz reads it; `where` names it in messages.
NpyArray parseNpy(const std::string& raw, const std::string& where);

}  // namespace lockstep::cli
