// CUB references: inclusive scan (of one vector or of each row), radix sort of pairs, segmented (per-row) sum, argmax and top-k,
// and a 256-bin byte histogram. Temporary storage is sized and allocated in Prepare.
#include <cuda_bf16.h>

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <vector>

#include "library_registry.h"
#include "library_tensors.h"

namespace forgek {
namespace {

using ArgmaxPair = cub::KeyValuePair<int, __nv_bfloat16>;

__global__ void TakeArgmaxIndex(const ArgmaxPair* pairs, int32_t* index, int rows) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) index[row] = pairs[row].key;
}

__global__ void FillColumnIndex(int32_t* index, int64_t total, int cols) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
    index[i] = int32_t(i % cols);
}

__global__ void TakeFirstK(const float* sorted_values, const int32_t* sorted_index, float* values,
                           int32_t* indices, int rows, int cols, int k) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= int64_t(rows) * k) return;
  const int64_t from = (i / k) * cols + i % k;
  values[i] = sorted_values[from];
  indices[i] = sorted_index[from];
}

// Row r of a [rows, cols] matrix is the segment [r*cols, (r+1)*cols): rows+1 offsets on the device.
bool MakeRowOffsets(DeviceBuffer* offsets, int rows, int cols, std::string* err) {
  std::vector<int> host(size_t(rows) + 1);
  for (int r = 0; r <= rows; ++r) host[r] = r * cols;
  return offsets->Reserve(host.size() * sizeof(int), err) &&
         CudaOk(cudaMemcpy(offsets->get(), host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice),
                "copying row offsets", err);
}

// Rows and columns of a [M, N] input whose M*N offsets must fit CUB's int offsets.
bool RowShape(const TensorRequirements& req, const DeviceTensor& x, int* rows, int* cols, std::string* err) {
  if (!req.FitsInt("M*N", x.shape[0] * x.shape[1], err)) return false;
  *rows = int(x.shape[0]);
  *cols = int(x.shape[1]);
  return true;
}

// The row of flat element i of a [rows, cols] matrix: the key that ends a scan segment at each row.
struct RowOfElement {
  int cols;
  __host__ __device__ int operator()(int i) const { return i / cols; }
};
using RowKeyIterator = thrust::transform_iterator<RowOfElement, thrust::counting_iterator<int>>;

// cub.scan_inclusive_f32: y[i] = x[0] + ... + x[i] over x[N] (or x[1, N]); over x[M, N], each row
// on its own: y[m, j] = x[m, 0] + ... + x[m, j]. One row is DeviceScan::InclusiveSum; several rows
// are one DeviceScan::InclusiveSumByKey over the flat M*N elements keyed by their row (computed
// from the index, never stored): a single pass whose look-back stops at a key change, CUB's own
// segmented scan.
class ScanInclusiveF32 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cub.scan_inclusive_f32", tensors);
    const auto found = tensors.find("x");
    const size_t rank = found != tensors.end() && found->second.shape.size() == 2 ? 2 : 1;
    const DeviceTensor* x = req.Get("x", {DType::f32}, rank, err);
    const DeviceTensor* y = x ? req.Get("y", {DType::f32}, rank, err) : nullptr;
    if (!y || !req.Dims("y", *y, x->shape, err)) return false;
    x_ = static_cast<const float*>(x->ptr), y_ = static_cast<float*>(y->ptr);
    rows_ = rank == 2 ? x->shape[0] : 1;
    cols_ = x->shape[rank - 1];
    size_t bytes = 0;
    if (rows_ == 1)
      return CudaOk(cub::DeviceScan::InclusiveSum(nullptr, bytes, x_, y_, cols_), "DeviceScan::InclusiveSum size",
                    err) &&
             temp_.Reserve(bytes, err);
    if (!req.FitsInt("M*N", rows_ * cols_, err)) return false;
    return CudaOk(ScanRows(nullptr, &bytes, nullptr), "DeviceScan::InclusiveSumByKey size", err) &&
           temp_.Reserve(bytes, err);
  }
  bool Launch(void* stream, std::string* err) override {
    size_t bytes = temp_.size();
    const auto s = static_cast<cudaStream_t>(stream);
    if (rows_ == 1)
      return CudaOk(cub::DeviceScan::InclusiveSum(temp_.get(), bytes, x_, y_, cols_, s), "DeviceScan::InclusiveSum",
                    err);
    return CudaOk(ScanRows(temp_.get(), &bytes, s), "DeviceScan::InclusiveSumByKey", err);
  }

 private:
  cudaError_t ScanRows(void* temp, size_t* bytes, cudaStream_t stream) {
    const RowKeyIterator keys(thrust::counting_iterator<int>(0), RowOfElement{int(cols_)});
    return cub::DeviceScan::InclusiveSumByKey(temp, *bytes, keys, x_, y_, int(rows_ * cols_),
                                              ::cuda::std::equal_to<>(), stream);
  }

  DeviceBuffer temp_;
  const float* x_ = nullptr;
  float* y_ = nullptr;
  int64_t rows_ = 1, cols_ = 0;
};

