// A FlashInfer-Bench definition and its workloads as `forgek ops import flashinfer` reads them:
// checked field by field, each refusal located in its file (FILE:LINE:COLUMN: FIELD: why).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace forgek::cli {

struct FiAxis {
  std::string name;
  bool is_const = false;
  int64_t value = 0;  // a const axis's value
};

// An input or output. A scalar input (shape null) has no shape and a scalar dtype (f32, i32, i64).
struct FiTensor {
  std::string name, dtype;  // dtype: forgek's name
  bool scalar = false;
  std::vector<std::string> shape;
};

struct FiDefinition {
  std::string file, name, op_type, description;
  std::vector<FiAxis> axes;
  std::vector<FiTensor> inputs, outputs;
  nlohmann::ordered_json json;  // the definition as read, its members' order kept (run's arguments)
};

// One config of the operator: the var axes' values (const axes are added by the importer).
struct FiConfig {
  std::string name;
  std::map<std::string, int64_t> values;
};

struct FiWorkloads {
  std::vector<FiConfig> configs;            // distinct var-axis values, smallest first
  std::map<std::string, nlohmann::json> scalars;  // each scalar input's value (the same in every workload)
  int workloads = 0, duplicates = 0;        // lines read; lines whose axes repeat an earlier line's
};

// Reads and checks the definition: axes (const with a positive value, or var), inputs and outputs
// (a dtype forgek has and the PyTorch helper carries, a shape of the definition's axes, outputs
// sized by axes some input has), a reference defining run. False with the located refusal.
bool ReadFiDefinition(const std::string& file, FiDefinition* def, std::string* err);

// Reads a workloads file (JSONL: one trace {"definition", "workload": {...}} or bare workload a
// line): every var axis given a positive integer, inputs random (tensors) or scalar (scalar
// inputs, one value across the file). False with the refusal at its line.
bool ReadFiWorkloads(const std::string& file, const FiDefinition& def, FiWorkloads* out, std::string* err);

// A config's name from its var axes, in the definition's order: "batch_size7", "M256_S1024";
// "definition" when there are none.
std::string FiConfigName(const FiDefinition& def, const std::map<std::string, int64_t>& values);

}  // namespace forgek::cli
