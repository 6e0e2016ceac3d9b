// Routes between GPUs: the links a byte crosses, and each GPU's HBM as a shared link.
// hw/ implements it for each fabric; the executor only asks.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/flow_network.h"
#include "sim/transfer_pool.h"

namespace cs::sim {

class Routing {
 public:
  virtual ~Routing() = default;
  virtual int gpu_count() const = 0;
  virtual LinkId hbm(int gpu) const = 0;
  // Appends the links from src to dst (src != dst), excluding both HBMs.
  virtual void route(int src, int dst, std::vector<LinkId>& out) const = 0;
  // A GPU's own links named by the resource they are (e.g. "HBM", "NVLink out"), each kind once,
  // for results that say how busy each kind of resource was.
  struct KindedLink {
    std::string kind;
    LinkId link;
  };
  virtual std::vector<KindedLink> gpu_links(int gpu) const { return {{"HBM", hbm(gpu)}}; }
  // The links every GPU has one of, each kind once (its HBM, its NVLink and NIC ports): gpu_links
  // and any its results leave out (a fabric's PCIe). Same-kind links of two GPUs play the same
  // part in their routes (a relay's carry others' bytes, as every GPU's do), which is what lets
  // one stand in for the other (sim/stand_in_routing.h).
  virtual std::vector<KindedLink> own_links(int gpu) const { return gpu_links(gpu); }
  // The GPU whose own links and HBM carry this GPU's bytes: itself, unless the run simulates it by
  // another's (sim/stand_in_routing.h). Its power is what those bytes draw on.
  virtual int stand_in(int gpu) const { return gpu; }
  // Appends the links that the transfers `images` (sim::OpGraph::add_images) cross and no GPU owns
  // (switch ports), once per crossing, less those of the image src -> dst, whose own route the
  // caller has: what the transfers one stand-in's flow stands for load besides its route. None
  // where every GPU is simulated, each transfer its own.
  virtual void image_links(int /*src*/, int /*dst*/, std::span<const GpuPair> /*images*/,
                           std::vector<LinkId>& /*out*/) const {}
};

}  // namespace cs::sim
