#include "fluid/mps_solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/check.hpp"
#include "core/parallel.hpp"
#include "core/simd.hpp"
#include "fluid/pair_kernels.hpp"

namespace datadyn::fluid {

namespace {

constexpr std::size_t kGrain = 256;
constexpr double kDim = 2.0;
constexpr double kMinCorrectionEigenvalue = 0.5;
// Particles found inside a wall go back this far (in l0) into the water: just across the wetted
// boundary. Farther (0.25-0.5 l0) put them next to their fluid neighbours, and the number density
// of the too-close pair kicked one of them to 8-30 m/s in the breaking-wave scenes.
constexpr double kPushBack = 0.02;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

const char* step_status_name(StepStatus s) {
  switch (s) {
    case StepStatus::Ok:
      return "ok";
    case StepStatus::PpeNotConverged:
      return "pressure Poisson equation not converged";
    case StepStatus::NonFinite:
      return "NaN or infinity";
    case StepStatus::CourantExceeded:
      return "Courant number exceeded";
    case StepStatus::LeftTank:
      return "particle left the tank";
  }
  return "?";
}

std::string describe_failure(const StepResult& r, const MpsParams& p) {
  if (r.status == StepStatus::Ok) return "";
  char buf[512];
  const char* name = step_status_name(r.status);
  std::string where;
  if (r.particle >= 0) {
    char w[160];
    std::snprintf(w, sizeof w, "particle %d at (%.4g, %.4g) m, speed %.3g m/s", r.particle,
                  r.position.x(), r.position.y(), r.speed);
    where = w;
  }
  switch (r.status) {
    case StepStatus::PpeNotConverged:
      std::snprintf(buf, sizeof buf,
                    "%s: relative residual %.3g after %d iterations (tolerance %.3g, %d unknowns)",
                    name, r.residual, r.iterations, p.ppe_tolerance, r.unknowns);
      break;
    case StepStatus::CourantExceeded:
      std::snprintf(buf, sizeof buf,
                    "%s: max |u| dt / l0 = %.3g > courant_max %.3g with dt = %.3g s; %s "
                    "(use a smaller dt or the Courant time step)",
                    name, r.courant, p.courant_max, r.dt, where.c_str());
      return buf;
    case StepStatus::LeftTank:
      if (r.over_rim)
        std::snprintf(buf, sizeof buf, "%s: %s went over the rim (splashed out of the tank)", name,
                      where.c_str());
      else
        std::snprintf(buf, sizeof buf, "%s: %s is more than %.3g l0 inside a wall", name,
                      where.c_str(), p.leak_depth);
      return buf;
    default:
      std::snprintf(buf, sizeof buf, "%s", name);
      break;
  }
  std::string s = buf;
  if (!where.empty()) s += "; " + where;
  return s;
}

// -------------------------------------------------------------------------------------------------

MpsSolver::MpsSolver(const Tank& tank, const MpsParams& params,
                     const Eigen::Ref<const Points2>& fluid_position,
                     const Eigen::Ref<const Points2>& fluid_velocity)
    : tank_(tank), params_(params) {
  DATADYN_CHECK_EQ(fluid_position.rows(), fluid_velocity.rows());
  DATADYN_CHECK(params.re_laplacian >= params.re_density);
  DATADYN_CHECK(params.collision_distance < params.re_density);
  l0_ = tank.l0();
  re_d_ = params.re_density * l0_;
  re_l_ = params.re_laplacian * l0_;
  // The lists are built at the start of a step and used at the temporary positions: the skin
  // covers half a spacing of relative motion (checked every step; rebuilt if exceeded).
  r_list_ = re_l_ + 0.5 * l0_;
  kd_ = lattice_constants(re_d_, l0_, 2);
  kl_ = lattice_constants(re_l_, l0_, 2);

  nf_ = static_cast<std::size_t>(fluid_position.rows());
  const Points2& bpos = tank.boundary_positions();
  nb_ = static_cast<std::size_t>(bpos.rows());
  n_ = nf_ + nb_;
  const Eigen::Index nf = static_cast<Eigen::Index>(nf_), nb = static_cast<Eigen::Index>(nb_);

  const Eigen::Vector2d size = tank.max_corner() - tank.min_corner();
  const Eigen::Vector2d margin = Eigen::Vector2d::Constant(8 * l0_);
  const Eigen::Vector2d lo = tank.min_corner() - margin;
  const Eigen::Vector2d hi = tank.max_corner() + margin + Eigen::Vector2d(0, 0.5 * size.y());
  fluid_grid_ = CellGrid(lo, hi, r_list_);
  static_grid_ = CellGrid(lo, hi, r_list_);

  pos_.resize(static_cast<Eigen::Index>(n_), 2);
  vel_ = Points2::Zero(static_cast<Eigen::Index>(n_), 2);
  pos_.topRows(nf) = fluid_position;
  vel_.topRows(nf) = fluid_velocity;
  pressure_ = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n_));
  density_ = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n_));
  divergence_ = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n_));
  id_.resize(nf_);
  for (std::size_t i = 0; i < nf_; ++i) id_[i] = static_cast<int>(i);

  // Boundary particles in cell order.
  static_grid_.bin(bpos);
  boundary_id_ = static_grid_.order();
  type_.assign(n_, ParticleType::Fluid);
  for (std::size_t k = 0; k < nb_; ++k) {
    const int b = boundary_id_[k];
    pos_.row(nf + static_cast<Eigen::Index>(k)) = bpos.row(b);
    type_[nf_ + k] = tank.boundary_types()[static_cast<std::size_t>(b)];
  }
  pos_tmp_ = pos_;
  vel_tmp_ = vel_;

  // Static data of the boundary: the density each wall particle gets from other boundary
  // particles, and wall-wall Laplacian weights.
  NeighborLists bl;
  build_neighbor_lists(pos_.bottomRows(nb),
                       {GridSource{&static_grid_, &pos_, static_cast<int>(nf)}}, r_list_, nf, bl);
  static_density_ = Eigen::VectorXd::Zero(nb);
  wall_wall_.offset.assign(nb_ + 1, 0);
  wall_wall_.index.clear();
  wall_wall_w_.clear();
  for (std::size_t k = 0; k < nb_; ++k) {
    const Eigen::Index i = nf + static_cast<Eigen::Index>(k);
    if (type_[static_cast<std::size_t>(i)] == ParticleType::Wall) {
      for (int e = bl.begin(k); e < bl.end(k); ++e) {
        const int j = bl.index[static_cast<std::size_t>(e)];
        const double r = (pos_.row(j) - pos_.row(i)).norm();
        static_density_[static_cast<Eigen::Index>(k)] += mps_weight(r, re_d_);
        if (type_[static_cast<std::size_t>(j)] == ParticleType::Wall && r < re_l_) {
          wall_wall_.index.push_back(j);
          wall_wall_w_.push_back(mps_weight(r, re_l_));
        }
      }
    }
    wall_wall_.offset[k + 1] = static_cast<int>(wall_wall_.index.size());
  }
  unknown_.assign(n_, -1);
  // Dummy particles count in the number density only.
  solid_.resize(n_);
  for (std::size_t j = 0; j < n_; ++j) solid_[j] = type_[j] != ParticleType::Dummy;
}

