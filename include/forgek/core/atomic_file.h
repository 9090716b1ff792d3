// Writing an output file so that it is either the old file or the whole new one, never a torn mix.
#pragma once

#include <string>
#include <string_view>

namespace forgek {

// Writes `content` to a temporary file beside `path`, fsyncs it, renames it over `path` and fsyncs
// the folder. On any failure (full disk, quota, no permission) `path` is left as it was, the
// temporary file is removed, and `err` names the file and the cause. Keeps an existing file's
// permission bits; a new file gets 0644 (less the umask).
bool WriteFileAtomic(const std::string& path, std::string_view content, std::string* err);

}  // namespace forgek
