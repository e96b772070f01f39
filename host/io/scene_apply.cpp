#include "lockstep/io/scene_apply.h"

#include <string>

#include "lockstep/study/study.h"

namespace lockstep {

template <class T>
void applyScene(const Scene& scene, Batch<T>& batch) {
  if (batch.modelPtr() != scene.model)
    throw std::invalid_argument("applyScene: the batch was not made from this scene's model");
  // Check every world index first, so that a bad scene leaves the batch untouched.
  for (const WorldOverride& o : scene.perWorld)
    for (std::int64_t w : o.worlds)
      if (w >= batch.numWorlds())
        throw InputError(scene.source + ": " + o.path + ".worlds: world " + std::to_string(w) +
                         " is outside the batch of " + std::to_string(batch.numWorlds()) +
                         " worlds; run at least " + std::to_string(w + 1) + " worlds");
  applySceneFrom(scene, batch, 0);
}

template <class T>
void applySceneFrom(const Scene& scene, Batch<T>& batch, std::int64_t firstWorld) {
  if (batch.modelPtr() != scene.model)
    throw std::invalid_argument("applyScene: the batch was not made from this scene's model");
  batch.setAllStates(scene.q0, scene.u0);
  if (!scene.targets.empty()) {
    const int nu = scene.model->nu();
    for (std::int64_t w = 0; w < batch.numWorlds(); ++w) {
      std::vector<double> position(nu, 0.0), velocity(nu, 0.0);
      for (const TargetSpec& t : scene.targets) {
        Variation v;
        if (t.uniform) {
          v.a = t.uniform->first;
          v.b = t.uniform->second;
        }
        position[t.u] = t.uniform ? sampleVariation(v, t.seed, t.u, w) : t.position;
        velocity[t.u] = t.velocity;
      }
      batch.setTargets(w, position, velocity);
    }
  }
  for (const WorldOverride& o : scene.perWorld) {
    for (std::int64_t world : o.worlds) {
      const std::int64_t w = world - firstWorld;
      if (w < 0 || w >= batch.numWorlds()) continue;
      if (o.gravity) batch.setGravity(w, *o.gravity);
      for (const auto& [body, mp] : o.massProperties) batch.setMassProperties(w, body, mp);
      if (o.damping) batch.setDamping(w, *o.damping);
      if (o.q) batch.setQ(w, *o.q);
      if (o.u) batch.setU(w, *o.u);
      for (const BushingOverride& b : o.bushings) {
        if (b.stiffness) batch.setBushingStiffness(w, b.index, *b.stiffness);
        if (b.damping) batch.setBushingDamping(w, b.index, *b.damping);
        if (b.frames) batch.setBushingFrames(w, b.index, b.frames->first, b.frames->second);
      }
      for (const SpringOverride& s : o.springs) {
        if (s.parameters) batch.setSpringParameters(w, s.index, (*s.parameters)[0], (*s.parameters)[1], (*s.parameters)[2]);
        if (s.points) batch.setSpringPoints(w, s.index, s.points->first, s.points->second);
      }
      for (const ContactOverride& c : o.contacts) {
        if (c.centers) batch.setSphereCenters(w, c.index, c.centers->first, c.centers->second);
        if (c.radii) batch.setSphereRadii(w, c.index, c.radii->first, c.radii->second);
        if (c.enabled) batch.setContactEnabled(w, c.index, *c.enabled);
      }
      for (const StopOverride& st : o.stops)
        batch.setJointStop(w, st.u, st.values[0], st.values[1], st.values[2], st.values[3]);
      for (const ActuatorOverride& a : o.actuators) {
        if (a.gains) batch.setActuatorGains(w, a.u, static_cast<ActuatorMode>((*a.gains)[0]), (*a.gains)[1], (*a.gains)[2]);
        if (a.targetPosition || a.targetVelocity) {
          std::vector<double> position = batch.targetPositions(w), velocity = batch.targetVelocities(w);
          if (a.targetPosition) position[a.u] = *a.targetPosition;
          if (a.targetVelocity) velocity[a.u] = *a.targetVelocity;
          batch.setTargets(w, position, velocity);
        }
      }
    }
  }
}

template void applyScene<float>(const Scene&, Batch<float>&);
template void applyScene<double>(const Scene&, Batch<double>&);
template void applySceneFrom<float>(const Scene&, Batch<float>&, std::int64_t);
template void applySceneFrom<double>(const Scene&, Batch<double>&, std::int64_t);

}  // namespace lockstep
