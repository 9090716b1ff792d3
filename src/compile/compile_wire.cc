// The compile child's framing: a magic line, then records "KEY LENGTH\n" + LENGTH bytes + "\n".
#include "compile_wire.h"

#include <charconv>
#include <utility>

namespace forgek {
namespace {

constexpr const char* kRequestMagic = "forgek-compile-request 1\n";
constexpr const char* kReplyMagic = "forgek-compile-reply 1\n";
constexpr size_t kMaxKeyBytes = 32;

using Fields = std::vector<std::pair<std::string, std::string>>;

void Put(std::string* out, const std::string& key, const std::string& value) {
  *out += key;
  *out += ' ';
  *out += std::to_string(value.size());
  *out += '\n';
  *out += value;
  *out += '\n';
}

bool ParseFields(const std::string& bytes, const char* magic, Fields* fields, std::string* err) {
  const std::string head = magic;
  if (bytes.compare(0, head.size(), head) != 0) {
    *err = "the message does not start with '" + head.substr(0, head.size() - 1) + "'";
    return false;
  }
  size_t at = head.size();
  while (at < bytes.size()) {
    size_t space = bytes.find(' ', at);
    if (space == std::string::npos || space - at > kMaxKeyBytes) {
      *err = "a field at byte " + std::to_string(at) + " has no key";
      return false;
    }
    size_t newline = bytes.find('\n', space);
    uint64_t length = 0;
    if (newline == std::string::npos) {
      *err = "field '" + bytes.substr(at, space - at) + "' has no length";
      return false;
    }
    auto [end, ec] = std::from_chars(bytes.data() + space + 1, bytes.data() + newline, length);
    if (ec != std::errc() || end != bytes.data() + newline || length > bytes.size() - newline - 1 ||
        bytes.size() - newline - 1 - length < 1 || bytes[newline + 1 + length] != '\n') {
      *err = "field '" + bytes.substr(at, space - at) + "' is cut short or has a bad length";
      return false;
    }
    fields->emplace_back(bytes.substr(at, space - at), bytes.substr(newline + 1, length));
    at = newline + 1 + length + 1;
  }
  return true;
}

bool ToUint(const std::string& text, uint64_t* value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

bool ToInt(const std::string& text, int* value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string EncodeRequest(const ChildCompileRequest& req) {
  std::string out = kRequestMagic;
  Put(&out, "name", req.name);
  Put(&out, "source", req.source);
  for (const std::string& o : req.options) Put(&out, "option", o);
  for (const std::string& f : req.read_folders) Put(&out, "read", f);
  for (const std::string& f : req.write_folders) Put(&out, "write", f);
  Put(&out, "unconfined", req.allow_unconfined ? "1" : "0");
  Put(&out, "address_space", std::to_string(req.address_space_bytes));
  Put(&out, "cpu_seconds", std::to_string(req.cpu_seconds));
  Put(&out, "stack", std::to_string(req.stack_bytes));
  return out;
}

bool DecodeRequest(const std::string& bytes, ChildCompileRequest* req, std::string* err) {
  Fields fields;
  if (!ParseFields(bytes, kRequestMagic, &fields, err)) return false;
  *req = ChildCompileRequest{};
  for (const auto& [key, value] : fields) {
    bool ok = true;
    if (key == "name") req->name = value;
    else if (key == "source") req->source = value;
    else if (key == "option") req->options.push_back(value);
    else if (key == "read") req->read_folders.push_back(value);
    else if (key == "write") req->write_folders.push_back(value);
    else if (key == "unconfined") req->allow_unconfined = value == "1";
    else if (key == "address_space") ok = ToUint(value, &req->address_space_bytes);
    else if (key == "cpu_seconds") ok = ToUint(value, &req->cpu_seconds);
    else if (key == "stack") ok = ToUint(value, &req->stack_bytes);
    else ok = false;
    if (!ok) {
      *err = "request field '" + key + "' is unknown or malformed";
      return false;
    }
  }
  return true;
}

std::string EncodeReply(const ChildCompileReply& reply) {
  std::string out = kReplyMagic;
  Put(&out, "error", reply.error);
  Put(&out, "landlock", std::to_string(reply.landlock_abi));
  Put(&out, "status", std::to_string(reply.run.status));
  Put(&out, "status_text", reply.run.status_text);
  Put(&out, "log", reply.run.log);
  Put(&out, "cubin", reply.run.cubin);
  return out;
}

bool DecodeReply(const std::string& bytes, ChildCompileReply* reply, std::string* err) {
  Fields fields;
  if (!ParseFields(bytes, kReplyMagic, &fields, err)) return false;
  *reply = ChildCompileReply{};
  for (const auto& [key, value] : fields) {
    bool ok = true;
    if (key == "error") reply->error = value;
    else if (key == "landlock") ok = ToInt(value, &reply->landlock_abi);
    else if (key == "status") ok = ToInt(value, &reply->run.status);
    else if (key == "status_text") reply->run.status_text = value;
    else if (key == "log") reply->run.log = value;
    else if (key == "cubin") reply->run.cubin = value;
    else ok = false;
    if (!ok) {
      *err = "reply field '" + key + "' is unknown or malformed";
      return false;
    }
  }
  reply->run.ok = reply->error.empty() && reply->run.status == 0 && !reply->run.cubin.empty();
  return true;
}

}  // namespace forgek
