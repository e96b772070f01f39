// What a Batch keeps of its last linearization (derivatives.cpp): its shape and the Jacobians' host
// copy. The buffers the backend runs it on (the dual worlds, the parameter indices and frames, the
// Jacobians' device copy) are the backend object's (batch_backend.h). Private to host/batch/.
#pragma once

#include <vector>

#include "lockstep/engine/batch.h"

namespace lockstep {

template <class T>
struct Batch<T>::Derivatives {
  JacobianShape shape;
  AlignedVector<T> jacobian;  // host copy: component c of world w at [c * worlds + w]
};

}  // namespace lockstep
