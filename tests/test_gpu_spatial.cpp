// The spatial algebra evaluated inside a CUDA kernel agrees with the same code on the host.
#include <string>
#include <vector>

#include "gpu_spatial_suite.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

TEST(GpuSpatial, KernelAgreesWithHost) {
  Random rnd(51);
  const int n = 256;
  std::vector<SpatialCase> cases(n);
  for (SpatialCase& c : cases) {
    c = {rnd.transform(), rnd.transform(), rnd.spatialVec(), rnd.spatialVec(), rnd.spatialVec(), rnd.spatialVec(),
         rnd.vec3(), rnd.vec3(), rnd.vec3(), rnd.articulatedInertia(), rnd.spatialInertia()};
  }
  std::vector<SpatialResults> gpu(n), cpu(n);
  std::string why;
  if (!evaluateSpatialSuiteOnDevice(cases.data(), gpu.data(), n, &why)) GTEST_SKIP() << "GPU test skipped: " << why;
  for (int i = 0; i < n; ++i) evaluateSpatialSuite(cases[i], cpu[i]);
  // The device contracts multiply-adds into FMAs and the host does not, so results differ in the
  // last bits: 1e-12 relative is a few hundred ulps of double over ~100-flop expressions.
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 14; ++k) EXPECT_TRUE(near(toEigen(gpu[i].out[k]), toEigen(cpu[i].out[k]), 1e-12)) << k;
    EXPECT_TRUE(near(toEigen(gpu[i].shifted.toSpatialMat()), toEigen(cpu[i].shifted.toSpatialMat()), 1e-12));
    EXPECT_TRUE(near(toEigen(gpu[i].sum.toSpatialMat()), toEigen(cpu[i].sum.toSpatialMat()), 1e-12));
    EXPECT_TRUE(near(toEigen(gpu[i].central), toEigen(cpu[i].central), 1e-12));
  }
}

}  // namespace
}  // namespace lockstep::test
