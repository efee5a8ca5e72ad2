// Preconditioned conjugate gradients for the MPS pressure Poisson equation (see PpeSolver in
// mps_solver.hpp).

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "core/parallel.hpp"
#include "core/simd.hpp"
#include "fluid/mps_solver.hpp"
#include "fluid/ppe_kernels.hpp"

namespace datadyn::fluid {

namespace {
// Row loops run in at least kMinChunks chunks of equal size (whole aggregates), at most
// kMaxRowGrain rows each: 5,000 rows in chunks of 1024 left one of two threads a chunk short of
// the other in every loop.
constexpr std::size_t kMinChunks = 8;
constexpr std::size_t kMaxRowGrain = 1024;

}  // namespace

static_assert(PpeSolver::kAggregate == static_cast<std::size_t>(kSliceRows));

void PpeSolver::compute(const Matrix& A) {
  DATADYN_CHECK(A.isCompressed());
  DATADYN_CHECK_EQ(A.rows(), A.cols());
  A_ = &A;
  const int m = static_cast<int>(A.rows());
  const std::size_t mm = static_cast<std::size_t>(m);
  if (mm == 0) {
    blocks_.clear();
    block_rz_.clear();
    return;
  }
  const int* outer = A.outerIndexPtr();
  const int* inner = A.innerIndexPtr();
  const double* val = A.valuePtr();
  const SimdLevel level = simd_level();
  // floor(m / kMinBlockRows) blocks (at least one) of equal size, rounded up to whole aggregates,
  // are independent (block Jacobi over DIC), so they factor and solve in parallel; the blocks
  // depend on the row count only, not on the thread count.
  const std::size_t wanted = std::max<std::size_t>(1, mm / kMinBlockRows);
  const int rows =
      static_cast<int>(((mm + wanted - 1) / wanted + kAggregate - 1) / kAggregate * kAggregate);
  const std::size_t nblocks = (mm + static_cast<std::size_t>(rows) - 1) / rows;
  blocks_.resize(nblocks);
  inv_diag_.resize(m);
  diag_.resize(m);
  upper_sum_.resize(m);
  diag_pos_.resize(mm);
  const std::size_t chunks = std::max(kMinChunks, (mm + kMaxRowGrain - 1) / kMaxRowGrain);
  row_grain_ = ((mm + chunks - 1) / chunks + kAggregate - 1) / kAggregate * kAggregate;
  parallel_for(mm, row_grain_, [&](std::size_t b0, std::size_t b1) {
    for (std::size_t r = b0; r < b1; ++r) {
      // The diagonal's place in the sorted row: after the columns below it, counted without a
      // branch (a binary search mispredicted most of its steps).
      const int i = static_cast<int>(r);
      int d = outer[i];
      for (int e = outer[i]; e < outer[i + 1]; ++e) d += inner[e] < i;
      DATADYN_CHECK(d < outer[i + 1] && inner[d] == i);
      diag_pos_[r] = d;
      diag_[i] = val[d];
      DATADYN_CHECK(diag_[i] > 0);
    }
  });
  // Each block keeps its strong couplings |A_ic| >= kStrong sqrt(A_ii A_cc) compactly (strict
  // lower and upper parts, row by row), and
  // D_i = A_ii - sum_{c < i} A_ic / D_c (A_ic + tau (sum_{j > c} A_cj - A_ic)) over them.
  auto factor_block = [&](std::size_t k) {
    Block& blk = blocks_[k];
    blk.first = static_cast<int>(k) * rows;
    blk.last = std::min(m, static_cast<int>(k + 1) * rows);
    blk.lo_ptr.assign(1, 0);
    blk.up_ptr.assign(1, 0);
    // The strong couplings are found in double precision (dval: their values as in A) and kept
    // in single precision. Slots are reserved for a whole row at a time.
    int nlo = 0, nup = 0;
    std::vector<double> dval;
    auto reserve = [](auto& v, int used, int more) {
      if (v.size() < static_cast<std::size_t>(used + more))
        v.resize(std::max(2 * v.size(), static_cast<std::size_t>(used + more)));
    };
    for (int i = blk.first; i < blk.last; ++i) {
      const double strong2 = kStrong * kStrong * diag_[i];
      const int d = diag_pos_[i];
      reserve(blk.lo_col, nlo, d - outer[i]);
      reserve(blk.lo_val, nlo, d - outer[i]);
      reserve(blk.up_col, nup, outer[i + 1] - d);
      reserve(blk.up_val, nup, outer[i + 1] - d);
      reserve(dval, 0, outer[i + 1] - outer[i]);
      // Lower part: columns c < i, so c < last.
      const int lo0 = nlo;
      const int nl = strong_couplings(level, inner, val, outer[i], d, diag_.data(), strong2,
                                      blk.first, m, blk.lo_col.data() + nlo, dval.data());
      // The lower couplings in single precision would change the factor: their double values.
      double s = 0;
      for (int t = 0; t < nl; ++t) {
        const int c = blk.lo_col[static_cast<std::size_t>(lo0 + t)];
        const double v = dval[static_cast<std::size_t>(t)];
        blk.lo_val[static_cast<std::size_t>(lo0 + t)] = static_cast<float>(v);
        s += v * inv_diag_[c] * (v + kMicTau * (upper_sum_[c] - v));
      }
      nlo += nl;
      // Upper part: columns c > i, so c >= first.
      const int nu = strong_couplings(level, inner, val, d + 1, outer[i + 1], diag_.data(), strong2,
                                      0, blk.last, blk.up_col.data() + nup, dval.data());
      double up_sum = 0;
      for (int t = 0; t < nu; ++t) {
        const double v = dval[static_cast<std::size_t>(t)];
        blk.up_val[static_cast<std::size_t>(nup + t)] = static_cast<float>(v);
        up_sum += v;
      }
      nup += nu;
      upper_sum_[i] = up_sum;
      blk.lo_ptr.push_back(nlo);
      blk.up_ptr.push_back(nup);
      double di = diag_[i] - s;
      // A breakdown (impossible for M-matrices, cheap to guard) falls back to the diagonal:
      // the preconditioner stays symmetric positive definite.
      if (!(di > 0.25 * diag_[i])) di = diag_[i];
      inv_diag_[i] = 1.0 / di;
    }
  };
  build_coarse();
  // The coarse factorisation (0.3-0.5 ms at l0 = 5 mm) is serial: it runs as one more task
  // beside the blocks of the incomplete factor, not after them.
  parallel_for(nblocks + 1, 1, [&](std::size_t k0, std::size_t k1) {
    for (std::size_t k = k0; k < k1; ++k) {
      if (k == 0)
        coarse_.compute(coarse_matrix_);
      else
        factor_block(k - 1);
    }
  });
  r_.resize(m);
  z_.resize(m);
  p_.resize(m);
  q_.resize(m);
  s_.resize(m);
}

void PpeSolver::build_coarse() {
  // Aggregates of kAggregate consecutive rows (rows follow the particles' cell order, so
  // consecutive rows are neighbours in space); A_c = P^T A P with P the aggregate indicator.
  const int m = static_cast<int>(A_->rows());
  const int* outer = A_->outerIndexPtr();
  const int* inner = A_->innerIndexPtr();
  const double* val = A_->valuePtr();
  const int agg = static_cast<int>(kAggregate);
  const int mc = (m + agg - 1) / agg;
  // Coarse rows in parallel over fixed chunks, each summed with a slot array (slot[J]: position
  // of coarse column J in the row, -1 while absent) and sorted; A_c is symmetric, so its rows are
  // stored as the columns of the column-major matrix the Cholesky factor takes.
  // The coarse rows are built in chunks of whole row chunks: the chunk's rows of A P are stored
  // with it, for the row chunk of CG that applies them.
  const int coarse_grain = static_cast<int>(row_grain_ / kAggregate);
  const std::size_t chunks = static_cast<std::size_t>((mc + coarse_grain - 1) / coarse_grain);
  std::vector<std::vector<std::pair<int, double>>> chunk_entries(chunks);
  std::vector<int> count(static_cast<std::size_t>(mc) + 1, 0);
  ap_.resize(chunks);
  parallel_for(chunks, 1, [&](std::size_t c0, std::size_t c1) {
    std::vector<int> slot(static_cast<std::size_t>(mc), -1);
    // The aggregate's rows of A P, compressed: row r in [ptr[r], ptr[r + 1]).
    std::vector<int> ptr, col;
    std::vector<double> sums;
    for (std::size_t c = c0; c < c1; ++c) {
      std::vector<std::pair<int, double>>& entries = chunk_entries[c];
      entries.clear();
      RowChunk& ap = ap_[c];
      ap.start.assign(1, 0);
      const int I1 = std::min(mc, static_cast<int>(c + 1) * coarse_grain);
      for (int I = static_cast<int>(c) * coarse_grain; I < I1; ++I) {
        const std::size_t row_begin = entries.size();
        ptr.assign(1, 0);
        std::size_t n_ap = 0;
        for (int i = I * agg; i < std::min(m, (I + 1) * agg); ++i) {
          // Row i of A P: a row's columns are sorted and aggregates are ranges of columns, so
          // each aggregate is one run of the row. Branch-free (runs are 1-5 entries long, in no
          // pattern): the run so far is written to its slot at every entry, the slot advances
          // when a new run starts, and the sum restarts by a mask (a branch or a select made
          // this loop most of the coarse matrix's time).
          const std::size_t len = static_cast<std::size_t>(outer[i + 1] - outer[i]);
          if (col.size() < n_ap + len) {
            col.resize(std::max(2 * col.size(), n_ap + len));
            sums.resize(col.size());
          }
          int* const c_out = col.data();
          double* const s_out = sums.data();
          const std::size_t ap_begin = n_ap;
          const int e1 = outer[i + 1];
          unsigned run = static_cast<unsigned>(inner[outer[i]]) / kAggregate;
          __m128d sum = _mm_setzero_pd();
          for (int e = outer[i]; e < e1; ++e) {
            const unsigned J = static_cast<unsigned>(inner[e]) / kAggregate;
            const long long next = J != run;
            c_out[n_ap] = static_cast<int>(run);
            s_out[n_ap] = _mm_cvtsd_f64(sum);
            n_ap += static_cast<std::size_t>(next);
            const __m128d keep = _mm_castsi128_pd(_mm_cvtsi64_si128(next - 1));
            sum = _mm_add_sd(_mm_and_pd(sum, keep), _mm_load_sd(val + e));
            run = J;
          }
          c_out[n_ap] = static_cast<int>(run);
          s_out[n_ap] = _mm_cvtsd_f64(sum);
          ++n_ap;
          ptr.push_back(static_cast<int>(n_ap));
          for (std::size_t e = ap_begin; e < n_ap; ++e) {
            int& k = slot[static_cast<std::size_t>(col[e])];
            if (k < 0) {
              k = static_cast<int>(entries.size());
              entries.emplace_back(col[e], sums[e]);
            } else {
              entries[static_cast<std::size_t>(k)].second += sums[e];
            }
          }
        }
        for (std::size_t k = row_begin; k < entries.size(); ++k)
          slot[static_cast<std::size_t>(entries[k].first)] = -1;
        std::sort(entries.begin() + static_cast<std::ptrdiff_t>(row_begin), entries.end());
        count[static_cast<std::size_t>(I) + 1] = static_cast<int>(entries.size() - row_begin);
        // The slice: entry k of row r at k kAggregate + r, zeros after a row's last entry (and
        // in the rows a last, partial aggregate lacks).
        const std::size_t rows = ptr.size() - 1;
        int width = 0;
        for (std::size_t r = 0; r < rows; ++r) width = std::max(width, ptr[r + 1] - ptr[r]);
        const std::size_t s0 = static_cast<std::size_t>(ap.start.back());
        ap.start.push_back(ap.start.back() + width * agg);
        ap.col.resize(std::max(ap.col.size(), static_cast<std::size_t>(ap.start.back())));
        ap.val.resize(ap.col.size());
        for (std::size_t r = 0; r < kAggregate; ++r) {
          const int e0 = r < rows ? ptr[r] : 0, len = r < rows ? ptr[r + 1] - e0 : 0;
          for (int k = 0; k < width; ++k) {
            const std::size_t to = s0 + static_cast<std::size_t>(k) * kAggregate + r;
            // A column of the row itself: the padding reads a value already in cache.
            ap.col[to] = col[static_cast<std::size_t>(e0 + std::min(k, std::max(len - 1, 0)))];
            ap.val[to] = k < len ? sums[static_cast<std::size_t>(e0 + k)] : 0.0;
          }
        }
      }
    }
  });
  for (std::size_t I = 0; I < static_cast<std::size_t>(mc); ++I) count[I + 1] += count[I];
  Eigen::SparseMatrix<double>& Ac = coarse_matrix_;
  Ac.resize(mc, mc);
  Ac.resizeNonZeros(count.back());
  std::copy(count.begin(), count.end(), Ac.outerIndexPtr());
  std::size_t k = 0;
  for (const auto& entries : chunk_entries) {
    for (const auto& [J, v] : entries) {
      Ac.innerIndexPtr()[k] = J;
      Ac.valuePtr()[k] = v;
      ++k;
    }
  }
  rc_.resize(mc);
  rc_defect_.resize(mc);
  block_rz_.assign(blocks_.size(), 0.0);
  block_rr_.assign(blocks_.size(), 0.0);
}

double PpeSolver::smooth_block(std::size_t k, const Eigen::VectorXd& r, Eigen::VectorXd& z) const {
  const Block& blk = blocks_[k];
  const int* lp = blk.lo_ptr.data();
  const int* lc = blk.lo_col.data();
  const float* lv = blk.lo_val.data();
  // (D + L) y = r
  for (int i = blk.first, row = 0; i < blk.last; ++i, ++row) {
    double s = r[i];
    for (int e = lp[row]; e < lp[row + 1]; ++e) s -= lv[e] * z[lc[e]];
    z[i] = s * inv_diag_[i];
  }
  // (I + D^-1 L^T) z = y, with r . z and the restriction of r on the way
  const int* up = blk.up_ptr.data();
  const int* uc = blk.up_col.data();
  const float* uv = blk.up_val.data();
  double rz = 0;
  for (int i = blk.last - 1, row = blk.last - 1 - blk.first; i >= blk.first; --i, --row) {
    double s = 0;
    for (int e = up[row]; e < up[row + 1]; ++e) s += uv[e] * z[uc[e]];
    z[i] -= s * inv_diag_[i];
    rz += r[i] * z[i];
  }
  const int agg = static_cast<int>(kAggregate);
  for (int c = blk.first / agg; c * agg < blk.last; ++c) {
    double sum = 0;
    for (int i = c * agg; i < std::min(blk.last, (c + 1) * agg); ++i) sum += r[i];
    rc_[c] = sum;
  }
  return rz;
}

double PpeSolver::smooth(const Eigen::VectorXd& r, Eigen::VectorXd& z) const {
  parallel_for(blocks_.size(), 1, [&](std::size_t k0, std::size_t k1) {
    for (std::size_t k = k0; k < k1; ++k) block_rz_[k] = smooth_block(k, r, z);
  });
  double rz = 0;
  for (double v : block_rz_) rz += v;
  return rz;
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
  const SimdLevel level = simd_level();
  auto plus = [](double a, double c) { return a + c; };
  auto dot = [&](const Eigen::VectorXd& u, const Eigen::VectorXd& v) {
    return parallel_reduce(
        m, row_grain_, 0.0,
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
        m, row_grain_, 0.0,
        [&](std::size_t b0, std::size_t b1) {
          return product_rows(level, outer, inner, val, b0, b1, v.data(), q.data());
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
      m, row_grain_, 0.0,
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
  const int agg = static_cast<int>(kAggregate);
  // Deflated CG, A-DEF2 (Tang, Nabben, Vuik, Erlangga 2009, table 2): with Q = P
  // A_c^-1 P^T, the preconditioned residual is z = y + Q (r - A y), y = M^-1 r. The product
  // s = A y is the iteration's one product with A: A z = s + (A P) xc follows from the few
  // entries of A P per row, and A p = A z + beta A p by recurrence. Against the additive
  // z = y + Q r it takes 20.4 instead of 31.4 iterations per step of the l0 = 5 mm dam break
  // (a multiplicative correction tried before with a second product with A per iteration was
  // no faster).
  // The start is deflated first, x += Q r, so that P^T r = 0 as the method assumes.
  // (A P xc)_i for the rows [i0, i0 + kAggregate) into ap[0 .. kAggregate), i0 a multiple of
  // kAggregate.
  auto ap_rows = [&](std::size_t i0, double* ap) {
    const RowChunk& chunk = ap_[i0 / row_grain_];
    const std::size_t sl = i0 % row_grain_ / kAggregate;
    ap_slice(level, chunk.val.data(), chunk.col.data(), chunk.start[sl], chunk.start[sl + 1],
             xc_.data(), ap);
  };
  // x += dx(i), r -= dr(i) on every row; true when |r| is at the tolerance.
  auto update_converged = [&](auto&& dx, auto&& dr) {
    rr = parallel_reduce(
        m, row_grain_, 0.0,
        [&](std::size_t b0, std::size_t b1) {
          double sum = 0;
          for (std::size_t i = b0; i < b1; ++i) {
            const Eigen::Index k = static_cast<Eigen::Index>(i);
            x[k] += dx(i);
            r_[k] -= dr(i);
            sum += r_[k] * r_[k];
          }
          return sum;
        },
        plus);
    res.residual = std::sqrt(rr) / bnorm;
    res.converged = std::sqrt(rr) <= target;
    return res.converged;
  };
  // rc = P^T r (smooth() forms it on the way in the iterations).
  parallel_for(static_cast<std::size_t>(rc_.size()), row_grain_ / kAggregate,
               [&](std::size_t c0, std::size_t c1) {
                 for (std::size_t c = c0; c < c1; ++c) {
                   double sum = 0;
                   for (std::size_t i = c * kAggregate; i < std::min(m, (c + 1) * kAggregate); ++i)
                     sum += r_[static_cast<Eigen::Index>(i)];
                   rc_[static_cast<Eigen::Index>(c)] = sum;
                 }
               });
  xc_ = coarse_.solve(rc_);
  parallel_for(m, row_grain_, [&](std::size_t b0, std::size_t b1) {
    double ap[kAggregate];
    for (std::size_t i0 = b0; i0 < b1; i0 += kAggregate) {
      ap_rows(i0, ap);
      std::copy(ap, ap + std::min(kAggregate, b1 - i0), q_.data() + i0);
    }
  });
  if (update_converged([&](std::size_t i) { return xc_[static_cast<Eigen::Index>(i) / agg]; },
                       [&](std::size_t i) { return q_[static_cast<Eigen::Index>(i)]; }))
    return res;
  double rz = 1;
  p_.setZero();
  q_.setZero();
  double ry = smooth(r_, z_);
  for (int it = 1; it <= max_iterations; ++it) {
    // s = A y into s_, and P^T (r - s) into rc_defect_ (row chunks are whole aggregates).
    parallel_for(m, row_grain_, [&](std::size_t b0, std::size_t b1) {
      product_rows(level, outer, inner, val, b0, b1, z_.data(), s_.data());
      for (std::size_t c = b0 / kAggregate; c * kAggregate < b1; ++c) {
        double sum = 0;
        for (std::size_t i = c * kAggregate; i < std::min(b1, (c + 1) * kAggregate); ++i)
          sum += s_[static_cast<Eigen::Index>(i)];
        rc_defect_[static_cast<Eigen::Index>(c)] = rc_[static_cast<Eigen::Index>(c)] - sum;
      }
    });
    xc_ = coarse_.solve(rc_defect_);
    const double rz_new = ry + rc_.dot(xc_);  // r . (y + P xc)
    const double beta = it == 1 ? 0.0 : rz_new / rz;
    rz = rz_new;
    // p = y + P xc + beta p, q = A p = s + A P xc + beta q
    const double pq = parallel_reduce(
        m, row_grain_, 0.0,
        [&](std::size_t b0, std::size_t b1) {
          double sum = 0, ap[kAggregate];
          for (std::size_t i0 = b0; i0 < b1; i0 += kAggregate) {
            ap_rows(i0, ap);
            const double xc = xc_[static_cast<Eigen::Index>(i0 / kAggregate)];
            for (std::size_t i = i0; i < std::min(b1, i0 + kAggregate); ++i) {
              const Eigen::Index k = static_cast<Eigen::Index>(i);
              p_[k] = z_[k] + xc + beta * p_[k];
              q_[k] = s_[k] + ap[i - i0] + beta * q_[k];
              sum += p_[k] * q_[k];
            }
          }
          return sum;
        },
        plus);
    if (!(pq > 0)) break;  // lost positive definiteness (or NaN): report not converged
    const double alpha = rz / pq;
    res.iterations = it;
    // x += alpha p, r -= alpha q and |r|², then the next y = M^-1 r, block by block in one pass:
    // a block's smoothing reads r on its own rows only. (At convergence that smoothing is not
    // needed; one region fewer per iteration is worth more.)
    parallel_for(blocks_.size(), 1, [&](std::size_t k0, std::size_t k1) {
      for (std::size_t k = k0; k < k1; ++k) {
        double sum = 0;
        for (int i = blocks_[k].first; i < blocks_[k].last; ++i) {
          x[i] += alpha * p_[i];
          r_[i] -= alpha * q_[i];
          sum += r_[i] * r_[i];
        }
        block_rr_[k] = sum;
        block_rz_[k] = smooth_block(k, r_, z_);
      }
    });
    rr = 0;
    ry = 0;
    for (std::size_t k = 0; k < blocks_.size(); ++k) {
      rr += block_rr_[k];
      ry += block_rz_[k];
    }
    res.residual = std::sqrt(rr) / bnorm;
    res.converged = std::sqrt(rr) <= target;
    if (res.converged) return res;
  }
  return res;
}

}  // namespace datadyn::fluid
