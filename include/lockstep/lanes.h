// Lockstep lanes: packs of worlds for the CPU backend's SIMD units (host code only, g++).
//
// Pack<S> holds one scalar of each of N = kLanes<S> worlds. Instantiating the per-world templates
// with T = Pack<S> advances N worlds with every instruction: the world index is innermost in
// storage (layout.h), so the N lanes of a pack are N consecutive worlds. Lane l of every operation is the
// IEEE operation on lane l alone (+ - * / sqrt are exact per lane; sin, cos and atan2 are computed
// on all lanes together, each lane on its own to within an ulp or two), so a world's result never
// depends on its neighbours.
//
// Comparisons give a PackMask, and statuses are PackBits: one set of StatusFlag bits per lane
// (math.h, "lanes"). Width: 256 bits, AVX2's registers (4 doubles or 8 floats).
//
// LaneModel and LaneWorlds put a batch's model and N of its worlds into that form: what the CPU
// backend (host/backends/cpu_backend.cpp) steps, and what the benchmarks time. Both allocate once,
// when made; the backend keeps them across calls while the batch's storage and parameter layout
// stay the same (refreshShared() then picks up new values of the shared parameters).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "lockstep/workspace.h"

// Packs pass by value between inlined functions; where a file is compiled without AVX, g++ notes
// that such arguments would change the ABI of a non-inlined call. None crosses a library boundary.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace lockstep {

constexpr int kLaneBytes = 32;

template <class S>
constexpr int kLanes = kLaneBytes / static_cast<int>(sizeof(S));

// Integer lanes of the width of S: the representation of masks and statuses.
template <class S>
using LaneInt = std::conditional_t<sizeof(S) == 8, std::int64_t, std::int32_t>;

// Marks construction from the raw vector (GCC does not let a vector of S overload a constructor
// taking S).
struct RawLanes {};

template <class S>
struct PackMask {
  using I = LaneInt<S>;
  typedef I V __attribute__((vector_size(kLaneBytes)));
  V v;  // 0 (false) or -1 (true) per lane

  PackMask() = default;
  explicit PackMask(bool b) : v(V{} - I(b ? 1 : 0)) {}
  PackMask(RawLanes, V x) : v(x) {}
  friend PackMask operator!(PackMask a) { return PackMask(RawLanes{}, ~a.v); }
  friend PackMask operator&(PackMask a, PackMask b) { return PackMask(RawLanes{}, a.v & b.v); }
  friend PackMask operator|(PackMask a, PackMask b) { return PackMask(RawLanes{}, a.v | b.v); }
  bool lane(int l) const { return v[l] != 0; }
};

template <class S>
struct PackBits {
  using I = LaneInt<S>;
  typedef I V __attribute__((vector_size(kLaneBytes)));
  V v;  // StatusFlag bits per lane

  PackBits() = default;
  PackBits(int bits) : v(V{} + I(bits)) {}  // the same bits in every lane
  PackBits(RawLanes, V x) : v(x) {}
  PackBits& operator|=(PackBits b) {
    v |= b.v;
    return *this;
  }
  friend PackBits operator|(PackBits a, PackBits b) { return PackBits(RawLanes{}, a.v | b.v); }
  int lane(int l) const { return static_cast<int>(v[l]); }
};

template <class S>
struct Pack {
  static constexpr int kWidth = kLanes<S>;
  typedef S V __attribute__((vector_size(kLaneBytes)));
  V v;

  Pack() = default;
  Pack(S s) : v(V{} + s) {}  // the same value in every lane (T(0), T(0.5) * dt, ...)
  template <class U, class = std::enable_if_t<std::is_arithmetic<U>::value && !std::is_same<U, S>::value>>
  Pack(U s) : Pack(static_cast<S>(s)) {}
  Pack(RawLanes, V x) : v(x) {}

  S operator[](int l) const { return v[l]; }
  S& lane(int l) { return reinterpret_cast<S*>(&v)[l]; }

