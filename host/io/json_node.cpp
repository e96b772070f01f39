#include "json_node.h"
#include "message_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace lockstep::io {

namespace {

// The shortest text that reads back as x.
std::string formatNumber(double x) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof(buf), x).ptr);
}

std::string values(std::size_t n) { return std::to_string(n) + (n == 1 ? " value" : " values"); }

// "line L, column C" of a byte offset of text.
std::string position(const std::string& text, std::size_t offset) {
  if (offset == std::string::npos) return "an unknown position";
  const std::size_t line = 1 + std::count(text.begin(), text.begin() + offset, '\n');
  const std::size_t lineStart = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
  const std::size_t column = lineStart == std::string::npos ? offset + 1 : offset - lineStart;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// Builds the document from the parser's events (as nlohmann's own DOM builder does) and refuses,
// as soon as it meets them, a key that its object already has and nesting deeper than
// kMaxNestingDepth. Each check costs a lookup in the object being read, so that a document is
// read in O(n log n) for n values (nlohmann 3.11.2's callback parser, used before, rescans the
// enclosing container at the end of every object: quadratic in the number of objects). The JSON
// path of the value being read is only spelled out for a message.
class DocumentBuilder final : public nlohmann::json_sax<nlohmann::json> {
 public:
  using json = nlohmann::json;

  explicit DocumentBuilder(json& root) : root_(root) {}

  bool null() override { return add(nullptr); }
  bool boolean(bool x) override { return add(x); }
  bool number_integer(number_integer_t x) override { return add(x); }
  bool number_unsigned(number_unsigned_t x) override { return add(x); }
  bool number_float(number_float_t x, const string_t&) override { return add(x); }
  bool string(string_t& x) override { return add(std::move(x)); }
  bool binary(binary_t&) override { return stop("binary values are not JSON"); }  // never from JSON text

  bool start_object(std::size_t) override { return open(json::value_t::object); }
  bool start_array(std::size_t) override { return open(json::value_t::array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    Level& level = levels_.back();
    auto [member, inserted] = level.container->get_ref<json::object_t&>().emplace(std::move(k), nullptr);
    if (!inserted) return stop(pathOf(levels_.size() - 1, "top level") + ": duplicate key " + inQuotes(member->first));
    level.key = &member->first;
    level.slot = &member->second;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    syntaxError_ = e.what();
    syntaxErrorId_ = e.id;
    return false;
  }

  // A syntax error as nlohmann words it ("[json.exception.parse_error.101] ...") and its id.
  const std::string& syntaxError() const { return syntaxError_; }
  int syntaxErrorId() const { return syntaxErrorId_; }
  // A problem of ours (a duplicate key, too deep a nesting), in our words with its JSON path.
  const std::string& problem() const { return problem_; }

 private:
  // An array or object being read, and where its current member goes.
  struct Level {
    json* container;
    const std::string* key = nullptr;  // objects: the key of the member being read
    json* slot = nullptr;              // objects: the member being read
  };

  // The JSON path of levels_[depth] ("per_world[3].q"), or `top` for the document itself.
  std::string pathOf(std::size_t depth, const char* top) const {
    std::string path;
    for (std::size_t i = 0; i < depth; ++i) {
      const Level& l = levels_[i];
      if (l.container->is_array()) path += "[" + std::to_string(l.container->size() - 1) + "]";
      else path += (path.empty() ? "" : ".") + *l.key;
    }
    return path.empty() ? top : path;
  }

  // The place of the next value: the root, a new array element, or the slot of the current key.
  json* place() {
    if (levels_.empty()) return &root_;
    Level& level = levels_.back();
    if (level.container->is_array()) {
      level.container->get_ref<json::array_t&>().emplace_back();
      return &level.container->back();
    }
    return level.slot;
  }

  template <class V>
  bool add(V&& value) {
    *place() = json(std::forward<V>(value));
    return true;
  }

  bool open(json::value_t type) {
    if (levels_.size() >= static_cast<std::size_t>(kMaxNestingDepth)) {
      std::string where = pathOf(levels_.size(), "top level");
      if (where.size() > 60) where = where.substr(0, 60) + "...";
      return stop("arrays and objects nested deeper than " + std::to_string(kMaxNestingDepth) +
                  " levels (the limit of input files), at " + where);
    }
    json* value = place();
    *value = json(type);
    levels_.push_back({value});
    return true;
  }

  bool close() {
    levels_.pop_back();
    return true;
  }

  bool stop(std::string problem) {
    problem_ = std::move(problem);
    return false;
  }

  json& root_;
  std::vector<Level> levels_;
  std::string problem_, syntaxError_;
  int syntaxErrorId_ = 0;
};

}  // namespace

nlohmann::json parseDocument(const std::string& text, const std::string& source) {
  nlohmann::json document;
  DocumentBuilder builder(document);
  bool complete = false;
  try {
    complete = nlohmann::json::sax_parse(text, &builder);
  } catch (const nlohmann::json::exception& e) {  // e.g. "excessive array size" (never for JSON text)
    throw InputError(source + ": invalid JSON: " + e.what());
  }
  if (!builder.problem().empty()) throw InputError(source + ": invalid JSON: " + builder.problem());
  if (!complete || !builder.syntaxError().empty()) {
    // "[json.exception.parse_error.101] parse error at line 3, column 5: ..." without the tag.
    std::string what = builder.syntaxError().empty() ? "incomplete document" : builder.syntaxError();
    const std::size_t tagEnd = what.find("] ");
    if (tagEnd != std::string::npos) what = what.substr(tagEnd + 2);
    // Numbers too large for a double ("number overflow parsing '1e999'") come without a position.
    const std::size_t open = what.find("parsing '");
    if (builder.syntaxErrorId() == 406 && open != std::string::npos) {
      const std::string token = what.substr(open + 9, what.find('\'', open + 9) - open - 9);
      what += " at " + position(text, text.find(token)) + " (numbers must be finite doubles)";
    }
    throw InputError(source + ": invalid JSON: " + what);
  }
  return document;
}

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string didYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  // Close means at most a third of the word's letters (and at least one) differ.
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::size_t best = limit + 1;
  std::string suggestion;
  for (const std::string& c : candidates) {
    const std::size_t d = editDistance(word, c);
    if (d < best) {
      best = d;
      suggestion = c;
    }
  }
  return suggestion.empty() ? "" : " (did you mean " + inQuotes(suggestion) + "?)";
}

