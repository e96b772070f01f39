// The fused products of lanes.h as the AVX2 copy of the pack code compiles them (this file gets the
// copy's flags, cmake/LockstepTargets.cmake): each expression on a full pack and, lane by lane, on
// one-lane packs. Plain arrays in and out, nothing else from the library or the standard library,
// so that no code compiled for AVX2 can stand in for the caller's (tests/test_lanes_fused.cpp calls
// it only where the processor has AVX2 and FMA).
#include "lanes_fused.h"
#include "lockstep/backends/lanes.h"

#if !LOCKSTEP_LANES_FUSED || LOCKSTEP_LANE_BYTES != 32
#error "lanes_fused_avx2.cpp must be compiled with the AVX2 copy's flags"
#endif

namespace lockstep::lanes_test {
namespace {

template <class P>
void expressions(P a, P b, P c, P d, P out[kFusedExpressions]) {
  out[0] = a * b + c;
  out[1] = c + a * b;
  out[2] = a * b - c;
  out[3] = c - a * b;
  P x = c;
  x += a * b;
  out[4] = x;
  x = c;
  x -= a * b;
  out[5] = x;
  out[6] = a * b + c * d;
  out[7] = a * b - c * d;
  const P p = a * b;  // a product kept in a variable is rounded
  out[8] = p + c;
}

template <class S>
void run(const S in[4][kLanes<S>], S full[kFusedExpressions][kLanes<S>], S one[kFusedExpressions][kLanes<S>]) {
  constexpr int W = kLanes<S>;
  using P = Pack<S, W>;
  P v[4];
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < W; ++l) v[k].lane(l) = in[k][l];
  P out[kFusedExpressions];
  expressions(v[0], v[1], v[2], v[3], out);
  for (int e = 0; e < kFusedExpressions; ++e)
    for (int l = 0; l < W; ++l) full[e][l] = out[e][l];
  for (int l = 0; l < W; ++l) {
    using P1 = Pack<S, 1>;
    P1 o[kFusedExpressions];
    expressions(P1(in[0][l]), P1(in[1][l]), P1(in[2][l]), P1(in[3][l]), o);
    for (int e = 0; e < kFusedExpressions; ++e) one[e][l] = o[e][0];
  }
}

}  // namespace

void fusedExpressionsAvx2(const double in[4][4], double full[kFusedExpressions][4], double one[kFusedExpressions][4]) {
  run<double>(in, full, one);
}
void fusedExpressionsAvx2(const float in[4][8], float full[kFusedExpressions][8], float one[kFusedExpressions][8]) {
  run<float>(in, full, one);
}

}  // namespace lockstep::lanes_test
