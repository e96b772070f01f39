// How the front end's messages spell names and numbers: the file readers (scene, URDF, JSON
// values) share these so that every message quotes and prints the same way.
#pragma once

#include <sstream>
#include <string>

namespace lockstep::io {

// A name as messages quote it: 'name'.
inline std::string inQuotes(const std::string& s) { return "'" + s + "'"; }

// A number at 6 significant digits, as std::ostream prints a double by default ("0.1", "1e+30").
inline std::string numberText(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

}  // namespace lockstep::io
