// The field registry: public names, counts and the per-world parameters reached through it.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "lockstep/engine/batch.h"
#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/engine/fields.h"

namespace lockstep {
namespace {

TEST(Fields, PublicNamesAreUniqueAndFollowTheGrammar) {
  const auto model = makeChain7Seed();
  std::set<std::string> seen;
  for (const auto* list : {&worldFields(), &parameterFields()})
    for (const FieldInfo& f : *list)
      for (const std::string& n : publicNames(*model, f)) EXPECT_TRUE(seen.insert(n).second) << "repeated name " << n;
  for (const char* n : {"q.joint7", "u.joint1", "time", "energy.kinetic", "body.link7.x", "body.link7.qw",
                        "body.link7.vz", "bushing.bushing.q.3", "bushing.bushing.f.5", "contact.contact.error",
                        "multiplier.contact.z", "body.link3.mass", "body.link3.inertia.xy", "gravity.y",
                        "damping.joint2", "effort_limit.joint2", "bushing.bushing.stiffness.4",
                        "spring.spring.free_length", "spring.spring.p_BQ.z", "contact.contact.radius_on_B",
                        "contact.contact.enabled"})
    EXPECT_TRUE(seen.count(n)) << n;
}

TEST(Fields, CountsAgreeWithTheBatchStorage) {
  const auto model = makeChain7Seed();
  Batch<double> batch(model, 5);
  const Sizes s = sizesOf(*model);
  for (const FieldInfo& f : worldFields()) {
    EXPECT_EQ(batch.field(f.name, MemorySpace::Host).components, f.count(s)) << f.name;
    EXPECT_EQ(static_cast<std::int64_t>(publicNames(*model, f).size()), f.count(s)) << f.name;
  }
  for (const FieldInfo& f : parameterFields()) {
    EXPECT_EQ(static_cast<std::int64_t>(publicNames(*model, f).size()), f.count(s)) << f.name;
    EXPECT_FALSE(batch.isPerWorld(f.name)) << f.name;
  }
  EXPECT_EQ(s.nb, 7);
  EXPECT_EQ(s.nc, 1);
  EXPECT_EQ(s.nd, 7);
}

// Every per-world field's host storage, every parameter's (shared or per world) and the Jacobians'
// start on a 64-byte boundary (aligned_vector.h): XLA (JAX) takes a host buffer without a copy only
// then. std::vector's storage is 16-byte aligned, and an address mod 64 varied with the sizes.
template <class T>
void expectHostStorageAligned(Batch<T>& batch, const std::string& where) {
  const auto offset = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64; };
  for (const std::string& name : Batch<T>::fieldNames())
    EXPECT_EQ(offset(batch.field(name, MemorySpace::Host).data), 0u) << where << ": field " << name;
  const BatchView<T> v = batch.hostView();
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  EXPECT_EQ(offset(v.name.data), 0u) << where << ": parameter " #name;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
}

template <class T>
void checkHostStorageAlignment() {
  const auto model = makeChain7Seed();
  for (std::int64_t worlds : {1, 3, 5, 7, 100, 1001, 5003}) {
    Batch<T> batch(model, worlds);
    const std::string where = std::to_string(worlds) + " worlds, " + (sizeof(T) == 4 ? "float" : "double");
    expectHostStorageAligned(batch, where);
    batch.setParameter(worlds - 1, "body.link3.mass", 1.25);  // massProps gets one copy per world
    batch.setParameter(0, "spring.spring.stiffness", 250);
    ASSERT_TRUE(batch.isPerWorld("massProps"));
    expectHostStorageAligned(batch, where + ", parameters per world");
    if (worlds <= 100) {
      batch.linearizeEvaluation({"body.link3.mass"});
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(batch.jacobianView(MemorySpace::Host).data) % 64, 0u) << where;
    }
  }
}

TEST(Fields, HostStorageIs64ByteAligned) {
  checkHostStorageAlignment<float>();
  checkHostStorageAlignment<double>();
}

TEST(Fields, EveryParameterIsReachableByNameAndOnlyItsWorldChanges) {
  const auto model = makeChain7Seed();
  Batch<double> batch(model, 3);
  const std::vector<std::string> names = batch.parameterNames();
  // stops 4, actuator gains 3, armature 1, joint spring 2, actuator control 3 per speed
  ASSERT_EQ(names.size(), 7u * 10 + 3 + 7 + 7 + 7 * 4 + 7 * 3 + 24 + 6 + 6 + 3 + 6 + 6 + 2 + 1 + 7 * (1 + 2 + 3));
  for (const std::string& n : names) {
    const double before = batch.parameter(1, n);
    batch.setParameter(1, n, before);  // every model value is valid
    EXPECT_EQ(batch.parameter(1, n), before) << n;
  }
  // A changed value lands in its world only, where the typed accessor reads it.
  batch.setParameter(1, "spring.spring.stiffness", 250);
  EXPECT_EQ(batch.springParameters(1, 0)[1], 250);
  EXPECT_EQ(batch.springParameters(0, 0)[1], 200);
  batch.setParameter(Batch<double>::kAllWorlds, "gravity.x", 0.5);
  for (int w = 0; w < 3; ++w) EXPECT_EQ(batch.gravity(w)[0], 0.5);
  EXPECT_EQ(batch.gravity(2)[1], -9.81);
  EXPECT_TRUE(batch.isPerWorld("springParams"));
}

TEST(Fields, BadParameterValuesAndNamesSayWhereAndWhy) {
  Batch<double> batch(makeChain7Seed(), 3);
  try {
    batch.setParameter(2, "body.link3.mass", -1);
    FAIL() << "a negative mass was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("world 2 body 'link3'"), std::string::npos) << e.what();
  }
  try {
    batch.setParameter(0, "spring.spring.free_length", 0);
    FAIL() << "a zero free length was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("world 0 spring-damper 'spring': free length"), std::string::npos) << e.what();
  }
  EXPECT_THROW(batch.setParameter(0, "contact.contact.enabled", 0.5), ModelError);
  EXPECT_THROW(batch.setParameter(0, "body.link3.volume", 1), std::invalid_argument);
  EXPECT_THROW(batch.setParameter(0, "q.joint1", 1), std::invalid_argument);  // state, not a parameter
  EXPECT_THROW(batch.parameter(3, "gravity.x"), std::out_of_range);
  // Nothing was stored by the refused calls.
  EXPECT_EQ(batch.massProperties(2, 2).mass, 1.0);
  EXPECT_FALSE(batch.isPerWorld("massProps"));
}

TEST(Fields, ParameterByNameEqualsTheTypedSetterBitForBit) {
  const auto model = makeChain7Seed();
  Batch<double> byName(model, 4), typed(model, 4);
  byName.setParameter(2, "bushing.bushing.stiffness.1", 13.5);
  byName.setParameter(2, "body.link5.com.x", 0.01);
  std::array<double, 6> k = typed.bushingStiffness(2, 0);
  k[1] = 13.5;
  typed.setBushingStiffness(2, 0, k);
  MassProperties mp = typed.massProperties(2, 4);
  mp.com[0] = 0.01;
  typed.setMassProperties(2, 4, mp);
  for (Batch<double>* b : {&byName, &typed}) {
    b->assemble();
    b->step(1e-3, 20);
  }
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(byName.q(w), typed.q(w)) << w;
    EXPECT_EQ(byName.u(w), typed.u(w)) << w;
  }
  EXPECT_NE(byName.q(2), byName.q(1));
}

}  // namespace
}  // namespace lockstep
