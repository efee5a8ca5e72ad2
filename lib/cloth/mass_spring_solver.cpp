#include "cloth/mass_spring_solver.hpp"

#include <cmath>

#include <Eigen/Geometry>

#include "core/check.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"

namespace datadyn::cloth {

MassSpringSolver::MassSpringSolver(const ClothParams& params)
    : params_(params),
      springs_(grid_springs(params)),
      pins_(pinned_particles(params)),
      triangles_(grid_triangles(params)) {
  DATADYN_CHECK_GE(params.nx, 2);
  DATADYN_CHECK_GE(params.ny, 2);
  DATADYN_CHECK_GT(params.mass, 0.0);
  DATADYN_CHECK_GT(params.time_step, 0.0);
  const int n = params.nx * params.ny;
  x_ = rest_positions(params);
  v_ = Points3::Zero(n, 3);
  pinned_x_ = x_;
  free_of_.assign(static_cast<std::size_t>(n), 0);
  for (int p : pins_) free_of_[static_cast<std::size_t>(p)] = -1;
  for (int i = 0; i < n; ++i)
    if (free_of_[static_cast<std::size_t>(i)] >= 0) {
      free_of_[static_cast<std::size_t>(i)] = static_cast<int>(free_.size());
      free_.push_back(i);
    }

  // A = M + h^2 L restricted to the free particles; the free-pinned block moves to the RHS.
  const double h2 = params.time_step * params.time_step;
  const int nf = static_cast<int>(free_.size());
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(static_cast<std::size_t>(nf) + 4 * springs_.size());
  for (int f = 0; f < nf; ++f) triplets.emplace_back(f, f, params.mass);
  pin_rhs_ = Eigen::MatrixXd::Zero(nf, 3);
  for (const Spring& s : springs_) {
    const int fi = free_of_[static_cast<std::size_t>(s.i)];
    const int fj = free_of_[static_cast<std::size_t>(s.j)];
    const double w = h2 * s.k;
    if (fi >= 0) triplets.emplace_back(fi, fi, w);
    if (fj >= 0) triplets.emplace_back(fj, fj, w);
    if (fi >= 0 && fj >= 0) {
      triplets.emplace_back(fi, fj, -w);
      triplets.emplace_back(fj, fi, -w);
    } else if (fi >= 0) {
      pin_rhs_.row(fi) -= w * x_.row(s.j);
    } else if (fj >= 0) {
      pin_rhs_.row(fj) -= w * x_.row(s.i);
    }
  }
  Eigen::SparseMatrix<double> a(nf, nf);
  a.setFromTriplets(triplets.begin(), triplets.end());
  ldlt_.compute(a);
  if (ldlt_.info() != Eigen::Success)
    throw RunError("cloth: the system matrix M + h^2 L could not be factored");
}

void MassSpringSolver::set_state(const Points3& positions, const Points3& velocities) {
  DATADYN_CHECK_EQ(positions.rows(), x_.rows());
  DATADYN_CHECK_EQ(velocities.rows(), v_.rows());
  x_ = positions;
  v_ = velocities;
  for (int p : pins_) {
    x_.row(p) = pinned_x_.row(p);
    v_.row(p).setZero();
  }
}

Points3 MassSpringSolver::external_forces() const {
  const ClothParams& p = params_;
  Points3 f(x_.rows(), 3);
  const Eigen::RowVector3d gravity = (p.mass * p.gravity).transpose();
  for (Eigen::Index i = 0; i < f.rows(); ++i) f.row(i) = gravity;
  if (p.wind.drag > 0.0) {
    // Wejchert & Haumann 1991 per triangle: f = -c A (n.v_r)|n.v_r| n, a third to each vertex.
    const double gust = 1.0 + p.wind.gust * std::sin(2.0 * M_PI * time_ / p.wind.gust_period);
    const Eigen::Vector3d wind = gust * p.wind.velocity;
    for (Eigen::Index t = 0; t < triangles_.rows(); ++t) {
      const int a = triangles_(t, 0), b = triangles_(t, 1), c = triangles_(t, 2);
      const Eigen::Vector3d cross =
          (x_.row(b) - x_.row(a)).cross(x_.row(c) - x_.row(a)).transpose();
      const double len = cross.norm();
      if (len <= 0.0) continue;
      const Eigen::Vector3d n = cross / len;
      const double area = 0.5 * len;
      const Eigen::Vector3d vr =
          p.velocity_scale * (v_.row(a) + v_.row(b) + v_.row(c)).transpose() / 3.0 - wind;
      const double vn = n.dot(vr);
      const Eigen::RowVector3d fw = (-p.wind.drag * area * vn * std::abs(vn) / 3.0) * n.transpose();
      f.row(a) += fw;
      f.row(b) += fw;
      f.row(c) += fw;
    }
  }
  return p.force_scale * f;
}

void MassSpringSolver::project_to_colliders(Points3& x, std::vector<char>* contact) const {
  const ClothParams& p = params_;
  const double margin = p.collision_margin;
  for (int i : free_) {
    if (p.sphere.enabled) {
      const Eigen::Vector3d d = x.row(i).transpose() - p.sphere.center;
      const double r = p.sphere.radius + margin;
      const double len = d.norm();
      if (len < r) {
        const Eigen::Vector3d n = len > 0.0 ? Eigen::Vector3d(d / len) : Eigen::Vector3d::UnitY();
        x.row(i) = (p.sphere.center + r * n).transpose();
        if (contact) (*contact)[static_cast<std::size_t>(i)] |= 1;
      }
    }
    if (p.ground.enabled && x(i, 1) < p.ground.height + margin) {
      x(i, 1) = p.ground.height + margin;
      if (contact) (*contact)[static_cast<std::size_t>(i)] |= 2;
    }
  }
}

StepResult MassSpringSolver::step() {
  const ClothParams& p = params_;
  const double h = p.time_step, h2 = h * h;
  const Eigen::Index n = x_.rows();
  const Points3 f = external_forces();
  const Points3 y = x_ + h * v_ + (h2 / p.mass) * f;  // inertial target (Liu eq. 3)
  Points3 x = y;
  for (int i : pins_) x.row(i) = pinned_x_.row(i);

  const std::size_t ns = springs_.size();
  Points3 d(static_cast<Eigen::Index>(ns), 3);
  Points3 b(n, 3);
  Eigen::MatrixXd rhs(static_cast<Eigen::Index>(free_.size()), 3);
  Eigen::MatrixXd sol(rhs.rows(), 3);
  std::vector<char> contact(static_cast<std::size_t>(n), 0);
  for (int it = 0; it < p.iterations; ++it) {
    // Local step (eq. 12): each spring's preferred direction at its rest length.
    parallel_for(ns, 2048, [&](std::size_t s0, std::size_t s1) {
      for (std::size_t s = s0; s < s1; ++s) {
        const Spring& sp = springs_[s];
        const Eigen::RowVector3d e = x.row(sp.i) - x.row(sp.j);
        const double len = e.norm();
        const auto row = static_cast<Eigen::Index>(s);
        if (len > 1e-12)
          d.row(row) = (sp.rest / len) * e;
        else
          d.row(row) = sp.rest * (pinned_x_.row(sp.i) - pinned_x_.row(sp.j)).normalized();
      }
    });
    // Global step (eq. 13): M y + h^2 J d, with k_s in J.
    b = p.mass * y;
    for (std::size_t s = 0; s < ns; ++s) {
      const Spring& sp = springs_[s];
      const Eigen::RowVector3d kd = (h2 * sp.k) * d.row(static_cast<Eigen::Index>(s));
      b.row(sp.i) += kd;
      b.row(sp.j) -= kd;
    }
    for (std::size_t r = 0; r < free_.size(); ++r)
      rhs.row(static_cast<Eigen::Index>(r)) = b.row(free_[r]);
    rhs -= pin_rhs_;
    parallel_for(3, 1, [&](std::size_t c0, std::size_t c1) {
      for (std::size_t c = c0; c < c1; ++c)
        sol.col(static_cast<Eigen::Index>(c)) = ldlt_.solve(rhs.col(static_cast<Eigen::Index>(c)));
    });
    for (std::size_t r = 0; r < free_.size(); ++r)
      x.row(free_[r]) = sol.row(static_cast<Eigen::Index>(r));
    project_to_colliders(x, &contact);
  }

  Points3 v = (x - x_) / h;
  for (Eigen::Index i = 0; i < n; ++i) {
    const char c = contact[static_cast<std::size_t>(i)];
    if (c & 1) {  // remove the velocity into the sphere
      const Eigen::Vector3d nrm = (x.row(i).transpose() - p.sphere.center).normalized();
      const double vn = v.row(i).dot(nrm.transpose());
      if (vn < 0.0) v.row(i) -= vn * nrm.transpose();
    }
    if ((c & 2) && v(i, 1) < 0.0) v(i, 1) = 0.0;
  }
  v *= 1.0 - p.damping;
  for (int i : pins_) v.row(i).setZero();

  StepResult result;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!x.row(i).allFinite() || !v.row(i).allFinite() || x.row(i).cwiseAbs().maxCoeff() > 1e3) {
      result.ok = false;
      result.particle = static_cast<int>(i);
      return result;
    }
  }
  x_ = std::move(x);
  v_ = std::move(v);
  time_ += h;
  return result;
}

double MassSpringSolver::energy() const {
  const ClothParams& p = params_;
  double e = 0.5 * p.mass * v_.squaredNorm();
  for (const Spring& s : springs_) {
    const double stretch = (x_.row(s.i) - x_.row(s.j)).norm() - s.rest;
    e += 0.5 * s.k * stretch * stretch;
  }
  const Eigen::RowVector3d g = (p.force_scale * p.mass) * p.gravity.transpose();
  for (Eigen::Index i = 0; i < x_.rows(); ++i) e -= g.dot(x_.row(i));
  return e;
}

}  // namespace datadyn::cloth
