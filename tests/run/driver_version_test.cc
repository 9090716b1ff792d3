// Tests of reading the driver's release for seals and device records.
#include "forgek/run/driver_version.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_util.h"

namespace forgek {
namespace {

TEST(DriverVersion, ReadsTheKernelModuleRelease) {
  EXPECT_EQ(NvidiaModuleRelease("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  9 "
                                "11:29:32 UTC 2025\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"),
            "580.159.04");
  EXPECT_EQ(NvidiaModuleRelease("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release "
                                "Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 2025\n"),
            "570.86.15");
  EXPECT_EQ(NvidiaModuleRelease("GCC version: gcc version 12.2.0\n"), "");
  EXPECT_EQ(NvidiaModuleRelease(""), "");
}

TEST(DriverVersion, DescribesReleaseAndCudaVersion) {
  TempDir dir;
  std::string proc = dir.file("version");
  {
    std::ofstream out(proc);
    out << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  9 11:29:32 UTC 2025\n";
  }
  EXPECT_EQ(DriverDescription(13000, proc), "580.159.04 (CUDA 13.0)");
  EXPECT_EQ(DriverDescription(0, proc), "580.159.04");
  std::string missing = dir.file("absent");
  EXPECT_EQ(DriverDescription(12080, missing), "CUDA 12.8");
  EXPECT_EQ(DriverDescription(0, missing), "");
}

}  // namespace
}  // namespace forgek
