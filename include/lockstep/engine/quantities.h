// Recordable quantities: everything `lockstep simulate --record` can write, per world, by name.
//
// Two kinds, one list:
// - every per-world field of the registry (LOCKSTEP_WORLD_FIELDS in views.h: q, u, udot, z, time,
//   energy, bodyPose, bodyVelocity, bushingState, contactError, multipliers, tau, status, ...),
//   generated from worldFields() and read from the Batch's host copy as stored;
// - derived quantities of the seed classes (body poses X_GB and velocities V_GB, every getter of
//   LinearBushing, LinearSpringDamper and SphereOnSphereContact, energy.total), computed from the
//   Batch's public getters. They are listed once, in the table of host/batch/quantities.cpp:
//   adding one is one entry there.
//
// A quantity is counted per element (Per of views.h) and has component names; its columns'
// public names follow the registry's grammar, prefix[.element][.part]: "q.joint7",
// "body.link7.X_GB.r00", "bushing.bushing.X_FM.x", "spring.spring.length", "energy.total".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/fields.h"

namespace lockstep {

struct Quantity {
  // The name used on the command line ("q", "bodyPose", "bushing.X_FM"), what it is counted per,
  // its public prefix, its component names per element and its description. For a registry
  // field, the field itself.
  FieldInfo info;
  bool derived = false;  // computed from the Batch's getters rather than read from a registry field
  int table = -1;        // derived: its row in the table of quantities.cpp

  std::string name() const { return info.name; }
  std::int64_t count(const Model& m) const { return info.count(sizesOf(m)); }
};

// Every recordable quantity: the registry's per-world fields in declaration order, then the
// derived quantities in table order. Names are unique.
const std::vector<Quantity>& recordableQuantities();
// The quantity with this name, or null.
const Quantity* findQuantity(const std::string& name);
// The names of every quantity, comma-separated, for error messages.
std::string quantityNames();

// One column of a quantity, found by its public name ("energy.total", "bushing.bushing.F_GM.fz"):
// what study outcomes and other single-number readers can look names up in.
struct QuantityColumn {
  const Quantity* quantity;
  std::int64_t component;  // in the order of publicNames(model, quantity->info)
};
std::optional<QuantityColumn> findColumn(const Model& model, const std::string& publicName);

// The values of the given quantities for every world of the batch's host copy (call evaluate()
// and download() first: udot, the multipliers, the energies, the acceleration errors and the
// observations are those of the last evaluate()). out[k] receives quantity k world-major: world w,
// component c at [w * count + c], components in the order of publicNames(model, quantity.info).
template <class T>
void sampleQuantities(Batch<T>& batch, const std::vector<const Quantity*>& quantities,
                      std::vector<std::vector<double>>& out);

extern template void sampleQuantities<float>(Batch<float>&, const std::vector<const Quantity*>&,
                                             std::vector<std::vector<double>>&);
extern template void sampleQuantities<double>(Batch<double>&, const std::vector<const Quantity*>&,
                                              std::vector<std::vector<double>>&);

}  // namespace lockstep
