// Lockstep ParameterStore: the host copy of a batch's per-world parameters (LOCKSTEP_PARAM_FIELDS).
//
// Every parameter starts shared: one copy of the model's value, read by every world (world stride 0).
// The first time one world gets a value of its own, that parameter gets one copy per world
// (component c of world w at [c * nWorlds + w]); the other parameters stay shared.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/engine/aligned_vector.h"
#include "lockstep/physics/views.h"

namespace lockstep {

class Model;

// Blocks of per-world parameter values: transforms as their rotation (row-major), then translation.
inline void appendTransform(std::vector<double>& out, const Transform<double>& X) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out.push_back(X.R(i, j));
  for (int i = 0; i < 3; ++i) out.push_back(X.p[i]);
}
inline Transform<double> transformAt(const std::vector<double>& v, int offset) {
  Transform<double> X;
  for (int k = 0; k < 9; ++k) X.R.R.m[k / 3][k % 3] = v[offset + k];
  X.p = {{v[offset + 9], v[offset + 10], v[offset + 11]}};
  return X;
}
inline Vec3<double> vec3At(const std::vector<double>& v, int offset) {
  return {{v[offset], v[offset + 1], v[offset + 2]}};
}
inline void appendVec3(std::vector<double>& out, const Vec3<double>& v) {
  for (int k = 0; k < 3; ++k) out.push_back(v[k]);
}

// The model's value of one element's block of a parameter (component c of element e is block[c]).
std::vector<double> modelParameterBlock(const Model& model, ParamId id, int element);
// Checks one element's block as the model builder checks it; throws ModelError naming `where`.
void validateParameterBlock(const Model& model, ParamId id, int element, const std::vector<double>& block,
                            const std::string& where);

template <class T>
class ParameterStore {
 public:
  static constexpr std::int64_t kAllWorlds = -1;

  ParameterStore(const Model& model, const Sizes& sizes, std::int64_t nWorlds);

  // Component c of a parameter for world w.
  T value(ParamId id, std::int64_t w, std::int64_t c) const { return view(id, data(id).data()).world(w)[c]; }
  // Sets component c for world w (giving the parameter per-world storage) or for every world.
  void set(ParamId id, std::int64_t w, std::int64_t c, double value);
  bool perWorld(ParamId id) const { return entries_[int(id)].perWorld; }
  const AlignedVector<T>& data(ParamId id) const { return entries_[int(id)].data; }
  // The view of the parameter whose values (host or device copy of data(id)) start at `base`.
  ParamArray<T> view(ParamId id, const T* base) const {
    return perWorld(id) ? ParamArray<T>{base, 1, nWorlds_} : ParamArray<T>{base, 0, 1};
  }

 private:
  struct Entry {
    AlignedVector<T> data;  // count values (shared) or count * nWorlds values (per world), 64-byte aligned
    std::int64_t count = 0;
    bool perWorld = false;
  };
  // World w's components of a parameter in the host copy, writable: view()'s layout.
  Strided<T> worldValues(ParamId id, std::int64_t w) {
    const ParamArray<T> a = view(id, entries_[int(id)].data.data());
    return {const_cast<T*>(a.data) + w * a.worldStride, a.compStride};
  }

  std::int64_t nWorlds_;
  std::array<Entry, kParamCount> entries_;
};

extern template class ParameterStore<float>;
extern template class ParameterStore<double>;

}  // namespace lockstep
