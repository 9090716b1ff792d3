// Allocating, seeding, poisoning and checking one config's tensors.
#include "config_buffers.h"

#include <cmath>

#include <fmt/format.h>

#include "forgek/core/partition.h"

namespace forgek::worker {
namespace {

cuda::InitParams ToInitParams(const WireTensor& t) {
  cuda::InitParams p;
  const InitSpec& s = t.init;
  if (s.dist == "uniform") p.dist = cuda::InitDist::uniform, p.a = s.lo, p.b = s.hi;
  else if (s.dist == "int_range") p.dist = cuda::InitDist::int_range, p.a = s.lo, p.b = s.hi;
  else if (s.dist == "probs") p.dist = cuda::InitDist::probs;
  else p.dist = cuda::InitDist::normal, p.a = s.mean, p.b = s.stddev;
  p.row = t.shape.empty() ? 1 : t.shape.back();
  return p;
}

std::string Num(double v) { return fmt::format("{:.6g}", v); }

// A `partition` init as the bytes of its dtype: drawn on the host (a handful of values whose sum
// is a global constraint), then copied to the device.
bool PartitionBytes(const WireTensor& t, uint64_t seed, std::vector<unsigned char>* out, std::string* err) {
  std::vector<int64_t> parts;
  if (!MakePartition(t.init.total, t.elements(), t.init.multiple, t.init.part_min, seed, &parts, err)) return false;
  const int width = DTypeBytes(t.dtype);
  out->assign(parts.size() * width, 0);
  for (size_t i = 0; i < parts.size(); ++i) {
    // Little-endian truncation to the dtype's width; the loader proved the total fits it.
    uint64_t v = static_cast<uint64_t>(parts[i]);
    for (int b = 0; b < width; ++b) (*out)[i * width + b] = static_cast<unsigned char>(v >> (8 * b));
  }
  return true;
}

}  // namespace

std::string FormatIndex(const std::string& name, const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    int64_t d = shape[i] > 0 ? shape[i] : 1;
    idx[i] = flat % d;
    flat /= d;
  }
  std::string out = name + "[";
  for (size_t i = 0; i < idx.size(); ++i) out += (i ? ", " : "") + std::to_string(idx[i]);
  return out + "]";
}

bool ConfigBuffers::Allocate(GpuContext* gpu, const WireConfig& config, GpuError* err) {
  gpu_ = gpu;
  config_ = &config;
  tensors_.clear();
  for (const WireTensor& t : config.tensors) {
    TensorBuffers b;
    b.spec = t;
    if (t.role != TensorRole::output) {
      b.copies.emplace_back();
      if (!b.copies[0].Allocate(t.bytes(), err)) return false;
    }
    if (t.role == TensorRole::inout && !b.pristine.Allocate(t.bytes(), err)) return false;
    if (t.role == TensorRole::output && !b.out.Allocate(t.bytes(), err)) return false;
    if (b.IsResult() && !b.truth.Allocate(t.elements() * DTypeBytes(b.truth_dtype()), err)) return false;
    tensors_.push_back(std::move(b));
  }
  return true;
}

bool ConfigBuffers::Fill(uint64_t seed, GpuError* err) {
  const cuda::Driver& d = gpu_->d();
  std::vector<std::vector<unsigned char>> staged;  // host sources of async copies, alive until Sync
  for (size_t i = 0; i < tensors_.size(); ++i) {
    TensorBuffers& b = tensors_[i];
    if (b.copies.empty()) continue;
    std::string text;
    if (b.spec.init.dist == "partition") {
      if (!PartitionBytes(b.spec, DeriveSeed(seed, i), &staged.emplace_back(), &err->message)) return false;
      if (!Ck(d.cuMemcpyHtoDAsync(b.copies[0].ptr(), staged.back().data(), b.spec.bytes(), gpu_->stream()),
              "copy partition", err))
        return false;
    } else if (!cuda::FillRandom(b.copies[0].get(), ToElemType(b.spec.dtype), b.spec.elements(),
                                 DeriveSeed(seed, i), ToInitParams(b.spec), gpu_->stream(), &text)) {
      return gpu_->HelperFailed(text, err);
    }
    for (size_t c = 1; c < b.copies.size(); ++c)
      if (!Ck(d.cuMemcpyDtoDAsync(b.copies[c].ptr(), b.copies[0].ptr(), b.spec.bytes(), gpu_->stream()),
              "copy inputs", err))
        return false;
    if (b.spec.role == TensorRole::inout &&
        !Ck(d.cuMemcpyDtoDAsync(b.pristine.ptr(), b.copies[0].ptr(), b.spec.bytes(), gpu_->stream()), "save inout",
            err))
      return false;
  }
  return gpu_->Sync("fill inputs", err);
}

