// lockstep_bench: the Google Benchmark suite of Lockstep (bench/README.md says how to run it).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "lockstep/backends/device.h"

namespace lockstep::bench {
void registerStepBenchmarks();
void registerCpuSingleThreadBenchmarks();
void registerRolloutBenchmarks();
}  // namespace lockstep::bench

namespace {

std::string cpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  const lockstep::DeviceInfo dev = lockstep::queryDevice();
  benchmark::AddCustomContext("cpu_model", cpuModelName());
  benchmark::AddCustomContext("cuda_device", dev.available ? dev.name : "none (" + dev.reason + ")");
  const char* full = std::getenv("LOCKSTEP_BENCH_FULL");
  benchmark::AddCustomContext("LOCKSTEP_BENCH_FULL", full ? full : "unset");
  lockstep::bench::registerStepBenchmarks();
  lockstep::bench::registerCpuSingleThreadBenchmarks();
  lockstep::bench::registerRolloutBenchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
