// `lockstep`: the command line of the Lockstep engine. With no arguments it runs the built-in
// default scene (chain-7-seed) on thousands of worlds and prints a summary; the subcommands are
// listed in kCommands.
#include <cstdio>
#include <exception>

#include "commands.h"

namespace {

using lockstep::cli::Command;

Command (*const kCommands[])(CLI::App&) = {
    lockstep::cli::addSimulateCommand,
    lockstep::cli::addInfoCommand,
    lockstep::cli::addStudyCommand,
    lockstep::cli::addBenchCommand,
    lockstep::cli::addPlotCommand,
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Lockstep: GPU-batched multibody dynamics.\n"
      "With no arguments, runs the built-in chain-7-seed scene on 4096 worlds (on the GPU when present, else a "
      "shorter run on the CPU) and prints a summary."};
  app.require_subcommand(0, 1);
  std::vector<Command> commands;
  for (auto add : kCommands) commands.push_back(add(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run();
    return lockstep::cli::runDefault();
  } catch (const std::exception& e) {
    // Bad input files (InputError), models (ModelError), devices and outputs: one line each.
    std::fprintf(stderr, "lockstep: error: %s\n", e.what());
  }
  return 1;
}