void MpsSolver::rebuild_neighbors() {
  const Eigen::Index nf = static_cast<Eigen::Index>(nf_);
  fluid_grid_.bin(pos_.topRows(nf));
  const std::vector<int>& order = fluid_grid_.order();
  // Positions, velocities, pressures and given indices into cell order, in one parallel pass
  // (one thread would wait for the other through it).
  pos_scratch_.resize(nf, 2);
  vel_scratch_.resize(nf, 2);
  p_scratch_.resize(nf);
  scratch_perm_.resize(nf_);
  parallel_for(nf_, kGrain * 4, [&](std::size_t b0, std::size_t b1) {
    for (std::size_t k = b0; k < b1; ++k) {
      const Eigen::Index to = static_cast<Eigen::Index>(k), from = order[k];
      pos_scratch_.row(to) = pos_.row(from);
      vel_scratch_.row(to) = vel_.row(from);
      p_scratch_[to] = pressure_[from];
      scratch_perm_[k] = id_[static_cast<std::size_t>(from)];
    }
  });
  pos_.topRows(nf) = pos_scratch_;
  vel_.topRows(nf) = vel_scratch_;
  pressure_.head(nf) = p_scratch_;
  id_.swap(scratch_perm_);
  build_neighbor_lists(
      pos_.topRows(nf),
      {GridSource{&fluid_grid_, &pos_, 0}, GridSource{&static_grid_, &pos_, static_cast<int>(nf)}},
      r_list_, 0, list_);
}