int ConfigBuffers::copies() const {
  for (const TensorBuffers& b : tensors_)
    if (!b.copies.empty()) return static_cast<int>(b.copies.size());
  return 1;
}

int64_t ConfigBuffers::input_bytes() const {
  int64_t n = 0;
  for (const TensorBuffers& b : tensors_)
    if (!b.copies.empty()) n += b.spec.bytes();
  return n;
}

bool ConfigBuffers::EnsureCopies(int count, GpuError* err) {
  for (TensorBuffers& b : tensors_) {
    if (b.copies.empty()) continue;
    while (static_cast<int>(b.copies.size()) < count) {
      DeviceBuffer c;
      if (!c.Allocate(b.spec.bytes(), err)) return false;
      if (!Ck(gpu_->d().cuMemcpyDtoDAsync(c.ptr(), b.copies[0].ptr(), b.spec.bytes(), gpu_->stream()), "copy inputs",
              err))
        return false;
      b.copies.push_back(std::move(c));
    }
  }
  return gpu_->Sync("copy inputs", err);
}

bool ConfigBuffers::ResetResults(int copy, GpuError* err) {
  for (TensorBuffers& b : tensors_) {
    if (b.spec.role == TensorRole::output) {
      std::string text;
      if (!cuda::Poison(b.out.get(), ToElemType(b.spec.dtype), b.spec.elements(), gpu_->stream(), &text))
        return gpu_->HelperFailed(text, err);
    } else if (b.spec.role == TensorRole::inout) {
      for (size_t c = 0; c < b.copies.size(); ++c) {
        if (copy >= 0 && static_cast<int>(c) != copy) continue;
        if (!Ck(gpu_->d().cuMemcpyDtoDAsync(b.copies[c].ptr(), b.pristine.ptr(), b.spec.bytes(), gpu_->stream()),
                "restore inout", err))
          return false;
      }
    }
  }
  return true;
}

bool ConfigBuffers::ResetTruth(GpuError* err) {
  for (TensorBuffers& b : tensors_) {
    if (b.spec.role == TensorRole::output) {
      std::string text;
      if (!cuda::Poison(b.truth.get(), ToElemType(b.truth_dtype()), b.spec.elements(), gpu_->stream(), &text))
        return gpu_->HelperFailed(text, err);
    } else if (b.spec.role == TensorRole::inout) {
      if (!Ck(gpu_->d().cuMemcpyDtoDAsync(b.truth.ptr(), b.pristine.ptr(), b.spec.bytes(), gpu_->stream()),
              "load golden inout", err))
        return false;
    }
  }
  return true;
}

TensorBindings ConfigBuffers::GoldenBindings() const {
  TensorBindings m;
  for (const TensorBuffers& b : tensors_) {
    DeviceTensor t{nullptr, b.spec.dtype, b.spec.shape};
    if (b.IsResult()) t.ptr = b.truth.get(), t.dtype = b.truth_dtype();
    else t.ptr = b.copies[0].get();
    m[b.spec.name] = t;
  }
  return m;
}

TensorBindings ConfigBuffers::CandidateBindings(int copy) const {
  TensorBindings m;
  for (const TensorBuffers& b : tensors_) {
    DeviceTensor t{nullptr, b.spec.dtype, b.spec.shape};
    t.ptr = b.spec.role == TensorRole::output ? b.out.get() : b.copies[static_cast<size_t>(copy)].get();
    m[b.spec.name] = t;
  }
  return m;
}

