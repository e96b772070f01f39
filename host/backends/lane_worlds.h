// The CPU backend's packs of worlds: LaneModel and LaneWorlds put a batch's model and W of its
// worlds into the lane order of lanes.h's packs (component c of lane l at pack c, lane l): what
// the pack code (cpu_packs.cpp) steps. Both allocate once, when made; the backend keeps them
// across calls while the batch's storage and parameter layout stay the same (refreshShared() then
// picks up new values of the shared parameters). Private to the backend; like lanes.h, its types
// live in the inline namespace of the instruction set the including copy is compiled for.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "lockstep/backends/backend.h"
#include "lockstep/backends/lanes.h"

// Packs pass by value between inlined functions (see lanes.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace lockstep {
inline namespace LOCKSTEP_LANES_ISA {

template <class T, int W>
Transform<Pack<T, W>> broadcast(const Transform<T>& X) {
  Transform<Pack<T, W>> r;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) r.R.R.m[i][j] = X.R.R.m[i][j];
    r.p[i] = X.p[i];
  }
  return r;
}

// The model's constant frames, one copy in every lane.
template <class T, int W = kLanes<T>>
struct LaneModel : ConvertedModel<Pack<T, W>> {
  explicit LaneModel(const ModelView<T>& m)
      : ConvertedModel<Pack<T, W>>(m, [](const Transform<T>& X) { return broadcast<T, W>(X); }) {}
};

// One thread's pack of worlds: the fields a step reads and writes, the parameters and the
// workspace, in lane order (component c of lane l at pack c, lane l).
template <class T, int W = kLanes<T>>
class LaneWorlds {
 public:

  LaneWorlds(const BatchView<T>& batch, const Sizes& s, const WorkspaceLayout& layout)
      : batch_(batch), sizes_(s), scratch_(static_cast<std::size_t>(layout.total)), ws_{layout, {scratch_.data(), 1}} {
    std::int64_t n = 0;  // packs: every parameter, and every world field a step gathers or writes back
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
    n += (std::is_same<type, T>::value && role != Role::Reset) ? fieldCount(s, per, parts) : 0;
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    packs_.resize(static_cast<std::size_t>(n));
    Pack<T, W>* p = packs_.data();
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

  const WorldView<Pack<T, W>>& view() const { return view_; }
  const BatchView<T>& batch() const { return batch_; }
  const Workspace<Pack<T, W>>& workspace() const { return ws_; }

  // Broadcasts the current values of the parameters that all worlds share into every lane.
  void refreshShared() {
    for (const Field& f : shared_)
      for (std::int64_t c = 0; c < f.count; ++c) f.dst[c] = Pack<T, W>(f.src[c * f.compStride]);
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
    Pack<T, W>* dst;
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
          std::memcpy(row, &f.dst[c], sizeof(Pack<T, W>));
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
      Pack<T, W>& d = f.dst[c];
      if (contiguous_ && f.worldStride == 1) {
        std::memcpy(&d, row, sizeof(Pack<T, W>));
      } else {
        for (int l = 0; l < W; ++l) d.lane(l) = row[source_[l] * f.worldStride];
      }
    }
  }

  void addParameter(Pack<T, W>*& p, const ParamArray<T>& a, std::int64_t count) {
    if (a.worldStride == 0) {
      shared_.push_back({p, a.data, nullptr, a.compStride, 0, count});
    } else {
      perWorld_.push_back({p, a.data, nullptr, a.compStride, a.worldStride, count});
    }
    p += count;
  }
  void addField(Strided<Pack<T, W>>& v, T* data, std::int64_t count, Role role, Pack<T, W>*& p) {
    if (role == Role::Reset) return;
    v = {p, 1};
    const Field f{p, data, role == Role::Input ? nullptr : data, batch_.nWorlds, 1, count};
    (role == Role::Input ? perWorld_ : role == Role::State ? state_ : role == Role::Observation ? observations_
                                                                                             : evaluation_)
        .push_back(f);
    p += count;
  }
  void addField(Strided<std::int32_t>&, std::int32_t*, std::int64_t, Role, Pack<T, W>*&) {}

  BatchView<T> batch_;
  Sizes sizes_;
  std::vector<Pack<T, W>> packs_, scratch_;
  Workspace<Pack<T, W>> ws_;
  WorldView<Pack<T, W>> view_{};
  std::vector<Field> shared_, perWorld_, state_, observations_, evaluation_;
  std::int64_t w0_ = 0;
  int lanes_ = 0;
  int source_[W] = {};       // the world (from w0) each lane was loaded from
  bool contiguous_ = false;  // source_[l] == l for every lane
};

}  // namespace LOCKSTEP_LANES_ISA
}  // namespace lockstep

#pragma GCC diagnostic pop