void MpsSolver::explicit_step(double dt) {
  // Reads r^n, u^n from pos_/vel_, writes r*, u* into pos_tmp_/vel_tmp_ (fluid rows), then swaps:
  // afterwards pos_tmp_ holds r^n.
  const double coef = params_.viscosity * 2.0 * kDim / (kl_.lambda * kl_.n0);
  const double gx = params_.gravity.x(), gy = params_.gravity.y();
  const double rl2 = re_l_ * re_l_;
  parallel_for(nf_, kGrain, [&](std::size_t b0, std::size_t b1) {
    for (std::size_t i = b0; i < b1; ++i) {
      const Eigen::Index ii = static_cast<Eigen::Index>(i);
      const double xi = pos_(ii, 0), yi = pos_(ii, 1), ui = vel_(ii, 0), vi = vel_(ii, 1);
      const int e0 = list_.begin(i);
      const VelocityLaplacian l =
          viscosity_sums(simd_level(), pos_.data(), vel_.data(), list_.index.data() + e0,
                         list_.end(i) - e0, xi, yi, ui, vi, re_l_, rl2);
      const double us = ui + dt * (coef * l.x + gx), vs = vi + dt * (coef * l.y + gy);
      vel_tmp_(ii, 0) = us;
      vel_tmp_(ii, 1) = vs;
      pos_tmp_(ii, 0) = xi + dt * us;
      pos_tmp_(ii, 1) = yi + dt * vs;
    }
  });
  pos_.swap(pos_tmp_);
  vel_.swap(vel_tmp_);
}

double MpsSolver::collide(double dt) {
  // Koshizuka's collision model: an approaching pair closer than collision_distance loses the
  // normal velocity (1 + e) m_j / (m_i + m_j) times (equal masses; walls do not move). Velocities
  // of the others are read from u*, so the result does not depend on the loop order.
  const double dc = params_.collision_distance * l0_, dc2 = dc * dc;
  const double f = 0.5 * (1.0 + params_.restitution);
  std::vector<std::int8_t> hit(nf_, 0);
  parallel_for(nf_, kGrain, [&](std::size_t b0, std::size_t b1) {
    std::vector<int> close;
    for (std::size_t i = b0; i < b1; ++i) {
      const Eigen::Index ii = static_cast<Eigen::Index>(i);
      const double xi = pos_(ii, 0), yi = pos_(ii, 1);
      double ui = vel_(ii, 0), vi = vel_(ii, 1);
      bool any = false;
      // Pairs this close are rare: found eight candidates at a time, then taken in list order.
      const int e0 = list_.begin(i), len = list_.end(i) - e0;
      close.resize(std::max(close.size(), static_cast<std::size_t>(len)));
      const int nclose = close_candidates(simd_level(), pos_.data(), list_.index.data() + e0, len,
                                          xi, yi, dc2, close.data());
      for (int c = 0; c < nclose; ++c) {
        const int j =
            list_.index[static_cast<std::size_t>(e0 + close[static_cast<std::size_t>(c)])];
        const double dx = pos_(j, 0) - xi, dy = pos_(j, 1) - yi;
        const double r = std::sqrt(dx * dx + dy * dy);
        if (!(r > 0)) continue;
        const double nx = dx / r, ny = dy / r;
        const double approach = (ui - vel_(j, 0)) * nx + (vi - vel_(j, 1)) * ny;
        if (approach > 0) {
          ui -= f * approach * nx;
          vi -= f * approach * ny;
          any = true;
        }
      }
      if (any) {
        vel_tmp_(ii, 0) = ui;
        vel_tmp_(ii, 1) = vi;
        hit[i] = 1;
      }
    }
  });
  // Applied, with the largest squared displacement from r^n (in pos_tmp_) on the way.
  return parallel_reduce(
      nf_, kGrain * 4, 0.0,
      [&](std::size_t b0, std::size_t b1) {
        double moved2 = 0;
        for (std::size_t i = b0; i < b1; ++i) {
          const Eigen::Index ii = static_cast<Eigen::Index>(i);
          if (hit[i]) {
            pos_(ii, 0) += (vel_tmp_(ii, 0) - vel_(ii, 0)) * dt;
            pos_(ii, 1) += (vel_tmp_(ii, 1) - vel_(ii, 1)) * dt;
            vel_(ii, 0) = vel_tmp_(ii, 0);
            vel_(ii, 1) = vel_tmp_(ii, 1);
          }
          moved2 = std::max(moved2, (pos_.row(ii) - pos_tmp_.row(ii)).squaredNorm());
        }
        return moved2;
      },
      [](double x, double y) { return std::max(x, y); });
}