// cub.radix_sort_pairs_u32: keys_out = keys_in sorted ascending (all 32 bits, stable), values
// moved with their keys. Values are any 4-byte type (u32 or i32).
class RadixSortPairsU32 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cub.radix_sort_pairs_u32", tensors);
    const DeviceTensor* keys_in = req.Get("keys_in", {DType::u32}, 1, err);
    const DeviceTensor* values_in = keys_in ? req.Get("values_in", {DType::u32, DType::i32}, 1, err) : nullptr;
    const DeviceTensor* keys_out = values_in ? req.Get("keys_out", {DType::u32}, 1, err) : nullptr;
    const DeviceTensor* values_out = keys_out ? req.Get("values_out", {values_in->dtype}, 1, err) : nullptr;
    if (!values_out) return false;
    if (!req.Dims("values_in", *values_in, keys_in->shape, err) || !req.Dims("keys_out", *keys_out, keys_in->shape, err) ||
        !req.Dims("values_out", *values_out, keys_in->shape, err) || !req.FitsInt("N", keys_in->shape[0], err))
      return false;
    keys_in_ = static_cast<const uint32_t*>(keys_in->ptr), keys_out_ = static_cast<uint32_t*>(keys_out->ptr);
    values_in_ = static_cast<const uint32_t*>(values_in->ptr), values_out_ = static_cast<uint32_t*>(values_out->ptr);
    n_ = int(keys_in->shape[0]);
    size_t bytes = 0;
    return CudaOk(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in_, keys_out_, values_in_, values_out_, n_),
                  "DeviceRadixSort::SortPairs size", err) &&
           temp_.Reserve(bytes, err);
  }
  bool Launch(void* stream, std::string* err) override {
    size_t bytes = temp_.size();
    return CudaOk(cub::DeviceRadixSort::SortPairs(temp_.get(), bytes, keys_in_, keys_out_, values_in_, values_out_, n_,
                                                  0, 32, static_cast<cudaStream_t>(stream)),
                  "DeviceRadixSort::SortPairs", err);
  }

 private:
  DeviceBuffer temp_;
  const uint32_t *keys_in_ = nullptr, *values_in_ = nullptr;
  uint32_t *keys_out_ = nullptr, *values_out_ = nullptr;
  int n_ = 0;
};

// cub.segmented_reduce_sum_f32: y[m] = sum of row m of x[M,N].
class SegmentedReduceSumF32 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cub.segmented_reduce_sum_f32", tensors);
    const DeviceTensor* x = req.Get("x", {DType::f32}, 2, err);
    const DeviceTensor* y = x ? req.Get("y", {DType::f32}, 1, err) : nullptr;
    if (!y || !req.Dims("y", *y, {x->shape[0]}, err) || !RowShape(req, *x, &rows_, &cols_, err)) return false;
    x_ = static_cast<const float*>(x->ptr), y_ = static_cast<float*>(y->ptr);
    if (!MakeRowOffsets(&offsets_, rows_, cols_, err)) return false;
    const int* offsets = static_cast<const int*>(offsets_.get());
    size_t bytes = 0;
    return CudaOk(cub::DeviceSegmentedReduce::Sum(nullptr, bytes, x_, y_, rows_, offsets, offsets + 1),
                  "DeviceSegmentedReduce::Sum size", err) &&
           temp_.Reserve(bytes, err);
  }
  bool Launch(void* stream, std::string* err) override {
    const int* offsets = static_cast<const int*>(offsets_.get());
    size_t bytes = temp_.size();
    return CudaOk(cub::DeviceSegmentedReduce::Sum(temp_.get(), bytes, x_, y_, rows_, offsets, offsets + 1,
                                                  static_cast<cudaStream_t>(stream)),
                  "DeviceSegmentedReduce::Sum", err);
  }

 private:
  DeviceBuffer temp_, offsets_;
  const float* x_ = nullptr;
  float* y_ = nullptr;
  int rows_ = 0, cols_ = 0;
};

