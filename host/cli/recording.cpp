#include "recording.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "../io/text_file.h"
#include "npz.h"
#include "options.h"

namespace lockstep::cli {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the recorded arrays are written as little-endian data");

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string folderOf(const std::string& path) {
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  return folder.empty() ? "." : folder.string();
}

std::string frameWord(int frame, int frames) {
  return "writing frame " + std::to_string(frame + 1) + " of " + std::to_string(frames);
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
  CsvRecording(const std::string& path, const Model& model, const RecordingLayout& layout, std::int64_t worlds,
               int frames)
      : out_(path), layout_(layout), worlds_(worlds), frames_(frames) {
    out_.open();
    std::string header = "frame,world";
    for (const RecordedArray& a : layout_.arrays) {
      widths_.push_back(a.width(model));
      for (const std::string& c : a.columns) header += ',' + csvField(c);
    }
    header += '\n';
    out_.put(header.data(), header.size(), "writing the header");
  }

  void write(const Frame& f) override {
    std::string row;
    for (std::int64_t w = 0; w < worlds_; ++w) {
      row.clear();
      row += std::to_string(written_) + ',' + std::to_string(w);
      for (std::size_t k = 0; k < layout_.arrays.size(); ++k) {
        const std::int64_t n = widths_[k];
        const double* v = f.arrays[k].data() + w * n;
        for (std::int64_t c = 0; c < n; ++c) {
          if (layout_.arrays[k].integer) row += ',' + std::to_string(static_cast<std::int32_t>(v[c]));
          else append(row, v[c]);
        }
      }
      row += '\n';
      out_.put(row.data(), row.size(), frameWord(written_, frames_).c_str());
    }
    ++written_;
  }

  void finish() override {
    if (written_ != frames_)
      throw std::logic_error(out_.partial() + ": wrote " + std::to_string(written_) + " frames of " + std::to_string(frames_));
    out_.commit();
  }

 private:
  // The shortest decimal that reads back to the same double.
  static void append(std::string& row, double x) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), x);
    row += ',';
    row.append(buf, r.ptr);
  }

  io::PartialFile out_;
  RecordingLayout layout_;
  std::vector<std::int64_t> widths_;
  std::int64_t worlds_;
  int frames_, written_ = 0;
};

// ---- NPZ: one .npy array per quantity, in a stored (uncompressed) zip ---------------------------

// A staging file holding one .npy array while the frames arrive: in the output's folder (the file
// system whose free space was checked, checkRecordingFits()), removed from it at once, so that nothing is
// left behind however the program ends.
struct NpyStream {
  std::string name;  // member name in the archive, without ".npy"
  std::FILE* file = nullptr;
  std::uint64_t bytes = 0;

  static std::FILE* create(const std::string& folder) {
    std::string pattern = folder + "/.lockstep-staging-XXXXXX";
    const int fd = mkstemp(pattern.data());
    if (fd < 0) return nullptr;
    unlink(pattern.c_str());
    std::FILE* f = fdopen(fd, "w+b");
    if (!f) close(fd);
    return f;
  }

  void put(const void* data, std::size_t n, const std::string& path, const std::string& during) {
    if (n && std::fwrite(data, 1, n, file) != n)
      throw std::runtime_error(path + ": " + during + " failed staging '" + name + "' in " + folderOf(path) + ": " +
                               std::strerror(errno ? errno : EIO) + " (nothing is left behind)");
    bytes += n;
  }
};

class NpzRecording : public Recording {
 public:
  NpzRecording(const std::string& path, const Model& model, const RecordingLayout& layout, std::int64_t worlds,
               int frames)
      : path_(path), out_(path), layout_(layout), frames_(frames) {
    // Fail early, before the simulation runs, if the archive cannot be created.
    out_.create();
    const std::int64_t F = frames, W = worlds;
    try {
      for (const RecordedArray& a : layout_.arrays) {
        std::vector<std::int64_t> shape = {F, W};
        if (a.componentAxis) shape.push_back(a.width(model));
        add(a.name, a.integer ? "<i4" : "<f8", shape);
      }
      for (const RecordedArray& a : layout_.arrays)
        if (!a.namesMember.empty()) addNames(a.namesMember, a.names);
    } catch (...) {
      closeStreams();  // no destructor runs for a constructor that throws
      throw;
    }
  }

  ~NpzRecording() override { closeStreams(); }

  void write(const Frame& f) override {
    for (std::size_t k = 0; k < layout_.arrays.size(); ++k) {
      const std::vector<double>& v = f.arrays[k];
      const std::string during = frameWord(written_, frames_);
      if (!layout_.arrays[k].integer) {
        streams_[k].put(v.data(), v.size() * sizeof(double), path_, during);
        continue;
      }
      std::vector<std::int32_t> ints(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) ints[i] = static_cast<std::int32_t>(v[i]);
      streams_[k].put(ints.data(), ints.size() * sizeof(std::int32_t), path_, during);
    }
    ++written_;
  }

  void finish() override {
    if (written_ != frames_) throw std::logic_error(path_ + ": wrote " + std::to_string(written_) + " frames of " + std::to_string(frames_));
    writeArchive();
    out_.commit();
  }

