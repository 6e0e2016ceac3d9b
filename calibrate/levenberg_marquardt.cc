#include "calibrate/levenberg_marquardt.h"

#include <cmath>

namespace cs::calibrate {

namespace {
void jacobian(const ResidualFn& f, const Eigen::VectorXd& x, const Eigen::VectorXd& r, double step,
              Eigen::MatrixXd& j) {
  Eigen::VectorXd xh = x, rh(r.size());
  for (Eigen::Index c = 0; c < x.size(); ++c) {
    const double h = step * std::max(1.0, std::abs(x[c]));
    xh[c] = x[c] + h;
    f(xh, rh);
    j.col(c) = (rh - r) / h;
    xh[c] = x[c];
  }
}
}  // namespace

LmResult levenberg_marquardt(const ResidualFn& f, int residuals, Eigen::VectorXd x0, const LmOptions& opt) {
  LmResult out;
  out.x = std::move(x0);
  Eigen::VectorXd r(residuals), r_try(residuals);
  f(out.x, r);
  out.cost = r.squaredNorm();
  Eigen::MatrixXd j(residuals, out.x.size());
  double lambda = 1e-3;
  for (out.iterations = 0; out.iterations < opt.max_iterations; ++out.iterations) {
    jacobian(f, out.x, r, opt.step, j);
    const Eigen::MatrixXd jtj = j.transpose() * j;
    const Eigen::VectorXd g = j.transpose() * r;
    bool improved = false;
    // Raise the damping until a step lowers the cost (or the damping says the minimum is here).
    while (lambda < 1e12) {
      Eigen::MatrixXd a = jtj;
      a.diagonal() += lambda * jtj.diagonal().cwiseMax(1e-12);
      const Eigen::VectorXd dx = a.ldlt().solve(-g);
      const Eigen::VectorXd x_try = out.x + dx;
      f(x_try, r_try);
      const double cost = r_try.squaredNorm();
      if (std::isfinite(cost) && cost < out.cost) {
        const double drop = (out.cost - cost) / std::max(out.cost, 1e-300);
        out.x = x_try;
        r = r_try;
        out.cost = cost;
        lambda = std::max(lambda / 10, 1e-12);
        improved = true;
        if (drop < opt.tolerance) out.converged = true;
        break;
      }
      lambda *= 10;
    }
    if (!improved) {
      out.converged = true;  // no descent direction left at any damping: a (local) minimum
      break;
    }
    if (out.converged) break;
  }
  return out;
}

}  // namespace cs::calibrate
