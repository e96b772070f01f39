// The `lockstep` application: its subcommands (kCommands), --version, and the parse step, which
// main.cpp and fuzz/cli_fuzzer.cpp share.
#include <exception>
#include <string>

#include "commands.h"
#include "lockstep/backends/cpu_isa.h"

#ifndef LOCKSTEP_VERSION
#define LOCKSTEP_VERSION "unknown"
#endif
#ifndef LOCKSTEP_CUDA_ARCHITECTURES
#define LOCKSTEP_CUDA_ARCHITECTURES "unknown"
#endif

namespace lockstep::cli {

namespace {

Command (*const kCommands[])(CLI::App&) = {
    addSimulateCommand,
    addInfoCommand,
    addStudyCommand,
    addBenchCommand,
    addPlotCommand,
    addViewCommand,
    addRenderCommand,
};

}  // namespace

std::string versionText() {
  std::string packs;
  try {
    packs = describeCpuIsa();
  } catch (const std::exception& e) {  // a bad LOCKSTEP_CPU_ISA: said here, and refused by every command
    packs = std::string("none: ") + e.what();
  }
  return std::string("lockstep ") + LOCKSTEP_VERSION + "\n" +
         "CUDA architectures: " + LOCKSTEP_CUDA_ARCHITECTURES + "\n" +
         "CPU SIMD packs: " + packs + "\n" +
         "precisions: float, double (default double)";
}

Application makeApplication() {
  Application a;
  a.app = std::make_unique<CLI::App>(
      "Lockstep: GPU-batched multibody dynamics.\n"
      "With no arguments, runs the built-in chain-7-seed scene as `lockstep simulate` does: 4096 worlds for "
      "1000 steps in double precision, on the GPU when present, else on the CPU, and prints a summary.");
  a.app->require_subcommand(0, 1);
  a.app->set_version_flag("--version", versionText(), "Print the version and what this build supports, then exit");
  for (auto add : kCommands) a.commands.push_back(add(*a.app));
  return a;
}

int Application::run() const {
  for (const Command& c : commands)
    if (c.app->parsed()) return c.run();
  return runDefault();
}

}  // namespace lockstep::cli
