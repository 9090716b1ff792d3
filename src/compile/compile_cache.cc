// The on-disk compile cache: key derivation, atomic entry writes, checked entry reads.
#include "compile_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "forgek/core/atomic_file.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/hash.h"

namespace forgek {
namespace fs = std::filesystem;
namespace {

// Bump when the entry layout or the meaning of a parsed field changes: old entries then miss.
constexpr int kEntryFormat = 1;

void AppendField(std::string* buf, const std::string& field) {
  *buf += std::to_string(field.size());
  *buf += ':';
  *buf += field;
  *buf += ';';
}

nlohmann::json MessagesToJson(const std::vector<CompileMessage>& messages) {
  nlohmann::json arr = nlohmann::json::array();
  for (const CompileMessage& m : messages)
    arr.push_back({{"file", m.file}, {"line", m.line}, {"column", m.column}, {"severity", m.severity},
                   {"message", m.message}});
  return arr;
}

nlohmann::json KernelsToJson(const std::vector<KernelResources>& kernels) {
  nlohmann::json arr = nlohmann::json::array();
  for (const KernelResources& k : kernels)
    arr.push_back({{"kernel", k.kernel}, {"registers", k.registers}, {"spill_store_bytes", k.spill_store_bytes},
                   {"spill_load_bytes", k.spill_load_bytes}, {"stack_bytes", k.stack_bytes},
                   {"static_smem_bytes", k.static_smem_bytes}, {"const_bytes", k.const_bytes},
                   {"wgmma_serialized", k.wgmma_serialized}});
  return arr;
}

// Throws nlohmann::json exceptions on a malformed header; Load turns them into a miss.
void MessagesFromJson(const nlohmann::json& arr, std::vector<CompileMessage>* out) {
  for (const nlohmann::json& j : arr) {
    CompileMessage m;
    m.file = j.at("file").get<std::string>();
    m.line = j.at("line").get<int>();
    m.column = j.at("column").get<int>();
    m.severity = j.at("severity").get<std::string>();
    m.message = j.at("message").get<std::string>();
    out->push_back(std::move(m));
  }
}

void KernelsFromJson(const nlohmann::json& arr, std::vector<KernelResources>* out) {
  for (const nlohmann::json& j : arr) {
    KernelResources k;
    k.kernel = j.at("kernel").get<std::string>();
    k.registers = j.at("registers").get<int>();
    k.spill_store_bytes = j.at("spill_store_bytes").get<int>();
    k.spill_load_bytes = j.at("spill_load_bytes").get<int>();
    k.stack_bytes = j.at("stack_bytes").get<int>();
    k.static_smem_bytes = j.at("static_smem_bytes").get<int>();
    k.const_bytes = j.at("const_bytes").get<int>();
    k.wgmma_serialized = j.at("wgmma_serialized").get<std::string>();  // absent in an older entry: a miss, recompiled
    out->push_back(std::move(k));
  }
}

}  // namespace

std::string CompileKey(const std::string& source, const std::vector<std::string>& options,
                       const std::string& nvrtc_version, const std::string& target) {
  std::string buf = "forgek-compile-entry-" + std::to_string(kEntryFormat) + ";";
  AppendField(&buf, nvrtc_version);
  AppendField(&buf, target);
  AppendField(&buf, std::to_string(options.size()));
  for (const std::string& o : options) AppendField(&buf, o);
  AppendField(&buf, source);
  return Sha256Hex(buf);
}

std::string CompileCache::EntryPath(const std::string& key) const {
  return (fs::path(dir_) / key.substr(0, 2) / key).string();
}

bool CompileCache::Load(const std::string& key, CompileResult* result) const {
  if (!enabled() || key.size() < 2) return false;
  std::ifstream in(EntryPath(key), std::ios::binary);
  if (!in) return false;
  std::string header;
  if (!std::getline(in, header)) return false;
  std::ostringstream rest;
  rest << in.rdbuf();
  std::string cubin = rest.str();
  try {
    nlohmann::json j;
    JsonParseError unreadable;
    if (!ParseJsonLimited(header, &j, &unreadable)) return false;
    if (j.at("format").get<int>() != kEntryFormat || j.at("key").get<std::string>() != key) return false;
    if (j.at("cubin_bytes").get<size_t>() != cubin.size()) return false;
    if (j.at("cubin_sha256").get<std::string>() != Sha256Hex(cubin)) return false;
    CompileResult loaded;
    loaded.ok = j.at("ok").get<bool>();
    loaded.log = j.at("log").get<std::string>();
    MessagesFromJson(j.at("messages"), &loaded.messages);
    KernelsFromJson(j.at("kernels"), &loaded.kernels);
    if (loaded.ok && cubin.empty()) return false;
    loaded.cubin = std::move(cubin);
    result->ok = loaded.ok;
    result->log = std::move(loaded.log);
    result->messages = std::move(loaded.messages);
    result->kernels = std::move(loaded.kernels);
    result->cubin = std::move(loaded.cubin);
    return true;
  } catch (const std::exception&) {
    return false;  // a torn, foreign or hand-edited entry: treat as a miss
  }
}

bool CompileCache::Store(const std::string& key, const CompileResult& result, std::string* err) const {
  if (!enabled()) return true;
  std::string path = EntryPath(key);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) {
    *err = "cannot create " + fs::path(path).parent_path().string() + ": " + ec.message();
    return false;
  }
  nlohmann::json header = {{"format", kEntryFormat},
                           {"key", key},
                           {"ok", result.ok},
                           {"log", result.log},
                           {"messages", MessagesToJson(result.messages)},
                           {"kernels", KernelsToJson(result.kernels)},
                           {"cubin_bytes", result.cubin.size()},
                           {"cubin_sha256", Sha256Hex(result.cubin)}};
  // Invalid UTF-8 in the log must not make the header unwritable.
  std::string text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  text += result.cubin;
  return WriteFileAtomic(path, text, err);
}

}  // namespace forgek
