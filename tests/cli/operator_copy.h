// A writable copy of the tiny_scale fixture operator for CLI tests that change or run it.
#pragma once

#include <filesystem>
#include <string>

#include "test_util.h"

namespace forgek {

// Copies tests/core/data/operators/tiny_scale to `root`/tiny_scale and returns `root`.
inline std::string CopyTinyScale(const std::string& root) {
  std::filesystem::create_directories(root);
  std::filesystem::copy(SourceDir() + "/tests/core/data/operators/tiny_scale", root + "/tiny_scale",
                        std::filesystem::copy_options::recursive);
  return root;
}

}  // namespace forgek
