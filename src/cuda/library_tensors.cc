// Validation of the tensors a library reference binds to.
#include "library_tensors.h"

#include <climits>

namespace forgek {

const char* DTypeLabel(DType t) {
  switch (t) {
    case DType::f64: return "f64";
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::e4m3: return "e4m3";
    case DType::e5m2: return "e5m2";
    case DType::i8: return "i8";
    case DType::u8: return "u8";
    case DType::i32: return "i32";
    case DType::u32: return "u32";
    case DType::i64: return "i64";
  }
  return "?";
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

bool TensorRequirements::Fail(const std::string& message, std::string* err) const {
  if (err) *err = id_ + ": " + message;
  return false;
}

const DeviceTensor* TensorRequirements::Get(const std::string& name, std::initializer_list<DType> dtypes,
                                            size_t rank, std::string* err) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    std::string have;
    for (const auto& [n, t] : tensors_) have += (have.empty() ? "" : ", ") + n;
    Fail("missing tensor '" + name + "' (the operator has: " + (have.empty() ? "none" : have) + ")", err);
    return nullptr;
  }
  const DeviceTensor& t = it->second;
  bool dtype_ok = false;
  std::string wanted;
  for (DType d : dtypes) {
    dtype_ok = dtype_ok || t.dtype == d;
    wanted += (wanted.empty() ? "" : " or ") + std::string(DTypeLabel(d));
  }
  if (!dtype_ok) {
    Fail("tensor '" + name + "' is " + DTypeLabel(t.dtype) + ", expected " + wanted, err);
    return nullptr;
  }
  if (t.shape.size() != rank) {
    Fail("tensor '" + name + "' has shape " + ShapeText(t.shape) + ", expected " + std::to_string(rank) +
             " dimensions",
         err);
    return nullptr;
  }
  for (int64_t d : t.shape) {
    if (d < 1) {
      Fail("tensor '" + name + "' has an empty dimension: " + ShapeText(t.shape), err);
      return nullptr;
    }
  }
  if (t.ptr == nullptr) {
    Fail("tensor '" + name + "' has no device memory", err);
    return nullptr;
  }
  return &t;
}

const DeviceTensor* TensorRequirements::GetScalar(const std::string& name, DType dtype, std::string* err) const {
  auto it = tensors_.find(name);
  if (it != tensors_.end() && it->second.shape.empty()) return Get(name, {dtype}, 0, err);
  const DeviceTensor* t = Get(name, {dtype}, 1, err);
  if (t && t->shape[0] != 1) {
    Fail("tensor '" + name + "' has shape " + ShapeText(t->shape) + ", expected one element ([] or [1])", err);
    return nullptr;
  }
  return t;
}

bool TensorRequirements::Dims(const std::string& name, const DeviceTensor& t, const std::vector<int64_t>& expected,
                              std::string* err) const {
  if (t.shape == expected) return true;
  return Fail("tensor '" + name + "' has shape " + ShapeText(t.shape) + ", expected " + ShapeText(expected), err);
}

bool TensorRequirements::FitsInt(const std::string& what, int64_t value, std::string* err) const {
  if (value >= 0 && value <= INT_MAX) return true;
  return Fail(what + " = " + std::to_string(value) + " does not fit the library's 32-bit int", err);
}

}  // namespace forgek
