// Lockstep lanes: packs of worlds for the CPU backend's SIMD units (host code only, g++).
//
// Pack<S, W> holds one scalar of each of W worlds (default W = kLanes<S>, a full register).
// Instantiating the per-world templates with T = Pack<S> advances W worlds with every instruction: the world index is innermost in
// storage (layout.h), so the N lanes of a pack are N consecutive worlds. Lane l of every operation is the
// IEEE operation on lane l alone (+ - * / sqrt and fused multiply-adds are exact per lane; sin, cos
// and atan2 are computed on all lanes together, each lane on its own to within an ulp or two), so a
// world's result never depends on its neighbours. With FMA in the instruction set, a product that
// feeds a sum is fused as the expression is written (PackProduct, below).
//
// Comparisons give a PackMask, and statuses are PackBits: one set of StatusFlag bits per lane
// (math.h, "lanes"). Width: the register of the instruction set this file is compiled for (below):
// 16 bytes for plain x86-64, 32 with AVX2 and FMA, 64 with AVX-512; W = 1 is one world in scalar
// registers, with the same operations as a lane of a full pack.
//
// The CPU backend puts a batch's model and W of its worlds into that form
// (host/backends/lane_worlds.h) and steps them (host/backends/cpu_packs.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "lockstep/physics/workspace.h"

// Packs pass by value between inlined functions; where a file is compiled without AVX, g++ notes
// that such arguments would change the ABI of a non-inlined call. None crosses a library boundary.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

// The instruction set this file is compiled for, from the compiler's flags: it names the inline
// namespace that holds every pack type below, so that the copies compiled for different
// instruction sets (host/backends/cpu_packs.cpp is compiled once per set, see
// host/backends/cpu_pack_copies.h) are different types, and every per-world template instantiated on them
// a different symbol: the linker can never keep one copy's code for another's.
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__FMA__)
#define LOCKSTEP_LANES_ISA isa_avx512
#define LOCKSTEP_LANE_BYTES 64
#elif defined(__AVX2__) && defined(__FMA__)
#define LOCKSTEP_LANES_ISA isa_avx2
#define LOCKSTEP_LANE_BYTES 32
#else
#define LOCKSTEP_LANES_ISA isa_generic
#define LOCKSTEP_LANE_BYTES 16
#endif
// Products are fused into the sum or difference they feed (PackProduct below) where the
// instruction set has FMA: the AVX2 and AVX-512 copies.
#if LOCKSTEP_LANE_BYTES >= 32
#define LOCKSTEP_LANES_FUSED 1
#else
#define LOCKSTEP_LANES_FUSED 0
#endif

