// The operands of one GEMM shape on the device (all groups), filled with random E4M3 values and
// DeepSeek-style FP32 scales, and the check of a result against a reference computed on the GPU
// from the dequantised inputs in FP64.
//
// Scale layouts are the ones cuBLASLt expects on Hopper (CUBLASLT_MATMUL_MATRIX_SCALE_*):
//   sx, 1x128 tiles of X (VEC128_32F): group g, row r, k-block b at
//       g * k_blocks * m + b * m + r                (rows fastest: the "transposed" layout)
//   sw, 128x128 blocks of W (BLK128x128_32F): group g, n-block c, k-block b at
//       g * n_blocks * sw_ld + c * sw_ld + b        (sw_ld = k_blocks rounded up to 4, 16-byte rows)
// With per-tensor scaling every scale of a tensor holds the same value and the first is passed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "fp8_gemm/device_buffer.h"
#include "fp8_gemm/shapes.h"

namespace cs::kernels::fp8_gemm {

class Operands {
 public:
  // Allocates X, W, their scales, D and the check's buffers for `shape` (current context).
  explicit Operands(const GemmShape& shape);

  // Random E4M3 values in [-448, 448] and scales 2^-6 .. 2^-10 (per block, or one per tensor when
  // `per_tensor_scales`), from `seed`; ends with the stream synchronised.
  void fill(std::uint64_t seed, bool per_tensor_scales, cudaStream_t stream);

  const GemmShape& shape() const { return shape_; }
  int k_blocks() const { return k_blocks_; }
  int n_blocks() const { return n_blocks_; }
  int sw_ld() const { return sw_ld_; }

  const std::uint8_t* x(int g) const { return x_.as<std::uint8_t>() + offset(g, shape_.m, shape_.k); }
  const std::uint8_t* w(int g) const { return w_.as<std::uint8_t>() + offset(g, shape_.n, shape_.k); }
  const float* sx(int g) const { return sx_.as<float>() + offset(g, k_blocks_, shape_.m); }
  const float* sw(int g) const { return sw_.as<float>() + offset(g, n_blocks_, sw_ld_); }
  void* d(int g) const { return d_.as<std::uint16_t>() + offset(g, shape_.m, shape_.n); }
  std::size_t d_bytes() const { return d_.bytes(); }

  // Device buffers the check uses (sample list and per-sample results).
  const DeviceBuffer& samples() const { return samples_; }
  const DeviceBuffer& sample_results() const { return sample_results_; }
  const DeviceBuffer& nonfinite() const { return nonfinite_; }
  int sample_count() const { return sample_count_; }

 private:
  static std::size_t offset(int g, int rows, int cols) {
    return static_cast<std::size_t>(g) * static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  }

  GemmShape shape_;
  int k_blocks_ = 0;
  int n_blocks_ = 0;
  int sw_ld_ = 0;
  int sample_count_ = 0;
  DeviceBuffer x_, w_, sx_, sw_, d_;
  DeviceBuffer samples_, sample_results_, nonfinite_;
};

// Where element (row r, column c) of group g's D lies: g * m * n + r * stride_m + c * stride_n.
struct OutputLayout {
  std::int64_t stride_m = 0;
  std::int64_t stride_n = 1;
};

// Tolerance: |got - ref| <= kRelTol |ref| + kRmsTol rms, where rms is the root of the sum of the
// squared terms of the dot product (the size of the rounding a sum of that many terms can carry);
// and over all samples ||got - ref|| / ||ref|| <= kRelL2Tol. BF16 output rounds at 2^-9 relative;
// a wrong scale or index is off by the size of rms or more.
inline constexpr double kRelTol = 1e-2;
inline constexpr double kRmsTol = 5e-3;
inline constexpr double kRelL2Tol = 1e-2;

struct CheckResult {
  bool passed = false;
  int samples = 0;               // output elements compared with the reference
  long long nonfinite = 0;       // elements of the whole D that are NaN or Inf (D is poisoned first)
  long long first_nonfinite = -1;
  double rel_l2 = 0;             // ||got - ref|| / ||ref|| over the samples
  double worst_ratio = 0;        // max over samples of |got - ref| / tolerance (passes at <= 1)
  int worst_g = 0, worst_m = 0, worst_n = 0;
  double worst_got = 0, worst_ref = 0, worst_rms = 0;
  std::string describe() const;  // one line for stderr
};

// Sets D to NaN (all bits set), for the check to see elements the GEMM did not write.
void poison_output(const Operands& ops, cudaStream_t stream);

// How the reference reads the scales. 0 is the layout documented at the top of this file, the one
// the program uses; the other bits exist to diagnose a failed check (which reading would have
// matched cuBLASLt's result): sx with k-blocks fastest, sw with n-blocks fastest, scales inverted.
enum ScaleReading : unsigned {
  kScalesAsDocumented = 0,
  kSxKBlocksFastest = 1,
  kSwNBlocksFastest = 2,
  kScalesInverted = 4,
  kScaleReadings = 8,  // readings are 0 .. kScaleReadings - 1
};

// Compares D (written after poison_output) with the reference; synchronises the stream.
CheckResult check_output(const Operands& ops, const OutputLayout& layout, cudaStream_t stream,
                         unsigned reading = kScalesAsDocumented);

}  // namespace cs::kernels::fp8_gemm
