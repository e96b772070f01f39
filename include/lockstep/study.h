// Lockstep Monte Carlo parameter studies: vary per-world parameters by named distributions, run
// every world, and reduce chosen outputs across worlds (mean, standard deviation, extremes,
// quantiles, histogram) on the device for the CUDA backend, on the host for the CPU backend.
//
// Sampling is counter-based: the value drawn for (seed, variation, world) depends on nothing
// else, so a study gives the same parameters whatever the number of worlds, threads or backend.
//
// Names come from the field registry (views.h; `lockstep info` prints them for a model, and
// docs/study-format.md gives the grammar prefix[.element][.part]):
//   parameters: every per-world parameter (body.<body>.mass, spring.<name>.stiffness, gravity.z, ...)
//               and the initial state q.<coordinate>, u.<speed>;
//   outputs:    every component of the state, evaluation and observation fields at the end of the
//               run (q.<coordinate>, udot.<speed>, energy.kinetic, body.<body>.x, body.<body>.vx,
//               bushing.<name>.q.3, contact.<name>.error, multiplier.<contact>.z, ...) and energy.total.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/batch.h"

namespace lockstep {

enum class Distribution { Uniform, Normal, LogNormal };
// Parses "uniform", "normal", "lognormal" / "log-normal"; throws std::invalid_argument otherwise.
Distribution parseDistribution(const std::string& s);

struct Variation {
  std::string parameter;
  Distribution distribution = Distribution::Uniform;
  double a = 0, b = 1;  // uniform: [a, b]; normal: mean a, standard deviation b; log-normal: mean a and
                        // standard deviation b of the logarithm
  double min = -std::numeric_limits<double>::infinity();  // draws are clipped to [min, max]
  double max = std::numeric_limits<double>::infinity();
};

struct StudySpec {
  std::vector<Variation> vary;
  std::uint64_t seed = 1;
  std::int64_t worlds = 1000;
  int steps = 1000;
  double dt = 1e-3;
  Integrator integrator = Integrator::RK4;
  std::vector<std::string> outputs;                       // the first is the main outcome
  std::vector<double> quantiles = {0.05, 0.25, 0.5, 0.75, 0.95};
  int histogramBins = 40;
};

struct OutputStats {
  std::string name;
  std::int64_t count = 0;  // healthy worlds the statistics are over
  double mean = 0, stddev = 0, min = 0, max = 0;  // stddev with the n - 1 denominator
  std::vector<double> quantiles;                  // at StudySpec::quantiles, linear interpolation
  std::vector<std::int64_t> histogram;            // histogramBins equal bins over [min, max]
};

struct StudyResult {
  std::vector<OutputStats> outputs;
  std::int64_t flaggedWorlds = 0;  // worlds that failed and were left out of the statistics
  double wallSeconds = 0;
};

// The value drawn for one world (before clipping to [min, max] is applied it is the raw draw).
double sampleVariation(const Variation& v, std::uint64_t seed, int variationIndex, std::int64_t world);

// Sets a named parameter or initial-state value of world w (names above); validates it.
template <class T>
void setNamedParameter(Batch<T>& batch, std::int64_t w, const std::string& name, double value);
// Checks that every variation and output of the spec names something in the model.
void validateStudy(const std::shared_ptr<const Model>& model, const StudySpec& spec);

// Statistics of n values with their health flags (status 0), as described by OutputStats;
// the host computation. reduceOnDevice does the same with Thrust on device arrays.
OutputStats reduceValues(const std::string& name, const double* values, const std::int32_t* status, std::int64_t n,
                         const std::vector<double>& quantiles, int bins);
// values (and plus, when not null: reduced as values + plus) are n contiguous floats or doubles.
OutputStats reduceOnDevice(const std::string& name, const void* values, const void* plus, bool valuesAreFloat,
                           const std::int32_t* status, std::int64_t n, const std::vector<double>& quantiles,
                           int bins);

// Samples, sets up and runs the study on the given backend, then reduces the outputs. setup, when
// given, prepares the batch before the variations are drawn (a scene's initial state and
// per-world values); progress is called after each chunk of steps with the fraction done and the
// seconds elapsed.
template <class T>
StudyResult runStudy(std::shared_ptr<const Model> model, const StudySpec& spec, Backend backend,
                     const std::function<void(double, double)>& progress = {},
                     const std::function<void(Batch<T>&)>& setup = {});

// The per-world values of one output in host memory, after a run (for reports and tests).
template <class T>
std::vector<double> outputValues(Batch<T>& batch, const std::string& output);

}  // namespace lockstep