void MpsSolver::number_density() {
  // Fluid rows: number density, and the compact pair lists at the temporary positions (stored in
  // the slots of list_, so rows fill in parallel): Laplacian pairs and gradient pairs.
  const double rd2 = re_d_ * re_d_, rl2 = re_l_ * re_l_;
  const std::size_t cap = list_.index.size();
  lap_.offset = list_.offset;
  lap_.index.resize(cap);
  lap_w_.resize(cap);
  lap_count_.resize(nf_);
  grad_.offset = list_.offset;
  grad_.index.resize(cap);
  grad_x_.resize(cap);
  grad_y_.resize(cap);
  grad_count_.resize(nf_);
  if (params_.gradient_correction) correction_.resize(static_cast<Eigen::Index>(nf_), 3);
  // The velocity divergence enters only the mixed source term; with the density source (the
  // default) its two velocity loads and four flops per candidate are a tenth of this loop.
  const double* vel = params_.source_term == SourceTerm::Mixed ? vel_.data() : nullptr;
  parallel_for(nf_, kGrain, [&](std::size_t b0, std::size_t b1) {
    for (std::size_t i = b0; i < b1; ++i) {
      const Eigen::Index ii = static_cast<Eigen::Index>(i);
      const double xi = pos_(ii, 0), yi = pos_(ii, 1);
      const int base = list_.begin(i), len = list_.end(i) - base;
      const std::size_t b = static_cast<std::size_t>(base);
      const DensitySums sums = density_pairs(
          simd_level(), pos_.data(), list_.index.data() + b, solid_.data(), len, xi, yi, re_d_,
          re_l_, rd2, rl2, vel, vel_(ii, 0), vel_(ii, 1), grad_.index.data() + b,
          grad_x_.data() + b, grad_y_.data() + b, lap_.index.data() + b, lap_w_.data() + b);
      density_[ii] = sums.n;
      divergence_[ii] = kDim / kd_.n0 * sums.div;
      if (params_.gradient_correction) {
        // C_i = [(d/n0) Σ_j w r_ij ⊗ r_ij / |r_ij|²]⁻¹ makes the gradient exact for linear fields
        // on any particle arrangement (Khayyer & Gotoh 2011, eq. 14). C_i = I on a perfect
        // lattice. Where the neighbourhood is sparse or one-sided (splashes, the free surface)
        // the moment matrix is near singular and its inverse would amplify the gradient: below a
        // smallest eigenvalue of 1/2 (at most 2x amplification) the plain gradient is kept.
        const double scale = kDim / kd_.n0;
        const double cxx = sums.cxx * scale, cxy = sums.cxy * scale, cyy = sums.cyy * scale;
        const double det = cxx * cyy - cxy * cxy;
        const double lmin =
            0.5 * (cxx + cyy) - std::sqrt(0.25 * (cxx - cyy) * (cxx - cyy) + cxy * cxy);
        if (lmin > kMinCorrectionEigenvalue) {
          correction_(ii, 0) = cyy / det;
          correction_(ii, 1) = -cxy / det;
          correction_(ii, 2) = cxx / det;
        } else {
          correction_.row(ii) << 1.0, 0.0, 1.0;
        }
      }
      lap_count_[i] = sums.lap;
      grad_count_[i] = sums.grad;
    }
  });

  // Wall rows: fluid neighbours by transposing the fluid lists (in increasing fluid index), in
  // parallel over fixed chunks of fluid rows: each chunk counts its pairs per wall, and the
  // chunks' slots in a wall's list follow in chunk order. A list holds the fluid neighbours and
  // then the boundary ones (rebuild_neighbors searches the fluid grid first; boundary indices
  // follow the fluid's), so a particle's wall pairs are the end of its Laplacian pairs: found
  // from the end, without reading the rest (a scan of every pair was 4 % of the step).
  const std::size_t grain = kGrain * 4, chunks = (nf_ + grain - 1) / grain;
  std::vector<int> slot(chunks * nb_, 0);  // chunk c, wall k: count, then first slot
  const int nf = static_cast<int>(nf_);
  auto for_each_wall_pair = [&](std::size_t c, auto&& f) {
    for (std::size_t i = c * grain; i < std::min(nf_, (c + 1) * grain); ++i) {
      const int e0 = lap_.begin(i), e1 = e0 + lap_count_[i];
      int e = e1;
      while (e > e0 && lap_.index[static_cast<std::size_t>(e - 1)] >= nf) --e;
      for (; e < e1; ++e)
        f(i, static_cast<std::size_t>(lap_.index[static_cast<std::size_t>(e)] - nf), e);
    }
  };
  parallel_for(chunks, 1, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c)
      for_each_wall_pair(c, [&](std::size_t, std::size_t k, int) { ++slot[c * nb_ + k]; });
  });
  wall_fluid_.offset.assign(nb_ + 1, 0);
  for (std::size_t k = 0; k < nb_; ++k) {
    int next = wall_fluid_.offset[k];
    for (std::size_t c = 0; c < chunks; ++c) {
      const int n = slot[c * nb_ + k];
      slot[c * nb_ + k] = next;
      next += n;
    }
    wall_fluid_.offset[k + 1] = next;
  }
  wall_fluid_.index.resize(static_cast<std::size_t>(wall_fluid_.offset[nb_]));
  wall_fluid_w_.resize(wall_fluid_.index.size());
  parallel_for(chunks, 1, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c)
      for_each_wall_pair(c, [&](std::size_t i, std::size_t k, int e) {
        const std::size_t s = static_cast<std::size_t>(slot[c * nb_ + k]++);
        wall_fluid_.index[s] = static_cast<int>(i);
        wall_fluid_w_[s] = lap_w_[static_cast<std::size_t>(e)];
      });
  });
  // Density of wet walls: static part + fluid neighbours within r_e(density).
  parallel_for(nb_, kGrain, [&](std::size_t b0, std::size_t b1) {
    for (std::size_t k = b0; k < b1; ++k) {
      const Eigen::Index w = static_cast<Eigen::Index>(nf_ + k);
      double n = static_density_[static_cast<Eigen::Index>(k)], div = 0;
      for (int e = wall_fluid_.begin(k); e < wall_fluid_.end(k); ++e) {
        const int i = wall_fluid_.index[static_cast<std::size_t>(e)];
        const double dx = pos_(i, 0) - pos_(w, 0), dy = pos_(i, 1) - pos_(w, 1);
        const double r2 = dx * dx + dy * dy;
        if (r2 < rd2) {
          const double wt = re_d_ / std::sqrt(r2) - 1.0;
          n += wt;
          div += (vel_(i, 0) * dx + vel_(i, 1) * dy) * wt / r2;
        }
      }
      density_[w] = n;
      divergence_[w] = kDim / kd_.n0 * div;
    }
  });
}