void JsonNode::fail(const std::string& reason) const {
  throw InputError(*source_ + ": " + (path_.empty() ? "top level" : path_) + ": " + reason);
}

std::string JsonNode::typeName() const {
  switch (value_->type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

void JsonNode::expectObject(std::initializer_list<const char*> allowed) const {
  if (!value_->is_object()) fail("must be an object (got " + typeName() + ")");
  const std::vector<std::string> names(allowed.begin(), allowed.end());
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    if (std::find(names.begin(), names.end(), it.key()) != names.end()) continue;
    std::string all;
    for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
    fail("unknown key " + inQuotes(it.key()) + didYouMean(it.key(), names) + "; allowed keys: " + all);
  }
}

JsonNode JsonNode::at(const char* key) const {
  if (!value_->is_object()) fail("must be an object (got " + typeName() + ")");
  auto it = value_->find(key);
  if (it == value_->end()) fail("missing required key " + inQuotes(key));
  return child(*it, path_.empty() ? key : path_ + "." + key);
}

std::optional<JsonNode> JsonNode::find(const char* key) const {
  if (!value_->is_object()) fail("must be an object (got " + typeName() + ")");
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return child(*it, path_.empty() ? key : path_ + "." + key);
}

std::vector<std::pair<std::string, JsonNode>> JsonNode::members() const {
  if (!value_->is_object()) fail("must be an object (got " + typeName() + ")");
  std::vector<std::pair<std::string, JsonNode>> out;
  for (auto it = value_->begin(); it != value_->end(); ++it)
    out.emplace_back(it.key(), child(*it, (path_.empty() ? "" : path_ + ".") + it.key()));
  return out;
}

std::vector<JsonNode> JsonNode::elements() const { return elements(-1); }

std::vector<JsonNode> JsonNode::elements(int n) const {
  if (!value_->is_array()) {
    fail(n < 0 ? "must be an array (got " + typeName() + ")"
               : "must be an array of " + values(n) + " (got " + typeName() + ")");
  }
  if (n >= 0 && value_->size() != static_cast<std::size_t>(n))
    fail("must have " + values(n) + " (got " + std::to_string(value_->size()) + ")");
  std::vector<JsonNode> out;
  for (std::size_t i = 0; i < value_->size(); ++i) out.push_back(child((*value_)[i], path_ + "[" + std::to_string(i) + "]"));
  return out;
}

double JsonNode::number() const {
  if (!value_->is_number()) fail("must be a number (got " + typeName() + ")");
  const double x = value_->get<double>();
  if (!std::isfinite(x)) fail("must be a finite number");
  return x;
}

double JsonNode::nonNegative() const {
  const double x = number();
  if (x < 0) fail("must be >= 0 (got " + formatNumber(x) + ")");
  return x;
}

double JsonNode::positive() const {
  const double x = number();
  if (!(x > 0)) fail("must be > 0 (got " + formatNumber(x) + ")");
  return x;
}

std::int64_t JsonNode::integer(std::int64_t min, std::int64_t max) const {
  const double x = number();
  if (x != std::floor(x)) fail("must be an integer (got " + formatNumber(x) + ")");
  if (x < static_cast<double>(min) || x > static_cast<double>(max))
    fail("must be between " + std::to_string(min) + " and " + std::to_string(max) + " (got " + formatNumber(x) + ")");
  return static_cast<std::int64_t>(x);
}

std::string JsonNode::string() const {
  if (!value_->is_string()) fail("must be a string (got " + typeName() + ")");
  return value_->get<std::string>();
}

bool JsonNode::boolean() const {
  if (!value_->is_boolean()) fail("must be true or false (got " + typeName() + ")");
  return value_->get<bool>();
}

std::vector<double> JsonNode::numbers(int n) const {
  std::vector<double> out;
  for (const JsonNode& e : elements(n)) out.push_back(e.number());
  return out;
}

Vec3d JsonNode::vec3() const {
  const std::vector<double> v = numbers(3);
  return {{v[0], v[1], v[2]}};
}

void normalizeQuaternion(double q[4], const JsonNode& node, const std::string& what) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(std::abs(n - 1) <= kUnitQuaternionTolerance)) {
    node.fail(what + "must be a unit quaternion [w, x, y, z] (its length is " + formatNumber(n) +
              "; lengths within 1e-6 of 1 are normalized, others are rejected)");
  }
  for (int i = 0; i < 4; ++i) q[i] /= n;
}

