#include "lockstep/view/video.h"

#include <cerrno>
#include <csignal>
#include <exception>
#include <cstdio>
#include <filesystem>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "../io/text_file.h"

namespace lockstep {

namespace {

std::string extensionOf(const std::string& path) {
  const std::size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(dot + 1);
}

}  // namespace

bool VideoWriter::writes(const std::string& path) {
  const std::string e = extensionOf(path);
  return e == "mp4" || e == "webm" || e == "gif" || e == "png";
}

VideoWriter::VideoWriter(const std::string& path, int width, int height, double fps)
    : path_(path), partial_(path + ".partial"), width_(width), height_(height) {
  const std::string e = extensionOf(path);
  if (!writes(path)) throw std::runtime_error(path + ": the file name must end in .mp4, .webm, .gif or .png");
  if (!(fps >= 0.01 && fps <= 1000))
    throw std::runtime_error(path + ": " + std::to_string(fps) + " frames per second: give 0.01 to 1000");
  io::refuseSpecialFile(path);
  // The rate as a decimal ffmpeg reads exactly enough ("0.001", "29.97"; std::to_string's six
  // decimals would send 1e-7 as "0.000000").
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.9g", fps);
  std::vector<std::string> args = {"ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
                                   "-s", std::to_string(width) + "x" + std::to_string(height), "-r", rate,
                                   "-i", "-", "-an"};
  if (e == "mp4") {
    // H.264 in yuv420p wants even sizes; the last row or column is dropped when odd.
    args.insert(args.end(), {"-vf", "crop=trunc(iw/2)*2:trunc(ih/2)*2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                             "-movflags", "+faststart", "-f", "mp4"});
  } else if (e == "webm") {
    args.insert(args.end(), {"-c:v", "libvpx-vp9", "-pix_fmt", "yuv420p", "-f", "webm"});
  } else if (e == "gif") {
    args.insert(args.end(), {"-f", "gif"});
  } else {
    // -update 1: the name is one file, never a pattern of numbered ones ("frame%d.png").
    args.insert(args.end(), {"-frames:v", "1", "-f", "image2", "-update", "1", "-c:v", "png"});
  }
  // The output as an absolute path under ffmpeg's file: protocol, so that no name the user gives
  // is read as another protocol ("pipe:1.gif"), a URL or an option ("-y.mp4").
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(partial_, ec);
  if (ec) throw std::runtime_error(path + ": cannot resolve the path: " + ec.message());
  args.push_back("file:" + absolute.string());
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("cannot start ffmpeg: ") + std::strerror(errno));
  child_ = fork();
  if (child_ < 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(std::string("cannot start ffmpeg: ") + std::strerror(errno));
  }
  if (child_ == 0) {
    dup2(fds[0], 0);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp("ffmpeg", argv.data());
    _exit(127);
  }
  close(fds[0]);
  pipe_ = fds[1];
}

VideoWriter::~VideoWriter() {
  if (!finished_) {
    try {
      stop();
    } catch (const std::exception&) {  // already failing: the caller has the first error
    }
    std::remove(partial_.c_str());
  }
}

void VideoWriter::stop() {
  if (pipe_ >= 0) close(pipe_);
  pipe_ = -1;
  if (child_ > 0) {
    int status = 0;
    while (waitpid(child_, &status, 0) < 0 && errno == EINTR) {
    }
    child_ = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      throw std::runtime_error(path_ + ": ffmpeg failed" +
                               (code == 127 ? std::string(" to start: it is not installed (Debian's ffmpeg)")
                                            : " (exit status " + std::to_string(code) + ")") +
                               "; nothing is written");
    }
  }
}

void VideoWriter::write(const std::uint8_t* rgb) {
  // A closed pipe (ffmpeg gone) must not kill the program: the write fails with EPIPE instead.
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);
  std::size_t left = static_cast<std::size_t>(width_) * height_ * 3;
  const auto* p = reinterpret_cast<const char*>(rgb);
  while (left > 0) {
    const ssize_t n = ::write(pipe_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      sigaction(SIGPIPE, &old, nullptr);
      finished_ = false;
      stop();  // throws with ffmpeg's status
      throw std::runtime_error(path_ + ": ffmpeg stopped reading frames; nothing is written");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  sigaction(SIGPIPE, &old, nullptr);
  ++frames_;
}

void VideoWriter::finish() {
  stop();
  if (std::rename(partial_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    std::remove(partial_.c_str());
    throw std::runtime_error(path_ + ": cannot write: " + std::strerror(error));
  }
  finished_ = true;
}

}  // namespace lockstep
