#include "text_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lockstep/input_error.h"

namespace lockstep::io {

std::string readTextFile(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) throw InputError(path + ": cannot open the file (it does not exist)");
  if (!std::filesystem::is_regular_file(status)) throw InputError(path + ": cannot open the file (not a regular file)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the file (permission denied?)");
  std::ostringstream text;
  text << in.rdbuf();  // an empty file leaves text empty (and sets its failbit): still a file
  return text.str();
}

}  // namespace lockstep::io
