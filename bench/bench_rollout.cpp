// The cost of driving worlds from a learning loop, against the cost of the physics (issue: reset,
// action and observation overhead below 10% of step time at 4096 worlds of chain-7-seed).
//
// One "control step" of a rollout: the policy's actions are copied into the batch's `tau` field
// (device to device on CUDA, as from a framework tensor; host memory on the CPU), 1/64 of the
// worlds are reset by a mask in the backend's memory, and the batch steps `substeps` physics steps
// with the observations written at the end (read in place, without copies). Two benchmarks per
// substep count (1 and 4):
//   rollout/<scene>/<backend>/<precision>/<worlds>/<substeps>/physics   the steps alone
//   rollout/<scene>/<backend>/<precision>/<worlds>/<substeps>/control   the whole control step
// The counter overhead_pct of the second is (control - physics) / physics in percent, from the
// medians of the two.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <vector>

#include "bench_scenes.h"
#include "lockstep/backends/device.h"

namespace lockstep::bench {
namespace {

struct RolloutTiming {
  std::map<std::string, double> physicsSeconds;  // by "<scene>/<backend>/<precision>/<worlds>"
};
RolloutTiming& timings() {
  static RolloutTiming t;
  return t;
}

template <class T>
void runRollout(benchmark::State& state, const BenchScene& scene, Backend backend, std::int64_t worlds, int substeps,
                bool control, const std::string& key) {
  if (backend == Backend::Cuda && !queryDevice().available) {
    state.SkipWithError(("skipped: " + queryDevice().reason).c_str());
    return;
  }
  // LOCKSTEP_BENCH_CPU_THREADS=n: n CPU threads (steadier on a shared machine), as bench_throughput.
  const char* threads = std::getenv("LOCKSTEP_BENCH_CPU_THREADS");
  Batch<T> batch(scene.model, worlds, backend, CpuOptions{threads ? std::max(0, std::atoi(threads)) : 0});
  std::vector<double> u0 = scene.u0.empty() ? std::vector<double>(scene.model->nu(), 0.0) : scene.u0;
  batch.setAllStates(scene.q0, u0);
  batch.upload();
  if (scene.assemble) batch.assemble();
  batch.captureInitialState();  // resets return to the assembled state
  batch.setObserveAfterStep(control);
  // The policy's actions and the reset mask, where a learning framework would hold them.
  const FieldView tau = batch.field("tau", MemorySpace::Backend);
  const std::size_t actionBytes = sizeof(T) * tau.components * worlds;
  std::vector<T> hostActions(tau.components * worlds, T(0.01));
  std::vector<std::uint8_t> hostMask(worlds, 0);
  for (std::int64_t w = 0; w < worlds; w += 64) hostMask[w] = 1;
  void* actions = hostActions.data();
  const std::uint8_t* mask = hostMask.data();
  void* deviceBuffers[2] = {nullptr, nullptr};
  cudaStream_t stream = static_cast<cudaStream_t>(batch.stream());
  if (backend == Backend::Cuda) {
    checkCuda(cudaMalloc(&deviceBuffers[0], actionBytes), "cudaMalloc actions");
    checkCuda(cudaMalloc(&deviceBuffers[1], worlds), "cudaMalloc mask");
    checkCuda(cudaMemcpy(deviceBuffers[0], hostActions.data(), actionBytes, cudaMemcpyHostToDevice), "copy");
    checkCuda(cudaMemcpy(deviceBuffers[1], hostMask.data(), worlds, cudaMemcpyHostToDevice), "copy");
    actions = deviceBuffers[0];
    mask = static_cast<const std::uint8_t*>(deviceBuffers[1]);
  }
  auto controlStep = [&] {
    if (control) {
      if (backend == Backend::Cuda)
        checkCuda(cudaMemcpyAsync(tau.data, actions, actionBytes, cudaMemcpyDeviceToDevice, stream), "actions");
      else
        std::copy_n(static_cast<const T*>(actions), tau.components * worlds, static_cast<T*>(tau.data));
      batch.resetWorldsMask(mask, MemorySpace::Backend);
    }
    batch.step(1e-3, substeps, Integrator::RK4);
  };
  controlStep();  // warm-up
  batch.synchronize();
  cudaEvent_t start = nullptr, stop = nullptr;
  if (backend == Backend::Cuda) {
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
  }
  std::vector<double> seconds;
  for (auto _ : state) {
    double s = 0;
    if (backend == Backend::Cuda) {
      cudaEventRecord(start, stream);
      controlStep();
      cudaEventRecord(stop, stream);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      s = ms * 1e-3;
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      controlStep();
      s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    seconds.push_back(s);
    state.SetIterationTime(s);
  }
  if (backend == Backend::Cuda) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(deviceBuffers[0]);
    cudaFree(deviceBuffers[1]);
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  state.SetItemsProcessed(state.iterations() * worlds * substeps);
  if (!control) {
    timings().physicsSeconds[key] = median;
  } else if (timings().physicsSeconds.count(key)) {
    state.counters["overhead_pct"] = 100.0 * (median - timings().physicsSeconds[key]) / timings().physicsSeconds[key];
  }
}

}  // namespace

void registerRolloutBenchmarks() {
  const BenchScene& scene = benchScene("chain-7-seed");
  for (Backend backend : {Backend::Cpu, Backend::Cuda}) {
    for (Precision precision : {Precision::Float, Precision::Double}) {
      const std::int64_t worlds = 4096;
      for (int substeps : {1, 4}) {
        const std::string key = scene.name + "/" + backendName(backend) + "/" + precisionName(precision) + "/" +
                                std::to_string(worlds) + "/" + std::to_string(substeps);
        for (bool control : {false, true}) {
          const std::string name = "rollout/" + key + (control ? "/control" : "/physics");
          benchmark::RegisterBenchmark(name.c_str(), [=, &scene](benchmark::State& state) {
            if (precision == Precision::Float) runRollout<float>(state, scene, backend, worlds, substeps, control, key);
            else runRollout<double>(state, scene, backend, worlds, substeps, control, key);
          })->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
        }
      }
    }
  }
}

}  // namespace lockstep::bench
