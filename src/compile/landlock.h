// Linux Landlock: confine the calling process to a few folders, so that what it opens afterwards
// (an #include of NVRTC's, say) cannot reach any other file, whatever path it names.
#pragma once

#include <string>
#include <vector>

namespace forgek {

// The Landlock ABI this kernel offers: 0 when it has none (too old, or Landlock is not among
// the active security modules).
int LandlockAbi();

struct FolderAccess {
  std::string path;
  bool write = false;  // false: read files and list folders beneath it; true: everything beneath it
};

// From now on this process and its children may open files only beneath `folders` (a folder that
// does not exist is left out), connect or bind no TCP socket and, where the kernel knows how,
// signal no process outside it nor reach an abstract UNIX socket. Irreversible. False with the
// reason when Landlock is missing or refuses.
bool ConfineToFolders(const std::vector<FolderAccess>& folders, std::string* err);

}  // namespace forgek
