// The study histogram is written as a real PNG image.
#include <fstream>
#include <iterator>

#include "lockstep/plot.h"
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
  writeHistogramPng(path, s, "chain-7 study");
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
  EXPECT_THROW(writeHistogramPng("/nonexistent-dir/x.png", s, "t"), std::runtime_error);
}

}  // namespace
}  // namespace lockstep::test
