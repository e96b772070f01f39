// Monte Carlo studies: sampling follows its distributions and is reproducible, named parameters
// land where they should, and the reduced statistics equal a plain host computation.
#include <cmath>
#include <cstring>

#include "lockstep/engine/builtin_scenes.h"
#include "lockstep/backends/device.h"
#include "lockstep/study/run_choices.h"
#include "lockstep/study/study.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

struct Moments {
  double mean = 0, var = 0;
};
Moments moments(const Variation& v, int n) {
  Moments m;
  std::vector<double> x(n);
  for (int i = 0; i < n; ++i) x[i] = sampleVariation(v, 42, 3, i);
  for (double a : x) m.mean += a / n;
  for (double a : x) m.var += (a - m.mean) * (a - m.mean) / (n - 1);
  return m;
}

// With n = 200000 draws the sample mean has standard error sigma / sqrt(n) and the sample
// variance about sigma^2 sqrt(2 / n) (normal) — the bounds below are 5 standard errors.
TEST(Study, SamplesFollowTheirDistributions) {
  const int n = 200000;
  Variation u{"x", Distribution::Uniform, 2.0, 5.0};
  Moments m = moments(u, n);
  const double su = 3.0 / std::sqrt(12.0);
  EXPECT_NEAR(m.mean, 3.5, 5 * su / std::sqrt(n));
  EXPECT_NEAR(m.var, su * su, 5 * su * su * std::sqrt(0.8 / n));  // uniform: var of var = 0.8 sigma^4 / n

  Variation g{"x", Distribution::Normal, -1.0, 0.5};
  m = moments(g, n);
  EXPECT_NEAR(m.mean, -1.0, 5 * 0.5 / std::sqrt(n));
  EXPECT_NEAR(m.var, 0.25, 5 * 0.25 * std::sqrt(2.0 / n));

  Variation l{"x", Distribution::LogNormal, 0.1, 0.2};
  m = moments(l, n);
  const double mean = std::exp(0.1 + 0.02), var = (std::exp(0.04) - 1) * std::exp(0.2 + 0.04);
  EXPECT_NEAR(m.mean, mean, 5 * std::sqrt(var / n));
  EXPECT_NEAR(m.var, var, 0.02 * var);
  for (int i = 0; i < 1000; ++i) EXPECT_GT(sampleVariation(l, 7, 0, i), 0.0);

  Variation clipped{"x", Distribution::Normal, 0.0, 1.0, -0.5, 0.5};
  for (int i = 0; i < 1000; ++i) {
    const double x = sampleVariation(clipped, 1, 0, i);
    EXPECT_GE(x, -0.5);
    EXPECT_LE(x, 0.5);
  }
}

TEST(Study, SamplingIsCounterBased) {
  const Variation v{"x", Distribution::Normal, 0, 1};
  EXPECT_EQ(sampleVariation(v, 5, 2, 777), sampleVariation(v, 5, 2, 777));
  EXPECT_NE(sampleVariation(v, 5, 2, 777), sampleVariation(v, 6, 2, 777));
  EXPECT_NE(sampleVariation(v, 5, 2, 777), sampleVariation(v, 5, 3, 777));
  EXPECT_NE(sampleVariation(v, 5, 2, 777), sampleVariation(v, 5, 2, 778));
}

// Golden values of the first draws of a few (seed, variation, world), computed independently with
// Python's integers from the definition (splitmix64 of the counters, uniform01 in host/study/study_worlds.cpp):
// draw 0 is a uniform(0, 1) variation's value; draw 1 enters a normal one (Box-Muller).
TEST(Study, DrawsArePinned) {
  struct Golden {
    std::uint64_t seed;
    int variation;
    std::int64_t world;
    double uniform, normal;
  };
  const Golden golden[] = {{1, 0, 0, 0x1.631405e8db1b0p-1, -0.7578914596970261},
                           {1, 0, 1, 0x1.cf38a51a82264p-4, 1.2976568152895571},
                           {2026, 2, 1611, 0x1.b2084e8dc246dp-2, -0.2236257608637278},
                           {2026, 0, 4095, 0x1.de2c4a4f17e0ap-3, -1.609206700817432}};
  const Variation u{"x", Distribution::Uniform, 0, 1}, n{"x", Distribution::Normal, 0, 1};
  for (const Golden& g : golden) {
    EXPECT_EQ(sampleVariation(u, g.seed, g.variation, g.world), g.uniform) << "world " << g.world;
    EXPECT_NEAR(sampleVariation(n, g.seed, g.variation, g.world), g.normal, 1e-15) << "world " << g.world;
  }
}

