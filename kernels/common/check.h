// Error handling and exit codes shared by the kernels' programs.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace cs::kernels {

// Exit codes of every program here (README.md lists them too).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;        // a CUDA call failed, bad arguments, I/O error
inline constexpr int kExitNoGpu = 2;        // no usable GPU: no device, no driver, driver too old
inline constexpr int kExitCheckFailed = 3;  // a kernel's result disagreed with the host reference

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// "cudaErrorNoDevice (no CUDA-capable device is detected)"
inline std::string describe(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line) {
  throw CudaError(e, std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " + describe(e));
}

}  // namespace cs::kernels

// Throws cs::kernels::CudaError when the CUDA runtime call `expr` does not return cudaSuccess.
#define CS_CUDA_CHECK(expr)                                                          \
  do {                                                                               \
    const cudaError_t cs_cuda_check_err_ = (expr);                                   \
    if (cs_cuda_check_err_ != cudaSuccess) {                                         \
      ::cs::kernels::throw_cuda_error(cs_cuda_check_err_, #expr, __FILE__, __LINE__); \
    }                                                                                \
  } while (0)