int64_t AllowedMismatches(int64_t elements, double fraction) {
  if (!(fraction > 0) || elements <= 0) return 0;
  return static_cast<int64_t>(std::floor(fraction * static_cast<double>(elements)));
}

bool ExactMismatchesPass(int64_t mismatches, int64_t non_finite, int64_t unwritten, int64_t elements,
                         double fraction) {
  if (non_finite > 0 || unwritten > 0) return false;
  return mismatches <= AllowedMismatches(elements, fraction);
}

bool ConfigBuffers::Check(int copy, CorrectnessReport* report, GpuError* err) {
  const Tolerance& tol = config_->tolerance;
  bool all_ok = true;
  std::string detail;
  for (TensorBuffers& b : tensors_) {
    if (!b.IsResult()) continue;
    const void* cand = b.spec.role == TensorRole::output ? b.out.get() : b.copies[static_cast<size_t>(copy)].get();
    bool exact = tol.exact || !DTypeIsFloat(b.spec.dtype);
    // A max_abs of 0 bounds nothing for float outputs (rel_l2 decides); exact outputs compare bits.
    double max_abs_tol = tol.max_abs > 0 ? tol.max_abs : INFINITY;
    cuda::CompareStats s;
    std::string text;
    if (!cuda::Compare(cand, ToElemType(b.spec.dtype), b.truth.get(), ToElemType(b.truth_dtype()),
                       b.spec.elements(), max_abs_tol, exact, gpu_->stream(), &s, &text))
      return gpu_->HelperFailed(text, err);
    double rel_l2 = s.sum_sq_truth > 0 ? std::sqrt(s.sum_sq_diff / s.sum_sq_truth) : std::sqrt(s.sum_sq_diff);
    if (s.non_finite > 0) rel_l2 = INFINITY;
    bool rel_ok = exact || tol.rel_l2 <= 0 || rel_l2 <= tol.rel_l2;
    bool ok = rel_ok && (s.bad == 0 || (exact && ExactMismatchesPass(s.bad, s.non_finite, s.unwritten,
                                                                      b.spec.elements(), tol.max_mismatch_fraction)));
    report->rel_l2 = std::max(report->rel_l2, rel_l2);
    report->max_abs = std::max(report->max_abs, s.max_abs);
    report->bad_elements += s.bad;
    if (ok) continue;
    all_ok = false;
    std::string line = b.spec.name + ":";
    if (s.non_finite > 0)
      line += fmt::format(" {} of {} elements are NaN/Inf (unwritten elements keep the NaN poison);", s.non_finite,
                          b.spec.elements());
    if (!rel_ok) line += " rel_l2 " + Num(rel_l2) + " > " + Num(tol.rel_l2) + ";";
    if (s.bad > s.non_finite)
      line += exact ? fmt::format(" {} elements differ (exact comparison, {} allowed{});", s.bad - s.non_finite,
                                  AllowedMismatches(b.spec.elements(), tol.max_mismatch_fraction),
                                  s.unwritten > 0 ? fmt::format(", {} never written", s.unwritten) : "")
                    : fmt::format(" {} elements off by more than max_abs {} (worst {});", s.bad - s.non_finite,
                                  Num(tol.max_abs), Num(s.max_abs));
    if (s.samples > 0) {
      line += " first mismatches:";
      for (int k = 0; k < s.samples; ++k)
        line += " " + FormatIndex(b.spec.name, b.spec.shape, s.sample_index[k]) + " = " + Num(s.sample_cand[k]) +
                " (expected " + Num(s.sample_truth[k]) + ")" + (k + 1 < s.samples ? "," : "");
    }
    detail += (detail.empty() ? "" : "\n") + line;
  }
  if (!all_ok) {
    report->ok = false;
    report->detail = detail;
  }
  return true;
}

}  // namespace forgek::worker
