// Levenberg-Marquardt least squares on Eigen: minimises sum r_i(x)^2 over x, with a forward-
// difference Jacobian and Marquardt's diagonal scaling. Deterministic: same input, same steps.
#pragma once

#include <Eigen/Dense>
#include <functional>

namespace cs::calibrate {

using ResidualFn = std::function<void(const Eigen::VectorXd& x, Eigen::VectorXd& r)>;

struct LmOptions {
  int max_iterations = 500;
  double tolerance = 1e-12;  // stop when the relative drop of the cost is below this
  double step = 1e-6;        // relative forward-difference step
};

struct LmResult {
  Eigen::VectorXd x;
  double cost = 0;  // sum of squared residuals at x
  int iterations = 0;
  bool converged = false;
};

LmResult levenberg_marquardt(const ResidualFn& f, int residuals, Eigen::VectorXd x0, const LmOptions& opt = {});

}  // namespace cs::calibrate