// cub.segmented_argmax_bf16: y[m] = the column of the largest value of row m of x[M,N]
// (the first such column on ties), as i32.
class SegmentedArgmaxBf16 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cub.segmented_argmax_bf16", tensors);
    const DeviceTensor* x = req.Get("x", {DType::bf16}, 2, err);
    const DeviceTensor* y = x ? req.Get("y", {DType::i32}, 1, err) : nullptr;
    if (!y || !req.Dims("y", *y, {x->shape[0]}, err) || !RowShape(req, *x, &rows_, &cols_, err)) return false;
    x_ = static_cast<const __nv_bfloat16*>(x->ptr), y_ = static_cast<int32_t*>(y->ptr);
    if (!MakeRowOffsets(&offsets_, rows_, cols_, err) || !pairs_.Reserve(size_t(rows_) * sizeof(ArgmaxPair), err))
      return false;
    const int* offsets = static_cast<const int*>(offsets_.get());
    size_t bytes = 0;
    return CudaOk(cub::DeviceSegmentedReduce::ArgMax(nullptr, bytes, x_, static_cast<ArgmaxPair*>(pairs_.get()), rows_,
                                                     offsets, offsets + 1),
                  "DeviceSegmentedReduce::ArgMax size", err) &&
           temp_.Reserve(bytes, err);
  }
  bool Launch(void* stream, std::string* err) override {
    const int* offsets = static_cast<const int*>(offsets_.get());
    auto* pairs = static_cast<ArgmaxPair*>(pairs_.get());
    const auto s = static_cast<cudaStream_t>(stream);
    size_t bytes = temp_.size();
    if (!CudaOk(cub::DeviceSegmentedReduce::ArgMax(temp_.get(), bytes, x_, pairs, rows_, offsets, offsets + 1, s),
                "DeviceSegmentedReduce::ArgMax", err))
      return false;
    // CUB yields (index, value) pairs; the operator's output is the index alone.
    TakeArgmaxIndex<<<(rows_ + 255) / 256, 256, 0, s>>>(pairs, y_, rows_);
    return CudaOk(cudaGetLastError(), "argmax index kernel", err);
  }

 private:
  DeviceBuffer temp_, offsets_, pairs_;
  const __nv_bfloat16* x_ = nullptr;
  int32_t* y_ = nullptr;
  int rows_ = 0, cols_ = 0;
};

