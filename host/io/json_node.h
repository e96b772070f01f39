// A read-only view of one value of a parsed JSON document that knows where it is, so that every
// check can report "<file>: <JSON path>: <reason>" (e.g. "scene.json: bodies[3].mass: must be a
// finite number"). Internal to the scene reader.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/io/input_error.h"
#include "lockstep/engine/model.h"

namespace lockstep::io {

// The deepest nesting of arrays and objects in an input file (docs/scene-format.md, "Limits"):
// scene and study files need fewer than 10 levels.
constexpr int kMaxNestingDepth = 100;

// Parses a JSON document in O(n log n) for n values. Throws InputError("<source>: invalid JSON:
// <what>") for syntax errors and numbers too large for a double (with line and column), keys
// repeated within one object (which JSON parsers otherwise resolve silently) and arrays and
// objects nested deeper than kMaxNestingDepth (with the JSON path).
nlohmann::json parseDocument(const std::string& text, const std::string& source);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t editDistance(const std::string& a, const std::string& b);
// " (did you mean 'x'?)" when some candidate is close to `word`, else "".
std::string didYouMean(const std::string& word, const std::vector<std::string>& candidates);

class JsonNode {
 public:
  JsonNode(const nlohmann::json& value, std::string path, const std::string& source)
      : value_(&value), path_(std::move(path)), source_(&source) {}

  const std::string& path() const { return path_; }
  const nlohmann::json& raw() const { return *value_; }
  // Throws InputError("<source>: <path>: <reason>").
  [[noreturn]] void fail(const std::string& reason) const;

  // ---- objects ----
  bool isObject() const { return value_->is_object(); }
  // Fails unless this is an object whose keys are all in `allowed` (suggesting the nearest one).
  void expectObject(std::initializer_list<const char*> allowed) const;
  bool has(const char* key) const { return value_->contains(key); }
  JsonNode at(const char* key) const;                      // fails when the key is missing
  std::optional<JsonNode> find(const char* key) const;     // empty when the key is missing
  std::vector<std::pair<std::string, JsonNode>> members() const;  // the members, by key in sorted order

  // ---- arrays ----
  bool isArray() const { return value_->is_array(); }
  bool isNumber() const { return value_->is_number(); }
  std::size_t size() const { return value_->size(); }
  std::vector<JsonNode> elements() const;  // fails unless this is an array
  // An array of exactly n elements (n < 0: any length).
  std::vector<JsonNode> elements(int n) const;

  // ---- scalars ----
  double number() const;  // any finite number
  double nonNegative() const;
  double positive() const;
  std::int64_t integer(std::int64_t min, std::int64_t max) const;
  std::string string() const;
  bool boolean() const;

  // ---- compounds ----
  std::vector<double> numbers(int n) const;  // an array of n finite numbers (n < 0: any length)
  Vec3d vec3() const;
  // A pose: {"position": [x, y, z], "xyz_angles": [a0, a1, a2]} or {..., "quaternion": [w, x, y, z]}
  // (at most one of the two; the quaternion within 1e-6 of unit length, then normalized).
  Transformd pose() const;
  // A central inertia: [xx, yy, zz, xy, xz, yz], {"xx":..,"yy":..,"zz":..,"xy":..,"xz":..,"yz":..}
  // (products default to 0) or a symmetric 3x3 array.
  SymMat33d inertia() const;

 private:
  JsonNode child(const nlohmann::json& value, const std::string& path) const { return {value, path, *source_}; }
  std::string typeName() const;

  const nlohmann::json* value_;
  std::string path_;
  const std::string* source_;
};

// How far from 1 the length of a quaternion in a file may be (it is then normalized).
constexpr double kUnitQuaternionTolerance = 1e-6;
// How far apart, relative to the largest entry, the two halves of a 3x3 inertia may be.
constexpr double kSymmetryTolerance = 1e-9;

// Normalizes a quaternion given in a file, or fails through `node` when its length is not within
// kUnitQuaternionTolerance of 1. `what` prefixes the reason (e.g. "q of joint 'root': ").
void normalizeQuaternion(double q[4], const JsonNode& node, const std::string& what = "");

}  // namespace lockstep::io
