#include "text_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "lockstep/io/input_error.h"

namespace lockstep::io {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t(1) << 20;
constexpr std::uint64_t kDefaultMaxInputMiB = 256;
constexpr const char* kMaxInputVariable = "LOCKSTEP_MAX_INPUT_MB";

}  // namespace

std::uint64_t maxInputFileBytes() {
  const char* text = std::getenv(kMaxInputVariable);
  if (text == nullptr || *text == '\0') return kDefaultMaxInputMiB * kMiB;
  // A positive whole number of MiB, small enough that the byte count fits in 64 bits.
  const std::uint64_t largest = UINT64_MAX / kMiB;
  char* end = nullptr;
  errno = 0;
  const unsigned long long mib = std::strtoull(text, &end, 10);
  if (*text == '-' || *end != '\0' || errno == ERANGE || mib == 0 || mib > largest)
    throw InputError(std::string(kMaxInputVariable) + ": must be a whole number of MiB between 1 and " +
                     std::to_string(largest) + " (got '" + text + "')");
  return mib * kMiB;
}

std::string readTextFile(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) throw InputError(path + ": cannot open the file (it does not exist)");
  if (!std::filesystem::is_regular_file(status)) throw InputError(path + ": cannot open the file (not a regular file)");
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) throw InputError(path + ": cannot read the file's size (" + error.message() + ")");
  const std::uint64_t limit = maxInputFileBytes();
  if (size > limit)
    throw InputError(path + ": the file is " + std::to_string(size) + " bytes, over the limit of " +
                     std::to_string(limit / kMiB) + " MiB for input files (set " + kMaxInputVariable +
                     " to a larger number of MiB to read it)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the file (permission denied?)");
  // Read what the size said, and one byte more to see whether the file grew in the meantime.
  std::string text(static_cast<std::size_t>(size) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  const std::size_t got = static_cast<std::size_t>(in.gcount());
  if (in.bad()) throw InputError(path + ": cannot read the file (read error)");
  if (got > size) throw InputError(path + ": the file changed while it was read");
  text.resize(got);
  return text;
}

void refuseSpecialFile(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status) || std::filesystem::is_regular_file(status)) return;
  const char* kind = std::filesystem::is_directory(status) ? "a folder"
                     : std::filesystem::is_fifo(status)    ? "a FIFO"
                     : std::filesystem::is_character_file(status) || std::filesystem::is_block_file(status) ? "a device"
                     : std::filesystem::is_socket(status) ? "a socket"
                                                          : "not a regular file";
  throw std::runtime_error(path + ": is " + std::string(kind) +
                           ", not a regular file: an output is written beside it and renamed over it, which would "
                           "replace it; give the name of a regular file");
}

void writeTextFile(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int error = errno;
  if (std::fclose(f) != 0 || !wrote) throw std::runtime_error(path + ": cannot write: " + std::strerror(wrote ? errno : error));
}

PartialFile::~PartialFile() {
  if (file_) std::fclose(file_);
  if (!committed_) std::remove(partial_.c_str());
}

void PartialFile::open() {
  refuseSpecialFile(path_);
  file_ = std::fopen(partial_.c_str(), "wb");
  if (!file_) throw std::runtime_error(partial_ + ": cannot open for writing: " + std::strerror(errno));
}

void PartialFile::create() {
  refuseSpecialFile(path_);
  open();
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0) fail("creating it");
}

void PartialFile::put(const void* data, std::size_t n, const char* during) {
  if (n && std::fwrite(data, 1, n, file_) != n) fail(during);
}

void PartialFile::commit() {
  if (file_) {
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0) fail("closing it");
  }
  if (std::rename(partial_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error(path_ + ": cannot rename " + partial_ + " to it: " + std::strerror(errno));
  committed_ = true;
}

void PartialFile::fail(const std::string& during) const {
  throw std::runtime_error(path_ + ": writing " + partial_ + " failed while " + during + ": " +
                           std::strerror(errno ? errno : EIO) + " (the partial file is removed)");
}

}  // namespace lockstep::io
