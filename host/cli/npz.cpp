#include "npz.h"

#include <zip.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "../io/text_file.h"

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
  io::refuseSpecialFile(path);
  NpzArchive archive(path, path);
  for (std::size_t k = 0; k < members.size(); ++k) archive.add(members[k].name, blobs[k]);
  archive.close();
}

// ---- reading ------------------------------------------------------------------------------------

void NpyArray::fail(const std::string& what) const { throw std::runtime_error(where + ": " + what); }

std::int64_t NpyArray::size() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;  // checked against the bytes when read
  return n;
}

double NpyArray::flat(std::int64_t i) const {
  if (!numeric()) fail("holds " + descr + " values, not numbers");
  if (i < 0 || i >= size()) fail("element " + std::to_string(i) + " is outside its " + std::to_string(size()) + " elements");
  if (descr == "<f8") {
    double x;
    std::memcpy(&x, bytes.data() + 8 * i, 8);
    return x;
  }
  std::int32_t x;
  std::memcpy(&x, bytes.data() + 4 * i, 4);
  return x;
}

double NpyArray::at(std::int64_t f, std::int64_t w, std::int64_t c) const {
  if (f < 0 || f >= frames() || w < 0 || w >= worlds() || c < 0 || c >= width())
    fail("no element [frame " + std::to_string(f) + ", world " + std::to_string(w) + ", component " + std::to_string(c) +
         "]: it has " + std::to_string(frames()) + " frames, " + std::to_string(worlds()) + " worlds and " +
         std::to_string(width()) + " components");
  return flat((f * worlds() + w) * width() + c);
}

std::vector<std::string> NpyArray::strings() const {
  if (!text()) fail("holds " + descr + " values, not strings");
  const std::size_t n = std::stoul(descr.substr(2));  // >= 1, checked when read
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

// The largest string width read ("<U<n>"): names are short; this keeps n * 4 far from overflow.
constexpr std::uint64_t kMaxStringWidth = 1 << 20;

// A header value for messages: at most 40 characters, control characters as '?'.
std::string shown(const std::string& s) {
  std::string out = s.substr(0, 40);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) >= 127) c = '?';
  return "'" + out + (s.size() > 40 ? "...'" : "'");
}

// The value of 'key' in a .npy header dict, up to the next ',' outside parentheses.
std::string headerValue(const std::string& dict, const std::string& key, const std::string& where) {
  const std::size_t k = dict.find("'" + key + "':");
  if (k == std::string::npos) throw std::runtime_error(where + ": its .npy header has no '" + key + "'");
  std::size_t i = k + key.size() + 3, j = i;
  int depth = 0;
  for (; j < dict.size(); ++j) {
    if (dict[j] == '(') ++depth;
    if (dict[j] == ')') --depth;
    if ((dict[j] == ',' && depth == 0) || dict[j] == '}') break;
  }
  std::string v = dict.substr(i, j - i);
  const std::size_t first = v.find_first_not_of(" '\"");
  v.erase(0, first == std::string::npos ? v.size() : first);
  v.erase(v.find_last_not_of(" '\"") + 1);
  return v;
}

// "(3, 4)", "(5,)" or "()": whole numbers >= 0, each and their product below 2^62.
std::vector<std::int64_t> parseShape(const std::string& text, const std::string& where) {
  const auto bad = [&](const std::string& why) -> std::runtime_error {
    return std::runtime_error(where + ": shape " + shown(text) + ": " + why);
  };
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') throw bad("not a tuple of whole numbers");
  std::vector<std::int64_t> shape;
  std::int64_t product = 1;
  constexpr std::int64_t kLimit = std::int64_t(1) << 62;
  std::size_t i = 1;
  const std::size_t end = text.size() - 1;
  while (true) {
    while (i < end && text[i] == ' ') ++i;
    if (i == end) break;
    if (text[i] == '-') throw bad("dimension " + std::to_string(shape.size()) + " is negative");
    if (text[i] < '0' || text[i] > '9') throw bad("dimension " + std::to_string(shape.size()) + " is not a whole number");
    std::int64_t d = 0;
    for (; i < end && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (d >= kLimit / 10) throw bad("dimension " + std::to_string(shape.size()) + " is too large");
      d = d * 10 + (text[i] - '0');
    }
    while (i < end && text[i] == ' ') ++i;
    if (i < end && text[i] != ',') throw bad("dimension " + std::to_string(shape.size()) + " is not a whole number");
    if (i < end) ++i;
    if (shape.size() == 32) throw bad("more than 32 dimensions");
    shape.push_back(d);
    if (d != 0 && product > kLimit / d) throw bad("its elements are too many to count");
    product = d == 0 ? 0 : product * d;
  }
  return shape;
}

}  // namespace

