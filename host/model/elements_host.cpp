// The observers: Site (MJCF's <site>, a named frame on a body, which only the host reads) and Sensor
// (MJCF's <sensor>, computed by the per-world code: physics/sensors.h). Their rules as model elements:
// build, topology, parameters and description (model.h, "what each element kind defines").
#include <algorithm>

#include "element_text.h"

namespace lockstep {

// ---- Site: a named, unique frame ----

Site buildElement(const SiteDesc& d, ElementBuild& build) {
  const std::string where = "site " + quoted(d.name);
  if (d.name.empty()) throw ModelError("site: name: must not be empty");
  if (!build.namesTaken.insert(d.name).second) throw ModelError(where + ": name: defined twice");
  const int body = build.body(d.body, where, "body");
  validateTransform(d.X_BS, where, "X_BS");
  return {d, body};
}

std::string describeElement(const Model& m, const Site& site) {
  return textf("site '%s' on %s at %s", site.desc.name.c_str(), bodyName(m, site.body).c_str(),
               formatVec(site.desc.X_BS.p).c_str());
}

InfoSection infoSection(const Model&, const std::vector<Site>&) { return {"sites", "", /*showEmpty=*/false}; }

// ---- Sensor: uniquely named; its values follow those of the sensors before it ----

Sensor buildElement(const SensorDesc& d, ElementBuild& build) {
  const std::string where = "sensor " + quoted(d.name);
  if (!build.namesTaken.insert(d.name).second) throw ModelError(where + ": name: defined twice");
  const int body = build.body(d.body, where, "body");
  validateTransform(d.X_BS, where, "X_BS");
  validateNonNegative(d.cutoff, where, "cutoff");
  int coordinate = -1, speed = -1;
  const Model& m = build.model;
  if (!d.coordinate.empty()) {
    const auto it = std::find(m.qNames().begin(), m.qNames().end(), d.coordinate);
    if (it == m.qNames().end()) throw ModelError(where + ": coordinate: no coordinate named " + quoted(d.coordinate));
    coordinate = static_cast<int>(it - m.qNames().begin());
    for (const Body& b : m.bodies())
      if (coordinate >= b.qOffset && coordinate < b.qOffset + b.nq && b.nq == b.nu) speed = b.uOffset + coordinate - b.qOffset;
    if (speed < 0) throw ModelError(where + ": coordinate: " + quoted(d.coordinate) + " is not the integral of a speed");
  }
  const int offset = m.sensors().empty() ? 0 : m.sensors().back().offset + m.sensors().back().desc.dimension;
  return {d, body, coordinate, speed, offset};
}

namespace {

// MuJoCo's sensor names (SensorDesc::type) of the SensorTypes, in their order.
const char* const kSensorTypeNames[] = {"jointpos",     "jointvel", "framepos",      "framequat",     "framelinvel",
                                        "frameangvel",  "velocimeter", "gyro",       "accelerometer", "touch",
                                        "force",        "torque",   "subtreecom",    "subtreelinvel"};
static_assert(sizeof kSensorTypeNames / sizeof kSensorTypeNames[0] == kSensorUnsupported);
const char* const kZoneNames[] = {"sphere", "capsule", "ellipsoid", "cylinder", "box"};

}  // namespace

SensorTopology elementTopology(const Model&, const Sensor& e) {
  SensorTopology t{kSensorUnsupported, e.body, e.coordinate, e.speed, e.offset, kZoneBox};
  if (e.desc.dimension > 0)
    for (int k = 0; k < kSensorUnsupported; ++k)
      if (e.desc.type == kSensorTypeNames[k]) t.type = k;
  for (int k = 0; k < 5; ++k)
    if (e.desc.zone == kZoneNames[k]) t.zone = k;
  return t;
}

std::vector<double> parameterBlock(const Sensor& e, ParamId id) {
  std::vector<double> v;
  if (id == ParamId::sensorFrame) {
    appendTransform(v, e.desc.X_BS);
    appendVec3(v, e.desc.zoneSize);
  }
  if (id == ParamId::sensorCutoff) v.push_back(e.desc.cutoff);
  return v;
}

void validateParameterBlock(const std::vector<Sensor>&, ParamId id, const std::vector<double>& v,
                            const std::string& where) {
  if (id == ParamId::sensorCutoff) validateNonNegative(v[0], where, "cutoff");
  if (id != ParamId::sensorFrame) return;
  validateTransform(transformAt(v, 0), where, "X_BS");
  for (int k = 12; k < 15; ++k) validateNonNegative(v[k], where, "zone");
}

std::string describeElement(const Model&, const Sensor& s) {
  return textf("sensor '%s': %s of %s '%s'%s%s", s.desc.name.c_str(), s.desc.type.c_str(), s.desc.objectType.c_str(),
               s.desc.object.c_str(), s.desc.dimension ? "" : " (not computed by Lockstep)",
               s.desc.cutoff > 0 ? textf(", cutoff %g", s.desc.cutoff).c_str() : "");
}

InfoSection infoSection(const Model& m, const std::vector<Sensor>&) {
  return {"sensors", " (" + std::to_string(m.sensorDataSize()) + " values: record them as \"sensors\")",
          /*showEmpty=*/false};
}

}  // namespace lockstep
