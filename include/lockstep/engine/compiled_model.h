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
  std::vector<BodyTopology> body;
  std::vector<Transform<T>> X_PF, X_MB;  // X_MB = ~X_BM
  std::vector<ElementTopology> bushing, spring, contact, ground;

  // Pointers into this object's arrays (host memory).
  ModelView<T> view() const {
    return {sizes,          body.data(),    X_PF.data(),    X_MB.data(), bushing.data(),
            spring.data(),  contact.data(), ground.data()};
  }
};

extern template struct CompiledModel<float>;
extern template struct CompiledModel<double>;

}  // namespace lockstep
