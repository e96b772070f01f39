// Reading .npz archives written by `lockstep simulate --out FILE.npz` back in the tests, written
// from NumPy's format description so that it checks the writer rather than sharing its code.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lockstep::test {

struct NpyArray {
  std::string descr;                 // e.g. "<f8", "<i4", "<U12"
  std::vector<std::int64_t> shape;
  std::string data;                  // raw bytes, C order

  std::vector<double> doubles() const;          // descr "<f8"
  std::vector<std::int32_t> int32s() const;     // descr "<i4"
  std::vector<std::string> strings() const;     // descr "<U..", ASCII content
};

// Every member "name.npy" of the archive, by name without ".npy". Fails the current test (and
// returns what it read so far) when the archive or a header is malformed.
std::map<std::string, NpyArray> readNpz(const std::string& path);

}  // namespace lockstep::test
