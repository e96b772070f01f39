// libFuzzer target: the URDF import (urdf.h) on arbitrary bytes, with a fixed or a free root and
// with or without inertia repair (chosen by the last byte), then building the model. Import must
// either succeed or throw InputError, and an imported robot must build; anything else (another
// exception, a crash, a sanitizer report) is a bug. Built by fuzz/build.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lockstep/io/urdf.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lockstep::UrdfOptions options;
  if (size > 0) {
    options.rootJoint = (data[size - 1] & 1) ? lockstep::UrdfRootJoint::Free : lockstep::UrdfRootJoint::Fixed;
    options.repairInertia = (data[size - 1] & 2) != 0;
  }
  const std::string xml(reinterpret_cast<const char*>(data), size);
  lockstep::UrdfImport robot;
  try {
    robot = lockstep::importUrdf(xml, "fuzz.urdf", options);
  } catch (const lockstep::InputError&) {
    return 0;
  }
  try {
    robot.buildModel();
  } catch (const lockstep::ModelError&) {
    // Names the builder rejects (a link called "ground", a joint name used twice) are reported
    // as ModelError; the scene reader turns them into InputError.
  }
  return 0;
}