  Pack& operator+=(Pack b) { v += b.v; return *this; }
  Pack& operator-=(Pack b) { v -= b.v; return *this; }
  Pack& operator*=(Pack b) { v *= b.v; return *this; }
  Pack& operator/=(Pack b) { v /= b.v; return *this; }
  friend Pack operator+(Pack a, Pack b) { return Pack(RawLanes{}, a.v + b.v); }
  friend Pack operator-(Pack a, Pack b) { return Pack(RawLanes{}, a.v - b.v); }
  friend Pack operator*(Pack a, Pack b) { return Pack(RawLanes{}, a.v * b.v); }
  friend Pack operator/(Pack a, Pack b) { return Pack(RawLanes{}, a.v / b.v); }
  friend Pack operator-(Pack a) { return Pack(RawLanes{}, -a.v); }
  friend PackMask<S> operator<(Pack a, Pack b) { return PackMask<S>(RawLanes{}, a.v < b.v); }
  friend PackMask<S> operator>(Pack a, Pack b) { return PackMask<S>(RawLanes{}, a.v > b.v); }
  friend PackMask<S> operator<=(Pack a, Pack b) { return PackMask<S>(RawLanes{}, a.v <= b.v); }
  friend PackMask<S> operator>=(Pack a, Pack b) { return PackMask<S>(RawLanes{}, a.v >= b.v); }
  friend PackMask<S> operator==(Pack a, Pack b) { return PackMask<S>(RawLanes{}, a.v == b.v); }
  friend PackMask<S> operator!=(Pack a, Pack b) { return PackMask<S>(RawLanes{}, a.v != b.v); }
};

template <class S>
struct LaneTraits<Pack<S>> {
  using Scalar = S;
  using Mask = PackMask<S>;
  using Status = PackBits<S>;
};

// ---- per-lane functions (found by argument-dependent lookup from the per-world templates) -------

template <class S, class F>
inline Pack<S> eachLane(Pack<S> x, F f) {
  Pack<S> r;
  for (int l = 0; l < Pack<S>::kWidth; ++l) r.v[l] = f(x.v[l]);
  return r;
}

template <class S>
inline Pack<S> sqrtT(Pack<S> x) {
  return eachLane(x, [](S a) { return std::sqrt(a); });
}
// tanh and pow lane by lane with the library's scalar functions (each lane bit for bit what the
// scalar path gives).
template <class S>
inline Pack<S> tanhT(Pack<S> x) {
  return eachLane(x, [](S a) { return std::tanh(a); });
}
template <class S>
inline Pack<S> powT(Pack<S> x, Pack<S> y) {
  Pack<S> r;
  for (int l = 0; l < Pack<S>::kWidth; ++l) r.v[l] = std::pow(x.v[l], y.v[l]);
  return r;
}
// sin and cos of four doubles at once: x = k pi/2 + r with |r| <= pi/4 (Cody-Waite: pi/2 in three
// parts, the first two of 33 significant bits, so that k times each is exact for |k| < 2^20), then
// the Taylor series of sin r to r^17 and of cos r to r^18 (truncation below 1e-19 on |r| <= pi/4),
// and the quadrant's swap and signs. Within about an ulp of the library's; lanes with |x| > 1e5, or
// not finite, take the library's per-lane result.
namespace lanes_detail {
typedef double D4 __attribute__((vector_size(kLaneBytes)));
typedef std::int64_t I4 __attribute__((vector_size(kLaneBytes)));

inline void sinCos(D4 x, D4& sinX, D4& cosX) {
  constexpr double kTwoOverPi = 0.6366197723675814;
  constexpr double kPio2Hi = 1.5707963267341256, kPio2Mid = 6.077100506303966e-11, kPio2Lo = 2.0222662487959506e-21;
  constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52: adding and subtracting it rounds to an integer
  const D4 k = (x * kTwoOverPi + kRound) - kRound;
  const D4 r = ((x - k * kPio2Hi) - k * kPio2Mid) - k * kPio2Lo;
  const D4 z = r * r;
  // 1/n! with alternating signs.
  const D4 ps = ((((((((2.8114572543455206e-15 * z) - 7.647163731819816e-13) * z + 1.6059043836821613e-10) * z -
                     2.505210838544172e-08) * z + 2.7557319223985893e-06) * z - 0.0001984126984126984) * z +
                  0.008333333333333333) * z - 0.16666666666666666);
  const D4 sr = r + r * z * ps;
  const D4 pc = (((((((-1.5619206968586225e-16 * z + 4.779477332387385e-14) * z - 1.1470745597729725e-11) * z +
                     2.08767569878681e-09) * z - 2.755731922398589e-07) * z + 2.48015873015873e-05) * z -
                  0.001388888888888889) * z + 0.041666666666666664);
  const D4 cr = (1.0 - 0.5 * z) + z * z * pc;
  const I4 q = __builtin_convertvector(k, I4);
  const I4 odd = (q & 1) != 0;
  const D4 s = odd ? cr : sr, c = odd ? sr : cr;
  sinX = ((q & 2) != 0) ? -s : s;
  cosX = (((q + 1) & 2) != 0) ? -c : c;
  const I4 wild = ((x < 1e5) & (x > -1e5)) == 0;  // also NaN
  for (int l = 0; l < 4; ++l)
    if (wild[l]) {
      sinX[l] = std::sin(x[l]);
      cosX[l] = std::cos(x[l]);
    }
}
}  // namespace lanes_detail

