#include "npz_reader.h"

#include <gtest/gtest.h>
#include <zip.h>

#include <cstring>
#include <regex>

namespace lockstep::test {

std::vector<double> NpyArray::doubles() const {
  EXPECT_EQ(descr, "<f8");
  std::vector<double> v(data.size() / sizeof(double));
  std::memcpy(v.data(), data.data(), v.size() * sizeof(double));
  return v;
}

std::vector<std::int32_t> NpyArray::int32s() const {
  EXPECT_EQ(descr, "<i4");
  std::vector<std::int32_t> v(data.size() / sizeof(std::int32_t));
  std::memcpy(v.data(), data.data(), v.size() * sizeof(std::int32_t));
  return v;
}

std::vector<std::string> NpyArray::strings() const {
  EXPECT_EQ(descr.substr(0, 2), "<U");
  const std::size_t width = std::stoul(descr.substr(2));
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 4 * width <= data.size(); i += 4 * width) {
    std::string s;
    for (std::size_t k = 0; k < width; ++k) {
      std::uint32_t c;
      std::memcpy(&c, data.data() + i + 4 * k, 4);
      if (c == 0) break;
      s += static_cast<char>(c);
    }
    out.push_back(s);
  }
  return out;
}

std::map<std::string, NpyArray> readNpz(const std::string& path) {
  std::map<std::string, NpyArray> arrays;
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &error);
  if (!archive) {
    ADD_FAILURE() << path << ": cannot open as a zip archive (libzip error " << error << ")";
    return arrays;
  }
  const zip_int64_t n = zip_get_num_entries(archive, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_index(archive, i, 0, &st);
    std::string bytes(st.size, '\0');
    zip_file_t* f = zip_fopen_index(archive, i, 0);
    const zip_int64_t got = zip_fread(f, bytes.data(), st.size);
    zip_fclose(f);
    EXPECT_EQ(got, static_cast<zip_int64_t>(st.size));
    std::string name = st.name;
    EXPECT_EQ(name.substr(name.size() - 4), ".npy") << name;
    name = name.substr(0, name.size() - 4);
    // Magic "\x93NUMPY", version 1.0, little-endian header length, then a Python dict literal.
    if (bytes.compare(0, 6, "\x93NUMPY") != 0 || bytes[6] != 1 || bytes[7] != 0) {
      ADD_FAILURE() << name << ": not a version 1.0 .npy array";
      continue;
    }
    const std::size_t headerLength = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    EXPECT_EQ((10 + headerLength) % 64, 0u) << name << ": data not 64-byte aligned";
    const std::string header = bytes.substr(10, headerLength);
    std::smatch m;
    if (!std::regex_search(header, m, std::regex("'descr': '([^']*)', 'fortran_order': False, 'shape': \\(([^)]*)\\)"))) {
      ADD_FAILURE() << name << ": unexpected header " << header;
      continue;
    }
    NpyArray a;
    a.descr = m[1];
    const std::string shape = m[2];
    const std::regex number("[0-9]+");
    for (auto it = std::sregex_iterator(shape.begin(), shape.end(), number); it != std::sregex_iterator(); ++it)
      a.shape.push_back(std::stoll(it->str()));
    a.data = bytes.substr(10 + headerLength);
    std::int64_t count = 1;
    for (std::int64_t d : a.shape) count *= d;
    const std::size_t itemSize = a.descr == "<f8" ? 8 : a.descr == "<i4" ? 4 : 4 * std::stoul(a.descr.substr(2));
    EXPECT_EQ(a.data.size(), count * itemSize) << name << ": data size does not match the shape";
    arrays[name] = a;
  }
  zip_close(archive);
  return arrays;
}

}  // namespace lockstep::test
