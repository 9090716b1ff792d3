// Checks that a library reference's tensors exist with the dtype and shape its call needs.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "forgek/cuda/library_reference.h"

namespace forgek {

using TensorMap = std::map<std::string, DeviceTensor>;

const char* DTypeLabel(DType t);  // "bf16", "f32", ... (local: the worker needs no parser)
std::string ShapeText(const std::vector<int64_t>& shape);  // "[4, 8]"; "[]" for a scalar

// Pure validation (no CUDA): every error starts with the reference id and names the tensor,
// so an operator author sees at once which entry of operator.json is wrong.
class TensorRequirements {
 public:
  TensorRequirements(std::string reference_id, const TensorMap& tensors)
      : id_(std::move(reference_id)), tensors_(tensors) {}

  // The tensor `name`, of one of `dtypes`, with `rank` dimensions each >= 1; nullptr and
  // `err` otherwise.
  const DeviceTensor* Get(const std::string& name, std::initializer_list<DType> dtypes, size_t rank,
                          std::string* err) const;
  // A one-element tensor (shape [] or [1]) of `dtype`, such as an fp8 scale.
  const DeviceTensor* GetScalar(const std::string& name, DType dtype, std::string* err) const;
  // Exact shape check; the message shows both shapes.
  bool Dims(const std::string& name, const DeviceTensor& t, const std::vector<int64_t>& expected,
            std::string* err) const;
  // The value fits the 32-bit int a library API takes.
  bool FitsInt(const std::string& what, int64_t value, std::string* err) const;

  const std::string& id() const { return id_; }

 private:
  bool Fail(const std::string& message, std::string* err) const;
  std::string id_;
  const TensorMap& tensors_;
};

}  // namespace forgek
