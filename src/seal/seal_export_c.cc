// Exporting a seal as C: a header and a source that plan and launch it with the CUDA driver API alone.
#include <cctype>
#include <filesystem>

#include "forgek/core/atomic_file.h"
#include "forgek/seal/seal.h"
#include "c_seal.h"
#include "c_writer.h"
#include "export_folder.h"

namespace forgek {
namespace fs = std::filesystem;

std::string CExportName(const std::string& operator_name) {
  // The operator's name as a C identifier: letters, digits and underscores, lower case.
  std::string id;
  for (char c : operator_name)
    id += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
  return "forgek_" + id;
}

bool ExportSealC(Store& store, const SealRecord& seal, const OperatorSpec& op, Compiler& compiler,
                 const std::string& dir, bool allow_rebuilt, std::string* err) {
  CSeal s;
  if (!LoadCSeal(store, compiler, seal, op, allow_rebuilt, &s, err)) return false;
  CWriter writer(s);
  std::string header, source;
  if (!writer.Header(&header, err) || !writer.Source(&source, err)) {
    *err = "seal " + seal.id + ": " + *err;
    return false;
  }
  return WriteFolderAtomically(
      dir,
      [&](const fs::path& tmp, std::string* fill_err) {
        return WriteFileAtomic((tmp / (s.prefix + ".h")).string(), header, fill_err) &&
               WriteFileAtomic((tmp / (s.prefix + ".c")).string(), source, fill_err);
      },
      err);
}

}  // namespace forgek
