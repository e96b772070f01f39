// `lockstep`: the command line of the Lockstep engine. With no arguments it runs the built-in
// default scene (chain-7-seed) on thousands of worlds and prints a summary; the subcommands are
// listed in app.cpp.
#include <cstdio>
#include <exception>

#include "commands.h"
#include "options.h"

int main(int argc, char** argv) {
  const lockstep::cli::Application a = lockstep::cli::makeApplication();
  try {
    a.app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return a.app->exit(e);
  }
  try {
    return a.run();
  } catch (const lockstep::cli::Interrupted& e) {
    std::fprintf(stderr, "lockstep: %s\n", e.what());
    return 128 + e.signal;
  } catch (const std::exception& e) {
    // Bad input files (InputError), models (ModelError), devices, memory and outputs: one line each.
    std::fprintf(stderr, "lockstep: error: %s\n", e.what());
  }
  return 1;
}
