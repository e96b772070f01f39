// The precision and the device a run is asked for by name (the command line's --precision and
// --device, study files' "precision", Python's device=), and the one place where a precision
// becomes the scalar type of the templates that run it.
#pragma once

#include <string>
#include <vector>

#include "lockstep/engine/batch.h"

namespace lockstep {

enum class Precision { Float, Double };
const char* precisionName(Precision p);  // "float", "double"
// "float" or "double"; throws std::invalid_argument naming both otherwise.
Precision parsePrecision(const std::string& name);
const std::vector<std::string>& precisionNames();  // "float", "double"

// Calls f(float{}) or f(double{}), as `precision` says, and returns what it returns.
template <class F>
decltype(auto) withPrecision(Precision precision, F&& f) {
  if (precision == Precision::Double) return f(double{});
  return f(float{});
}

// "cpu", "cuda" or "auto" (resolveBackend says what auto picks); throws std::invalid_argument
// naming the three otherwise.
DeviceChoice parseDeviceChoice(const std::string& name);
const std::vector<std::string>& deviceChoiceNames();  // "cpu", "cuda", "auto"

}  // namespace lockstep
