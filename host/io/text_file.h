// Reading a whole input file for the scene and URDF readers.
#pragma once

#include <string>

namespace lockstep::io {

// The file's contents. Throws InputError("<path>: <reason>") when it does not exist, is not a
// regular file (a directory, a device such as /dev/zero) or cannot be read.
std::string readTextFile(const std::string& path);

}  // namespace lockstep::io