// Neighbouring worlds' draws are independent. A normal draw is sqrt(-2 ln u1) cos(2 pi u2) with u1
// the uniform draw of the same world, so c_w = normal_w / sqrt(-2 ln u1_w) = cos(2 pi u2_w) shows
// world w's second draw; were it world w + 1's first, c_w would equal cos(2 pi u1_{w+1}). Over
// 100,000 worlds the correlations of neighbours' draws are within 5 / sqrt(n) of 0.
TEST(Study, NeighbouringWorldsDrawIndependently) {
  const Variation u{"x", Distribution::Uniform, 0, 1}, n{"x", Distribution::Normal, 0, 1};
  const int worlds = 100000;
  std::vector<double> u1(worlds + 1), c(worlds + 1), g(worlds + 1);
  for (int w = 0; w <= worlds; ++w) {
    u1[w] = sampleVariation(u, 7, 1, w);
    g[w] = sampleVariation(n, 7, 1, w);
    c[w] = g[w] / std::sqrt(-2 * std::log(u1[w]));
  }
  auto correlation = [&](auto x, auto y) {
    double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
    for (int w = 0; w < worlds; ++w) {
      mx += x(w) / worlds;
      my += y(w) / worlds;
    }
    for (int w = 0; w < worlds; ++w) {
      sxy += (x(w) - mx) * (y(w) - my);
      sxx += (x(w) - mx) * (x(w) - mx);
      syy += (y(w) - my) * (y(w) - my);
    }
    return sxy / std::sqrt(sxx * syy);
  };
  const double bound = 5 / std::sqrt(double(worlds));
  int equal = 0;
  for (int w = 0; w < worlds; ++w) equal += std::abs(c[w] - std::cos(6.283185307179586 * u1[w + 1])) < 1e-9;
  EXPECT_LT(equal, 10) << "world w's second draw repeats world w + 1's first";
  EXPECT_LT(std::abs(correlation([&](int w) { return c[w]; }, [&](int w) { return std::cos(6.283185307179586 * u1[w + 1]); })), bound);
  EXPECT_LT(std::abs(correlation([&](int w) { return u1[w]; }, [&](int w) { return u1[w + 1]; })), bound);
  EXPECT_LT(std::abs(correlation([&](int w) { return g[w]; }, [&](int w) { return g[w + 1]; })), bound);
  EXPECT_LT(std::abs(correlation([&](int w) { return u1[w]; }, [&](int w) { return c[w]; })), bound);
}

TEST(Study, NamedParametersLandWhereTheyShould) {
  Batch<double> b(makeChain7Seed(), 3);
  setNamedParameter(b, 1, "body.link3.mass", 2.5);
  setNamedParameter(b, 1, "body.link3.com.y", -0.3);
  setNamedParameter(b, 1, "body.link3.inertia.zz", 0.022);
  setNamedParameter(b, 1, "gravity.y", -3.7);
  setNamedParameter(b, 1, "damping.joint2", 0.4);
  setNamedParameter(b, 1, "bushing.bushing.stiffness.4", 77);
  setNamedParameter(b, 1, "bushing.bushing.damping.0", 0.7);
  setNamedParameter(b, 1, "spring.spring.free_length", 0.9);
  setNamedParameter(b, 1, "spring.spring.p_BQ.x", 0.05);
  setNamedParameter(b, 1, "contact.contact.radius_on_B", 0.15);
  setNamedParameter(b, 1, "contact.contact.center_on_F.z", 0.01);
  setNamedParameter(b, 1, "q.joint1", 0.7);
  setNamedParameter(b, 1, "u.joint7", -0.2);
  EXPECT_EQ(b.massProperties(1, 2).mass, 2.5);
  EXPECT_EQ(b.massProperties(1, 2).com[1], -0.3);
  EXPECT_EQ(b.massProperties(1, 2).inertia.zz, 0.022);
  EXPECT_EQ(b.massProperties(0, 2).mass, 1.0);
  EXPECT_EQ(b.gravity(1)[1], -3.7);
  EXPECT_EQ(b.damping(1)[1], 0.4);
  EXPECT_EQ(b.bushingStiffness(1, 0)[4], 77);
  EXPECT_EQ(b.bushingDamping(1, 0)[0], 0.7);
  EXPECT_EQ(b.springParameters(1, 0)[0], 0.9);
  EXPECT_EQ(b.springPoints(1, 0)[1][0], 0.05);
  EXPECT_EQ(b.sphereRadii(1, 0)[1], 0.15);
  EXPECT_EQ(b.sphereCenters(1, 0)[0][2], 0.01);
  EXPECT_EQ(b.q(1)[0], 0.7);
  EXPECT_EQ(b.initialQ(1)[0], 0.7);
  EXPECT_EQ(b.u(1)[6], -0.2);
  EXPECT_THROW(setNamedParameter(b, 1, "body.link9.mass", 1.0), std::invalid_argument);
  EXPECT_THROW(setNamedParameter(b, 1, "bushing.bushing.stiffness.6", 1.0), std::invalid_argument);
  EXPECT_THROW(setNamedParameter(b, 1, "body.link3.mass", -1.0), ModelError);
}

