// Frames into a video file through ffmpeg (Debian's ffmpeg), run as a separate program that reads
// raw RGB frames on its standard input: .mp4 (H.264), .webm (VP9), .gif, or one .png picture.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace lockstep {

class VideoWriter {
 public:
  // Starts ffmpeg writing PATH.partial. Throws std::runtime_error when the extension is not one
  // of the above, ffmpeg is not installed, or it cannot start.
  VideoWriter(const std::string& path, int width, int height, double fps);
  // Without finish(): stops ffmpeg and removes PATH.partial.
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  // Appends a frame of height x width x 3 bytes (RGB, top row first). Throws std::runtime_error
  // when ffmpeg has stopped (naming its exit status).
  void write(const std::uint8_t* rgb);
  // Waits for ffmpeg; renames PATH.partial to PATH when it succeeded, else throws saying so.
  void finish();

  int frames() const { return frames_; }
  // Whether `path` ends in an extension VideoWriter writes.
  static bool writes(const std::string& path);

 private:
  void stop();
  std::string path_, partial_;
  int width_, height_, frames_ = 0;
  int pipe_ = -1;
  pid_t child_ = -1;
  bool finished_ = false;
};

}  // namespace lockstep
