// The subcommands of `lockstep`. Each one is a single function that registers its options on the
// application and returns how to run it; main.cpp lists them. Adding a subcommand means writing
// one such function and adding it to that list.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace lockstep::cli {

struct Command {
  CLI::App* app;             // the subcommand, parsed by the caller
  std::function<int()> run;  // runs it with the parsed options; returns the exit status
};

// `lockstep simulate [SCENE]`: runs a scene on many worlds, prints a summary, records to a file.
Command addSimulateCommand(CLI::App& parent);
// `lockstep info SCENE`: describes a scene's model.
Command addInfoCommand(CLI::App& parent);
// `lockstep bench [SCENE]`: the throughput table of a scene on this machine.
Command addBenchCommand(CLI::App& parent);
// `lockstep plot FILE.npz`: PNG plots over time of a recording.
Command addPlotCommand(CLI::App& parent);
// `lockstep study FILE`: a Monte Carlo parameter study with statistics and a histogram.
Command addStudyCommand(CLI::App& parent);

// What `lockstep` alone does: simulate the built-in scene with its default settings (fewer steps
// when there is no GPU).
int runDefault();

}  // namespace lockstep::cli