StepResult MpsSolver::solve_pressure(double dt) {
  StepResult res;
  const double n0 = kd_.n0;
  const double threshold = params_.surface_threshold * n0;
  const double a = 2.0 * kDim / (kl_.n0 * kl_.lambda) / params_.density;
  const double diag_extra = params_.compressibility / (dt * dt);
  const bool mixed = params_.source_term == SourceTerm::Mixed;
  const double src = params_.relaxation / (n0 * dt * dt);
  const double div_coef = mixed ? 1.0 / dt : 0.0;

  // Unknowns: inner fluid particles, then inner wet wall particles (walls with fluid within
  // r_e(Laplacian)); everything else has p = 0 (free surface, dry walls, dummies).
  row_particle_.clear();
  for (std::size_t i = 0; i < nf_; ++i) {
    unknown_[i] = -1;
    if (density_[static_cast<Eigen::Index>(i)] >= threshold) {
      unknown_[i] = static_cast<int>(row_particle_.size());
      row_particle_.push_back(static_cast<int>(i));
    }
  }
  for (std::size_t k = 0; k < nb_; ++k) {
    const std::size_t w = nf_ + k;
    unknown_[w] = -1;
    if (type_[w] == ParticleType::Wall && wall_fluid_.end(k) > wall_fluid_.begin(k) &&
        density_[static_cast<Eigen::Index>(w)] >= threshold) {
      unknown_[w] = static_cast<int>(row_particle_.size());
      row_particle_.push_back(static_cast<int>(w));
    }
  }
  const std::size_t m = row_particle_.size();
  res.unknowns = static_cast<int>(m);

  // Row lengths, then the rows (columns sorted: neighbour lists are in increasing index order).
  std::vector<int> outer(m + 1, 0);
  parallel_for(m, kGrain, [&](std::size_t b0, std::size_t b1) {
    for (std::size_t r = b0; r < b1; ++r) {
      const std::size_t p = static_cast<std::size_t>(row_particle_[r]);
      int count = 1;
      if (p < nf_) {
        for (int e = lap_.begin(p), e1 = e + lap_count_[p]; e < e1; ++e)
          count += unknown_[static_cast<std::size_t>(lap_.index[static_cast<std::size_t>(e)])] >= 0;
      } else {
        const std::size_t k = p - nf_;
        for (int e = wall_fluid_.begin(k); e < wall_fluid_.end(k); ++e)
          count +=
              unknown_[static_cast<std::size_t>(wall_fluid_.index[static_cast<std::size_t>(e)])] >=
              0;
        for (int e = wall_wall_.begin(k); e < wall_wall_.end(k); ++e)
          count +=
              unknown_[static_cast<std::size_t>(wall_wall_.index[static_cast<std::size_t>(e)])] >=
              0;
      }
      outer[r + 1] = count;
    }
  });
  for (std::size_t r = 0; r < m; ++r) outer[r + 1] += outer[r];
  const int nnz = outer[m];
  A_.resize(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(m));
  A_.data().resize(nnz);
  std::copy(outer.begin(), outer.end(), A_.outerIndexPtr());
  int* inner = A_.innerIndexPtr();
  double* val = A_.valuePtr();
  b_.resize(static_cast<Eigen::Index>(m));
  x_.resize(static_cast<Eigen::Index>(m));
  // A NaN or infinity (coincident particles, a NaN velocity) must not reach the factorisation.
  // Every weight is positive (or NaN), so the diagonal, which sums them all, is finite exactly when
  // the row is: the assembly returns the first row that is not.
  const std::size_t bad_row = parallel_reduce(
      m, kGrain, m,
      [&](std::size_t b0, std::size_t b1) {
        std::size_t first_bad = m;
        for (std::size_t r = b0; r < b1; ++r) {
          const std::size_t p = static_cast<std::size_t>(row_particle_[r]);
          int e_out = outer[r];
          int diag_slot = -1;
          double diag = diag_extra;
          auto add = [&](int j, double w) {
            const double c = a * w;
            diag += c;
            const int col = unknown_[static_cast<std::size_t>(j)];
            if (col < 0) return;
            if (diag_slot < 0 && col > static_cast<int>(r)) diag_slot = e_out++;
            inner[e_out] = col;
            val[e_out] = -c;
            ++e_out;
          };
          if (p < nf_) {
            for (int e = lap_.begin(p), e1 = e + lap_count_[p]; e < e1; ++e)
              add(lap_.index[static_cast<std::size_t>(e)], lap_w_[static_cast<std::size_t>(e)]);
          } else {
            const std::size_t k = p - nf_;
            for (int e = wall_fluid_.begin(k); e < wall_fluid_.end(k); ++e)
              add(wall_fluid_.index[static_cast<std::size_t>(e)],
                  wall_fluid_w_[static_cast<std::size_t>(e)]);
            for (int e = wall_wall_.begin(k); e < wall_wall_.end(k); ++e)
              add(wall_wall_.index[static_cast<std::size_t>(e)],
                  wall_wall_w_[static_cast<std::size_t>(e)]);
          }
          if (diag_slot < 0) diag_slot = e_out++;
          inner[diag_slot] = static_cast<int>(r);
          val[diag_slot] = diag;
          const Eigen::Index ri = static_cast<Eigen::Index>(r);
          const Eigen::Index pi = static_cast<Eigen::Index>(p);
          b_[ri] = src * (density_[pi] - n0) - div_coef * divergence_[pi];
          x_[ri] = pressure_[static_cast<Eigen::Index>(p)];  // warm start
          if (first_bad == m && !(std::isfinite(diag) && std::isfinite(b_[ri]))) first_bad = r;
        }
        return first_bad;
      },
      [](std::size_t x, std::size_t y) { return std::min(x, y); });
  if (bad_row < m) {
    const int bp = row_particle_[bad_row];
    res.status = StepStatus::NonFinite;
    res.particle = bp < static_cast<int>(nf_) ? id_[static_cast<std::size_t>(bp)] : -1;
    res.position = pos_.row(bp).transpose();
    res.speed = vel_.row(bp).norm();
    pressure_.setZero();
    return res;
  }
  ppe_.compute(A_);
  const PpeSolver::Result pr =
      ppe_.solve(b_, x_, params_.ppe_tolerance, params_.ppe_max_iterations);
  res.iterations = pr.iterations;
  res.residual = pr.residual;
  pressure_.setZero();
  for (std::size_t r = 0; r < m; ++r)
    pressure_[row_particle_[r]] = std::max(0.0, x_[static_cast<Eigen::Index>(r)]);
  if (!pr.converged) res.status = StepStatus::PpeNotConverged;
  return res;
}