namespace lockstep {
inline namespace LOCKSTEP_LANES_ISA {

// The width of a full pack in bytes: a vector register of the instruction set.
constexpr int kLaneBytes = LOCKSTEP_LANE_BYTES;

template <class S>
constexpr int kLanes = kLaneBytes / static_cast<int>(sizeof(S));

// Integer lanes of the width of S: the representation of masks and statuses.
template <class S>
using LaneInt = std::conditional_t<sizeof(S) == 8, std::int64_t, std::int32_t>;

// The register of W lanes of E: a GCC vector, or E itself for one lane (a one-lane GCC vector
// would live in an integer register). The helpers below spell the few operations whose syntax
// differs between the two.
template <class E, int W>
struct LaneVector {
  typedef E type __attribute__((vector_size(W * sizeof(E))));
};
template <class E>
struct LaneVector<E, 1> {
  using type = E;
};
template <class E, int W>
using LaneVec = typename LaneVector<E, W>::type;

namespace lanes_detail {
// A comparison's result as a mask: -1 where true (vectors give that already).
template <class V>
inline V maskOf(V m) { return m; }
inline std::int64_t maskOf(bool b) { return -std::int64_t(b); }
template <class I>
inline I maskAs(bool b) { return -I(b); }
template <class I, class V>
inline V maskAs(V m) { return m; }
template <class V>
inline auto laneOf(const V& v, int l) { return v[l]; }
inline double laneOf(double v, int) { return v; }
inline float laneOf(float v, int) { return v; }
inline std::int64_t laneOf(std::int64_t v, int) { return v; }
inline std::int32_t laneOf(std::int32_t v, int) { return v; }
// Whether any bit of a mask (any lane) is set: one vector test where the instruction set has one
// (AVX-512's vptestmq, AVX's vptest, SSE2's byte compare), so that a test per row or per lane
// fallback costs a few instructions, not an extraction of every lane; elsewhere the lanes' bits
// OR-ed a word at a time.
template <class V>
inline bool anySet(const V& m) {
  if constexpr (sizeof(V) < 8) {
    return m != 0;
#if defined(__AVX512F__)
  } else if constexpr (sizeof(V) == 64) {
    __m512i x;
    std::memcpy(&x, &m, 64);
    return _mm512_test_epi64_mask(x, x) != 0;
#endif
#if defined(__AVX__)
  } else if constexpr (sizeof(V) == 32) {
    __m256i x;
    std::memcpy(&x, &m, 32);
    return !_mm256_testz_si256(x, x);
#endif
#if defined(__SSE2__)
  } else if constexpr (sizeof(V) == 16) {
    __m128i x;
    std::memcpy(&x, &m, 16);
    return _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128())) != 0xFFFF;
#endif
  } else {
    std::uint64_t words[sizeof(V) / 8];
    std::memcpy(words, &m, sizeof(V));
    std::uint64_t any = 0;
    for (std::size_t i = 0; i < sizeof(V) / 8; ++i) any |= words[i];
    return any != 0;
  }
}
template <class V, class E>
inline void setLane(V& v, int l, E x) { v[l] = x; }
inline void setLane(double& v, int, double x) { v = x; }
inline void setLane(float& v, int, float x) { v = x; }
inline void setLane(std::int64_t& v, int, std::int64_t x) { v = x; }
inline void setLane(std::int32_t& v, int, std::int32_t x) { v = x; }
#if LOCKSTEP_LANES_FUSED
// The three fused forms, each rounded once in every lane: a * b + c, c - a * b (exactly
// fma(-a, b, c)) and a * b - c; the FMA instructions of the register's width.
enum class Fused { kMulAdd, kNegMulAdd, kMulSub };
template <Fused kForm>
inline double fused(double a, double b, double c) {
  return kForm == Fused::kMulAdd ? __builtin_fma(a, b, c) : kForm == Fused::kNegMulAdd ? __builtin_fma(-a, b, c)
                                                                                        : __builtin_fma(a, b, -c);
}
template <Fused kForm>
inline float fused(float a, float b, float c) {
  return kForm == Fused::kMulAdd ? __builtin_fmaf(a, b, c) : kForm == Fused::kNegMulAdd ? __builtin_fmaf(-a, b, c)
                                                                                         : __builtin_fmaf(a, b, -c);
}
#define LOCKSTEP_FUSED_FORMS(V, R, suffix)                                                                 \
  return (V)(kForm == Fused::kMulAdd      ? _##R##_fmadd_##suffix((X)a, (X)b, (X)c)                       \
             : kForm == Fused::kNegMulAdd ? _##R##_fnmadd_##suffix((X)a, (X)b, (X)c)                      \
                                          : _##R##_fmsub_##suffix((X)a, (X)b, (X)c))
template <Fused kForm, class V>
inline V fused(V a, V b, V c) {
  constexpr bool isDouble = sizeof(a[0]) == 8;
  if constexpr (sizeof(V) == 32 && isDouble) {
    using X = __m256d;
    LOCKSTEP_FUSED_FORMS(V, mm256, pd);
  } else if constexpr (sizeof(V) == 32) {
    using X = __m256;
    LOCKSTEP_FUSED_FORMS(V, mm256, ps);
#if LOCKSTEP_LANE_BYTES >= 64
  } else if constexpr (sizeof(V) == 64 && isDouble) {
    using X = __m512d;
    LOCKSTEP_FUSED_FORMS(V, mm512, pd);
  } else if constexpr (sizeof(V) == 64) {
    using X = __m512;
    LOCKSTEP_FUSED_FORMS(V, mm512, ps);
#endif
  } else {
    static_assert(sizeof(V) == 0, "no FMA for this register width");
    return a;
  }
}
#undef LOCKSTEP_FUSED_FORMS
#endif
// Lane-wise conversion to the integers of the same width.
template <class I, class V>
inline auto toInt(V v) { return __builtin_convertvector(v, LaneVec<I, sizeof(V) / sizeof(I)>); }
template <class I>
inline I toInt(double v) { return static_cast<I>(v); }
template <class I>
inline I toInt(float v) { return static_cast<I>(v); }
}  // namespace lanes_detail

// Marks construction from the raw vector (GCC does not let a vector of S overload a constructor
// taking S).
struct RawLanes {};

template <class S, int W = kLanes<S>>
struct PackMask {
  using I = LaneInt<S>;
  using V = LaneVec<I, W>;
  V v;  // 0 (false) or -1 (true) per lane

