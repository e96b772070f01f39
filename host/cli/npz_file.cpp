#include "npz_file.h"

#include <zip.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace lockstep::cli {

double Array::flat(std::int64_t i) const {
  if (descr == "<f8") {
    double x;
    std::memcpy(&x, bytes.data() + 8 * i, 8);
    return x;
  }
  std::int32_t x;
  std::memcpy(&x, bytes.data() + 4 * i, 4);
  return x;
}

double Array::at(std::int64_t f, std::int64_t w, std::int64_t c) const { return flat((f * worlds() + w) * width() + c); }

std::vector<std::string> Array::strings() const {
  const std::size_t n = std::stoul(descr.substr(2));
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 4 * n <= bytes.size(); i += 4 * n) {
    std::string s;
    for (std::size_t k = 0; k < n; ++k) {
      char32_t c;
      std::memcpy(&c, bytes.data() + i + 4 * k, 4);
      if (c == 0) break;
      s += c < 128 ? static_cast<char>(c) : '?';
    }
    out.push_back(s);
  }
  return out;
}

namespace {


// The value of 'key' in a .npy header dict, up to the next ',' outside parentheses.
std::string headerValue(const std::string& dict, const std::string& key, const std::string& where) {
  const std::size_t k = dict.find("'" + key + "':");
  if (k == std::string::npos) throw std::runtime_error(where + ": .npy header without '" + key + "'");
  std::size_t i = k + key.size() + 3, depth = 0, j = i;
  for (; j < dict.size(); ++j) {
    if (dict[j] == '(') ++depth;
    if (dict[j] == ')') --depth;
    if (dict[j] == ',' && depth == 0) break;
  }
  std::string v = dict.substr(i, j - i);
  v.erase(0, v.find_first_not_of(" '"));
  v.erase(v.find_last_not_of(" '") + 1);
  return v;
}

Array parseNpy(const std::string& raw, const std::string& where) {
  if (raw.size() < 10 || raw.compare(0, 6, "\x93NUMPY") != 0 || raw[6] != 1)
    throw std::runtime_error(where + ": not a version 1.0 .npy array");
  const std::size_t headerLength = static_cast<unsigned char>(raw[8]) | (static_cast<unsigned char>(raw[9]) << 8);
  const std::string dict = raw.substr(10, headerLength);
  Array a;
  a.descr = headerValue(dict, "descr", where);
  if (headerValue(dict, "fortran_order", where) != "False") throw std::runtime_error(where + ": Fortran order");
  std::string shape = headerValue(dict, "shape", where);
  for (char& c : shape)
    if (c == '(' || c == ')' || c == ',') c = ' ';
  std::int64_t count = 1;
  for (std::size_t i = 0; (i = shape.find_first_not_of(' ', i)) != std::string::npos;) {
    const std::size_t end = shape.find(' ', i);
    a.shape.push_back(std::stoll(shape.substr(i, end - i)));
    count *= a.shape.back();
    i = end;
  }
  const std::size_t item = a.descr == "<f8" ? 8 : a.descr == "<i4" ? 4 : a.descr.rfind("<U", 0) == 0 ? 4 * std::stoul(a.descr.substr(2)) : 0;
  if (item == 0) throw std::runtime_error(where + ": unsupported element type " + a.descr);
  a.bytes = raw.substr(10 + headerLength);
  if (a.bytes.size() != static_cast<std::size_t>(count) * item)
    throw std::runtime_error(where + ": " + std::to_string(a.bytes.size()) + " bytes of data for shape " + shape);
  return a;
}

}  // namespace

std::map<std::string, Array> readNpz(const std::string& path) {
  int error = 0;
  std::unique_ptr<zip_t, int (*)(zip_t*)> archive(zip_open(path.c_str(), ZIP_RDONLY, &error), zip_close);
  if (!archive) {
    zip_error_t e;
    zip_error_init_with_code(&e, error);
    const std::string what = zip_error_strerror(&e);
    zip_error_fini(&e);
    throw std::runtime_error(path + ": cannot open as a .npz archive: " + what);
  }
  std::map<std::string, Array> out;
  const zip_int64_t n = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(archive.get(), i, 0, &st) != 0) throw std::runtime_error(path + ": unreadable archive entry");
    std::string name = st.name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(zip_fopen_index(archive.get(), i, 0), zip_fclose);
    std::string raw(st.size, '\0');
    if (!file || zip_fread(file.get(), raw.data(), st.size) != static_cast<zip_int64_t>(st.size))
      throw std::runtime_error(path + ": cannot read " + name);
    name.resize(name.size() - 4);
    out[name] = parseNpy(raw, path + ": " + name);
  }
  return out;
}

}  // namespace lockstep::cli
