// Study files: a Monte Carlo study (study.h) described in JSON, either in a file of its own that
// names its scene, or as the "study" object of a scene file. The format is in docs/study-format.md.
#pragma once

#include <string>

#include "lockstep/io/scene.h"
#include "lockstep/study/study.h"

namespace lockstep {

struct StudyFile {
  std::string source;     // the file the study was read from
  Scene scene;            // the mechanism, its initial state and per-world values
  StudySpec spec;         // worlds, steps, dt and integrator default to the scene's simulation
  std::string precision;  // "float" or "double" (default "double")
};

// Reads a study file or a scene file with a "study" object. Throws InputError
// ("<file>: <JSON path>: <reason>") for anything malformed, including parameter and output names
// the model does not have.
StudyFile loadStudyFile(const std::string& path, const SceneOptions& options = {});
StudyFile parseStudy(const std::string& json, const std::string& source, const std::string& baseDirectory,
                     const SceneOptions& options = {});

// A JSON array of variations as a study file's "vary" lists them (docs/study-format.md), e.g. what
// a task's domain randomization draws; throws InputError naming the entry and the reason. Parameter
// names are not checked here (against a model, Batch::setParameter checks them).
std::vector<Variation> parseVariations(const std::string& json, const std::string& source);

// What `lockstep study` writes about a study's statistics (host/io/study_report.cpp), which
// Python's run_study returns too. The JSON (PREFIX.json) depends only on the study, not on the
// machine, the chunk size, the number of ranks or the wall time, so that the same study writes the
// same bytes: the study and its draws, per output the statistics (null where undefined, with a
// "reason"), Spearman's rho and the Sobol indices (null with a "reason" where undefined).
// sketched: the quantiles come from the sketch (reduced on the ranks).
std::string studyJson(const StudyFile& f, Backend backend, const StudyResult& r, bool sketched);
// One line per output: count, mean, stddev, min, max, standard error, 95% half-width, quantiles.
std::string studyCsv(const StudySpec& spec, const StudyResult& r);
// The distribution's name in study files: "uniform", "normal", "lognormal".
const char* distributionName(Distribution d);

}  // namespace lockstep
