// SHA-256 through OpenSSL's EVP interface.
#include "forgek/core/hash.h"

#include "forgek/core/device_library.h"

#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

namespace forgek {

std::string Sha256Hex(std::string_view data) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest, &len) != 1)
    throw std::runtime_error("SHA-256 failed in OpenSSL");
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

std::string CandidateHash(const std::string& source, const ParamAssignment& params) {
  // The library code a source includes is part of it; params are sorted by name (std::map), so the
  // same assignment always hashes the same.
  std::string key = ExpandedSource(source);
  key += "\n/* forgek params:";
  for (const auto& [name, value] : params) key += " " + name + "=" + std::to_string(value);
  key += " */";
  return Sha256Hex(key);
}

}  // namespace forgek