  PackMask() = default;
  explicit PackMask(bool b) : v(V{} - I(b ? 1 : 0)) {}
  PackMask(RawLanes, V x) : v(x) {}
  friend PackMask operator!(PackMask a) { return PackMask(RawLanes{}, ~a.v); }
  friend PackMask operator&(PackMask a, PackMask b) { return PackMask(RawLanes{}, a.v & b.v); }
  friend PackMask operator|(PackMask a, PackMask b) { return PackMask(RawLanes{}, a.v | b.v); }
  bool lane(int l) const { return lanes_detail::laneOf(v, l) != 0; }
  void setLane(int l, bool b) { lanes_detail::setLane(v, l, I(b ? -1 : 0)); }
};

template <class S, int W = kLanes<S>>
struct PackBits {
  using I = LaneInt<S>;
  using V = LaneVec<I, W>;
  V v;  // StatusFlag bits per lane

  PackBits() = default;
  PackBits(int bits) : v(V{} + I(bits)) {}  // the same bits in every lane
  PackBits(RawLanes, V x) : v(x) {}
  PackBits& operator|=(PackBits b) {
    v |= b.v;
    return *this;
  }
  friend PackBits operator|(PackBits a, PackBits b) { return PackBits(RawLanes{}, a.v | b.v); }
  int lane(int l) const { return static_cast<int>(lanes_detail::laneOf(v, l)); }
};

// N lanes of S. W = kLanes<S> fills a register; W = 1 is one world on the same code, the same
// operations in the same order as any lane of a full pack: the CPU backend steps small batches and
// the last few worlds of a batch that way (host/backends/cpu_packs.cpp).
template <class S, int W>
struct PackProduct;

template <class S, int W = kLanes<S>>
struct Pack {
  static constexpr int kWidth = W;
  using V = LaneVec<S, W>;
  using I = LaneInt<S>;
  using M = PackMask<S, W>;
  V v;

  Pack() = default;
  Pack(S s) : v(V{} + s) {}  // the same value in every lane (T(0), T(0.5) * dt, ...)
  template <class U, class = std::enable_if_t<std::is_arithmetic<U>::value && !std::is_same<U, S>::value>>
  Pack(U s) : Pack(static_cast<S>(s)) {}
  Pack(RawLanes, V x) : v(x) {}

  S operator[](int l) const { return lanes_detail::laneOf(v, l); }
  S& lane(int l) { return reinterpret_cast<S*>(&v)[l]; }

