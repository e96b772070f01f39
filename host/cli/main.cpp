#include <cstdio>

#include "lockstep/device.h"

int main() {
  const lockstep::DeviceInfo dev = lockstep::queryDevice();
  std::printf("device: %s\n", dev.available ? dev.name.c_str() : dev.reason.c_str());
  return 0;
}
