// The packs' fused multiply-adds (lanes.h, PackProduct): with FMA in the instruction set, exactly
// the products that feed a sum are fused, each rounded once as std::fma rounds it, and a one-lane
// pack gives the bits of the same lane of a full pack. Runs the AVX2 copy's compilation of the
// expressions (tests/lanes_fused_avx2.cpp) where the processor has AVX2 and FMA.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "lanes_fused.h"

namespace lockstep::lanes_test {
namespace {

template <class S>
bool sameBits(S x, S y) {
  return std::memcmp(&x, &y, sizeof(S)) == 0;
}

// Inputs where a rounded product and a fused one differ: a b = 1 - e^2 needs more bits than S has.
template <class S, int W>
void fill(S in[4][W]) {
  const S e = sizeof(S) == 8 ? S(std::ldexp(1.0, -30)) : S(std::ldexp(1.0, -13));
  for (int l = 0; l < W; ++l) {
    const S k = S(1 + l);
    in[0][l] = S(1) + k * e;
    in[1][l] = S(1) - k * e;
    in[2][l] = S(-1) - S(l % 2) * e;
    in[3][l] = S(0.75) + k * e;
  }
}

template <class S, int W>
void expectFusedAsWritten() {
  S in[4][W], full[kFusedExpressions][W], one[kFusedExpressions][W];
  fill<S, W>(in);
  fusedExpressionsAvx2(in, full, one);
  int fusedDiffers = 0;
  for (int l = 0; l < W; ++l) {
    const S a = in[0][l], b = in[1][l], c = in[2][l], d = in[3][l];
    const S cd = c * d, ab = a * b;
    const S expected[kFusedExpressions] = {std::fma(a, b, c),  std::fma(a, b, c),   std::fma(a, b, -c),
                                           std::fma(-a, b, c), std::fma(a, b, c),   std::fma(-a, b, c),
                                           std::fma(a, b, cd), std::fma(a, b, -cd), ab + c};
    for (int e = 0; e < kFusedExpressions; ++e) {
      EXPECT_TRUE(sameBits(full[e][l], expected[e])) << "expression " << e << ", lane " << l << ": " << full[e][l]
                                                     << " against " << expected[e];
      EXPECT_TRUE(sameBits(one[e][l], full[e][l])) << "expression " << e << ", lane " << l << ": one-lane pack "
                                                   << one[e][l] << ", full pack " << full[e][l];
    }
    fusedDiffers += !sameBits(expected[0], S(ab + c));
  }
  EXPECT_GT(fusedDiffers, 0) << "the inputs do not tell a fused product from a rounded one";
}

bool hasAvx2AndFma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

TEST(LanesFused, ProductsFeedingASumAreFusedAlikeInFullAndOneLanePacks) {
  if (!hasAvx2AndFma()) GTEST_SKIP() << "this processor has no AVX2 with FMA";
  expectFusedAsWritten<double, 4>();
  expectFusedAsWritten<float, 8>();
}

}  // namespace
}  // namespace lockstep::lanes_test
