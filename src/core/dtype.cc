// Element types of operator tensors and scalars: names, sizes, kinds.
#include "forgek/core/operator_spec.h"

namespace forgek {

namespace {

struct DTypeInfo {
  DType type;
  const char* name;
  int bytes;
  bool is_float;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::f64, "f64", 8, true},   {DType::f32, "f32", 4, true},    {DType::f16, "f16", 2, true},
    {DType::bf16, "bf16", 2, true}, {DType::e4m3, "e4m3", 1, true},  {DType::e5m2, "e5m2", 1, true},
    {DType::i8, "i8", 1, false},    {DType::u8, "u8", 1, false},     {DType::i32, "i32", 4, false},
    {DType::u32, "u32", 4, false},  {DType::i64, "i64", 8, false},
};

const DTypeInfo& Info(DType t) {
  for (const DTypeInfo& info : kDTypes)
    if (info.type == t) return info;
  return kDTypes[1];  // unreachable for valid enum values
}

}  // namespace

bool ParseDType(const std::string& s, DType* out) {
  for (const DTypeInfo& info : kDTypes) {
    if (s == info.name) {
      *out = info.type;
      return true;
    }
  }
  return false;
}

const char* DTypeName(DType t) { return Info(t).name; }
int DTypeBytes(DType t) { return Info(t).bytes; }
bool DTypeIsFloat(DType t) { return Info(t).is_float; }

const char* TensorRoleName(TensorRole r) {
  switch (r) {
    case TensorRole::input: return "input";
    case TensorRole::output: return "output";
    case TensorRole::inout: return "inout";
  }
  return "input";
}

}  // namespace forgek
