// libFuzzer target of the command line's option parsing: the input is an argument vector (the
// arguments separated by NUL bytes, at most 24 of them), given to the same application main()
// builds (makeApplication, app.cpp), parsed and never run. A CLI::ParseError is the expected
// answer to a bad command line; any other exception, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../host/cli/commands.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = {"lockstep"};
  std::string current;
  for (std::size_t i = 0; i < size && args.size() < 25; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty() && args.size() < 25) args.push_back(current);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const lockstep::cli::Application application = lockstep::cli::makeApplication();
  try {
    application.app->parse(static_cast<int>(args.size()), argv.data());
  } catch (const CLI::ParseError&) {
    // a refused command line, --help or --version
  }
  return 0;
}
