// The pluggable cost model: what a kernel costs given the SMs it runs on, and what a copy-engine
// transfer, which runs on none, may reach.
// The engine asks; hw/ answers (an uncalibrated roofline today, calibrated profiles later).
#pragma once

#include <limits>
#include <string>

#include "sim/op_graph.h"
#include "sim/time.h"

namespace cs::sim {

struct ComputeCost {
  int max_sms = 1;         // SMs the kernel can use at most (e.g. its output tiles)
  double hbm_bytes = 0;    // bytes the kernel reads and writes in HBM
};

// What running kernels draw from a GPU's power budget, in watts at the cost model's reference
// clock and the maximum clock's energy per operation: tensor-core work of GEMMs (whose time
// follows the SM clock in part, CostModel::clock_stretch), other tensor-core work (attention), and
// HBM traffic (whose energy does not fall with the SM clock). Sums and time averages of draws are
// draws too.
struct PowerLoad {
  double gemm_W = 0, mma_W = 0, hbm_W = 0;
  PowerLoad& operator+=(const PowerLoad& o) {
    gemm_W += o.gemm_W, mma_W += o.mma_W, hbm_W += o.hbm_W;
    return *this;
  }
  PowerLoad scaled(double f) const { return {gemm_W * f, mma_W * f, hbm_W * f}; }
  bool any() const { return gemm_W > 0 || mma_W > 0 || hbm_W > 0; }
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // A short name and whether its numbers come from measurements (shown in every result).
  virtual std::string describe() const = 0;
  virtual bool calibrated() const = 0;

  virtual ComputeCost gemm_cost(int gpu, const GemmShape& g) const = 0;
  // The GEMM's HBM bytes on `sms` SMs (its waves' width) when other kernels already move
  // `others_Bps` bytes/s through HBM (and so through L2) as it starts; cost models without an L2
  // model ignore both.
  virtual double gemm_hbm_bytes(int gpu, const GemmShape& g, int /*sms*/, double /*others_Bps*/) const {
    return gemm_cost(gpu, g).hbm_bytes;
  }
  // Time on `sms` SMs (sms >= 1) when memory is not the limit.
  virtual Time gemm_time(int gpu, const GemmShape& g, int sms) const = 0;
  virtual ComputeCost compute_cost(int gpu, const GenericCompute& c) const = 0;
  virtual Time compute_time(int gpu, const GenericCompute& c, int sms) const = 0;
  // Idle device before a generic kernel starts, after its stream's previous op: the front end
  // launching it, no SM held and no byte moved. Models whose kernel times already count their
  // launch answer 0.
  virtual Time compute_launch_gap(int /*gpu*/, const GenericCompute& /*c*/) const { return Time(); }
  // Copy rate of a communication kernel on `sms` SMs (the rate cap shared by its flows) while GEMMs
  // hold `gemm_sms` SMs of its GPU (the executor asks again whenever that changes).
  virtual Bandwidth comm_copy_rate(int gpu, int sms, int gemm_sms) const = 0;
  // The rate at which a communication kernel on `sms` SMs works through a paced collective's bytes
  // (Collective::paced_bytes), whatever its links would carry; +infinity: no pace of its own.
  virtual Bandwidth comm_kernel_pace(int /*gpu*/, int /*sms*/) const {
    return Bandwidth::bytes_per_s(std::numeric_limits<double>::infinity());
  }
  // The most one copy-engine transfer (a send by DMA, on no SM) moves per second, whatever its route
  // and HBMs leave it; +infinity where those are its only limit.
  virtual Bandwidth copy_engine_rate(int gpu) const = 0;
  // Launch and synchronisation of a communication kernel: from the last participant's launch to
  // the first byte moved, once per collective (its SMs are held meanwhile).
  virtual Time comm_launch(int /*gpu*/) const { return Time(); }
  // How a GPU's HBM saturates (FlowNetwork::set_saturation's exponent); 0: a hard ceiling.
  virtual double hbm_saturation_exponent() const { return 0; }

  // The SM clock under a power limit. A cost model that has one answers true, gives GEMM times
  // at its reference clock, each compute kernel's tensor-core draw on `sms` SMs, the energy of a
  // byte read or written in HBM (the executor counts the bytes every flow moves over a GPU's HBM
  // link: GEMMs', memory-bound kernels', copies'), the window over which the GPU's controller
  // averages the draw, the clock it sets for an average draw, and the factor by which GEMM times
  // (and other compute kernels' times) stretch at a clock (below 1 above the reference).
  virtual bool power_capped() const { return false; }
  virtual PowerLoad gemm_power(int /*gpu*/, const GemmShape& /*g*/, int /*sms*/) const { return {}; }
  virtual PowerLoad compute_power(int /*gpu*/, const GenericCompute& /*c*/, int /*sms*/) const { return {}; }
  virtual double hbm_J_per_byte(int /*gpu*/) const { return 0; }
  virtual Time power_window(int /*gpu*/) const { return Time(); }
  virtual double power_clock_MHz(int /*gpu*/, const PowerLoad& /*average*/) const { return 0; }
  virtual double gemm_stretch(int /*gpu*/, double /*MHz*/) const { return 1.0; }
  // The same for another compute kernel: its time at `MHz` over compute_time's, where
  // compute_follows_clock says it follows the clock at all (else the executor never re-rates it).
  virtual double compute_stretch(int /*gpu*/, double /*MHz*/, const GenericCompute& /*c*/) const { return 1.0; }
  virtual bool compute_follows_clock(int /*gpu*/, const GenericCompute& /*c*/) const { return false; }
};

}  // namespace cs::sim
