// The GPU driver's release (e.g. 580.159.04), for seals and device records.
#pragma once

#include <string>

namespace forgek {

// The release in the text of /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64
// Kernel Module  580.159.04  Thu ..."), or "" when the text has none.
std::string NvidiaModuleRelease(const std::string& proc_text);

// "580.159.04 (CUDA 13.0)": the kernel module's release where /proc says it (Linux), then the
// CUDA version the driver supports (cuDriverGetVersion, e.g. 13000); either part may be missing.
std::string DriverDescription(int cuda_driver_version, const std::string& proc_path = "/proc/driver/nvidia/version");

}  // namespace forgek