inline void sinCosT(Pack<double> x, Pack<double>& s, Pack<double>& c) { lanes_detail::sinCos(x.v, s.v, c.v); }

// The same for eight floats, in float: pi/2 in three parts of which the first two have 12
// significant bits (k times each is exact for |k| < 2^12), the series to r^11 and r^12; the
// library's per-lane result for |x| > 6000 or not finite.
inline void sinCosT(Pack<float> x, Pack<float>& sinX, Pack<float>& cosX) {
  typedef float F8 __attribute__((vector_size(kLaneBytes)));
  typedef std::int32_t I8 __attribute__((vector_size(kLaneBytes)));
  constexpr float kTwoOverPi = 0.6366197466850281f;
  constexpr float kPio2Hi = 1.57080078125f, kPio2Mid = -4.453584551811218e-06f, kPio2Lo = -8.705515752716053e-10f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  const F8 v = x.v;
  const F8 k = (v * kTwoOverPi + kRound) - kRound;
  const F8 r = ((v - k * kPio2Hi) - k * kPio2Mid) - k * kPio2Lo;
  const F8 z = r * r;
  const F8 ps = (((-2.5052107943679403e-08f * z + 2.7557318844628753e-06f) * z - 0.00019841270113829523f) * z +
                 0.008333333767950535f) * z - 0.1666666716337204f;
  const F8 sr = r + r * z * ps;
  const F8 pc = (((2.0876755879584152e-09f * z - 2.755731998149713e-07f) * z + 2.4801587642286904e-05f) * z -
                 0.0013888889225199819f) * z + 0.0416666679084301f;
  const F8 cr = (1.0f - 0.5f * z) + z * z * pc;
  const I8 q = __builtin_convertvector(k, I8);
  const I8 odd = (q & 1) != 0;
  const F8 s = odd ? cr : sr, c = odd ? sr : cr;
  sinX.v = ((q & 2) != 0) ? -s : s;
  cosX.v = (((q + 1) & 2) != 0) ? -c : c;
  const I8 wild = ((v < 6000.0f) & (v > -6000.0f)) == 0;  // also NaN
  for (int l = 0; l < 8; ++l)
    if (wild[l]) {
      sinX.v[l] = sinT(v[l]);
      cosX.v[l] = cosT(v[l]);
    }
}