TEST(Study, StatisticsEqualAPlainHostComputation) {
  const auto model = makeChain7Seed({true, true, false});
  StudySpec spec;
  spec.worlds = 500;
  spec.steps = 200;
  spec.dt = 1e-3;
  spec.seed = 11;
  spec.vary = {{"bushing.bushing.stiffness.3", Distribution::LogNormal, std::log(100.0), 0.3},
               {"body.link7.mass", Distribution::Uniform, 0.5, 1.5},
               {"q.joint1", Distribution::Normal, 0.3, 0.05}};
  spec.outputs = {"q.joint7", "energy.total", "body.link7.y"};
  spec.quantiles = {0.0, 0.1, 0.5, 0.9, 1.0};
  spec.histogramBins = 16;
  const StudyResult r = runStudy<double>(model, spec, Backend::Cpu);
  EXPECT_EQ(r.flaggedWorlds, 0);

  // The same study by hand.
  Batch<double> b(model, spec.worlds);
  for (std::size_t i = 0; i < spec.vary.size(); ++i)
    for (std::int64_t w = 0; w < spec.worlds; ++w)
      setNamedParameter(b, w, spec.vary[i].parameter, sampleVariation(spec.vary[i], spec.seed, int(i), w));
  b.step(spec.dt, spec.steps, spec.integrator);
  b.evaluate();
  for (std::size_t o = 0; o < spec.outputs.size(); ++o) {
    std::vector<double> v(spec.worlds);
    for (std::int64_t w = 0; w < spec.worlds; ++w) {
      if (spec.outputs[o] == "q.joint7") v[w] = b.q(w)[6];
      if (spec.outputs[o] == "energy.total") v[w] = b.kineticEnergy(w) + b.potentialEnergy(w);
      if (spec.outputs[o] == "body.link7.y") v[w] = b.bodyPose(w, 6).p[1];
    }
    double mean = 0;
    for (double x : v) mean += x;
    mean /= double(v.size());
    double var = 0;
    for (double x : v) var += (x - mean) * (x - mean);
    var /= double(v.size() - 1);
    std::sort(v.begin(), v.end());
    const OutputStats& s = r.outputs[o];
    EXPECT_EQ(s.name, spec.outputs[o]);
    EXPECT_EQ(s.count, spec.worlds);
    EXPECT_NEAR(s.mean, mean, 1e-12 * std::max(1.0, std::abs(mean)));
    EXPECT_NEAR(s.stddev, std::sqrt(var), 1e-10 * std::sqrt(var));
    EXPECT_EQ(s.min, v.front());
    EXPECT_EQ(s.max, v.back());
    EXPECT_EQ(s.quantiles[0], v.front());
    EXPECT_EQ(s.quantiles[4], v.back());
    const double pos = 0.5 * (v.size() - 1);
    EXPECT_NEAR(s.quantiles[2], 0.5 * (v[std::size_t(pos)] + v[std::size_t(pos) + 1]), 1e-15);
    std::int64_t total = 0;
    for (std::int64_t c : s.histogram) total += c;
    EXPECT_EQ(total, spec.worlds);
    EXPECT_GT(s.stddev, 0.0);
  }
}

TEST(Study, FlaggedWorldsAreLeftOutOfTheStatistics) {
  const double values[5] = {1, 2, 100, 3, 4};
  const std::int32_t status[5] = {0, 0, kStatusNonFinite, 0, 0};
  const OutputStats s = reduceValues("x", values, status, 5, {0.5}, 3);
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.max, 4.0);
  EXPECT_DOUBLE_EQ(s.quantiles[0], 2.5);
  EXPECT_EQ(s.histogram, (std::vector<std::int64_t>{1, 1, 2}));  // bins [1,2) [2,3) [3,4]
}

