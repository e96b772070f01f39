// Lockstep CompiledModel: a Model in the form the per-world code reads (views.h ModelView): the
// bodies' topology and frame flags, their constant frames converted to T, the force elements' and
// contacts' body pairs, the array sizes and the workspace layout. A Batch compiles its model once.
#pragma once

#include <vector>

#include "lockstep/engine/model.h"
#include "lockstep/physics/workspace.h"

namespace lockstep {

template <class T>
struct CompiledModel {
  explicit CompiledModel(const Model& model);

  Sizes sizes;
  WorkspaceLayout layout;
  // Every array of the model in kernel form (views.h LOCKSTEP_MODEL_ARRAYS): body, X_PF, X_MB
  // (= ~X_BM), and each body element kind's ElementTopology array.
#define LOCKSTEP_X(kind, type, name, count, doc) std::vector<type> name;
  LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_X

  // Pointers into this object's arrays (host memory).
  ModelView<T> view() const {
    ModelView<T> v;
    v.sizes = sizes;
#define LOCKSTEP_X(kind, type, name, count, doc) v.name = name.data();
    LOCKSTEP_MODEL_ARRAYS(LOCKSTEP_X)
#undef LOCKSTEP_X
    return v;
  }
};

extern template struct CompiledModel<float>;
extern template struct CompiledModel<double>;

}  // namespace lockstep