template <class S>
inline Pack<S> sinT(Pack<S> x) {
  Pack<S> s, c;
  sinCosT(x, s, c);
  return s;
}
template <class S>
inline Pack<S> cosT(Pack<S> x) {
  Pack<S> s, c;
  sinCosT(x, s, c);
  return c;
}
// atan2 of a whole pack: t = min(|x|, |y|) / max(|x|, |y|) in [0, 1]; above tan(pi/8) it is moved
// to (t - 1) / (t + 1), an angle pi/4 smaller, so that |t| <= tan(pi/8) = 0.414; there the series
// of atan (t - t^3/3 + t^5/5 - ...) to t^41 in double, t^19 in float, leaves under 1e-17 (6e-9)
// relative; then the octant and the signs. Within about an ulp of the library's. Lanes where both
// arguments are 0 or either is not finite take the library's per-lane result.
template <class S>
inline Pack<S> atan2T(Pack<S> y, Pack<S> x) {
  using V = typename Pack<S>::V;
  using I = typename PackMask<S>::V;
  constexpr int kTerms = sizeof(S) == 8 ? 20 : 9;  // powers t^3 .. t^(2 kTerms + 1)
  constexpr S kPi = S(3.14159265358979323846), kHalfPi = S(1.57079632679489661923),
              kQuarterPi = S(0.785398163397448309616), kTanEighthPi = S(0.414213562373095048802);
  const V ax = absT(x).v, ay = absT(y).v;
  const I yBigger = ay > ax;
  const V big = yBigger ? ay : ax, small = yBigger ? ax : ay;
  V t = small / big;
  const I shifted = t > kTanEighthPi;
  t = shifted ? (t - S(1)) / (t + S(1)) : t;
  const V z = t * t;
  // atan(t) = t + t z q(z), q(z) = sum_{k=1..kTerms} (-1)^k z^(k-1) / (2k + 1), by Horner.
  V p = V{} + ((kTerms % 2) ? S(-1) : S(1)) / S(2 * kTerms + 1);
  for (int k = kTerms - 1; k >= 1; --k) p = p * z + ((k % 2) ? S(-1) : S(1)) / S(2 * k + 1);
  V r = t + t * z * p;
  r = shifted ? r + kQuarterPi : r;  // the angle of min/max, in [0, pi/4]
  r = yBigger ? kHalfPi - r : r;     // of |y| / |x|, in [0, pi/2]
  r = (x.v < S(0)) ? kPi - r : r;    // of y >= 0 over x, in [0, pi]
  // The sign of y (also of -0), as the library gives it: r is +0 or positive here.
  const I signBit = reinterpret_cast<I>(-(V{} + S(0)));
  Pack<S> out(RawLanes{}, reinterpret_cast<V>(reinterpret_cast<I>(r) | (reinterpret_cast<I>(y.v) & signBit)));
  const I wild = ((big > S(0)) & ((ax - ax) == S(0)) & ((ay - ay) == S(0))) == 0;
  for (int l = 0; l < Pack<S>::kWidth; ++l)
    if (wild[l]) out.v[l] = atan2T(y.v[l], x.v[l]);
  return out;
}
template <class S>
inline Pack<S> absT(Pack<S> x) {
  using I = typename PackMask<S>::V;
  const I sign = reinterpret_cast<I>(-Pack<S>(S(0)).v);  // the sign bit in every lane
  return Pack<S>(RawLanes{}, reinterpret_cast<typename Pack<S>::V>(reinterpret_cast<I>(x.v) & ~sign));
}
// Finite lanes: x - x is 0 exactly when x is finite (NaN otherwise).
template <class S>
inline PackMask<S> isFiniteT(Pack<S> x) {
  return PackMask<S>(RawLanes{}, (x.v - x.v) == S(0));
}