// A study's statistics when no world is healthy: every number NaN, with the reason; Spearman and
// Sobol undefined with theirs.
TEST(Study, NoHealthyWorldGivesNaNWithTheReason) {
  StudySpec spec;
  spec.vary = {{"a", Distribution::Uniform, 0, 1}};
  spec.outputs = {"x"};
  StudyOutcomes all;
  all.values = {{1, 2, 3, 4, 5, 6}};
  all.status = std::vector<std::int32_t>(6, kStatusNonFinite);
  for (Sensitivity sensitivity : {Sensitivity::None, Sensitivity::Sobol}) {
    spec.sensitivity = sensitivity;
    const StudyResult r = reduceStudy(spec, all);
    EXPECT_EQ(r.flaggedWorlds, 6);
    const OutputStats& s = r.outputs[0];
    EXPECT_EQ(s.count, 0);
    EXPECT_TRUE(std::isnan(s.mean) && std::isnan(s.stddev) && std::isnan(s.min) && std::isnan(s.ciHalfWidth));
    EXPECT_EQ(s.undefined, "no healthy world: all 6 worlds were flagged");
    EXPECT_TRUE(std::isnan(r.spearman[0][0]));
    EXPECT_EQ(r.spearmanUndefined[0][0], "fewer than 2 healthy worlds");
    if (sensitivity == Sensitivity::Sobol) {
      EXPECT_TRUE(std::isnan(r.sobol[0].first[0]) && std::isnan(r.sobol[0].totalHigh[0]));
      EXPECT_EQ(r.sobolUndefined[0][0], "fewer than 2 healthy base rows");
    }
  }
}

// A parameter that does not vary (sd 0, low == high) or an output that is constant: Sobol indices
// and Spearman's rho are undefined (NaN) with the reason, not 0 with the interval [0, 0].
TEST(Study, ConstantParametersAndOutputsHaveNoIndicesWithTheReason) {
  StudySpec spec;
  spec.sensitivity = Sensitivity::Sobol;
  spec.bootstrapResamples = 50;
  spec.vary = {{"a", Distribution::Uniform, 0, 1}, {"b", Distribution::Normal, 2, 0}, {"c", Distribution::Uniform, 3, 3}};
  spec.outputs = {"x", "constant"};
  const SaltelliDesign d(3, 40);
  StudyOutcomes all;
  all.values.assign(2, std::vector<double>(d.worlds()));
  all.status.assign(d.worlds(), 0);
  for (std::int64_t w = 0; w < d.worlds(); ++w) {
    all.values[0][w] = 2 * studyDraw(spec, 0, w) + studyDraw(spec, 1, w);  // depends on a only (b is 2)
    all.values[1][w] = 0.1;
  }
  const StudyResult r = reduceStudy(spec, all);
  ASSERT_EQ(r.sobol.size(), 2u);
  EXPECT_TRUE(std::isfinite(r.sobol[0].first[0]) && std::isfinite(r.sobol[0].firstLow[0]));
  EXPECT_EQ(r.sobolUndefined[0][0], "");
  for (int i : {1, 2}) {
    EXPECT_TRUE(std::isnan(r.sobol[0].first[i]) && std::isnan(r.sobol[0].total[i])) << i;
    EXPECT_TRUE(std::isnan(r.sobol[0].firstLow[i]) && std::isnan(r.sobol[0].totalHigh[i])) << i;
  }
  EXPECT_EQ(r.sobolUndefined[0][1], "parameter 'b' does not vary (every draw is 2)");
  EXPECT_EQ(r.sobolUndefined[0][2], "parameter 'c' does not vary (every draw is 3)");
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(std::isnan(r.sobol[1].first[i]) && std::isnan(r.sobol[1].totalLow[i])) << i;
    EXPECT_FALSE(r.sobolUndefined[1][i].empty());
  }
  EXPECT_EQ(r.sobolUndefined[1][0], "output 'constant' is constant (0.1)");
  EXPECT_TRUE(std::isfinite(r.spearman[0][0]));
  EXPECT_EQ(r.spearmanUndefined[0][0], "");
  EXPECT_EQ(r.spearmanUndefined[1][0], "parameter 'b' does not vary (every draw is 2)");
  EXPECT_EQ(r.spearmanUndefined[0][1], "output 'constant' is constant (0.1)");
}

