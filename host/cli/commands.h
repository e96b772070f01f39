// The subcommands of `lockstep`. Each one is a single function that registers its options on the
// application and returns how to run it; main.cpp lists them. Adding a subcommand means writing
// one such function and adding it to that list.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <vector>

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
// `lockstep view FILE.npz`: a web page that plays a recording (view.cpp).
Command addViewCommand(CLI::App& parent);
// `lockstep render FILE.npz`: a recording as a video or a picture, drawn off-screen (view.cpp).
Command addRenderCommand(CLI::App& parent);
// `lockstep study FILE`: a Monte Carlo parameter study with statistics and a histogram.
Command addStudyCommand(CLI::App& parent);

// The whole command line, `lockstep` and its subcommands (app.cpp). Parsing it (app->parse) only
// checks and stores the options; run() does what they ask for.
struct Application {
  std::unique_ptr<CLI::App> app;
  std::vector<Command> commands;  // kCommands, registered on app
  // Runs the subcommand that was parsed, or runDefault() when none was.
  int run() const;
};
Application makeApplication();
// `lockstep --version`: the version and what this build supports.
std::string versionText();

// What `lockstep` alone does: simulate the built-in scene with its default settings (fewer steps
// when there is no GPU).
int runDefault();

}  // namespace lockstep::cli