template <class S>
inline Pack<S> selectT(PackMask<S> m, Pack<S> a, Pack<S> b) {
  return Pack<S>(RawLanes{}, m.v ? a.v : b.v);
}
template <class S>
inline bool anyLane(PackMask<S> m) {
  for (int l = 0; l < Pack<S>::kWidth; ++l)
    if (m.v[l]) return true;
  return false;
}
template <class S>
inline bool allLanes(PackMask<S> m) {
  for (int l = 0; l < Pack<S>::kWidth; ++l)
    if (!m.v[l]) return false;
  return true;
}
template <class S>
inline PackBits<S> flagIf(PackMask<S> m, int bits) {
  return PackBits<S>(RawLanes{}, m.v & typename PackBits<S>::I(bits));
}
template <class S>
inline PackMask<S> failed(PackBits<S> status) {
  return PackMask<S>(RawLanes{}, status.v != 0);
}
template <class S>
inline PackBits<S> statusIf(PackMask<S> m, PackBits<S> status) {
  return PackBits<S>(RawLanes{}, m.v & status.v);
}
template <class S>
inline PackBits<S> firstFailure(PackBits<S> a, PackBits<S> b) {
  return PackBits<S>(RawLanes{}, a.v != 0 ? a.v : b.v);
}

// ---- packs of worlds of a batch ----------------------------------------------------------------

template <class T>
Transform<Pack<T>> broadcast(const Transform<T>& X) {
  Transform<Pack<T>> r;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) r.R.R.m[i][j] = X.R.R.m[i][j];
    r.p[i] = X.p[i];
  }
  return r;
}

// The model's constant frames, one copy in every lane.
template <class T>
struct LaneModel {
  std::vector<Transform<Pack<T>>> X_PF, X_MB;
  ModelView<Pack<T>> view;

  explicit LaneModel(const ModelView<T>& m) {
    for (int b = 0; b < m.sizes.nb; ++b) {
      X_PF.push_back(broadcast(m.X_PF[b]));
      X_MB.push_back(broadcast(m.X_MB[b]));
    }
    view = {m.sizes, m.body, X_PF.data(), X_MB.data(), m.bushing, m.spring, m.contact, m.ground};
  }
  LaneModel(const LaneModel&) = delete;  // view points into this object
  LaneModel& operator=(const LaneModel&) = delete;
};

// One thread's pack of worlds: the fields a step reads and writes, the parameters and the
// workspace, in lane order (component c of lane l at pack c, lane l).
template <class T>
class LaneWorlds {
 public:
  static constexpr int W = Pack<T>::kWidth;

