// MJCF files read, checked against MjcfLimits and compiled by MuJoCo (mjcf_compile.h).
#include "mjcf_compile.h"

#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>

#include "lockstep/io/input_error.h"
#include "message_text.h"
#include "text_file.h"

namespace lockstep::io {

namespace {

// The elements of an MJCF file, tag by tag: enough of XML to count elements and read a few
// attributes (comments, declarations and CDATA skipped). What is not well-formed ends the scan;
// MuJoCo's parser then says what is wrong.
class MjcfScan {
 public:
  MjcfScan(const std::string& mainPath) : folder_(folderOf(mainPath)) {}

  void file(const std::string& path, const std::string& text, int depth) {
    for (std::size_t i = 0; (i = text.find('<', i)) != std::string::npos;) {
      if (text.compare(i, 4, "<!--") == 0) i = skipPast(text, i, "-->");
      else if (text.compare(i, 9, "<![CDATA[") == 0) i = skipPast(text, i, "]]>");
      else if (text.compare(i, 2, "<?") == 0) i = skipPast(text, i, "?>");
      else if (text.compare(i, 2, "<!") == 0 || text.compare(i, 2, "</") == 0) i = skipPast(text, i, ">");
      else i = element(path, text, i + 1, depth);
    }
  }

 private:
  static std::string folderOf(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  }
  static std::size_t skipPast(const std::string& text, std::size_t i, const char* end) {
    const std::size_t k = text.find(end, i);
    return k == std::string::npos ? std::string::npos : k + std::string(end).size();
  }
  static bool nameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == ':' || c == '.';
  }