Transformd JsonNode::pose() const {
  expectObject({"position", "xyz_angles", "quaternion"});
  Transformd X = Transformd::identity();
  if (auto p = find("position")) X.p = p->vec3();
  const auto angles = find("xyz_angles");
  const auto quaternion = find("quaternion");
  if (angles && quaternion) fail("give the rotation as either 'xyz_angles' or 'quaternion', not both");
  if (angles) X.R = Rotationd::bodyFixedXYZ(angles->vec3());
  if (quaternion) {
    std::vector<double> q = quaternion->numbers(4);
    normalizeQuaternion(q.data(), *quaternion);
    X.R = Rotationd::fromQuaternion(q[0], q[1], q[2], q[3]);
  }
  return X;
}

SymMat33d JsonNode::inertia() const {
  if (value_->is_object()) {
    expectObject({"xx", "yy", "zz", "xy", "xz", "yz"});
    auto optional = [&](const char* key) { return has(key) ? at(key).number() : 0.0; };
    return {at("xx").number(), at("yy").number(), at("zz").number(), optional("xy"), optional("xz"), optional("yz")};
  }
  if (!value_->is_array() || (value_->size() != 6 && value_->size() != 3))
    fail("must be [xx, yy, zz, xy, xz, yz], an object with keys xx..yz, or a 3x3 array");
  if (value_->size() == 6) {
    const std::vector<double> v = numbers(6);
    return {v[0], v[1], v[2], v[3], v[4], v[5]};
  }
  double m[3][3];
  double largest = 0;
  const std::vector<JsonNode> rows = elements(3);
  for (int i = 0; i < 3; ++i) {
    const std::vector<double> row = rows[i].numbers(3);
    for (int j = 0; j < 3; ++j) {
      m[i][j] = row[j];
      largest = std::max(largest, std::abs(row[j]));
    }
  }
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      if (std::abs(m[i][j] - m[j][i]) > kSymmetryTolerance * largest)
        fail("must be symmetric (element [" + std::to_string(i) + "][" + std::to_string(j) + "] = " +
             formatNumber(m[i][j]) + " but [" + std::to_string(j) + "][" + std::to_string(i) + "] = " +
             formatNumber(m[j][i]) + ")");
  return {m[0][0], m[1][1], m[2][2], m[0][1], m[0][2], m[1][2]};
}

}  // namespace lockstep::io
