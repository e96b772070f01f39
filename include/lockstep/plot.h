// Lockstep plots for people: the histogram of a study's outcome as a PNG image (PLplot, cairo).
#pragma once

#include <string>

#include "lockstep/study.h"

namespace lockstep {

// Writes the histogram of s (its bins over [min, max]) with the mean and the quantiles marked,
// titled with title. Throws std::runtime_error when the image cannot be written.
void writeHistogramPng(const std::string& path, const OutputStats& s, const std::string& title);

}  // namespace lockstep
