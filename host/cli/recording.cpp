#include "recording.h"

#include <zip.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace lockstep::cli {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the .npy headers below declare little-endian data");

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- CSV: one row per world per frame ------------------------------------------------------------

// A CSV field, quoted when it holds a separator, a quote or a line break (RFC 4180).
std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

class CsvRecording : public Recording {
 public:
  CsvRecording(const std::string& path, const Model& model, std::int64_t worlds, int frames)
      : path_(path), out_(path, std::ios::binary), worlds_(worlds), frames_(frames),
        nq_(model.nq()), nu_(model.nu()), nz_(model.nz()) {
    if (!out_) throw std::runtime_error(path + ": cannot open for writing");
    out_ << "frame,world,time";
    for (const std::string& n : model.qNames()) out_ << ',' << csvField("q:" + n);
    for (const std::string& n : model.uNames()) out_ << ',' << csvField("u:" + n);
    for (const std::string& n : model.uNames()) out_ << ',' << csvField("udot:" + n);
    out_ << ",kinetic_energy,potential_energy";
    for (const std::string& n : model.zNames()) out_ << ',' << csvField("z:" + n);
    out_ << ",status\n";
  }

  void write(const Frame& f) override {
    std::string row;
    for (std::int64_t w = 0; w < worlds_; ++w) {
      row.clear();
      row += std::to_string(written_) + ',' + std::to_string(w);
      append(row, f.time[w]);
      for (int i = 0; i < nq_; ++i) append(row, f.q[w * nq_ + i]);
      for (int i = 0; i < nu_; ++i) append(row, f.u[w * nu_ + i]);
      for (int i = 0; i < nu_; ++i) append(row, f.udot[w * nu_ + i]);
      append(row, f.kinetic[w]);
      append(row, f.potential[w]);
      for (int i = 0; i < nz_; ++i) append(row, f.z[w * nz_ + i]);
      row += ',' + std::to_string(f.status[w]) + '\n';
      out_ << row;
    }
    ++written_;
  }

  void finish() override {
    if (written_ != frames_) throw std::logic_error(path_ + ": wrote " + std::to_string(written_) + " frames of " + std::to_string(frames_));
    out_.close();
    if (!out_) throw std::runtime_error(path_ + ": write failed");
  }

 private:
  // The shortest decimal that reads back to the same double.
  static void append(std::string& row, double x) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), x);
    row += ',';
    row.append(buf, r.ptr);
  }

  std::string path_;
  std::ofstream out_;
  std::int64_t worlds_;
  int frames_, written_ = 0;
  int nq_, nu_, nz_;
};

// ---- NPZ: one .npy array per quantity, in a stored (uncompressed) zip ---------------------------

// The .npy version 1.0 header for a C-order array (NumPy's format.rst): magic, version, header
// length, then a dict padded with spaces and ended by '\n' so that the data starts 64-aligned.
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

// A temporary file holding one .npy array while the frames arrive.
struct NpyStream {
  std::string name;  // member name in the archive, without ".npy"
  std::FILE* file = nullptr;
  std::uint64_t bytes = 0;

  void put(const void* data, std::size_t n) {
    if (n && std::fwrite(data, 1, n, file) != n) throw std::runtime_error("writing a temporary file failed");
    bytes += n;
  }
};

class NpzRecording : public Recording {
 public:
  NpzRecording(const std::string& path, const Model& model, std::int64_t worlds, int frames)
      : path_(path), frames_(frames) {
    // Fail early, before the simulation runs, if the archive cannot be created.
    { std::ofstream probe(path, std::ios::binary);
      if (!probe) throw std::runtime_error(path + ": cannot open for writing"); }
    const std::int64_t F = frames, W = worlds;
    add("time", "<f8", {F, W});
    add("q", "<f8", {F, W, model.nq()});
    add("u", "<f8", {F, W, model.nu()});
    add("udot", "<f8", {F, W, model.nu()});
    add("kinetic_energy", "<f8", {F, W});
    add("potential_energy", "<f8", {F, W});
    add("z", "<f8", {F, W, model.nz()});
    add("status", "<i4", {F, W});
    addNames("q_names", model.qNames());
    addNames("u_names", model.uNames());
    addNames("z_names", model.zNames());
  }

  ~NpzRecording() override {
    for (NpyStream& s : streams_)
      if (s.file) std::fclose(s.file);
  }

