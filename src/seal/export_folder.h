// Writing an export folder whole: prepared beside its destination, then renamed into place.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace forgek {

// Fills a temporary folder beside `dir` with `fill` and renames it to `dir`, so that a failure leaves
// nothing half written. `dir` must not exist or be an empty folder; a symbolic link names the folder
// it points to (which is filled, the link staying a link), and a link to nothing is refused.
bool WriteFolderAtomically(const std::string& dir,
                           const std::function<bool(const std::filesystem::path& tmp, std::string* err)>& fill,
                           std::string* err);

}  // namespace forgek
