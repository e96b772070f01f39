// tests/lanes_fused_avx2.cpp, compiled with the AVX2 copy's flags; called by tests/test_lanes_fused.cpp.
#pragma once

namespace lockstep::lanes_test {

// a*b + c, c + a*b, a*b - c, c - a*b, x += a*b, x -= a*b (x = c), a*b + c*d, a*b - c*d, and a
// product kept in a variable then added to c.
constexpr int kFusedExpressions = 9;

// in: a, b, c, d for each lane. full: the expressions on one full AVX2 pack; one: on one-lane packs.
void fusedExpressionsAvx2(const double in[4][4], double full[kFusedExpressions][4], double one[kFusedExpressions][4]);
void fusedExpressionsAvx2(const float in[4][8], float full[kFusedExpressions][8], float one[kFusedExpressions][8]);

}  // namespace lockstep::lanes_test
