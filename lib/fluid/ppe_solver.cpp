// Preconditioned conjugate gradients for the MPS pressure Poisson equation (see PpeSolver in
// mps_solver.hpp).

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/parallel.hpp"
#include "fluid/mps_solver.hpp"

namespace datadyn::fluid {

namespace {
constexpr std::size_t kRowGrain = 1024;
}

void PpeSolver::compute(const Matrix& A) {
  DATADYN_CHECK(A.isCompressed());
  DATADYN_CHECK_EQ(A.rows(), A.cols());
  A_ = &A;
  const int m = static_cast<int>(A.rows());
  const int* outer = A.outerIndexPtr();
  const int* inner = A.innerIndexPtr();
  const double* val = A.valuePtr();
  inv_diag_.resize(m);
  diag_pos_.assign(static_cast<std::size_t>(m), -1);
  // D_i = A_ii - sum_{k<i, k in i's block} A_ik^2 / D_k (rows are sorted: lower entries first).
  // Blocks of kBlockRows rows are independent (block Jacobi over DIC), so they factor and solve in
  // parallel; the blocks depend on the row count only, not on the thread count.
  const std::size_t blocks = (static_cast<std::size_t>(m) + kBlockRows - 1) / kBlockRows;
  parallel_for(blocks, 1, [&](std::size_t k0, std::size_t k1) {
    for (std::size_t k = k0; k < k1; ++k) {
      const int first = static_cast<int>(k * kBlockRows);
      const int last = std::min(m, static_cast<int>((k + 1) * kBlockRows));
      for (int i = first; i < last; ++i) {
        double d = 0, s = 0;
        for (int e = outer[i]; e < outer[i + 1]; ++e) {
          const int c = inner[e];
          if (c < i) {
            if (c >= first) s += val[e] * val[e] * inv_diag_[c];
          } else if (c == i) {
            d = val[e];
            diag_pos_[static_cast<std::size_t>(i)] = e;
          } else {
            break;
          }
        }
        DATADYN_CHECK(diag_pos_[static_cast<std::size_t>(i)] >= 0 && d > 0);
        double di = d - s;
        // A breakdown (impossible for M-matrices, cheap to guard) falls back to the diagonal:
        // the preconditioner stays symmetric positive definite.
        if (!(di > 1e-12 * d)) di = d;
        inv_diag_[i] = 1.0 / di;
      }
    }
  });
  r_.resize(m);
  z_.resize(m);
  p_.resize(m);
  q_.resize(m);
}

void PpeSolver::precondition(const Eigen::VectorXd& r, Eigen::VectorXd& z) const {
  const int m = static_cast<int>(A_->rows());
  const int* outer = A_->outerIndexPtr();
  const int* inner = A_->innerIndexPtr();
  const double* val = A_->valuePtr();
  const std::size_t blocks = (static_cast<std::size_t>(m) + kBlockRows - 1) / kBlockRows;
  parallel_for(blocks, 1, [&](std::size_t k0, std::size_t k1) {
    for (std::size_t k = k0; k < k1; ++k) {
      const int first = static_cast<int>(k * kBlockRows);
      const int last = std::min(m, static_cast<int>((k + 1) * kBlockRows));
      // (D + L) y = r
      for (int i = first; i < last; ++i) {
        double s = r[i];
        const int dpos = diag_pos_[static_cast<std::size_t>(i)];
        for (int e = outer[i]; e < dpos; ++e) {
          const int c = inner[e];
          if (c >= first) s -= val[e] * z[c];
        }
        z[i] = s * inv_diag_[i];
      }
      // (I + D^-1 L^T) z = y
      for (int i = last - 1; i >= first; --i) {
        double s = 0;
        const int dpos = diag_pos_[static_cast<std::size_t>(i)];
        for (int e = dpos + 1; e < outer[i + 1]; ++e) {
          const int c = inner[e];
          if (c >= last) break;
          s += val[e] * z[c];
        }
        z[i] -= s * inv_diag_[i];
      }
    }
  });
}

PpeSolver::Result PpeSolver::solve(const Eigen::VectorXd& b, Eigen::VectorXd& x, double tolerance,
                                   int max_iterations) const {
  DATADYN_CHECK(A_ != nullptr);
  const std::size_t m = static_cast<std::size_t>(A_->rows());
  DATADYN_CHECK_EQ(static_cast<std::size_t>(b.size()), m);
  DATADYN_CHECK_EQ(static_cast<std::size_t>(x.size()), m);
  Result res;
  if (m == 0) {
    res.converged = true;
    return res;
  }
  const int* outer = A_->outerIndexPtr();
  const int* inner = A_->innerIndexPtr();
  const double* val = A_->valuePtr();
  auto plus = [](double a, double c) { return a + c; };
  auto dot = [&](const Eigen::VectorXd& u, const Eigen::VectorXd& v) {
    return parallel_reduce(
        m, kRowGrain, 0.0,
        [&](std::size_t b0, std::size_t b1) {
          double s = 0;
          for (std::size_t i = b0; i < b1; ++i)
            s += u[static_cast<Eigen::Index>(i)] * v[static_cast<Eigen::Index>(i)];
          return s;
        },
        plus);
  };
  // q = A v, returning v . q
  auto spmv_dot = [&](const Eigen::VectorXd& v, Eigen::VectorXd& q) {
    return parallel_reduce(
        m, kRowGrain, 0.0,
        [&](std::size_t b0, std::size_t b1) {
          double s = 0;
          for (std::size_t i = b0; i < b1; ++i) {
            double acc = 0;
            for (int e = outer[i]; e < outer[i + 1]; ++e) acc += val[e] * v[inner[e]];
            q[static_cast<Eigen::Index>(i)] = acc;
            s += acc * v[static_cast<Eigen::Index>(i)];
          }
          return s;
        },
        plus);
  };

  const double bnorm = std::sqrt(dot(b, b));
  if (bnorm == 0) {
    x.setZero();
    res.converged = true;
    return res;
  }
  const double target = tolerance * bnorm;
  (void)spmv_dot(x, q_);
  double rr = parallel_reduce(
      m, kRowGrain, 0.0,
      [&](std::size_t b0, std::size_t b1) {
        double s = 0;
        for (std::size_t i = b0; i < b1; ++i) {
          const Eigen::Index k = static_cast<Eigen::Index>(i);
          r_[k] = b[k] - q_[k];
          s += r_[k] * r_[k];
        }
        return s;
      },
      plus);
  res.residual = std::sqrt(rr) / bnorm;
  if (std::sqrt(rr) <= target) {
    res.converged = true;
    return res;
  }
  precondition(r_, z_);
  double rz = dot(r_, z_);
  p_ = z_;
  for (int it = 1; it <= max_iterations; ++it) {
    const double pq = spmv_dot(p_, q_);
    if (!(pq > 0)) break;  // lost positive definiteness (or NaN): report not converged
    const double alpha = rz / pq;
    rr = parallel_reduce(
        m, kRowGrain, 0.0,
        [&](std::size_t b0, std::size_t b1) {
          double s = 0;
          for (std::size_t i = b0; i < b1; ++i) {
            const Eigen::Index k = static_cast<Eigen::Index>(i);
            x[k] += alpha * p_[k];
            r_[k] -= alpha * q_[k];
            s += r_[k] * r_[k];
          }
          return s;
        },
        plus);
    res.iterations = it;
    res.residual = std::sqrt(rr) / bnorm;
    if (std::sqrt(rr) <= target) {
      res.converged = true;
      return res;
    }
    precondition(r_, z_);
    const double rz_new = dot(r_, z_);
    const double beta = rz_new / rz;
    rz = rz_new;
    parallel_for(m, kRowGrain * 4, [&](std::size_t b0, std::size_t b1) {
      for (std::size_t i = b0; i < b1; ++i) {
        const Eigen::Index k = static_cast<Eigen::Index>(i);
        p_[k] = z_[k] + beta * p_[k];
      }
    });
  }
  return res;
}

}  // namespace datadyn::fluid
