// The device library's text, generated into the build (scripts/embed-device-library.cmake).
#pragma once

#include "forgek/core/device_library.h"

namespace forgek {

const DeviceLibrary& EmbeddedDeviceLibrary();

}  // namespace forgek