NpyArray parseNpy(const std::string& raw, const std::string& where) {
  if (raw.size() < 10 || raw.compare(0, 6, "\x93NUMPY") != 0)
    throw std::runtime_error(where + ": not a .npy array (no \\x93NUMPY magic)");
  const int version = static_cast<unsigned char>(raw[6]);
  if (version < 1 || version > 3)
    throw std::runtime_error(where + ": .npy format version " + std::to_string(version) + " (1, 2 and 3 are read)");
  const std::size_t lengthBytes = version == 1 ? 2 : 4;
  if (raw.size() < 8 + lengthBytes) throw std::runtime_error(where + ": its .npy header is cut short");
  std::size_t headerLength = 0;
  for (std::size_t k = 0; k < lengthBytes; ++k) headerLength |= std::size_t(static_cast<unsigned char>(raw[8 + k])) << (8 * k);
  const std::size_t start = 8 + lengthBytes;
  if (headerLength > raw.size() - start)
    throw std::runtime_error(where + ": its .npy header says " + std::to_string(headerLength) + " bytes, and the member has " +
                             std::to_string(raw.size() - start) + " after it");
  const std::string dict = raw.substr(start, headerLength);
  NpyArray a;
  a.where = where;
  a.descr = headerValue(dict, "descr", where);
  if (headerValue(dict, "fortran_order", where) != "False")
    throw std::runtime_error(where + ": Fortran order (only C-order arrays are read)");
  a.shape = parseShape(headerValue(dict, "shape", where), where);
  std::uint64_t item = 0;
  if (a.descr == "<f8") item = 8;
  else if (a.descr == "<i4") item = 4;
  else if (a.text() && a.descr.size() > 2 && a.descr.size() <= 9 &&
           a.descr.find_first_not_of("0123456789", 2) == std::string::npos) {
    const std::uint64_t n = std::stoull(a.descr.substr(2));
    if (n < 1 || n > kMaxStringWidth)
      throw std::runtime_error(where + ": strings of width " + std::to_string(n) + " (1 to " +
                               std::to_string(kMaxStringWidth) + " are read)");
    item = 4 * n;
  }
  if (item == 0)
    throw std::runtime_error(where + ": element type " + shown(a.descr) + " (doubles <f8, int32 <i4 and strings <U are read)");
  const std::uint64_t data = raw.size() - start - headerLength;
  const std::uint64_t count = static_cast<std::uint64_t>(a.size());
  if (count > data / item || count * item != data)
    throw std::runtime_error(where + ": its shape " + shown(headerValue(dict, "shape", where)) + " of " + a.descr +
                             " needs " + (count > UINT64_MAX / item ? "more than 2^64" : std::to_string(count * item)) +
                             " bytes of data, and it holds " + std::to_string(data));
  a.bytes = raw.substr(start + headerLength);
  return a;
}

std::map<std::string, NpyArray> readNpz(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw std::runtime_error(path + ": cannot open the file (it does not exist)");
  if (!std::filesystem::is_regular_file(status)) throw std::runtime_error(path + ": cannot open the file (not a regular file)");
  int error = 0;
  std::unique_ptr<zip_t, int (*)(zip_t*)> archive(zip_open(path.c_str(), ZIP_RDONLY, &error), zip_close);
  if (!archive) throw std::runtime_error(path + ": cannot open as a .npz archive: " + zipErrorText(error));
  // What the members unpack to, at most the input limit in all: a small archive must not claim
  // (or inflate to) gigabytes.
  const std::uint64_t limit = io::maxInputFileBytes();
  std::uint64_t total = 0;
  std::map<std::string, NpyArray> out;
  const zip_int64_t n = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
        !(st.valid & ZIP_STAT_SIZE))
      throw std::runtime_error(path + ": archive entry " + std::to_string(i) + " cannot be read: " + zip_strerror(archive.get()));
    std::string name = st.name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;
    const std::string where = path + ": " + name;
    if (st.size > limit - std::min(limit, total))
      throw std::runtime_error(where + ": " + std::to_string(st.size) + " bytes" +
                               (total ? " (after " + std::to_string(total) + " in the members before it)" : "") +
                               ", over the limit of " + std::to_string(limit >> 20) +
                               " MiB for input files (set LOCKSTEP_MAX_INPUT_MB to a larger number of MiB to read it)");
    total += st.size;
    // What the entry's header claims, against what the archive holds: a stored member is its
    // compressed bytes, and deflate inflates at most 1032 to 1 (a few hundred bytes claiming
    // gigabytes are refused before anything is allocated).
    const std::uint64_t fileBytes = std::filesystem::file_size(path, ec);
    if ((st.valid & ZIP_STAT_COMP_SIZE) && !ec) {
      const bool stored = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE;
      if (st.comp_size > fileBytes || (stored && st.size != st.comp_size) || st.size / 1032 > st.comp_size + 64)
        throw std::runtime_error(where + ": its entry claims " + std::to_string(st.size) + " bytes from " +
                                 std::to_string(st.comp_size) + (stored ? " stored" : " compressed") +
                                 " bytes in an archive of " + std::to_string(fileBytes) + ": the archive is damaged");
    }
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0),
                                                          zip_fclose);
    if (!file) throw std::runtime_error(where + ": cannot read it: " + zip_strerror(archive.get()));
    std::string raw(st.size, '\0');
    const zip_int64_t got = zip_fread(file.get(), raw.data(), st.size);
    if (got != static_cast<zip_int64_t>(st.size))
      throw std::runtime_error(where + ": cannot read it: " +
                               (got < 0 ? std::string(zip_file_strerror(file.get())) : "the archive is cut short"));
    name.resize(name.size() - 4);
    if (out.count(name)) throw std::runtime_error(where + ": the archive holds it twice");
    out[name] = parseNpy(raw, where);
  }
  return out;
}

}  // namespace lockstep::cli