// The same parameter varied twice is refused (the first draws would be discarded, both reported).
TEST(Study, AParameterVariedTwiceIsRefused) {
  const auto model = makeChain(3);
  StudySpec spec;
  spec.outputs = {"q.joint1"};
  spec.vary = {{"body.link1.mass", Distribution::Uniform, 1, 2}, {"q.joint2", Distribution::Uniform, 0, 1},
               {"body.link1.mass", Distribution::Uniform, 3, 4}};
  try {
    validateStudy(model, spec);
    FAIL() << "a parameter varied twice was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("vary[2] ('body.link1.mass') varies the value vary[0]"), std::string::npos)
        << e.what();
  }
}

// A draw the model refuses is reported with the study's world index, whatever the chunk or the
// first world of the piece (a rank's share), not the index inside the chunk's batch.
TEST(Study, DrawErrorsNameTheStudysWorld) {
  const auto model = makeChain(3);
  StudySpec spec;
  spec.outputs = {"q.joint1"};
  spec.vary = {{"body.link1.mass", Distribution::Uniform, -1, 1}};  // about half the draws negative
  spec.steps = 1;
  spec.chunk = 7;
  const Variation& v = spec.vary[0];
  std::int64_t bad = 1600;
  while (sampleVariation(v, spec.seed, 0, bad) > 0) ++bad;  // the first world refused
  try {
    runStudyWorlds<double>(model, spec, Backend::Cpu, 1600, 40);
    FAIL() << "a negative mass was accepted";
  } catch (const ModelError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("for world " + std::to_string(bad) + ": body 'link1'"), std::string::npos) << m;
    EXPECT_EQ(m.find(": world "), std::string::npos) << m;
  }
}

// A draw that overflows to infinity (a normal of sd 1e308) for an initial q is named with its
// world and variation, as a value the model refuses is.
TEST(Study, NonFiniteDrawsNameTheStudysWorld) {
  const auto model = makeChain(3);
  StudySpec spec;
  spec.outputs = {"q.joint1"};
  spec.vary = {{"q.joint2", Distribution::Normal, 0, 1e308}};
  spec.steps = 1;
  const Variation& v = spec.vary[0];
  EXPECT_NO_THROW(validateStudy(model, spec));  // even where world 0's draw is not finite
  std::int64_t bad = 0;
  while (std::isfinite(sampleVariation(v, spec.seed, 0, bad))) ++bad;
  try {
    runStudyWorlds<double>(model, spec, Backend::Cpu, 0, bad + 1);
    FAIL() << "an infinite initial q was accepted";
  } catch (const ModelError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("variation 'q.joint2' drew "), std::string::npos) << m;
    EXPECT_NE(m.find("inf for world " + std::to_string(bad) + ": "), std::string::npos) << m;
  }
}

TEST(Study, BadSpecificationsAreRejectedWithReasons) {
  const auto model = makeChain(3);
  StudySpec spec;
  spec.outputs = {"q.joint1"};
  spec.vary = {{"body.nowhere.mass", Distribution::Uniform, 1, 2}};
  EXPECT_THROW(validateStudy(model, spec), std::invalid_argument);
  spec.vary = {{"body.link1.mass", Distribution::Normal, 0.1, 1.0}};  // draws negative masses
  spec.worlds = 50;
  spec.steps = 1;
  try {
    runStudy<double>(model, spec, Backend::Cpu);
    FAIL() << "negative masses accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("variation 'body.link1.mass' drew"), std::string::npos) << e.what();
  }
  spec.vary.clear();
  spec.outputs = {"q.nothing"};
  EXPECT_THROW(validateStudy(model, spec), std::invalid_argument);
}

// The same study on the GPU and the CPU: the outcomes agree to rounding, so do the statistics.
TEST(Study, CudaStudyMatchesTheCpu) {
  const DeviceInfo dev = queryDevice();
  if (!dev.available) GTEST_SKIP() << "GPU test skipped: " << dev.reason;
  const auto model = makeChain(3);
  StudySpec spec;
  spec.worlds = 4096;
  spec.steps = 50;
  spec.vary = {{"q.joint1", Distribution::Uniform, -1, 1}};
  spec.outputs = {"q.joint3", "energy.total"};
  const StudyResult cpu = runStudy<double>(model, spec, Backend::Cpu);
  const StudyResult gpu = runStudy<double>(model, spec, Backend::Cuda);
  for (std::size_t o = 0; o < spec.outputs.size(); ++o) {
    EXPECT_NEAR(gpu.outputs[o].mean, cpu.outputs[o].mean, 1e-10);
    EXPECT_NEAR(gpu.outputs[o].stddev, cpu.outputs[o].stddev, 1e-10);
    EXPECT_NEAR(gpu.outputs[o].quantiles[2], cpu.outputs[o].quantiles[2], 1e-10);
  }
}