  Pack& operator+=(Pack b) { v += b.v; return *this; }
  Pack& operator-=(Pack b) { v -= b.v; return *this; }
  Pack& operator*=(Pack b) { v *= b.v; return *this; }
  Pack& operator/=(Pack b) { v /= b.v; return *this; }
  friend Pack operator+(Pack a, Pack b) { return Pack(RawLanes{}, a.v + b.v); }
  friend Pack operator-(Pack a, Pack b) { return Pack(RawLanes{}, a.v - b.v); }
#if LOCKSTEP_LANES_FUSED
  // A product remembers its factors, so that a sum or difference it feeds is one FMA (below).
  friend PackProduct<S, W> operator*(Pack a, Pack b) { return PackProduct<S, W>(a, b); }
#else
  friend Pack operator*(Pack a, Pack b) { return Pack(RawLanes{}, a.v * b.v); }
#endif
  friend Pack operator/(Pack a, Pack b) { return Pack(RawLanes{}, a.v / b.v); }
  friend Pack operator-(Pack a) { return Pack(RawLanes{}, -a.v); }
  friend M operator<(Pack a, Pack b) { return M(RawLanes{}, lanes_detail::maskAs<I>(a.v < b.v)); }
  friend M operator>(Pack a, Pack b) { return M(RawLanes{}, lanes_detail::maskAs<I>(a.v > b.v)); }
  friend M operator<=(Pack a, Pack b) { return M(RawLanes{}, lanes_detail::maskAs<I>(a.v <= b.v)); }
  friend M operator>=(Pack a, Pack b) { return M(RawLanes{}, lanes_detail::maskAs<I>(a.v >= b.v)); }
  friend M operator==(Pack a, Pack b) { return M(RawLanes{}, lanes_detail::maskAs<I>(a.v == b.v)); }
  friend M operator!=(Pack a, Pack b) { return M(RawLanes{}, lanes_detail::maskAs<I>(a.v != b.v)); }
};

// Fused products (AVX2 and AVX-512 copies). With FMA in the instruction set, a * b is a
// PackProduct: the rounded product, as a Pack, that also keeps its factors, and a sum or difference
// that takes it is one fused multiply-add, rounded once:
//   a * b + c, c + a * b   fma(a, b, c)        a * b - c   fma(a, b, -c)      c - a * b   fma(-a, b, c)
//   x += a * b             fma(a, b, x)        x -= a * b  fma(-a, b, x)
//   a * b + c * d          fma(a, b, c * d)    a * b - c * d   fma(a, b, -(c * d))   (the left product is fused)
// Anything else uses the rounded product. Which operations fuse follows from the expression as
// written in the per-world code, the same for every pack width, one lane included, so a world's
// bits still do not depend on its pack (tests/test_cpu_isa.cpp). The scalar code (T = float or
// double: the plain x86-64 CPU path, the CUDA kernels under nvcc's own contraction) rounds as it is
// compiled; between them results agree to rounding.
#if LOCKSTEP_LANES_FUSED
template <class S, int W>
struct PackProduct : Pack<S, W> {
  Pack<S, W> a, b;  // the factors
  PackProduct(Pack<S, W> x, Pack<S, W> y) : Pack<S, W>(RawLanes{}, x.v * y.v), a(x), b(y) {}
};
template <class S, int W>
inline Pack<S, W> operator+(const PackProduct<S, W>& p, Pack<S, W> c) {
  return Pack<S, W>(RawLanes{}, lanes_detail::fused<lanes_detail::Fused::kMulAdd>(p.a.v, p.b.v, c.v));
}
template <class S, int W>
inline Pack<S, W> operator+(Pack<S, W> c, const PackProduct<S, W>& p) {
  return p + c;
}
template <class S, int W>
inline Pack<S, W> operator+(const PackProduct<S, W>& p, const PackProduct<S, W>& q) {
  return p + Pack<S, W>(q);
}
template <class S, int W>
inline Pack<S, W> operator-(const PackProduct<S, W>& p, Pack<S, W> c) {
  return Pack<S, W>(RawLanes{}, lanes_detail::fused<lanes_detail::Fused::kMulSub>(p.a.v, p.b.v, c.v));
}
template <class S, int W>
inline Pack<S, W> operator-(Pack<S, W> c, const PackProduct<S, W>& p) {
  return Pack<S, W>(RawLanes{}, lanes_detail::fused<lanes_detail::Fused::kNegMulAdd>(p.a.v, p.b.v, c.v));
}
template <class S, int W>
inline Pack<S, W> operator-(const PackProduct<S, W>& p, const PackProduct<S, W>& q) {
  return p - Pack<S, W>(q);
}
template <class S, int W>
inline Pack<S, W>& operator+=(Pack<S, W>& x, const PackProduct<S, W>& p) { return x = p + x; }
template <class S, int W>
inline Pack<S, W>& operator-=(Pack<S, W>& x, const PackProduct<S, W>& p) { return x = x - p; }
#endif

}  // namespace LOCKSTEP_LANES_ISA

