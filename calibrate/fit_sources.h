// Where a fitted parameter came from, as its profile source says it: the measurement files by
// program or by the attention calls a fit took, and the clock a clock log held.
#pragma once

#include <string>

#include "calibrate/measurements.h"
#include "hw/gpu_catalog.h"

namespace cs::calibrate {

// The files of `program` in `set`: "FILE (GPU, DATE), ...".
std::string sources_of(const MeasurementSet& set, const std::string& program);
// The files that hold attention calls `use` takes, the same way.
std::string attention_sources_of(const MeasurementSet& set, bool (*use)(const AttentionCase&));
// The mean SM clock of a clock log while its GPU worked (load_fit.h), into *MHz; returns where it
// came from. UserError when no sample shows the GPU working.
std::string loaded_clock_source(const std::string& file, const hw::GpuSpec& gpu, double* MHz);

}  // namespace cs::calibrate