// Chunks change no bit: every world's draws and outcome depend only on its index, and the
// statistics only on the outcomes in world order.
TEST(Study, ChunkSizeChangesNoBit) {
  const auto model = makeChain7Seed();
  StudySpec spec;
  spec.worlds = 150;
  spec.steps = 40;
  spec.seed = 3;
  spec.vary = {{"body.link7.mass", Distribution::Uniform, 0.5, 1.5}, {"q.joint2", Distribution::Normal, 0.2, 0.1}};
  spec.outputs = {"q.joint7", "energy.total"};
  StudyOutcomes whole;
  const StudyResult r = runStudy<double>(model, spec, Backend::Cpu, {}, {}, &whole);
  ASSERT_EQ(whole.size(), spec.worlds);
  for (std::int64_t chunk : {1, 7, 64}) {
    spec.chunk = chunk;
    StudyOutcomes pieces;
    const StudyResult c = runStudy<double>(model, spec, Backend::Cpu, {}, {}, &pieces);
    for (std::size_t o = 0; o < spec.outputs.size(); ++o) {
      ASSERT_EQ(pieces.values[o].size(), whole.values[o].size());
      EXPECT_EQ(0, std::memcmp(pieces.values[o].data(), whole.values[o].data(), whole.values[o].size() * sizeof(double)))
          << "chunk " << chunk;
      EXPECT_EQ(c.outputs[o].mean, r.outputs[o].mean);
      EXPECT_EQ(c.outputs[o].stddev, r.outputs[o].stddev);
      EXPECT_EQ(c.outputs[o].quantiles, r.outputs[o].quantiles);
      EXPECT_EQ(c.outputs[o].histogram, r.outputs[o].histogram);
    }
    EXPECT_EQ(c.spearman, r.spearman);
  }
  // Worlds run in two pieces (two ranks' shares) give the same outcomes as in one.
  spec.chunk = 0;
  StudyOutcomes joined = runStudyWorlds<double>(model, spec, Backend::Cpu, 0, 61);
  joined.append(runStudyWorlds<double>(model, spec, Backend::Cpu, 61, 89));
  EXPECT_EQ(joined.values, whole.values);
  EXPECT_EQ(joined.status, whole.status);
  // The outcomes differ between worlds (the comparison above compares something).
  EXPECT_NE(whole.values[0][0], whole.values[0][1]);
}

// An output equal to a uniform parameter (no steps: q.joint1 is its initial value): the 95%
// interval of its mean reaches half-width h after about n = (1.96 sigma / h)^2 worlds, sigma =
// (high - low) / sqrt(12). The rule checks after every round of `every` worlds, so it stops at the
// first round at or past n — within one round of the closed form, and exactly where the rule
// applied to the drawn values says.
TEST(Study, SequentialStudyStopsWhereTheClosedFormSays) {
  const auto model = makeChain(3);
  StudySpec spec;
  spec.worlds = 100;
  spec.steps = 0;
  spec.seed = 17;
  spec.vary = {{"q.joint1", Distribution::Uniform, -1, 1}};
  spec.outputs = {"q.joint1"};
  spec.until = {"q.joint1", 0.02, 100000, 100};
  const double sigma = 2 / std::sqrt(12.0);
  const double closedForm = std::pow(1.96 * sigma / spec.until.ciHalfWidth, 2);  // 3201.3
  const StudyResult r = runStudy<double>(model, spec, Backend::Cpu);
  EXPECT_EQ(r.worlds % 100, 0);
  EXPECT_NEAR(double(r.worlds), std::ceil(closedForm / 100) * 100, 100.0) << r.worlds;
  EXPECT_LE(r.outputs[0].ciHalfWidth, spec.until.ciHalfWidth);
  EXPECT_EQ(r.outputs[0].count, r.worlds);
  // The rule on the draws themselves: the first multiple of 100 whose interval is narrow enough.
  std::int64_t expected = 0;
  std::vector<double> x;
  for (std::int64_t w = 0; expected == 0; ++w) {
    x.push_back(sampleVariation(spec.vary[0], spec.seed, 0, w));
    if (x.size() % 100 == 0 && momentsOf(x.data(), std::int64_t(x.size())).halfWidth95() <= spec.until.ciHalfWidth)
      expected = std::int64_t(x.size());
  }
  EXPECT_EQ(r.worlds, expected);
  // max_worlds bounds it.
  spec.until.maxWorlds = 1000;
  EXPECT_EQ(runStudy<double>(model, spec, Backend::Cpu).worlds, 1000);
}