// A pack's views (LaneWorlds below) are contiguous: their stride is 1 at compile time (layout.h).
template <class S, int W>
struct UnitStrideViews<Pack<S, W>> : std::true_type {};

template <class S, int W>
struct LaneTraits<Pack<S, W>> {
  using Scalar = S;
  using Mask = PackMask<S, W>;
  using Status = PackBits<S, W>;
};

inline namespace LOCKSTEP_LANES_ISA {

// ---- per-lane functions (found by argument-dependent lookup from the per-world templates) -------

template <class S, int W, class F>
inline Pack<S, W> eachLane(Pack<S, W> x, F f) {
  Pack<S, W> r;
  for (int l = 0; l < W; ++l) r.lane(l) = f(x[l]);
  return r;
}

// A vector instruction F (IEEE's correctly rounded square root: each lane bit for bit the scalar
// std::sqrt) on the pack's bits as the intrinsic's type R.
template <class R, class S, int W, class F>
inline Pack<S, W> viaIntrinsic(Pack<S, W> x, F f) {
  static_assert(sizeof(R) == sizeof(x.v), "the intrinsic's vector is the pack's");
  R a;
  std::memcpy(&a, &x.v, sizeof(R));
  a = f(a);
  Pack<S, W> r;
  std::memcpy(&r.v, &a, sizeof(R));
  return r;
}
template <class S, int W>
inline Pack<S, W> sqrtT(Pack<S, W> x) {
  constexpr bool dbl = std::is_same_v<S, double>;
  constexpr std::size_t bytes = sizeof(S) * W;
  if constexpr (W == 1) {
    return Pack<S, W>(RawLanes{}, std::sqrt(x.v));
#if defined(__AVX512F__)
  } else if constexpr (bytes == 64 && dbl) {
    return viaIntrinsic<__m512d>(x, [](__m512d a) { return _mm512_sqrt_pd(a); });
  } else if constexpr (bytes == 64) {
    return viaIntrinsic<__m512>(x, [](__m512 a) { return _mm512_sqrt_ps(a); });
#endif
#if defined(__AVX__)
  } else if constexpr (bytes == 32 && dbl) {
    return viaIntrinsic<__m256d>(x, [](__m256d a) { return _mm256_sqrt_pd(a); });
  } else if constexpr (bytes == 32) {
    return viaIntrinsic<__m256>(x, [](__m256 a) { return _mm256_sqrt_ps(a); });
#endif
#if defined(__SSE2__)
  } else if constexpr (bytes == 16 && dbl) {
    return viaIntrinsic<__m128d>(x, [](__m128d a) { return _mm_sqrt_pd(a); });
  } else if constexpr (bytes == 16) {
    return viaIntrinsic<__m128>(x, [](__m128 a) { return _mm_sqrt_ps(a); });
#endif
  } else {
    return eachLane(x, [](S a) { return std::sqrt(a); });
  }
}
// tanh and pow lane by lane with the library's scalar functions (each lane bit for bit what the
// scalar path gives).
template <class S, int W>
inline Pack<S, W> tanhT(Pack<S, W> x) {
  return eachLane(x, [](S a) { return std::tanh(a); });
}
template <class S, int W>
inline Pack<S, W> logT(Pack<S, W> x) {
  return eachLane(x, [](S a) { return std::log(a); });
}
template <class S, int W>
inline Pack<S, W> powT(Pack<S, W> x, Pack<S, W> y) {
  Pack<S, W> r;
  for (int l = 0; l < W; ++l) r.lane(l) = std::pow(x[l], y[l]);
  return r;
}
// sin and cos of W doubles at once: x = k pi/2 + r with |r| <= pi/4 (Cody-Waite: pi/2 in three
// parts, the first two of 33 significant bits, so that k times each is exact for |k| < 2^20), then
// the Taylor series of sin r to r^17 and of cos r to r^18 (truncation below 1e-19 on |r| <= pi/4),
// and the quadrant's swap and signs. Within about an ulp of the library's; lanes with |x| > 1e5, or
// not finite, take the library's per-lane result. The same operations for every W, one lane too.
template <int W>
inline void sinCosT(Pack<double, W> xp, Pack<double, W>& sinX, Pack<double, W>& cosX) {
  using D = LaneVec<double, W>;
  using lanes_detail::maskAs;
  constexpr double kTwoOverPi = 0.6366197723675814;
  constexpr double kPio2Hi = 1.5707963267341256, kPio2Mid = 6.077100506303966e-11, kPio2Lo = 2.0222662487959506e-21;
  constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52: adding and subtracting it rounds to an integer
  const D x = xp.v;
  const D k = (x * kTwoOverPi + kRound) - kRound;
  const D r = ((x - k * kPio2Hi) - k * kPio2Mid) - k * kPio2Lo;
  const D z = r * r;
  // 1/n! with alternating signs.
  const D ps = ((((((((2.8114572543455206e-15 * z) - 7.647163731819816e-13) * z + 1.6059043836821613e-10) * z -
                     2.505210838544172e-08) * z + 2.7557319223985893e-06) * z - 0.0001984126984126984) * z +
                  0.008333333333333333) * z - 0.16666666666666666);
  const D sr = r + r * z * ps;
  const D pc = (((((((-1.5619206968586225e-16 * z + 4.779477332387385e-14) * z - 1.1470745597729725e-11) * z +
                     2.08767569878681e-09) * z - 2.755731922398589e-07) * z + 2.48015873015873e-05) * z -
                  0.001388888888888889) * z + 0.041666666666666664);
  const D cr = (1.0 - 0.5 * z) + z * z * pc;
  using I = std::int64_t;
  const auto q = lanes_detail::toInt<I>(k);
  const auto odd = maskAs<I>((q & 1) != 0);
  const D s = odd ? cr : sr, c = odd ? sr : cr;
  sinX.v = maskAs<I>((q & 2) != 0) ? -s : s;
  cosX.v = maskAs<I>(((q + 1) & 2) != 0) ? -c : c;
  const auto wild = maskAs<I>(maskAs<I>((x < 1e5) & (x > -1e5)) == 0);  // also NaN
  if (lanes_detail::anySet(wild))
    for (int l = 0; l < W; ++l)
      if (lanes_detail::laneOf(wild, l)) {
        sinX.lane(l) = std::sin(xp[l]);
        cosX.lane(l) = std::cos(xp[l]);
      }
}

// The same for W floats, in float: pi/2 in three parts of which the first two have 12
// significant bits (k times each is exact for |k| < 2^12), the series to r^11 and r^12; the
// library's per-lane result for |x| > 6000 or not finite.
template <int W>
inline void sinCosT(Pack<float, W> x, Pack<float, W>& sinX, Pack<float, W>& cosX) {
  using F = LaneVec<float, W>;
  using I = std::int32_t;
  using lanes_detail::maskAs;
  constexpr float kTwoOverPi = 0.6366197466850281f;
  constexpr float kPio2Hi = 1.57080078125f, kPio2Mid = -4.453584551811218e-06f, kPio2Lo = -8.705515752716053e-10f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  const F v = x.v;
  const F k = (v * kTwoOverPi + kRound) - kRound;
  const F r = ((v - k * kPio2Hi) - k * kPio2Mid) - k * kPio2Lo;
  const F z = r * r;
  const F ps = (((-2.5052107943679403e-08f * z + 2.7557318844628753e-06f) * z - 0.00019841270113829523f) * z +
                0.008333333767950535f) * z - 0.1666666716337204f;
  const F sr = r + r * z * ps;
  const F pc = (((2.0876755879584152e-09f * z - 2.755731998149713e-07f) * z + 2.4801587642286904e-05f) * z -
                0.0013888889225199819f) * z + 0.0416666679084301f;
  const F cr = (1.0f - 0.5f * z) + z * z * pc;
  const auto q = lanes_detail::toInt<I>(k);
  const auto odd = maskAs<I>((q & 1) != 0);
  const F s = odd ? cr : sr, c = odd ? sr : cr;
  sinX.v = maskAs<I>((q & 2) != 0) ? -s : s;
  cosX.v = maskAs<I>(((q + 1) & 2) != 0) ? -c : c;
  const auto wild = maskAs<I>(maskAs<I>((v < 6000.0f) & (v > -6000.0f)) == 0);  // also NaN
  if (lanes_detail::anySet(wild))
    for (int l = 0; l < W; ++l)
      if (lanes_detail::laneOf(wild, l)) {
        sinX.lane(l) = std::sin(x[l]);
        cosX.lane(l) = std::cos(x[l]);
      }
}

template <class S, int W>
inline Pack<S, W> sinT(Pack<S, W> x) {
  Pack<S, W> s, c;
  sinCosT(x, s, c);
  return s;
}
template <class S, int W>
inline Pack<S, W> cosT(Pack<S, W> x) {
  Pack<S, W> s, c;
  sinCosT(x, s, c);
  return c;
}
template <class S, int W>
inline Pack<S, W> absT(Pack<S, W> x) {
  using I = typename PackMask<S, W>::V;
  using V = typename Pack<S, W>::V;
  if constexpr (W == 1) {
    return Pack<S, W>(RawLanes{}, std::fabs(x.v));
  } else {
    const I sign = reinterpret_cast<I>(-(V{} + S(0)));  // the sign bit in every lane
    return Pack<S, W>(RawLanes{}, reinterpret_cast<V>(reinterpret_cast<I>(x.v) & ~sign));
  }
}
// atan2 of a whole pack: t = min(|x|, |y|) / max(|x|, |y|) in [0, 1]; above tan(pi/8) it is moved
// to (t - 1) / (t + 1), an angle pi/4 smaller, so that |t| <= tan(pi/8) = 0.414; there the series
// of atan (t - t^3/3 + t^5/5 - ...) to t^41 in double, t^19 in float, leaves under 1e-17 (6e-9)
// relative; then the octant and the signs. Within about an ulp of the library's. Lanes where both
// arguments are 0 or either is not finite take the library's per-lane result.
template <class S, int W>
inline Pack<S, W> atan2T(Pack<S, W> y, Pack<S, W> x) {
  using V = typename Pack<S, W>::V;
  using I = LaneInt<S>;
  using lanes_detail::maskAs;
  constexpr int kTerms = sizeof(S) == 8 ? 20 : 9;  // powers t^3 .. t^(2 kTerms + 1)
  constexpr S kPi = S(3.14159265358979323846), kHalfPi = S(1.57079632679489661923),
              kQuarterPi = S(0.785398163397448309616), kTanEighthPi = S(0.414213562373095048802);
  const V ax = absT(x).v, ay = absT(y).v;
  const auto yBigger = maskAs<I>(ay > ax);
  const V big = yBigger ? ay : ax, small = yBigger ? ax : ay;
  V t = small / big;
  const auto shifted = maskAs<I>(t > kTanEighthPi);
  t = shifted ? (t - S(1)) / (t + S(1)) : t;
  const V z = t * t;
  // atan(t) = t + t z q(z), q(z) = sum_{k=1..kTerms} (-1)^k z^(k-1) / (2k + 1), by Horner.
  V p = V{} + ((kTerms % 2) ? S(-1) : S(1)) / S(2 * kTerms + 1);
  for (int k = kTerms - 1; k >= 1; --k) p = p * z + ((k % 2) ? S(-1) : S(1)) / S(2 * k + 1);
  V r = t + t * z * p;
  r = shifted ? r + kQuarterPi : r;                 // the angle of min/max, in [0, pi/4]
  r = yBigger ? kHalfPi - r : r;                    // of |y| / |x|, in [0, pi/2]
  r = maskAs<I>(x.v < S(0)) ? kPi - r : r;          // of y >= 0 over x, in [0, pi]
  // The sign of y (also of -0), as the library gives it: r is +0 or positive here.
  Pack<S, W> out;
  if constexpr (W == 1) {
    out.v = std::copysign(r, y.v);
  } else {
    using IV = typename PackMask<S, W>::V;
    const IV signBit = reinterpret_cast<IV>(-(V{} + S(0)));
    out.v = reinterpret_cast<V>(reinterpret_cast<IV>(r) | (reinterpret_cast<IV>(y.v) & signBit));
  }
  const auto wild = maskAs<I>((maskAs<I>(big > S(0)) & maskAs<I>((ax - ax) == S(0)) & maskAs<I>((ay - ay) == S(0))) == 0);
  if (lanes_detail::anySet(wild))
    for (int l = 0; l < W; ++l)
      if (lanes_detail::laneOf(wild, l)) out.lane(l) = lockstep::atan2T(y[l], x[l]);
  return out;
}
// Finite lanes: x - x is 0 exactly when x is finite (NaN otherwise).
template <class S, int W>
inline PackMask<S, W> isFiniteT(Pack<S, W> x) {
  return PackMask<S, W>(RawLanes{}, lanes_detail::maskAs<LaneInt<S>>((x.v - x.v) == S(0)));
}

template <class S, int W>
inline Pack<S, W> selectT(PackMask<S, W> m, Pack<S, W> a, Pack<S, W> b) {
  return Pack<S, W>(RawLanes{}, m.v ? a.v : b.v);
}
template <class S, int W>
inline bool anyLane(PackMask<S, W> m) {
  return lanes_detail::anySet(m.v);  // (a mask's lanes are 0 or all ones)
}
template <class S, int W>
inline bool allLanes(PackMask<S, W> m) {
  return !lanes_detail::anySet((!m).v);
}
template <class S, int W>
inline int storedIndex(Pack<S, W> x) {  // (the same in every lane: the first's)
  return static_cast<int>(x[0]);
}
template <class S, int W>
inline PackBits<S, W> flagIf(PackMask<S, W> m, int bits) {
  return PackBits<S, W>(RawLanes{}, m.v & typename PackBits<S, W>::I(bits));
}
template <class S, int W>
inline PackMask<S, W> failed(PackBits<S, W> status) {
  return PackMask<S, W>(RawLanes{}, lanes_detail::maskAs<LaneInt<S>>(status.v != 0));
}
template <class S, int W>
inline PackBits<S, W> statusIf(PackMask<S, W> m, PackBits<S, W> status) {
  return PackBits<S, W>(RawLanes{}, m.v & status.v);
}
template <class S, int W>
inline PackBits<S, W> firstFailure(PackBits<S, W> a, PackBits<S, W> b) {
  return PackBits<S, W>(RawLanes{}, lanes_detail::maskAs<LaneInt<S>>(a.v != 0) ? a.v : b.v);
}

}  // namespace LOCKSTEP_LANES_ISA
}  // namespace lockstep

#pragma GCC diagnostic pop