// cub.segmented_topk_f32: for each row of x[M,N], values[M,k] = its k largest values in
// descending order and indices[M,k] (i32) their columns; ties keep the lower column first.
// A full descending segmented radix sort of (value, column) pairs, then the first k per row.
class SegmentedTopkF32 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cub.segmented_topk_f32", tensors);
    const DeviceTensor* x = req.Get("x", {DType::f32}, 2, err);
    const DeviceTensor* values = x ? req.Get("values", {DType::f32}, 2, err) : nullptr;
    const DeviceTensor* indices = values ? req.Get("indices", {DType::i32}, 2, err) : nullptr;
    if (!indices || !RowShape(req, *x, &rows_, &cols_, err)) return false;
    k_ = int(values->shape[1]);
    if (!req.Dims("values", *values, {rows_, k_}, err) || !req.Dims("indices", *indices, {rows_, k_}, err))
      return false;
    if (k_ > cols_) {
      *err = req.id() + ": k = " + std::to_string(k_) + " exceeds the row length " + std::to_string(cols_);
      return false;
    }
    x_ = static_cast<const float*>(x->ptr);
    values_ = static_cast<float*>(values->ptr), indices_ = static_cast<int32_t*>(indices->ptr);
    const int64_t total = int64_t(rows_) * cols_;
    if (!MakeRowOffsets(&offsets_, rows_, cols_, err) || !sorted_values_.Reserve(total * sizeof(float), err) ||
        !column_.Reserve(total * sizeof(int32_t), err) || !sorted_column_.Reserve(total * sizeof(int32_t), err))
      return false;
    FillColumnIndex<<<1024, 256>>>(static_cast<int32_t*>(column_.get()), total, cols_);
    if (!CudaOk(cudaDeviceSynchronize(), "column index fill", err)) return false;
    size_t bytes = 0;
    return CudaOk(Sort(nullptr, &bytes, nullptr), "DeviceSegmentedRadixSort::SortPairsDescending size", err) &&
           temp_.Reserve(bytes, err);
  }
  bool Launch(void* stream, std::string* err) override {
    const auto s = static_cast<cudaStream_t>(stream);
    size_t bytes = temp_.size();
    if (!CudaOk(Sort(temp_.get(), &bytes, s), "DeviceSegmentedRadixSort::SortPairsDescending", err)) return false;
    const int64_t out = int64_t(rows_) * k_;
    TakeFirstK<<<unsigned((out + 255) / 256), 256, 0, s>>>(static_cast<const float*>(sorted_values_.get()),
                                                           static_cast<const int32_t*>(sorted_column_.get()), values_,
                                                           indices_, rows_, cols_, k_);
    return CudaOk(cudaGetLastError(), "top-k gather kernel", err);
  }

 private:
  cudaError_t Sort(void* temp, size_t* bytes, cudaStream_t stream) {
    const int* offsets = static_cast<const int*>(offsets_.get());
    return cub::DeviceSegmentedRadixSort::SortPairsDescending(
        temp, *bytes, x_, static_cast<float*>(sorted_values_.get()), static_cast<const int32_t*>(column_.get()),
        static_cast<int32_t*>(sorted_column_.get()), rows_ * cols_, rows_, offsets, offsets + 1, 0, 32, stream);
  }

  DeviceBuffer temp_, offsets_, sorted_values_, column_, sorted_column_;
  const float* x_ = nullptr;
  float* values_ = nullptr;
  int32_t* indices_ = nullptr;
  int rows_ = 0, cols_ = 0, k_ = 0;
};

// cub.histogram_u8_256: hist[b] = number of bytes of x[N] equal to b, for b in 0..255.
class HistogramU8 : public LibraryReference {
 public:
  bool Prepare(const Bindings&, const TensorMap& tensors, const std::map<std::string, double>&,
               std::string* err) override {
    TensorRequirements req("cub.histogram_u8_256", tensors);
    const DeviceTensor* x = req.Get("x", {DType::u8}, 1, err);
    const DeviceTensor* hist = x ? req.Get("hist", {DType::i32, DType::u32}, 1, err) : nullptr;
    if (!hist || !req.Dims("hist", *hist, {256}, err) || !req.FitsInt("N", x->shape[0], err)) return false;
    x_ = static_cast<const uint8_t*>(x->ptr), hist_ = static_cast<int*>(hist->ptr), n_ = int(x->shape[0]);
    size_t bytes = 0;
    return CudaOk(cub::DeviceHistogram::HistogramEven(nullptr, bytes, x_, hist_, 257, 0, 256, n_),
                  "DeviceHistogram::HistogramEven size", err) &&
           temp_.Reserve(bytes, err);
  }
  bool Launch(void* stream, std::string* err) override {
    size_t bytes = temp_.size();
    return CudaOk(cub::DeviceHistogram::HistogramEven(temp_.get(), bytes, x_, hist_, 257, 0, 256, n_,
                                                      static_cast<cudaStream_t>(stream)),
                  "DeviceHistogram::HistogramEven", err);
  }

 private:
  DeviceBuffer temp_;
  const uint8_t* x_ = nullptr;
  int* hist_ = nullptr;
  int n_ = 0;
};

template <typename T>
std::unique_ptr<LibraryReference> Make() {
  return std::make_unique<T>();
}

}  // namespace

void AddCubReferences(LibraryTable* table) {
  (*table)["cub.scan_inclusive_f32"] = &Make<ScanInclusiveF32>;
  (*table)["cub.radix_sort_pairs_u32"] = &Make<RadixSortPairsU32>;
  (*table)["cub.segmented_reduce_sum_f32"] = &Make<SegmentedReduceSumF32>;
  (*table)["cub.segmented_argmax_bf16"] = &Make<SegmentedArgmaxBf16>;
  (*table)["cub.segmented_topk_f32"] = &Make<SegmentedTopkF32>;
  (*table)["cub.histogram_u8_256"] = &Make<HistogramU8>;
}

}  // namespace forgek