 private:
  // The staged arrays as a stored archive at PATH.partial.
  void writeArchive() {
    NpzArchive archive(path_, out_.partial());
    for (NpyStream& s : streams_) {
      if (std::fflush(s.file) != 0 || std::fseek(s.file, 0, SEEK_SET) != 0)
        archive.fail("staging '" + s.name + "' failed: " + std::strerror(errno ? errno : EIO));
      std::FILE* file = s.file;  // the archive's from here on
      s.file = nullptr;
      archive.add(s.name, file, s.bytes);
    }
    archive.close();
  }

  void closeStreams() {
    for (NpyStream& s : streams_)
      if (s.file) std::fclose(s.file);
    streams_.clear();
  }

  NpyStream& add(const std::string& name, const std::string& descr, const std::vector<std::int64_t>& shape) {
    NpyStream s;
    s.name = name;
    s.file = NpyStream::create(folderOf(path_));
    if (!s.file)
      throw std::runtime_error(path_ + ": cannot create a staging file in " + folderOf(path_) + ": " + std::strerror(errno));
    streams_.push_back(s);
    const std::string header = npyHeader(descr, shape);
    streams_.back().put(header.data(), header.size(), path_, "writing the header");
    return streams_.back();
  }

  void addNames(const std::string& name, const std::vector<std::string>& names) {
    const NpyStrings strings = npyStrings(names);
    NpyStream& s = add(name, strings.descr, {static_cast<std::int64_t>(names.size())});
    s.put(strings.data.data(), strings.data.size(), path_, "writing the names");
  }

  std::string path_;
  io::PartialFile out_;
  RecordingLayout layout_;
  int frames_, written_ = 0;
  std::vector<NpyStream> streams_;
};

}  // namespace

// ---- what is recorded ----------------------------------------------------------------------------

namespace {

const Quantity& quantity(const char* name) {
  const Quantity* q = findQuantity(name);
  if (!q) throw std::logic_error(std::string("no recordable quantity '") + name + "'");
  return *q;
}

// One component of a per-world quantity as an array of shape [frames, worlds].
RecordedArray scalarArray(const char* quantityName, int part, const std::string& name, bool integer = false) {
  RecordedArray a;
  a.quantity = &quantity(quantityName);
  a.part = part;
  a.name = name;
  a.columns = {name};
  a.componentAxis = false;
  a.integer = integer;
  return a;
}

// A quantity with the earlier versions' column names "NAME:element" (and NAMES_names when given).
RecordedArray namedArray(const char* name, const std::vector<std::string>& elements, bool namesMember) {
  RecordedArray a;
  a.quantity = &quantity(name);
  a.name = name;
  for (const std::string& e : elements) a.columns.push_back(a.name + ":" + e);
  if (namesMember) {
    a.namesMember = a.name + "_names";
    a.names = elements;
  }
  return a;
}

}  // namespace

RecordingLayout defaultLayout(const Model& m) {
  RecordingLayout l;
  l.arrays = {scalarArray("time", -1, "time"),
              namedArray("q", m.qNames(), true),
              namedArray("u", m.uNames(), true),
              namedArray("udot", m.uNames(), false),
              scalarArray("energy", 0, "kinetic_energy"),
              scalarArray("energy", 1, "potential_energy"),
              namedArray("z", m.zNames(), true),
              scalarArray("status", -1, "status", true)};
  return l;
}

std::vector<std::string> splitRecordList(const std::string& list, const std::string& where) {
  if (list.find_first_not_of(' ') == std::string::npos)
    throw std::runtime_error(where + ": names no quantity; give names separated by commas (leave " + where +
                             " out for the default set)");
  std::vector<std::string> names;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(std::min(name.size(), name.find_last_not_of(' ') + 1));
    if (name.empty())
      throw std::runtime_error(where + ": empty quantity name in '" + list + "' (give names separated by commas)");
    names.push_back(name);
    if (comma == list.size()) break;
    start = comma + 1;
  }
  return names;
}

RecordingLayout recordLayout(const Model& m, const std::vector<std::string>& names, const std::string& where) {
  RecordingLayout l;
  l.arrays.push_back(scalarArray("time", -1, "time"));
  std::vector<const Quantity*> chosen;
  auto choose = [&](const Quantity* q) {
    if (q->name() != "time" && std::find(chosen.begin(), chosen.end(), q) == chosen.end()) chosen.push_back(q);
  };
  for (const std::string& name : names) {
    if (name == "all") {
      for (const Quantity& q : recordableQuantities()) choose(&q);
    } else if (const Quantity* q = findQuantity(name)) {
      if (q->count(m) == 0)
        throw std::runtime_error(where + ": '" + name + "' has nothing to record: the model has no " +
                                 elementsWord(q->info.per) + " (`lockstep info SCENE` lists what it has)");
      choose(q);
    } else {
      throw std::runtime_error(where + ": no recordable quantity named '" + name + "'; the names are " +
                               quantityNames() + " and all (`lockstep info SCENE` lists them with their columns)");
    }
  }
  for (const Quantity* q : chosen) {
    RecordedArray a;
    a.quantity = q;
    a.name = q->name();
    a.columns = publicNames(m, q->info);
    a.namesMember = a.name + "_names";
    a.names = a.columns;
    a.integer = q->info.integer;
    l.arrays.push_back(std::move(a));
  }
  return l;
}

