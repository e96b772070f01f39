#include "npz.h"

#include <zip.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace lockstep::cli {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the .npy headers below declare little-endian data");

namespace {

// libzip's text for one of its error codes (zip_open's).
std::string zipErrorText(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  const std::string what = zip_error_strerror(&e);
  zip_error_fini(&e);
  return what;
}

// UTF-8 to code points (invalid bytes become U+FFFD), for NumPy's '<U' strings.
std::u32string decodeUtf8(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const int extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    char32_t cp = extra == 0 ? c : extra == 1 ? (c & 0x1f) : extra == 2 ? (c & 0x0f) : (c & 0x07);
    bool ok = extra >= 0 && i + extra < s.size();
    for (int k = 1; ok && k <= extra; ++k) {
      const unsigned char d = s[i + k];
      ok = (d >> 6) == 2;
      cp = (cp << 6) | (d & 0x3f);
    }
    out += ok ? cp : U'\uFFFD';
    i += ok ? extra + 1 : 1;
  }
  return out;
}

}  // namespace

// ---- writing ------------------------------------------------------------------------------------

std::string npyHeader(const std::string& descr, const std::vector<std::int64_t>& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  dict += "), }";
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string header = "\x93NUMPY";
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>(dict.size() >> 8);
  return header + dict;
}

NpyStrings npyStrings(const std::vector<std::string>& strings) {
  std::vector<std::u32string> decoded;
  std::size_t width = 1;
  for (const std::string& s : strings) {
    decoded.push_back(decodeUtf8(s));
    width = std::max(width, decoded.back().size());
  }
  NpyStrings out;
  out.descr = "<U" + std::to_string(width);
  for (std::u32string d : decoded) {
    d.resize(width, U'\0');
    out.data.append(reinterpret_cast<const char*>(d.data()), width * sizeof(char32_t));
  }
  return out;
}

NpzArchive::NpzArchive(const std::string& name, const std::string& file) : name_(name) {
  int error = 0;
  archive_ = zip_open(file.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (!archive_) throw std::runtime_error(name_ + ": cannot create the archive: " + zipErrorText(error));
}

NpzArchive::~NpzArchive() {
  if (archive_) zip_discard(archive_);
}

void NpzArchive::fail(const std::string& what) {
  const std::string message = name_ + ": " + what;
  zip_discard(archive_);
  archive_ = nullptr;
  throw std::runtime_error(message);
}

void NpzArchive::add(const std::string& name, const std::string& npy) {
  zip_source_t* source = zip_source_buffer(archive_, npy.data(), npy.size(), 0);
  if (!source) fail(zip_strerror(archive_));
  store(name, source);
}

void NpzArchive::add(const std::string& name, std::FILE* file, std::uint64_t bytes) {
  zip_source_t* source = zip_source_filep(archive_, file, 0, static_cast<zip_int64_t>(bytes));
  if (!source) {
    const std::string what = zip_strerror(archive_);
    std::fclose(file);
    fail(what);
  }
  store(name, source);
}

void NpzArchive::store(const std::string& name, zip_source_t* source) {
  const zip_int64_t index = zip_file_add(archive_, (name + ".npy").c_str(), source, ZIP_FL_OVERWRITE);
  if (index < 0) {
    zip_source_free(source);
    fail(zip_strerror(archive_));
  }
  if (zip_set_file_compression(archive_, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0)
    fail(zip_strerror(archive_));
  // A fixed entry time (the earliest a zip can say: 1980-01-01 00:00), not the time of the run:
  // identical runs write identical bytes.
  constexpr zip_uint16_t kDosTime = 0;                            // 00:00:00
  constexpr zip_uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980 + 0, January, 1st
  if (zip_file_set_dostime(archive_, static_cast<zip_uint64_t>(index), kDosTime, kDosDate, 0) != 0)
    fail(zip_strerror(archive_));
}

void NpzArchive::close() {
  if (zip_close(archive_) != 0) fail(zip_strerror(archive_));
  archive_ = nullptr;
}

void writeNpz(const std::string& path, const std::vector<NpzMember>& members) {
  // Each member's .npy bytes, kept alive until the archive is closed.
  std::vector<std::string> blobs;
  for (const NpzMember& m : members) {
    if (!m.strings.empty()) {
      const NpyStrings s = npyStrings(m.strings);
      blobs.push_back(npyHeader(s.descr, {static_cast<std::int64_t>(m.strings.size())}) + s.data);
    } else if (m.integer) {
      blobs.push_back(npyHeader("<i4", m.shape));
      blobs.back().append(reinterpret_cast<const char*>(m.ints.data()), m.ints.size() * sizeof(std::int32_t));
    } else {
      blobs.push_back(npyHeader("<f8", m.shape));
      blobs.back().append(reinterpret_cast<const char*>(m.doubles.data()), m.doubles.size() * sizeof(double));
    }
  }
  NpzArchive archive(path, path);
  for (std::size_t k = 0; k < members.size(); ++k) archive.add(members[k].name, blobs[k]);
  archive.close();
}

// ---- reading ------------------------------------------------------------------------------------

double NpyArray::flat(std::int64_t i) const {
  if (descr == "<f8") {
    double x;
    std::memcpy(&x, bytes.data() + 8 * i, 8);
    return x;
  }
  std::int32_t x;
  std::memcpy(&x, bytes.data() + 4 * i, 4);
  return x;
}

double NpyArray::at(std::int64_t f, std::int64_t w, std::int64_t c) const { return flat((f * worlds() + w) * width() + c); }

std::vector<std::string> NpyArray::strings() const {
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

NpyArray parseNpy(const std::string& raw, const std::string& where) {
  if (raw.size() < 10 || raw.compare(0, 6, "\x93NUMPY") != 0 || raw[6] != 1)
    throw std::runtime_error(where + ": not a version 1.0 .npy array");
  const std::size_t headerLength = static_cast<unsigned char>(raw[8]) | (static_cast<unsigned char>(raw[9]) << 8);
  const std::string dict = raw.substr(10, headerLength);
  NpyArray a;
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

std::map<std::string, NpyArray> readNpz(const std::string& path) {
  int error = 0;
  std::unique_ptr<zip_t, int (*)(zip_t*)> archive(zip_open(path.c_str(), ZIP_RDONLY, &error), zip_close);
  if (!archive) throw std::runtime_error(path + ": cannot open as a .npz archive: " + zipErrorText(error));
  std::map<std::string, NpyArray> out;
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
