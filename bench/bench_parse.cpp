// lockstep_bench_parse: reading a scene file's text (parseScene) with 10,000, 100,000 and
// 1,000,000 per_world entries, to show that the cost is linear in the number of entries (issue 16:
// nlohmann 3.11.2's callback parser made it quadratic: 80k entries took 3.5 s, 1.2M never ended).
// Google Benchmark fits the complexity over the three sizes ("BigO", with its RMS error).
//
//   build/lockstep_bench_parse
#include <benchmark/benchmark.h>

#include <string>

#include "lockstep/io/scene.h"

namespace {

// A one-body scene with n per_world entries, each overriding gravity in one world (about 44 bytes
// an entry: 1M entries are a 44 MB file).
std::string sceneWithPerWorldEntries(std::int64_t n) {
  std::string text =
      R"({"bodies": [{"name": "a", "mobilizer": "pin", "mass": 1, "inertia": [0.1, 0.1, 0.1, 0, 0, 0]}],)"
      "\n\"per_world\": [";
  for (std::int64_t i = 0; i < n; ++i)
    text += std::string(i ? ",\n" : "\n") + R"({"worlds": )" + std::to_string(i) + R"(, "gravity": [0, 0, -1.62]})";
  return text + "\n]}\n";
}

void parsePerWorld(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const std::string text = sceneWithPerWorldEntries(n);
  for (auto _ : state) {
    lockstep::Scene scene = lockstep::parseScene(text, "per_world.json", ".");
    if (static_cast<std::int64_t>(scene.perWorld.size()) != n) state.SkipWithError("wrong number of entries");
    benchmark::DoNotOptimize(scene);
  }
  state.SetComplexityN(n);
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
  state.counters["bytes"] = static_cast<double>(text.size());
}

BENCHMARK(parsePerWorld)
    ->Name("parse/per_world")
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

}  // namespace

BENCHMARK_MAIN();