  LaneWorlds(const BatchView<T>& batch, const Sizes& s, const WorkspaceLayout& layout)
      : batch_(batch), sizes_(s), scratch_(static_cast<std::size_t>(layout.total)), ws_{layout, {scratch_.data(), 1}} {
    std::int64_t n = 0;  // packs: every parameter, and every world field a step gathers or writes back
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
    n += (std::is_same<type, T>::value && role != Role::Reset) ? fieldCount(s, per, parts) : 0;
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    packs_.resize(static_cast<std::size_t>(n));
    Pack<T>* p = packs_.data();
    // Parameters shared by all worlds are broadcast (refreshShared); per-world ones are gathered per pack.
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc)                   \
    view_.params.name = {p, 1};                                                       \
    addParameter(p, batch.name, fieldCount(s, per, parts));
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    // The world fields, by their role: states and inputs are gathered, states, observations and
    // evaluation outputs written back; status bits are kept per world by the backend.
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
    addField(view_.name, batch.name, fieldCount(s, per, parts), role, p);
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    refreshShared();
  }

  LaneWorlds(const LaneWorlds&) = delete;  // the views point into this object
  LaneWorlds& operator=(const LaneWorlds&) = delete;

  const WorldView<Pack<T>>& view() const { return view_; }
  const BatchView<T>& batch() const { return batch_; }
  const Workspace<Pack<T>>& workspace() const { return ws_; }

  // Broadcasts the current values of the parameters that all worlds share into every lane.
  void refreshShared() {
    for (const Field& f : shared_)
      for (std::int64_t c = 0; c < f.count; ++c) f.dst[c] = Pack<T>(f.src[c * f.compStride]);
  }

  // Loads worlds w0 .. w0+lanes-1 (lanes <= W). The lanes past them, and those whose `use` is
  // false (worlds already flagged), get a copy of a used world instead, so that no lane computes
  // a failing world again; with use null every lane is used.
  void gather(std::int64_t w0, int lanes, const bool* use = nullptr) {
    w0_ = w0;
    lanes_ = lanes;
    int stand = -1;  // the first used lane
    for (int l = 0; l < lanes && stand < 0; ++l)
      if (!use || use[l]) stand = l;
    if (stand < 0) stand = lanes - 1;
    contiguous_ = lanes == W;
    for (int l = 0; l < W; ++l) {
      source_[l] = (l < lanes && (!use || use[l])) ? l : stand;
      contiguous_ = contiguous_ && source_[l] == l;
    }
    for (const Field& f : perWorld_) load(f);
    for (const Field& f : state_) load(f);
  }
  // Write the lanes where keep[l] holds back to their worlds: q, u, z and time; the observations
  // (observeWorld on the pack); udot, energies and multipliers (evaluateOutputs on the pack).
  void scatterState(const bool* keep) const { scatter(state_, keep); }
  void scatterObservations(const bool* keep) const { scatter(observations_, keep); }
  void scatterEvaluation(const bool* keep) const { scatter(evaluation_, keep); }
  // Lane l alone.
  void scatterState(int l) const {
    bool keep[W] = {};
    keep[l] = true;
    scatter(state_, keep);
  }

 private:
  struct Field {
    Pack<T>* dst;
    const T* src;
    T* out;  // where a written field goes back (state), else null
    std::int64_t compStride, worldStride, count;
  };
  void scatter(const std::vector<Field>& fields, const bool* keep) const {
    bool all = lanes_ == W;
    for (int l = 0; l < W; ++l) all = all && keep[l];
    for (const Field& f : fields) {
      for (std::int64_t c = 0; c < f.count; ++c) {
        T* row = f.out + c * f.compStride + w0_ * f.worldStride;
        if (all && f.worldStride == 1) {
          std::memcpy(row, &f.dst[c], sizeof(Pack<T>));
        } else {
          for (int l = 0; l < lanes_; ++l)
            if (keep[l]) row[l * f.worldStride] = f.dst[c][l];
        }
      }
    }
  }
  void load(const Field& f) {
    for (std::int64_t c = 0; c < f.count; ++c) {
      const T* row = f.src + c * f.compStride + w0_ * f.worldStride;
      Pack<T>& d = f.dst[c];
      if (contiguous_ && f.worldStride == 1) {
        std::memcpy(&d, row, sizeof(Pack<T>));
      } else {
        for (int l = 0; l < W; ++l) d.lane(l) = row[source_[l] * f.worldStride];
      }
    }
  }

  void addParameter(Pack<T>*& p, const ParamArray<T>& a, std::int64_t count) {
    if (a.worldStride == 0) {
      shared_.push_back({p, a.data, nullptr, a.compStride, 0, count});
    } else {
      perWorld_.push_back({p, a.data, nullptr, a.compStride, a.worldStride, count});
    }
    p += count;
  }
  void addField(Strided<Pack<T>>& v, T* data, std::int64_t count, Role role, Pack<T>*& p) {
    if (role == Role::Reset) return;
    v = {p, 1};
    const Field f{p, data, role == Role::Input ? nullptr : data, batch_.nWorlds, 1, count};
    (role == Role::Input ? perWorld_ : role == Role::State ? state_ : role == Role::Observation ? observations_
                                                                                             : evaluation_)
        .push_back(f);
    p += count;
  }
  void addField(Strided<std::int32_t>&, std::int32_t*, std::int64_t, Role, Pack<T>*&) {}

  BatchView<T> batch_;
  Sizes sizes_;
  std::vector<Pack<T>> packs_, scratch_;
  Workspace<Pack<T>> ws_;
  WorldView<Pack<T>> view_{};
  std::vector<Field> shared_, perWorld_, state_, observations_, evaluation_;
  std::int64_t w0_ = 0;
  int lanes_ = 0;
  int source_[W] = {};       // the world (from w0) each lane was loaded from
  bool contiguous_ = false;  // source_[l] == l for every lane
};

}  // namespace lockstep

#pragma GCC diagnostic pop
