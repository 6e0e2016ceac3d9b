#include "fp8_gemm/operands.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "common/check.h"

namespace cs::kernels::fp8_gemm {
namespace {

constexpr int kMaxSamples = 16384;  // all elements of D when it has no more than this
constexpr int kBlock = 128;         // DeepSeek's scaling tile along k (and along n for W)

struct Sample {
  int g, m, n, pad;
};

struct SampleResult {
  double ref;  // the dequantised product in FP64
  double rms;  // sqrt of the sum of its squared terms
  float got;   // D's element, as float
  float pad;
};

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void fill_fp8_kernel(std::uint8_t* out, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::uint64_t h = splitmix64(seed ^ (i * 0x2545f4914f6cdd1dull));
    const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    const __nv_fp8_e4m3 v((2.0f * u - 1.0f) * 448.0f);
    out[i] = v.__x;
  }
}

// Powers of two keep every product exact in FP32 and FP64, so the reference has no rounding of
// its own; spreading them over 2^-6 .. 2^-10 makes a scale applied to the wrong block visible.
__global__ void fill_scales_kernel(float* out, std::size_t count, std::uint64_t seed, bool constant) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const int e = constant ? 8 : 6 + static_cast<int>(splitmix64(seed ^ (i * 0x9e3779b97f4a7c15ull)) % 5);
    out[i] = ldexpf(1.0f, -e);
  }
}

__global__ void count_nonfinite_kernel(const std::uint16_t* d, std::size_t count, unsigned long long* out) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  unsigned long long first = ~0ull;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    if ((d[i] & 0x7f80u) == 0x7f80u) {  // BF16 exponent all ones: Inf or NaN
      if (mine++ == 0) first = i;
    }
  }
  if (mine > 0) {
    atomicAdd(&out[0], mine);
    atomicMin(&out[1], first);
  }
}

struct RefArgs {
  const std::uint8_t* x;
  const std::uint8_t* w;
  const float* sx;
  const float* sw;
  const std::uint16_t* d;
  int m, n, k, k_blocks, n_blocks, sw_ld;
  long long stride_m, stride_n;
  const Sample* samples;
  int count;
  SampleResult* results;
  unsigned reading;  // ScaleReading bits
};

__device__ inline float fp8_to_float(std::uint8_t b) {
  __nv_fp8_e4m3 v;
  v.__x = b;
  return static_cast<float>(v);
}

