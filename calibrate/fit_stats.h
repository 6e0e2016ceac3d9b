// How well predictions match measurements: relative errors per case and their summary.
#pragma once

#include <vector>

namespace cs::calibrate {

struct FitStats {
  int cases = 0;
  double median_error = 0;  // |predicted / measured - 1|, median over the cases
  double worst_error = 0;   // the largest
  double r2_log = 0;        // R^2 of log(time): the share of the spread the model explains
};

FitStats fit_stats(const std::vector<double>& predicted, const std::vector<double>& measured);
// The median of the values (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> v);

}  // namespace cs::calibrate
