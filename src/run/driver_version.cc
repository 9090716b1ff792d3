// The GPU driver's release, from /proc and the CUDA driver API's version number.
#include "forgek/run/driver_version.h"

#include <fstream>
#include <regex>
#include <sstream>

namespace forgek {

std::string NvidiaModuleRelease(const std::string& proc_text) {
  // The first line names the module and then its release, the first word made of dotted numbers:
  // "... Kernel Module  580.159.04  <date>" or "... Open Kernel Module for x86_64  570.86.15  ...".
  static const std::regex kRelease(R"(NVRM version:[^\n]*?Kernel Module[^\n]*?\s([0-9]+(\.[0-9]+)+)(\s|$))");
  std::smatch m;
  return std::regex_search(proc_text, m, kRelease) ? m[1].str() : "";
}

std::string DriverDescription(int cuda_driver_version, const std::string& proc_path) {
  std::string release;
  if (std::ifstream in(proc_path); in) {
    std::stringstream text;
    text << in.rdbuf();
    release = NvidiaModuleRelease(text.str());
  }
  std::string cuda;
  if (cuda_driver_version > 0)
    cuda = "CUDA " + std::to_string(cuda_driver_version / 1000) + "." + std::to_string(cuda_driver_version % 1000 / 10);
  if (release.empty()) return cuda;
  return cuda.empty() ? release : release + " (" + cuda + ")";
}

}  // namespace forgek