// One warp per sampled element: sum over k of x * w * sx * sw in FP64.
__global__ void reference_kernel(RefArgs a) {
  const int warp = static_cast<int>((static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (warp >= a.count) return;
  const Sample s = a.samples[warp];
  const std::uint8_t* xrow = a.x + (static_cast<std::size_t>(s.g) * a.m + s.m) * a.k;
  const std::uint8_t* wrow = a.w + (static_cast<std::size_t>(s.g) * a.n + s.n) * a.k;
  const float* sxg = a.sx + static_cast<std::size_t>(s.g) * a.k_blocks * a.m;
  const float* swg = a.sw + static_cast<std::size_t>(s.g) * a.n_blocks * a.sw_ld;
  const int c = s.n / kBlock;
  double acc = 0;
  double sq = 0;
  for (int k = lane; k < a.k; k += 32) {
    const int b = k / kBlock;
    const float fx = (a.reading & kSxKBlocksFastest) ? sxg[static_cast<std::size_t>(s.m) * a.k_blocks + b]
                                                     : sxg[static_cast<std::size_t>(b) * a.m + s.m];
    const float fw = (a.reading & kSwNBlocksFastest) ? swg[static_cast<std::size_t>(b) * a.n_blocks + c]
                                                     : swg[static_cast<std::size_t>(c) * a.sw_ld + b];
    double scale = static_cast<double>(fx) * fw;
    if (a.reading & kScalesInverted) scale = 1.0 / scale;
    const double t = static_cast<double>(fp8_to_float(xrow[k])) * fp8_to_float(wrow[k]) * scale;
    acc += t;
    sq += t * t;
  }
  for (int off = 16; off > 0; off /= 2) {
    acc += __shfl_down_sync(0xffffffffu, acc, off);
    sq += __shfl_down_sync(0xffffffffu, sq, off);
  }
  if (lane == 0) {
    const std::size_t idx = static_cast<std::size_t>(s.g) * a.m * a.n + s.m * a.stride_m + s.n * a.stride_n;
    __nv_bfloat16_raw raw;
    raw.x = a.d[idx];
    a.results[warp] = SampleResult{acc, sqrt(sq), __bfloat162float(__nv_bfloat16(raw)), 0.0f};
  }
}

int grid_for(std::size_t count) {
  const std::size_t blocks = (count + 255) / 256;
  return static_cast<int>(std::min<std::size_t>(blocks, 132 * 16));
}

// The corners of every group, then elements drawn at random; every element when D is small.
std::vector<Sample> make_samples(const GemmShape& s) {
  std::vector<Sample> out;
  const long long total = static_cast<long long>(s.groups) * s.m * s.n;
  if (total <= kMaxSamples) {
    for (int g = 0; g < s.groups; ++g)
      for (int r = 0; r < s.m; ++r)
        for (int c = 0; c < s.n; ++c) out.push_back({g, r, c, 0});
    return out;
  }
  for (int g = 0; g < s.groups; ++g) {
    const std::pair<int, int> corners[] = {{0, 0}, {0, s.n - 1}, {s.m - 1, 0}, {s.m - 1, s.n - 1}};
    for (const auto& [r, c] : corners) {
      out.push_back({g, r, c, 0});
    }
  }
  std::uint64_t state =
      0x5eed0000ull + static_cast<std::uint64_t>(s.m) * 31 + static_cast<std::uint64_t>(s.n) * 7 + s.k;
  while (static_cast<int>(out.size()) < kMaxSamples) {
    state = splitmix64(state);
    const int g = static_cast<int>(state % static_cast<std::uint64_t>(s.groups));
    const int r = static_cast<int>((state >> 16) % static_cast<std::uint64_t>(s.m));
    const int c = static_cast<int>((state >> 36) % static_cast<std::uint64_t>(s.n));
    out.push_back({g, r, c, 0});
  }
  return out;
}

}  // namespace

Operands::Operands(const GemmShape& shape) : shape_(shape) {
  k_blocks_ = (shape.k + kBlock - 1) / kBlock;
  n_blocks_ = (shape.n + kBlock - 1) / kBlock;
  sw_ld_ = (k_blocks_ + 3) / 4 * 4;
  const auto g = static_cast<std::size_t>(shape.groups);
  const auto m = static_cast<std::size_t>(shape.m);
  const auto n = static_cast<std::size_t>(shape.n);
  const auto k = static_cast<std::size_t>(shape.k);
  x_ = DeviceBuffer(g * m * k);
  w_ = DeviceBuffer(g * n * k);
  sx_ = DeviceBuffer(g * static_cast<std::size_t>(k_blocks_) * m * sizeof(float));
  sw_ = DeviceBuffer(g * static_cast<std::size_t>(n_blocks_) * static_cast<std::size_t>(sw_ld_) * sizeof(float));
  d_ = DeviceBuffer(g * m * n * sizeof(std::uint16_t));

  const std::vector<Sample> samples = make_samples(shape);
  sample_count_ = static_cast<int>(samples.size());
  samples_ = DeviceBuffer(samples.size() * sizeof(Sample));
  sample_results_ = DeviceBuffer(samples.size() * sizeof(SampleResult));
  nonfinite_ = DeviceBuffer(2 * sizeof(unsigned long long));
  CS_CUDA_CHECK(cudaMemcpy(samples_.get(), samples.data(), samples_.bytes(), cudaMemcpyHostToDevice));
}

void Operands::fill(std::uint64_t seed, bool per_tensor_scales, cudaStream_t stream) {
  const std::size_t x_count = x_.bytes();
  const std::size_t w_count = w_.bytes();
  fill_fp8_kernel<<<grid_for(x_count), 256, 0, stream>>>(x_.as<std::uint8_t>(), x_count, splitmix64(seed ^ 1));
  CS_CUDA_CHECK(cudaGetLastError());
  fill_fp8_kernel<<<grid_for(w_count), 256, 0, stream>>>(w_.as<std::uint8_t>(), w_count, splitmix64(seed ^ 2));
  CS_CUDA_CHECK(cudaGetLastError());
  const std::size_t sx_count = sx_.bytes() / sizeof(float);
  const std::size_t sw_count = sw_.bytes() / sizeof(float);
  fill_scales_kernel<<<grid_for(sx_count), 256, 0, stream>>>(sx_.as<float>(), sx_count, splitmix64(seed ^ 3),
                                                             per_tensor_scales);
  CS_CUDA_CHECK(cudaGetLastError());
  fill_scales_kernel<<<grid_for(sw_count), 256, 0, stream>>>(sw_.as<float>(), sw_count, splitmix64(seed ^ 4),
                                                             per_tensor_scales);
  CS_CUDA_CHECK(cudaGetLastError());
  CS_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void poison_output(const Operands& ops, cudaStream_t stream) {
  CS_CUDA_CHECK(cudaMemsetAsync(ops.d(0), 0xff, ops.d_bytes(), stream));
}

CheckResult check_output(const Operands& ops, const OutputLayout& layout, cudaStream_t stream, unsigned reading) {
  const GemmShape& s = ops.shape();
  CheckResult r;
  r.samples = ops.sample_count();

  const unsigned long long init[2] = {0ull, ~0ull};
  CS_CUDA_CHECK(cudaMemcpyAsync(ops.nonfinite().get(), init, sizeof init, cudaMemcpyHostToDevice, stream));
  const std::size_t d_count = ops.d_bytes() / sizeof(std::uint16_t);
  count_nonfinite_kernel<<<grid_for(d_count), 256, 0, stream>>>(static_cast<const std::uint16_t*>(ops.d(0)), d_count,
                                                                ops.nonfinite().as<unsigned long long>());
  CS_CUDA_CHECK(cudaGetLastError());

  RefArgs a{};
  a.x = ops.x(0);
  a.w = ops.w(0);
  a.sx = ops.sx(0);
  a.sw = ops.sw(0);
  a.d = static_cast<const std::uint16_t*>(ops.d(0));
  a.m = s.m;
  a.n = s.n;
  a.k = s.k;
  a.k_blocks = ops.k_blocks();
  a.n_blocks = ops.n_blocks();
  a.sw_ld = ops.sw_ld();
  a.stride_m = layout.stride_m;
  a.stride_n = layout.stride_n;
  a.samples = ops.samples().as<Sample>();
  a.count = r.samples;
  a.results = ops.sample_results().as<SampleResult>();
  a.reading = reading;
  const int threads = 256;
  const int blocks = (r.samples * 32 + threads - 1) / threads;
  reference_kernel<<<blocks, threads, 0, stream>>>(a);
  CS_CUDA_CHECK(cudaGetLastError());

  std::vector<SampleResult> results(static_cast<std::size_t>(r.samples));
  std::vector<Sample> samples(static_cast<std::size_t>(r.samples));
  unsigned long long nonfinite[2] = {0, 0};
  CS_CUDA_CHECK(cudaMemcpyAsync(results.data(), a.results, results.size() * sizeof(SampleResult),
                                cudaMemcpyDeviceToHost, stream));
  CS_CUDA_CHECK(cudaMemcpyAsync(samples.data(), a.samples, samples.size() * sizeof(Sample), cudaMemcpyDeviceToHost,
                                stream));
  CS_CUDA_CHECK(cudaMemcpyAsync(nonfinite, ops.nonfinite().get(), sizeof nonfinite, cudaMemcpyDeviceToHost, stream));
  CS_CUDA_CHECK(cudaStreamSynchronize(stream));

  r.nonfinite = static_cast<long long>(nonfinite[0]);
  r.first_nonfinite = nonfinite[0] > 0 ? static_cast<long long>(nonfinite[1]) : -1;
  double err2 = 0;
  double ref2 = 0;
  bool all_finite = true;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const SampleResult& sr = results[i];
    const double err = std::fabs(static_cast<double>(sr.got) - sr.ref);
    const double tol = kRelTol * std::fabs(sr.ref) + kRmsTol * sr.rms;
    const double ratio = std::isfinite(err) ? (tol > 0 ? err / tol : (err == 0 ? 0.0 : INFINITY)) : INFINITY;
    if (!std::isfinite(ratio)) all_finite = false;
    err2 += err * err;
    ref2 += sr.ref * sr.ref;
    if (i == 0 || !(ratio <= r.worst_ratio)) {
      r.worst_ratio = ratio;
      r.worst_g = samples[i].g;
      r.worst_m = samples[i].m;
      r.worst_n = samples[i].n;
      r.worst_got = sr.got;
      r.worst_ref = sr.ref;
      r.worst_rms = sr.rms;
    }
  }
  r.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 == 0 ? 0.0 : INFINITY);
  r.passed = all_finite && r.nonfinite == 0 && r.worst_ratio <= 1.0 && r.rel_l2 <= kRelL2Tol;
  return r;
}

std::string CheckResult::describe() const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s: %d samples, rel L2 error %.3g (limit %.3g), worst |got-ref|/tol %.3g at group %d row %d col %d "
                "(got %.6g, ref %.6g, rms %.6g; tol = %.3g |ref| + %.3g rms); %lld non-finite elements of D%s",
                passed ? "passed" : "FAILED", samples, rel_l2, kRelL2Tol, worst_ratio, worst_g, worst_m, worst_n,
                worst_got, worst_ref, worst_rms, kRelTol, kRmsTol, nonfinite,
                nonfinite > 0 ? (", first at flat index " + std::to_string(first_nonfinite)).c_str() : "");
  return buf;
}

}  // namespace cs::kernels::fp8_gemm