void MpsSolver::correct(double dt) {
  const double coef = -dt / params_.density * kDim / kd_.n0;
  parallel_for(nf_, kGrain, [&](std::size_t b0, std::size_t b1) {
    for (std::size_t i = b0; i < b1; ++i) {
      const Eigen::Index ii = static_cast<Eigen::Index>(i);
      const int e0 = grad_.begin(i), e1 = e0 + grad_count_[i];
      double pmin = pressure_[ii];
      for (int e = e0; e < e1; ++e)
        pmin = std::min(pmin, pressure_[grad_.index[static_cast<std::size_t>(e)]]);
      double gx = 0, gy = 0;
      for (int e = e0; e < e1; ++e) {
        const std::size_t s = static_cast<std::size_t>(e);
        const double dp = pressure_[grad_.index[s]] - pmin;
        gx += dp * grad_x_[s];
        gy += dp * grad_y_[s];
      }
      if (params_.gradient_correction) {
        const double hx = correction_(ii, 0) * gx + correction_(ii, 1) * gy;
        const double hy = correction_(ii, 1) * gx + correction_(ii, 2) * gy;
        gx = hx;
        gy = hy;
      }
      const double du = coef * gx, dv = coef * gy;
      vel_(ii, 0) += du;
      vel_(ii, 1) += dv;
      pos_(ii, 0) += dt * du;
      pos_(ii, 1) += dt * dv;
    }
  });
}

