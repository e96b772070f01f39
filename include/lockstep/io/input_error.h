// Lockstep: the one error type of the front end (scene files, URDF import, command line).
#pragma once

#include <stdexcept>
#include <string>

namespace lockstep {

// Thrown for any bad input file. The message is complete and meant for a person:
// "<file>: <element>: <reason>", where the element is a JSON path such as `bodies[3].mass` or a
// URDF element such as `link 'panda_link3'`.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace lockstep