// A Sobol study runs the Saltelli design (worlds x (variations + 2)); with no steps an outcome
// equal to one parameter has first-order and total index 1 for it (to sampling error, about
// 1 / sqrt(400) here) and exactly 0 for the other (its AB worlds repeat the A worlds' outcome).
TEST(Study, SobolStudyRunsTheDesignAndFindsTheParameterThatMatters) {
  const auto model = makeChain(3);
  StudySpec spec;
  spec.worlds = 400;
  spec.steps = 0;
  spec.vary = {{"q.joint1", Distribution::Uniform, -1, 1}, {"q.joint2", Distribution::Uniform, -1, 1}};
  spec.outputs = {"q.joint1"};
  spec.sensitivity = Sensitivity::Sobol;
  spec.bootstrapResamples = 100;
  const StudyResult r = runStudy<double>(model, spec, Backend::Cpu);
  EXPECT_EQ(r.worlds, 400 * 4);
  EXPECT_EQ(r.outputs[0].count, 800);  // the A and B worlds
  ASSERT_EQ(r.sobol.size(), 1u);
  EXPECT_NEAR(r.sobol[0].first[0], 1.0, 0.15);
  EXPECT_NEAR(r.sobol[0].total[0], 1.0, 0.15);
  EXPECT_EQ(r.sobol[0].first[1], 0.0);
  EXPECT_EQ(r.sobol[0].total[1], 0.0);
  EXPECT_LE(r.sobol[0].firstLow[0], r.sobol[0].first[0]);
  EXPECT_GE(r.sobol[0].firstHigh[0], r.sobol[0].first[0]);
  EXPECT_NEAR(r.spearman[0][0], 1.0, 1e-12);
}

// Outcomes summarized in pieces (rank shares, rounds) and put together on rank 0 give the moments
// of the whole set bit for bit, however the pieces cut the blocks of kMomentBlock worlds.
TEST(Study, SharesAssembleToTheMomentsOfAllWorlds) {
  const std::int64_t n = 5 * kMomentBlock + 333;
  std::vector<double> x(n);
  std::vector<std::int32_t> status(n, 0);
  for (std::int64_t i = 0; i < n; ++i) x[i] = std::sin(0.37 * double(i)) * 1e3 + double(i % 17);
  status[77] = kStatusNonFinite;
  const lockstep::Moments all = momentsOf(x.data(), n, status.data());
  for (std::int64_t cut : {std::int64_t(1), std::int64_t(500), kMomentBlock, std::int64_t(2900)}) {
    MomentsAssembly assembly;
    QuantileSketch sketch;
    for (std::int64_t first = 0; first < n; first += cut) {
      OutputShare share;
      const std::int64_t m = std::min(cut, n - first);
      share.add(first, x.data() + first, status.data() + first, m);
      std::vector<double> sent;
      share.encode(sent);
      std::size_t at = 0;
      const OutputShare received = OutputShare::decode(sent, at);
      EXPECT_EQ(at, sent.size());
      assembly.add(received);
      sketch.merge(received.sketch);
    }
    const lockstep::Moments m = assembly.total(n);
    EXPECT_EQ(m.count, n - 1) << cut;
    EXPECT_EQ(m.mean, all.mean) << cut;
    EXPECT_EQ(m.M2, all.M2) << cut;
    EXPECT_EQ(m.min, all.min);
    EXPECT_EQ(m.max, all.max);
    EXPECT_EQ(sketch.count(), n - 1);
  }
  // A missing piece is an error, not a silent undercount.
  MomentsAssembly partial;
  OutputShare share;
  share.add(0, x.data(), status.data(), 1500);
  partial.add(share);
  EXPECT_THROW(partial.total(n), std::logic_error);
}

