// Reading a .npz archive of `lockstep simulate --out` or `lockstep study --outcomes`: its .npy
// members as arrays of doubles, int32s or strings.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lockstep::cli {

// One .npy member: little-endian doubles, int32s or fixed-width UTF-32 strings, C order.
struct Array {
  std::string descr;
  std::vector<std::int64_t> shape;
  std::string bytes;

  std::int64_t frames() const { return shape.at(0); }
  std::int64_t worlds() const { return shape.size() > 1 ? shape[1] : 1; }
  std::int64_t width() const { return shape.size() > 2 ? shape[2] : 1; }
  // Element (frame f, world w, component c) as a double.
  double at(std::int64_t f, std::int64_t w, std::int64_t c) const;
  // The element at flat index i as a double.
  double flat(std::int64_t i) const;
  std::vector<std::string> strings() const;  // "<U..": ASCII names
};

// Every .npy member by name (without ".npy"). Throws std::runtime_error naming the file and the
// member that cannot be read.
std::map<std::string, Array> readNpz(const std::string& path);

}  // namespace lockstep::cli
