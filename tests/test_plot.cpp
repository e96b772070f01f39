// The study histogram, the Sobol indices and the Spearman correlations are written as real PNG images.
#include <fstream>
#include <iterator>

#include "lockstep/report/png_plots.h"
#include "lockstep/study/study.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

TEST(Plot, HistogramPngIsWritten) {
  std::vector<double> values;
  std::vector<std::int32_t> status;
  for (int i = 0; i < 1000; ++i) {
    values.push_back(std::sin(0.37 * i) + 0.3 * std::cos(1.3 * i));
    status.push_back(0);
  }
  const OutputStats s = reduceValues("q.joint7", values.data(), status.data(), 1000, {0.05, 0.5, 0.95}, 30);
  const std::string path = ::testing::TempDir() + "lockstep_histogram.png";
  const HistogramPlot h = {"chain-7 study", s.name, s.count, s.mean, s.stddev, s.min, s.max, s.quantiles, s.histogram};
  EXPECT_EQ(pngPlotsUnavailable(), "");  // PLplot's cairo driver is installed here (scripts/deps.sh)
  writeHistogramPng(path, h);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
  EXPECT_THROW(writeHistogramPng("/nonexistent-dir/x.png", h), std::runtime_error);
  HistogramPlot empty = h;
  empty.count = 0;
  EXPECT_THROW(writeHistogramPng(path, empty), std::runtime_error);
}

// Reads a file whole.
std::string fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Plot, SobolAndSpearmanPngsAreWritten) {
  SobolPlot s;
  s.title = "Ishigami";
  s.names = {"x1", "x2", "x3"};
  s.rows = 4096;
  s.resamples = 500;
  s.first = {0.31, 0.44, -0.01};
  s.total = {0.56, 0.44, 0.24};
  s.firstLow = {0.28, 0.41, -0.03};
  s.firstHigh = {0.34, 0.47, 0.01};
  s.totalLow = {0.53, 0.42, 0.22};
  s.totalHigh = {0.59, 0.46, 0.26};
  const std::vector<std::string> names = s.names;
  const std::string sobol = ::testing::TempDir() + "lockstep_sobol.png";
  writeSobolPng(sobol, s);
  std::string bytes = fileBytes(sobol);
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
  SobolPlot mismatched = s;
  mismatched.names = {"x1"};
  EXPECT_THROW(writeSobolPng(sobol, mismatched), std::runtime_error);
  EXPECT_THROW(writeSobolPng("/nonexistent-dir/x.png", s), std::runtime_error);

  const std::vector<std::vector<double>> rho = {{0.9, -0.2}, {-1.0, NAN}, {0.05, 0.5}};
  const std::string spearman = ::testing::TempDir() + "lockstep_spearman.png";
  writeSpearmanPng(spearman, names, {"q.joint7", "energy.total"}, rho, "chain-7 study");
  bytes = fileBytes(spearman);
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
  EXPECT_THROW(writeSpearmanPng(spearman, names, {"a"}, rho, "t"), std::runtime_error);
}

}  // namespace
}  // namespace lockstep::test