template <class T>
Frame readFrame(Batch<T>& batch, const RecordingLayout& layout) {
  // Each quantity sampled once, then cut into the layout's arrays.
  std::vector<const Quantity*> quantities;
  std::vector<std::size_t> source;
  for (const RecordedArray& a : layout.arrays) {
    auto it = std::find(quantities.begin(), quantities.end(), a.quantity);
    source.push_back(static_cast<std::size_t>(it - quantities.begin()));
    if (it == quantities.end()) quantities.push_back(a.quantity);
  }
  std::vector<std::vector<double>> values;
  sampleQuantities(batch, quantities, values);
  const std::int64_t W = batch.numWorlds();
  Frame f;
  for (std::size_t k = 0; k < layout.arrays.size(); ++k) {
    const RecordedArray& a = layout.arrays[k];
    const std::vector<double>& v = values[source[k]];
    if (a.part < 0) {
      f.arrays.push_back(v);
      continue;
    }
    const std::int64_t n = a.quantity->count(batch.model());
    std::vector<double> part(static_cast<std::size_t>(W));
    for (std::int64_t w = 0; w < W; ++w) part[w] = v[w * n + a.part];
    f.arrays.push_back(std::move(part));
  }
  return f;
}

template Frame readFrame<float>(Batch<float>&, const RecordingLayout&);
template Frame readFrame<double>(Batch<double>&, const RecordingLayout&);

// ---- files --------------------------------------------------------------------------------------

bool isRecordingPath(const std::string& path) { return endsWith(path, ".csv") || endsWith(path, ".npz"); }

RecordingSize recordingSize(const std::string& path, const Model& model, const RecordingLayout& layout,
                            std::int64_t worlds, int frames) {
  // In doubles: a recording too large for any disk must still be counted without overflow.
  const double W = double(worlds), F = double(frames);
  RecordingSize size;
  for (const RecordedArray& a : layout.arrays) size.values += F * W * double(a.width(model));
  if (endsWith(path, ".csv")) {
    // A CSV row per world per frame: the frame and world numbers, then each value with its comma,
    // a double at the 22 characters of a typical shortest round-trip form ("-0.12345678901234567",
    // "1.2345678901234567e-05"), an int32 at 11 at most.
    double perRow = 2 + std::to_string(frames).size() + std::to_string(worlds).size();
    for (const RecordedArray& a : layout.arrays) perRow += double(a.width(model)) * (a.integer ? 12 : 23);
    size.bytes = F * W * perRow;
    size.peakBytes = size.bytes;
    return size;
  }
  // An .npz: each array's .npy header and data, and about 200 bytes of zip headers per member.
  // The names member, where there is one, is <U{longest}: every name padded to the longest, 4
  // bytes a character (counted here at a character per UTF-8 byte: never fewer).
  for (const RecordedArray& a : layout.arrays) {
    size.bytes += F * W * double(a.width(model)) * (a.integer ? 4 : 8) + 128 + 200;
    if (a.namesMember.empty()) continue;
    std::size_t longest = 1;
    for (const std::string& n : a.names) longest = std::max(longest, n.size());
    size.bytes += 4.0 * double(a.names.size()) * double(longest) + 128 + 200;
  }
  // The arrays are staged beside the output while the frames arrive, then archived: both at once.
  size.peakBytes = 2 * size.bytes;
  return size;
}

void checkRecordingFits(const std::string& option, const std::string& path, const RecordingSize& size) {
  const std::string folder = folderOf(path);
  struct statvfs fs;
  if (statvfs(folder.c_str(), &fs) != 0) return;  // unknown: the first failed write will say
  const double available = double(fs.f_bavail) * double(fs.f_frsize);
  if (size.peakBytes <= available) return;
  char values[32];
  std::snprintf(values, sizeof(values), "%.3g", size.values);
  std::string need = "'" + path + "' needs about " + bytesText(size.bytes) + " (" + values + " values)";
  if (size.peakBytes > size.bytes)
    need += ", and " + bytesText(size.peakBytes) + " while it is written (its arrays are staged beside it, then archived)";
  throw std::runtime_error(option + ": " + need + ", but the file system of '" + folder + "' has " + bytesText(available) +
                           " free; record fewer quantities (--record), fewer frames (--record-every) or fewer worlds");
}

std::unique_ptr<Recording> Recording::open(const std::string& path, const Model& model, const RecordingLayout& layout,
                                           std::int64_t worlds, int frames) {
  if (endsWith(path, ".csv")) return std::make_unique<CsvRecording>(path, model, layout, worlds, frames);
  if (endsWith(path, ".npz")) return std::make_unique<NpzRecording>(path, model, layout, worlds, frames);
  throw std::runtime_error(path + ": unknown output format; name the file *.csv or *.npz");
}

}  // namespace lockstep::cli
