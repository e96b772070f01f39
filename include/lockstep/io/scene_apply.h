// Putting a scene (scene.h) into a Batch: its initial state, actuator targets and per-world
// overrides.
#pragma once

#include <cstdint>

#include "lockstep/engine/batch.h"
#include "lockstep/io/scene.h"

namespace lockstep {

// Puts the scene's initial state into every world of the batch (z = 0, t = 0, status cleared),
// then applies the per-world overrides. Throws InputError when an override names a world outside
// the batch. A world whose q or u is not finite in T (1e300 in float) is flagged by the Batch's
// setters (kStatusInvalidInitialState), the others untouched. It only sets values: a state that
// violates the scene's sphere contacts stays so until Batch::assemble() (after upload() on the CUDA backend) projects it onto them.
template <class T>
void applyScene(const Scene& scene, Batch<T>& batch);
// The same for a batch that holds worlds [firstWorld, firstWorld + numWorlds) of a larger run (a
// chunk of a study): world w of the scene's per-world overrides is the batch's world
// w - firstWorld; overrides of worlds outside that range are skipped.
template <class T>
void applySceneFrom(const Scene& scene, Batch<T>& batch, std::int64_t firstWorld);

extern template void applyScene<float>(const Scene&, Batch<float>&);
extern template void applyScene<double>(const Scene&, Batch<double>&);
extern template void applySceneFrom<float>(const Scene&, Batch<float>&, std::int64_t);
extern template void applySceneFrom<double>(const Scene&, Batch<double>&, std::int64_t);

}  // namespace lockstep