  // Reads the tag whose name starts at i; returns where scanning goes on (npos: stop).
  std::size_t element(const std::string& path, const std::string& text, std::size_t i, int depth) {
    std::size_t j = i;
    while (j < text.size() && nameChar(text[j])) ++j;
    if (j == i) return j;
    const std::string name = text.substr(i, j - i);
    std::map<std::string, std::string> attributes;
    while (j < text.size() && text[j] != '>') {
      if (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r' || text[j] == '/') {
        ++j;
        continue;
      }
      std::size_t k = j;
      while (k < text.size() && nameChar(text[k])) ++k;
      if (k == j) return std::string::npos;
      const std::string key = text.substr(j, k - j);
      while (k < text.size() && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r')) ++k;
      if (k >= text.size() || text[k] != '=') return std::string::npos;
      ++k;
      while (k < text.size() && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r')) ++k;
      if (k >= text.size() || (text[k] != '"' && text[k] != '\'')) return std::string::npos;
      const std::size_t end = text.find(text[k], k + 1);
      if (end == std::string::npos) return std::string::npos;
      attributes[key] = text.substr(k + 1, end - k - 1);
      j = end + 1;
    }
    check(path, name, attributes, depth);
    return j;
  }

  [[noreturn]] static void fail(const std::string& path, const std::string& what) { throw InputError(path + ": " + what); }

  // The attribute as a whole number (0 when absent); refused when it is not one.
  static std::int64_t number(const std::string& path, const std::string& element,
                             const std::map<std::string, std::string>& attributes, const std::string& key) {
    auto it = attributes.find(key);
    if (it == attributes.end()) return 0;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(it->second.c_str(), &end, 10);
    while (end && (*end == ' ' || *end == '\t' || *end == '\n')) ++end;
    if (errno == ERANGE || !end || *end != '\0' || end == it->second.c_str())
      fail(path, "<" + element + "> " + key + ": " + inQuotes(it->second.substr(0, 40)) + " is not a whole number");
    return v;
  }

  void limit(const std::string& path, const std::string& what, std::int64_t value, std::int64_t most,
             const std::string& advice = "") const {
    if (value > most)
      fail(path, what + ": " + std::to_string(value) + ", over the limit of " + std::to_string(most) +
                     " that Lockstep reads (MuJoCo's compiler takes time growing with their square, or memory growing "
                     "with their number)" + advice);
  }

  void check(const std::string& path, const std::string& name, const std::map<std::string, std::string>& a, int depth) {
    ++elements_;
    limit(path, "elements in the model", elements_, MjcfLimits::kElements);
    std::int64_t& count = counts_[name == "freejoint" ? "joint" : name];
    ++count;
    limit(path, "<" + name + "> elements", count, MjcfLimits::kElementsOfOneKind);
    if (name == "composite") {  // count="a b c": a x b x c bodies
      std::int64_t bodies = 1;
      std::size_t at = 0;
      const std::string text = a.count("count") ? a.at("count") : "";
      for (int k = 0; k < 3; ++k) {
        char* end = nullptr;
        const long long n = std::strtoll(text.c_str() + at, &end, 10);
        if (end == text.c_str() + at) break;
        at = static_cast<std::size_t>(end - text.c_str());
        if (n > 0) bodies = std::min<std::int64_t>(bodies * std::min<long long>(n, MjcfLimits::kElements), MjcfLimits::kElements + 1);
      }
      counts_["body"] += bodies;
      limit(path, "<body> elements (with those of <composite> count=\"" + text + "\")", counts_["body"],
            MjcfLimits::kElementsOfOneKind);
    } else if (name == "size") {
      for (const char* key : {"nuser_body", "nuser_jnt", "nuser_geom", "nuser_site", "nuser_cam", "nuser_tendon",
                              "nuser_actuator", "nuser_sensor"})
        limit(path, "<size> " + std::string(key), number(path, name, a, key), MjcfLimits::kUserValues);
      limit(path, "<size> nkey", number(path, name, a, "nkey"), MjcfLimits::kKeyframes);
      limit(path, "<size> nuserdata", number(path, name, a, "nuserdata"), MjcfLimits::kHeightFieldPoints);
    } else if (name == "hfield") {
      const std::int64_t rows = number(path, name, a, "nrow"), columns = number(path, name, a, "ncol");
      limit(path, "<hfield" + (a.count("name") ? " " + inQuotes(a.at("name")) : std::string()) + "> nrow x ncol",
            rows > 0 && columns > 0 ? std::min(rows, MjcfLimits::kHeightFieldPoints + 1) *
                                          std::min(columns, MjcfLimits::kHeightFieldPoints + 1)
                                    : 0,
            MjcfLimits::kHeightFieldPoints);
    } else if (name == "texture") {
      const std::int64_t w = number(path, name, a, "width"), h = number(path, name, a, "height");
      const std::int64_t faces = a.count("type") && a.at("type") != "2d" ? 6 : 1;
      limit(path, "<texture" + (a.count("name") ? " " + inQuotes(a.at("name")) : std::string()) + "> width x height",
            w > 0 && h > 0 ? faces * std::min(w, MjcfLimits::kTexturePixels + 1) * std::min(h, MjcfLimits::kTexturePixels + 1) : 0,
            MjcfLimits::kTexturePixels);
    } else if (name == "include" && a.count("file")) {
      if (depth >= MjcfLimits::kIncludeDepth)
        fail(path, "<include file=" + inQuotes(a.at("file")) + ">: includes nested more than " +
                       std::to_string(MjcfLimits::kIncludeDepth) + " deep");
      const std::string& file = a.at("file");
      const std::string included = !file.empty() && file[0] == '/' ? file : folder_ + "/" + file;
      const std::string text = readTextFile(included);  // a regular file within the size limit
      bytes_ += text.size();
      if (bytes_ > maxInputFileBytes())
        fail(included, "the model's files are together over the limit of " + std::to_string(maxInputFileBytes() >> 20) +
                           " MiB for input files (set LOCKSTEP_MAX_INPUT_MB to a larger number of MiB to read it)");
      this->file(included, text, depth + 1);
    }
  }

  std::string folder_;
  std::map<std::string, std::int64_t> counts_;
  std::int64_t elements_ = 0;
  std::uint64_t bytes_ = 0;
};

// MuJoCo's compiler reports through its global warning handler (and, for internal errors, its error
// handler, which would end the process): both are routed into exceptions and a list while one
// thread compiles.
std::mutex gCompileMutex;
thread_local std::vector<std::string>* gCompileWarnings = nullptr;
void collectWarning(const char* text) {
  if (gCompileWarnings) gCompileWarnings->push_back(text);
}
void throwError(const char* text) { throw InputError(std::string("MuJoCo: ") + text); }

}  // namespace

MjModelPtr compileMjcf(const std::string& path, std::vector<std::string>* warnings) {
  // A regular file (a FIFO would block MuJoCo's reader) within the size limit; its includes too.
  const std::string text = readTextFile(path);
  MjcfScan(path).file(path, text, 0);
  std::lock_guard<std::mutex> lock(gCompileMutex);
  gCompileWarnings = warnings;
  void (*previousWarning)(const char*) = mju_user_warning;
  void (*previousError)(const char*) = mju_user_error;
  mju_user_warning = collectWarning;
  mju_user_error = throwError;
  char error[1024] = "";
  mjModel* m = nullptr;
  try {
    m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  } catch (const InputError& e) {
    mju_user_warning = previousWarning;
    mju_user_error = previousError;
    gCompileWarnings = nullptr;
    throw InputError(path + ": " + e.what());  // "MuJoCo: Could not allocate memory", named
  } catch (...) {
    mju_user_warning = previousWarning;
    mju_user_error = previousError;
    gCompileWarnings = nullptr;
    throw;
  }
  mju_user_warning = previousWarning;
  mju_user_error = previousError;
  gCompileWarnings = nullptr;
  if (!m) throw InputError(path + ": MuJoCo's compiler: " + (error[0] ? std::string(error) : "failed"));
  if (error[0]) warnings->push_back(std::string("MuJoCo's compiler: ") + error);
  return MjModelPtr(m);
}

}  // namespace lockstep::io
