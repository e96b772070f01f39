// The elements on one generalized speed: JointStop (Simbody's Force::MobilityLinearStop) and
// Actuator (an action as a control, and PD servos as Simbody's MobilityLinearSpring and
// MobilityLinearDamper). Their rules as model elements: build, parameter checks and description
// (model.h, "what each element kind defines"). Their physics: physics/forces.h.
#include <cmath>
#include <cstring>
#include <sstream>

#include "element_text.h"

namespace lockstep {

void validateStopParameters(double lower, double upper, double stiffness, double dissipation, const std::string& where) {
  if (std::isnan(lower)) throw ModelError(where + ": lower: must be a number (-infinity: no lower stop)");
  if (std::isnan(upper)) throw ModelError(where + ": upper: must be a number (infinity: no upper stop)");
  if (lower > upper) {
    std::ostringstream os;
    os << where << ": lower: must be <= upper (got " << lower << " > " << upper << ")";
    throw ModelError(os.str());
  }
  validateNonNegative(stiffness, where, "stiffness");
  validateNonNegative(dissipation, where, "dissipation");
}

void validateActuatorParameters(double mode, double kp, double kd, const std::string& where) {
  if (!(mode == 0 || mode == 1 || mode == 2))
    throw ModelError(where + ": mode: must be 0 (torque), 1 (position) or 2 (velocity)");
  validateNonNegative(kp, where, "kp");
  validateNonNegative(kd, where, "kd");
}

void validateActuatorControl(double gear, double controlLower, double controlUpper, const std::string& where) {
  validateFinite(gear, where, "gear");
  if (std::isnan(controlLower)) throw ModelError(where + ": control lower: must be a number (-infinity: unbounded)");
  if (std::isnan(controlUpper)) throw ModelError(where + ": control upper: must be a number (infinity: unbounded)");
  if (controlLower > controlUpper) {
    std::ostringstream os;
    os << where << ": control lower: must be <= control upper (got " << controlLower << " > " << controlUpper << ")";
    throw ModelError(os.str());
  }
}

namespace {
const char* const kActuatorModeNames[3] = {"torque", "position", "velocity"};
}  // namespace

const char* actuatorModeName(ActuatorMode mode) { return kActuatorModeNames[static_cast<int>(mode)]; }

ActuatorMode parseActuatorMode(const std::string& s) {
  for (int i = 0; i < 3; ++i)
    if (s == kActuatorModeNames[i]) return static_cast<ActuatorMode>(i);
  throw ModelError("unknown actuator mode " + quoted(s) + " (expected one of: torque, position, velocity)");
}

// ---- JointStop: at most one per coordinate, on a coordinate whose qdot is its speed ----

JointStop buildElement(const JointStopDesc& d, ElementBuild& build) {
  const std::string where = "joint stop " + quoted(d.coordinate);
  JointStop e{d, 0, 0};
  build.coordinate(d.coordinate, where, &e.q, &e.u);
  if (build.speedsTaken[e.u]++) throw ModelError(where + ": coordinate: has two joint stops");
  validateStopParameters(d.lower, d.upper, d.stiffness, d.dissipation, where);
  return e;
}

std::string describeElement(const Model&, const JointStop& e) {
  return textf("stop on %-20s lower %g, upper %g, stiffness %g, dissipation %g", e.desc.coordinate.c_str(),
               e.desc.lower, e.desc.upper, e.desc.stiffness, e.desc.dissipation);
}

InfoSection infoSection(const Model&, const std::vector<JointStop>&) { return {"joint stops", ""}; }

// ---- Actuator: likewise ----

Actuator buildElement(const ActuatorDesc& d, ElementBuild& build) {
  const std::string where = "actuator " + quoted(d.coordinate);
  Actuator e{d, 0, 0};
  build.coordinate(d.coordinate, where, &e.q, &e.u);
  if (build.speedsTaken[e.u]++) throw ModelError(where + ": coordinate: has two actuators");
  validateActuatorParameters(static_cast<int>(d.mode), d.kp, d.kd, where);
  validateActuatorControl(d.gear, d.controlLower, d.controlUpper, where);
  return e;
}

std::string describeElement(const Model& m, const Actuator& e) {
  char control[160] = "";
  if (e.desc.gear != 1 || std::isfinite(e.desc.controlLower) || std::isfinite(e.desc.controlUpper))
    std::snprintf(control, sizeof control, ", action a control in [%g, %g] times gear %g", e.desc.controlLower,
                  e.desc.controlUpper, e.desc.gear);
  return textf("actuator on %-16s %s, kp %g, kd %g, effort limit %g%s", e.desc.coordinate.c_str(),
               actuatorModeName(e.desc.mode), e.desc.kp, e.desc.kd, m.effortLimit()[e.u], control);
}

InfoSection infoSection(const Model&, const std::vector<Actuator>&) {
  return {"actuators", " (other speeds: torque actions only)"};
}

}  // namespace lockstep
