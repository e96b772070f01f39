// Lockstep lanes: packs of worlds for the CPU backend's SIMD units (host code only, g++).
//
// Pack<S, N> holds one scalar of each of N worlds. Instantiating the per-world templates with
// T = Pack<S, N> advances N worlds with every instruction: the world index is innermost in storage
// (layout.h), so the N lanes of a pack are N consecutive worlds. Lane l of every operation is the
// IEEE operation on lane l alone (+ - * / sqrt are exact per lane; sin, cos and atan2 call the
// scalar library function per lane), so a world's result never depends on its neighbours.
//
// Comparisons give a PackMask, and statuses are PackBits: one set of StatusFlag bits per lane
// (math.h, "lanes"). Width: 256 bits, AVX2's registers (4 doubles or 8 floats).
//
// LaneModel and LaneWorlds put a batch's model and N of its worlds into that form: what the CPU
// backend (host/cpu_backend.cpp) steps, and what the benchmarks time.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "lockstep/views.h"

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
template <class S>
inline Pack<S> sinT(Pack<S> x) {
  return eachLane(x, [](S a) { return sinT(a); });
}
template <class S>
inline Pack<S> cosT(Pack<S> x) {
  return eachLane(x, [](S a) { return cosT(a); });
}
template <class S>
inline Pack<S> atan2T(Pack<S> y, Pack<S> x) {
  Pack<S> r;
  for (int l = 0; l < Pack<S>::kWidth; ++l) r.v[l] = atan2T(y.v[l], x.v[l]);
  return r;
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
    view = {m.sizes, m.body, X_PF.data(), X_MB.data(), m.bushing, m.spring, m.contact};
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
    std::int64_t n = 0;
#define LOCKSTEP_X(name, count, doc) n += (count);
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, s)
#undef LOCKSTEP_X
    packs_.resize(static_cast<std::size_t>(n + s.nq + 2 * s.nu + s.nz + 1 + 6 * s.nb));
    Pack<T>* p = packs_.data();
    // Parameters shared by all worlds are broadcast once; per-world ones are gathered per pack.
#define LOCKSTEP_X(name, count, doc)                                                  \
    view_.params.name = {p, 1};                                                       \
    if (batch.name.worldStride == 0) {                                                \
      for (std::int64_t c = 0; c < (count); ++c) p[c] = Pack<T>(batch.name.data[c * batch.name.compStride]); \
    } else {                                                                          \
      perWorld_.push_back({p, batch.name.data, nullptr, batch.name.compStride, batch.name.worldStride, (count)}); \
    }                                                                                 \
    p += (count);
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, s)
#undef LOCKSTEP_X
    // State and inputs: q, u, z, time, tau, bodyForce (the fields stepWorld touches).
    const auto field = [&](Strided<Pack<T>>& v, T* data, std::int64_t count, bool written) {
      v = {p, 1};
      (written ? state_ : perWorld_).push_back({p, data, written ? data : nullptr, batch.nWorlds, 1, count});
      p += count;
    };
    field(view_.q, batch.q, s.nq, true);
    field(view_.u, batch.u, s.nu, true);
    field(view_.z, batch.z, s.nz, true);
    field(view_.time, batch.time, 1, true);
    field(view_.tau, batch.tau, s.nu, false);
    field(view_.bodyForce, batch.bodyForce, 6 * s.nb, false);
  }

  LaneWorlds(const LaneWorlds&) = delete;  // the views point into this object
  LaneWorlds& operator=(const LaneWorlds&) = delete;

  const WorldView<Pack<T>>& view() const { return view_; }
  const Workspace<Pack<T>>& workspace() const { return ws_; }

  // Loads worlds w0 .. w0+lanes-1 (lanes <= W); the lanes past them repeat the last world.
  void gather(std::int64_t w0, int lanes) {
    w0_ = w0;
    lanes_ = lanes;
    for (const Field& f : perWorld_) load(f);
    for (const Field& f : state_) load(f);
  }
  // Writes lane l's q, u, z and time back to its world.
  void scatterState(int l) const {
    for (const Field& f : state_)
      for (std::int64_t c = 0; c < f.count; ++c) f.out[c * f.compStride + (w0_ + l) * f.worldStride] = f.dst[c][l];
  }

 private:
  struct Field {
    Pack<T>* dst;
    const T* src;
    T* out;  // where a written field goes back (state), else null
    std::int64_t compStride, worldStride, count;
  };
  void load(const Field& f) {
    for (std::int64_t c = 0; c < f.count; ++c) {
      const T* row = f.src + c * f.compStride + w0_ * f.worldStride;
      Pack<T>& d = f.dst[c];
      if (lanes_ == W && f.worldStride == 1) {
        std::memcpy(&d, row, sizeof(Pack<T>));
      } else {
        for (int l = 0; l < W; ++l) d.lane(l) = row[std::min(l, lanes_ - 1) * f.worldStride];
      }
    }
  }

  BatchView<T> batch_;
  Sizes sizes_;
  std::vector<Pack<T>> packs_, scratch_;
  Workspace<Pack<T>> ws_;
  WorldView<Pack<T>> view_{};
  std::vector<Field> perWorld_, state_;
  std::int64_t w0_ = 0;
  int lanes_ = 0;
};

}  // namespace lockstep