StepResult MpsSolver::finish_step(double dt) {
  // One pass, one deterministic reduction. Fluid particles that slipped into a wall (between two
  // wall particles, where neither the wall pressure nor the collision model holds them) are put
  // back just inside the water and lose their velocity into the wall (restitution as in the
  // collision model); particles deeper than leak_depth are left to be reported. Then the checks:
  // the first (lowest given index) non-finite particle, the first leaked particle, and the
  // fastest particle (ties: lowest index). Each particle's own state only is read and written, so
  // the pass gives the same result as the two in sequence.
  struct Acc {
    int nonfinite = -1, leaked = -1, fastest = -1;
    double vmax2 = -1;
  };
  const double leak = params_.leak_depth * l0_;
  const double e = params_.restitution;
  auto better_id = [&](int a, int b) {  // by given index
    if (a < 0) return b;
    if (b < 0) return a;
    return id_[static_cast<std::size_t>(a)] < id_[static_cast<std::size_t>(b)] ? a : b;
  };
  const Acc acc = parallel_reduce(
      nf_, kGrain, Acc{},
      [&](std::size_t b0, std::size_t b1) {
        Acc a;
        for (std::size_t i = b0; i < b1; ++i) {
          const Eigen::Index ii = static_cast<Eigen::Index>(i);
          const int k = static_cast<int>(i);
          Eigen::Vector2d p = pos_.row(ii).transpose();
          if (!p.allFinite()) {
            a.nonfinite = better_id(a.nonfinite, k);
            continue;
          }
          bool inside = tank_.contains(p);
          Eigen::Vector2d q;
          if (!inside && tank_.nearest_wet_point(p, leak, q)) {
            const double d = (q - p).norm();
            if (d > 0) {
              const Eigen::Vector2d n = (q - p) / d;  // into the water
              p = q + kPushBack * l0_ * n;
              pos_.row(ii) = p.transpose();
              const double vn = vel_.row(ii).dot(n.transpose());
              if (vn < 0) vel_.row(ii) -= (1.0 + e) * vn * n.transpose();
              inside = tank_.contains(p);
            }
          }
          const double v2 = vel_.row(ii).squaredNorm();
          if (!std::isfinite(v2) || !std::isfinite(pressure_[ii])) {
            a.nonfinite = better_id(a.nonfinite, k);
            continue;
          }
          if (v2 > a.vmax2 || (v2 == a.vmax2 && better_id(a.fastest, k) == k)) {
            a.vmax2 = v2;
            a.fastest = k;
          }
          if (!inside && tank_.depth(p, tank_.depth_search()) > leak)
            a.leaked = better_id(a.leaked, k);
        }
        return a;
      },
      [&](Acc x, const Acc& y) {
        x.nonfinite = better_id(x.nonfinite, y.nonfinite);
        x.leaked = better_id(x.leaked, y.leaked);
        if (y.vmax2 > x.vmax2 ||
            (y.vmax2 == x.vmax2 && better_id(x.fastest, y.fastest) == y.fastest)) {
          x.vmax2 = y.vmax2;
          x.fastest = y.fastest;
        }
        return x;
      });
  // The next stable_time_step() needs the largest speed of these velocities (non-finite ones
  // end the simulation).
  vmax2_ = std::max(acc.vmax2, 0.0);
  StepResult r;
  r.dt = dt;
  r.courant = acc.vmax2 > 0 ? std::sqrt(acc.vmax2) * dt / l0_ : 0.0;
  int bad = -1;
  if (acc.nonfinite >= 0) {
    r.status = StepStatus::NonFinite;
    bad = acc.nonfinite;
  } else if (acc.leaked >= 0) {
    r.status = StepStatus::LeftTank;
    bad = acc.leaked;
  } else if (r.courant > params_.courant_max) {
    r.status = StepStatus::CourantExceeded;
    bad = acc.fastest;
  }
  if (bad >= 0) {
    r.particle = id_[static_cast<std::size_t>(bad)];
    r.position = pos_.row(bad).transpose();
    r.speed = vel_.row(bad).norm();
    r.over_rim =
        r.status == StepStatus::LeftTank && tank_.shape().open_top && r.position.y() > tank_.rim();
  }
  return r;
}