  void write(const Frame& f) override {
    putDoubles(streams_[0], f.time);
    putDoubles(streams_[1], f.q);
    putDoubles(streams_[2], f.u);
    putDoubles(streams_[3], f.udot);
    putDoubles(streams_[4], f.kinetic);
    putDoubles(streams_[5], f.potential);
    putDoubles(streams_[6], f.z);
    streams_[7].put(f.status.data(), f.status.size() * sizeof(std::int32_t));
    ++written_;
  }

  void finish() override {
    if (written_ != frames_) throw std::logic_error(path_ + ": wrote " + std::to_string(written_) + " frames of " + std::to_string(frames_));
    int error = 0;
    zip_t* archive = zip_open(path_.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    if (!archive) {
      zip_error_t e;
      zip_error_init_with_code(&e, error);
      const std::string what = zip_error_strerror(&e);
      zip_error_fini(&e);
      throw std::runtime_error(path_ + ": cannot create the archive: " + what);
    }
    for (NpyStream& s : streams_) {
      if (std::fflush(s.file) != 0 || std::fseek(s.file, 0, SEEK_SET) != 0)
        fail(archive, "writing a temporary file failed");
      // The source owns the FILE from here on and closes it.
      zip_source_t* source = zip_source_filep(archive, s.file, 0, static_cast<zip_int64_t>(s.bytes));
      if (!source) fail(archive, zip_strerror(archive));
      s.file = nullptr;
      const zip_int64_t index = zip_file_add(archive, (s.name + ".npy").c_str(), source, ZIP_FL_OVERWRITE);
      if (index < 0) {
        zip_source_free(source);
        fail(archive, zip_strerror(archive));
      }
      if (zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0)
        fail(archive, zip_strerror(archive));
      // A fixed entry time (the earliest a zip can say: 1980-01-01 00:00), not the time of the run:
      // identical runs write identical bytes.
      if (zip_file_set_dostime(archive, static_cast<zip_uint64_t>(index), kDosTime, kDosDate, 0) != 0)
        fail(archive, zip_strerror(archive));
    }
    if (zip_close(archive) != 0) fail(archive, zip_strerror(archive));
  }

 private:
  static constexpr zip_uint16_t kDosTime = 0;                            // 00:00:00
  static constexpr zip_uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980 + 0, January, 1st
  [[noreturn]] void fail(zip_t* archive, const std::string& what) {
    const std::string message = path_ + ": " + what;
    zip_discard(archive);
    throw std::runtime_error(message);
  }

  NpyStream& add(const std::string& name, const std::string& descr, const std::vector<std::int64_t>& shape) {
    NpyStream s;
    s.name = name;
    s.file = std::tmpfile();
    if (!s.file) throw std::runtime_error(path_ + ": cannot create a temporary file");
    streams_.push_back(s);
    const std::string header = npyHeader(descr, shape);
    streams_.back().put(header.data(), header.size());
    return streams_.back();
  }

  void addNames(const std::string& name, const std::vector<std::string>& names) {
    std::vector<std::u32string> decoded;
    std::size_t width = 1;
    for (const std::string& n : names) {
      decoded.push_back(decodeUtf8(n));
      width = std::max(width, decoded.back().size());
    }
    NpyStream& s = add(name, "<U" + std::to_string(width), {static_cast<std::int64_t>(names.size())});
    for (std::u32string d : decoded) {
      d.resize(width, U'\0');
      s.put(d.data(), width * sizeof(char32_t));
    }
  }

  static void putDoubles(NpyStream& s, const std::vector<double>& v) { s.put(v.data(), v.size() * sizeof(double)); }

  std::string path_;
  int frames_, written_ = 0;
  std::vector<NpyStream> streams_;
};

}  // namespace

bool isRecordingPath(const std::string& path) { return endsWith(path, ".csv") || endsWith(path, ".npz"); }

std::unique_ptr<Recording> Recording::open(const std::string& path, const Model& model, std::int64_t worlds,
                                           int frames) {
  if (endsWith(path, ".csv")) return std::make_unique<CsvRecording>(path, model, worlds, frames);
  if (endsWith(path, ".npz")) return std::make_unique<NpzRecording>(path, model, worlds, frames);
  throw std::runtime_error(path + ": unknown output format; name the file *.csv or *.npz");
}

}  // namespace lockstep::cli
