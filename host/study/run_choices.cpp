#include "lockstep/study/run_choices.h"

#include <stdexcept>

namespace lockstep {

const char* precisionName(Precision p) { return p == Precision::Double ? "double" : "float"; }

Precision parsePrecision(const std::string& name) {
  if (name == "float") return Precision::Float;
  if (name == "double") return Precision::Double;
  throw std::invalid_argument("precision must be \"float\" or \"double\", not \"" + name + "\"");
}

const std::vector<std::string>& precisionNames() {
  static const std::vector<std::string> names = {"float", "double"};
  return names;
}

DeviceChoice parseDeviceChoice(const std::string& name) {
  if (name == "cpu") return DeviceChoice::Cpu;
  if (name == "cuda") return DeviceChoice::Cuda;
  if (name == "auto") return DeviceChoice::Auto;
  throw std::invalid_argument("device must be \"cpu\", \"cuda\" or \"auto\", not \"" + name + "\"");
}

const std::vector<std::string>& deviceChoiceNames() {
  static const std::vector<std::string> names = {"cpu", "cuda", "auto"};
  return names;
}

}  // namespace lockstep