double MpsSolver::stable_time_step() const {
  if (params_.time_step == TimeStepMode::Fixed) return params_.dt;
  // After a step its final pass has the largest speed; before the first, one pass finds it.
  const double vmax2 =
      vmax2_ >= 0 ? vmax2_
                  : parallel_reduce(
                        nf_, kGrain * 4, 0.0,
                        [&](std::size_t b0, std::size_t b1) {
                          double m = 0;
                          for (std::size_t i = b0; i < b1; ++i)
                            m = std::max(m, vel_.row(static_cast<Eigen::Index>(i)).squaredNorm());
                          return m;
                        },
                        [](double x, double y) { return std::max(x, y); });
  const double vmax = std::sqrt(vmax2);
  return vmax > 0 ? std::min(params_.dt, params_.courant * l0_ / vmax) : params_.dt;
}

StepResult MpsSolver::step(double dt) {
  DATADYN_CHECK(dt > 0);
  auto t0 = Clock::now();
  rebuild_neighbors();
  auto t1 = Clock::now();
  timing_.neighbors += std::chrono::duration<double>(t1 - t0).count();

  explicit_step(dt);
  // Rebuild if anyone moved more than half the skin.
  const double half_skin2 = 0.0625 * l0_ * l0_;
  const double moved2 = collide(dt);
  auto t2 = Clock::now();
  timing_.other += std::chrono::duration<double>(t2 - t1).count();
  if (moved2 > half_skin2) rebuild_neighbors();
  auto t3 = Clock::now();
  timing_.neighbors += std::chrono::duration<double>(t3 - t2).count();

  number_density();
  auto t4 = Clock::now();
  timing_.other += std::chrono::duration<double>(t4 - t3).count();

  StepResult pr = solve_pressure(dt);
  auto t5 = Clock::now();
  timing_.ppe += std::chrono::duration<double>(t5 - t4).count();
  timing_.ppe_iterations += pr.iterations;

  correct(dt);
  time_ += dt;
  StepResult r = finish_step(dt);
  r.iterations = pr.iterations;
  r.residual = pr.residual;
  r.unknowns = pr.unknowns;
  if (pr.status == StepStatus::NonFinite ||
      (r.status == StepStatus::Ok && pr.status != StepStatus::Ok)) {
    r.status = pr.status;
    r.particle = pr.particle;
    r.position = pr.position;
    r.speed = pr.speed;
  }
  timing_.other += seconds_since(t5);
  ++timing_.steps;
  return r;
}

void MpsSolver::fluid_positions(Points2& out) const {
  out.resize(static_cast<Eigen::Index>(nf_), 2);
  for (std::size_t i = 0; i < nf_; ++i) out.row(id_[i]) = pos_.row(static_cast<Eigen::Index>(i));
}

void MpsSolver::fluid_velocities(Points2& out) const {
  out.resize(static_cast<Eigen::Index>(nf_), 2);
  for (std::size_t i = 0; i < nf_; ++i) out.row(id_[i]) = vel_.row(static_cast<Eigen::Index>(i));
}

void MpsSolver::fluid_pressures(Eigen::VectorXd& out) const {
  out.resize(static_cast<Eigen::Index>(nf_));
  for (std::size_t i = 0; i < nf_; ++i) out[id_[i]] = pressure_[static_cast<Eigen::Index>(i)];
}

void MpsSolver::fluid_number_density(Eigen::VectorXd& out) const {
  out.resize(static_cast<Eigen::Index>(nf_));
  for (std::size_t i = 0; i < nf_; ++i) out[id_[i]] = density_[static_cast<Eigen::Index>(i)];
}

}  // namespace datadyn::fluid
