// scenes/solo12-stand.json: solo12 on a Free root over the ground, a contact sphere per foot, joint
// stops from the URDF, PD actuators holding a crouch, with its study's per-world friction and
// gains. Every world must settle standing: over the scene's 5 s, its base height stays within
// 1 cm, the base stays upright, all four feet stay on the ground, and it ends at rest.
// LOCKSTEP_STAND_WORLDS=4096 runs the same check on as many worlds as the scene's study.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "lockstep/engine/batch.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "lockstep/study/study.h"
#include "lockstep/io/study_file.h"

namespace lockstep::test {
namespace {

TEST(ShippedScenes, Solo12StandSettlesStandingWithRandomizedFrictionAndGains) {
  const StudyFile study = loadStudyFile(std::string(LOCKSTEP_SOURCE_DIR) + "/scenes/solo12-stand.json");
  const Scene& scene = study.scene;
  const Model& m = *scene.model;
  ASSERT_EQ(m.groundContacts().size(), 4u);
  ASSERT_EQ(m.actuators().size(), 12u);
  ASSERT_EQ(m.stops().size(), 12u);
  const char* env = std::getenv("LOCKSTEP_STAND_WORLDS");
  const std::int64_t n = env ? std::atoll(env) : 8;
  ASSERT_GT(n, 0);
  Batch<double> batch(scene.model, n);
  applyScene(scene, batch);
  // The study's draws, as runStudy makes them (counter-based: world w gets the same values in any batch).
  ASSERT_GE(study.spec.vary.size(), 8u);
  for (std::size_t k = 0; k < study.spec.vary.size(); ++k)
    for (std::int64_t w = 0; w < n; ++w)
      setNamedParameter(batch, w, study.spec.vary[k].parameter,
                        sampleVariation(study.spec.vary[k], study.spec.seed, static_cast<int>(k), w));
  EXPECT_NE(batch.groundMaterial(0, 0).staticFriction, batch.groundMaterial(1, 0).staticFriction);
  EXPECT_NE(batch.parameter(0, "actuator.FL_KFE.kp"), batch.parameter(1, "actuator.FL_KFE.kp"));

  const int base = m.bodyIndex("base_link");
  const double dt = scene.simulation.dt, duration = 5.0;
  const int chunk = static_cast<int>(std::lround(0.05 / dt)), chunks = static_cast<int>(std::lround(duration / 0.05));
  std::vector<double> zMin(n, 1e9), zMax(n, -1e9), lowestFoot(n, 1e9), leastUpright(n, 1);
  auto observe = [&] {
    for (std::int64_t w = 0; w < n; ++w) {
      const Transformd X = batch.bodyPose(w, base);
      zMin[w] = std::min(zMin[w], X.p[2]);
      zMax[w] = std::max(zMax[w], X.p[2]);
      leastUpright[w] = std::min(leastUpright[w], X.R(2, 2));  // cos of the base's tilt
      for (int i = 0; i < 4; ++i) lowestFoot[w] = std::min(lowestFoot[w], batch.groundContact(w, i).penetration);
    }
  };
  batch.evaluate();  // the observations of the initial state
  observe();
  for (int c = 0; c < chunks; ++c) {
    batch.step(dt, chunk, scene.simulation.integrator);
    observe();
  }
  batch.evaluate();
  double worstRange = 0, worstSpeed = 0, worstTilt = 1, shallowest = 1, lowest = 1e9, highest = 0;
  for (std::int64_t w = 0; w < n; ++w) {
    ASSERT_EQ(batch.status(w), kStatusOk) << "world " << w << ": " << describeStatus(batch.status(w));
    const SpatialVecd V = batch.bodyVelocity(w, base);
    worstRange = std::max(worstRange, zMax[w] - zMin[w]);
    worstSpeed = std::max(worstSpeed, std::sqrt(V[3] * V[3] + V[4] * V[4] + V[5] * V[5]));
    worstTilt = std::min(worstTilt, leastUpright[w]);
    shallowest = std::min(shallowest, lowestFoot[w]);
    lowest = std::min(lowest, zMin[w]);
    highest = std::max(highest, zMax[w]);
  }
  std::printf("solo12-stand, %lld worlds, %g s: base height in [%.4f, %.4f] m, largest range in one world %.2f mm; "
              "least upright cos %.5f; smallest foot penetration %.2e m; largest final base speed %.2e m/s\n",
              static_cast<long long>(n), duration, lowest, highest, 1e3 * worstRange, worstTilt, shallowest, worstSpeed);
  EXPECT_LT(worstRange, 0.01);  // steady within 1 cm
  EXPECT_GT(lowest, 0.15);      // standing, not lying on its belly
  EXPECT_GT(worstTilt, 0.99);   // upright
  EXPECT_GT(shallowest, 0.0);   // every foot on the ground throughout
  EXPECT_LT(worstSpeed, 1e-3);  // at rest
}

}  // namespace
}  // namespace lockstep::test
