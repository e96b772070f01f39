// What the element kinds' files (elements_*.cpp) share to describe an element in words: printf into
// a string, vectors and lists as "(a, b, c)", a body's name. Private to host/model/.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "lockstep/engine/model.h"
#include "lockstep/engine/parameter_store.h"

namespace lockstep {

// printf-formatted text.
[[gnu::format(printf, 1, 2)]] std::string textf(const char* format, ...);

inline std::string formatVec(const Vec3d& v) {
  std::ostringstream os;
  os << "(" << v[0] << ", " << v[1] << ", " << v[2] << ")";
  return os.str();
}

template <class C>
std::string formatList(const C& values) {
  std::ostringstream os;
  os << "(";
  for (std::size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  return os.str() + ")";
}

inline std::string bodyName(const Model& m, int b) { return b < 0 ? "ground" : m.body(b).name; }

inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

// An element's name: its own, or <placeholder><index> for an unnamed one ("bushing0").
inline std::string elementName(const std::string& name, const char* placeholder, std::size_t index) {
  return name.empty() ? placeholder + std::to_string(index) : name;
}

}  // namespace lockstep
