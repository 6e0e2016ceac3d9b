// Error handling and exit codes shared by the kernels' programs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
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

// Runs a program's body: an escaping exception becomes one line on stderr and kExitError.
template <typename Body>
int guarded_main(const char* program, Body body) {
  try {
    return body();
  } catch (const CudaError& e) {
    std::fprintf(stderr, "%s: CUDA error: %s\n", program, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
  }
  return kExitError;
}

// Writes a report to stdout; a short write or a failed flush (a full disk, a closed pipe) is
// said on stderr and returns false, so the program can exit kExitError instead of 0.
inline bool write_stdout(const char* program, const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0) return true;
  std::fprintf(stderr, "%s: cannot write to stdout\n", program);
  return false;
}

// Writes `text` to `path` through a temporary file and a rename: a failed run never leaves a
// half-written result file. False when any step failed (the temporary is removed).
inline bool write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

// A program's JSON report: to `json_path` (atomically) when one is given, else to stdout. The exit
// code to return: kExitOk, or kExitError when it could not be written.
inline int write_report(const char* program, const std::string& json_path, const std::string& json) {
  if (!json_path.empty()) return write_file_atomically(json_path, json) ? kExitOk : kExitError;
  return write_stdout(program, json) ? kExitOk : kExitError;
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