// The names of --precision, --device, study files' "precision" and Python's device=, and the one
// float/double dispatch behind them.
TEST(RunChoices, NamesParseBothWaysAndThePrecisionPicksTheScalarType) {
  for (const std::string& name : precisionNames()) EXPECT_EQ(precisionName(parsePrecision(name)), name);
  EXPECT_EQ(parsePrecision("float"), Precision::Float);
  EXPECT_EQ(parsePrecision("double"), Precision::Double);
  EXPECT_EQ(parseDeviceChoice("cpu"), DeviceChoice::Cpu);
  EXPECT_EQ(parseDeviceChoice("cuda"), DeviceChoice::Cuda);
  EXPECT_EQ(parseDeviceChoice("auto"), DeviceChoice::Auto);
  EXPECT_EQ(deviceChoiceNames(), (std::vector<std::string>{"cpu", "cuda", "auto"}));
  try {
    parseDeviceChoice("gpu");
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "device must be \"cpu\", \"cuda\" or \"auto\", not \"gpu\"");
  }
  EXPECT_THROW(parsePrecision("half"), std::invalid_argument);
  EXPECT_EQ(withPrecision(Precision::Float, [](auto t) { return sizeof(t); }), sizeof(float));
  EXPECT_EQ(withPrecision(Precision::Double, [](auto t) { return sizeof(t); }), sizeof(double));
}

}  // namespace
}  // namespace lockstep::test

namespace lockstep::test {

// "sensitivity": "derivative" on a closed form: a body on a Slider along x under gravity g along x,
// RK4 (exact for constant acceleration): x(T) = x0 + u0 T + g T^2 / 2, u(T) = u0 + g T. Varying g
// (uniform [1, 3]) and u0 (normal 0.5, sd 0.2): dx/dg = T^2 / 2, dx/du0 = T, du/dg = T, du/du0 = 1,
// in every world; the measures are their squares and the bounds C nu / Var with the study's own
// variance. A log-normal variation has nu but no bound; an output the derivatives do not reach is
// NaN with the reason.
TEST(Study, DerivativeSensitivityOfAClosedForm) {
  ModelBuilder mb;
  mb.setGravity({{2, 0, 0}});
  BodyDesc b = simpleBody("cart");
  b.mobilizer = MobilizerType::Slider;
  mb.addBody(b);
  const auto model = mb.build();
  StudySpec spec;
  spec.worlds = 200;
  spec.steps = 50;
  spec.dt = 0.02;  // T = 1
  spec.sensitivity = Sensitivity::Derivative;
  spec.vary = {{"gravity.x", Distribution::Uniform, 1.0, 3.0},
               {"u.cart", Distribution::Normal, 0.5, 0.2},
               {"damping.cart", Distribution::LogNormal, std::log(1e-9), 0.1}};
  spec.outputs = {"q.cart", "u.cart", "energy.kinetic"};
  const StudyResult r = runStudy<double>(model, spec, Backend::Cpu);
  ASSERT_EQ(r.dgsm.size(), 3u);
  const double T = 1.0;
  const double expected[2][2] = {{0.25 * T * T * T * T, T * T}, {T * T, 1.0}};
  for (int o = 0; o < 2; ++o) {
    const double variance = r.outputs[o].stddev * r.outputs[o].stddev;
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(r.dgsm[o][i], expected[o][i], 1e-6 * expected[o][i]) << o << " " << i;  // damping 1e-9
      const double C = i == 0 ? 4.0 / (M_PI * M_PI) : 0.04;
      EXPECT_NEAR(r.dgsmBound[o][i], C * r.dgsm[o][i] / variance, 1e-12) << o << " " << i;
      EXPECT_TRUE(r.dgsmUndefined[o][i].empty());
    }
    // The bound holds: a linear output's total index of g is (d o / d g)^2 Var(g) / Var(o), and
    // Var(g) = 4/12 < 4/pi^2.
    EXPECT_GT(r.dgsmBound[o][0], expected[o][0] * (4.0 / 12.0) / variance);
    EXPECT_TRUE(std::isfinite(r.dgsm[o][2]));
    EXPECT_TRUE(std::isnan(r.dgsmBound[o][2]));
    EXPECT_NE(r.dgsmUndefined[o][2].find("log-normal"), std::string::npos);
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(std::isnan(r.dgsm[2][i]));
    EXPECT_NE(r.dgsmUndefined[2][i].find("do not reach"), std::string::npos) << r.dgsmUndefined[2][i];
  }
}

}  // namespace lockstep::test
