#include "cloth/mass_spring_solver.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include <Eigen/Geometry>

#include "cloth/colliders.hpp"
#include "core/check.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"

namespace datadyn::cloth {

namespace {
// Jacobi passes of self-collision after each global solve, and after the last one.
constexpr int kSelfPasses = 4;
constexpr int kSelfFinalPasses = 16;
// Thicknesses within which partners are kept from the first solve to the last.
constexpr double kSelfReach = 2.0;
// Stiffness of a contact spring, in units of the stiffest spring's. Over the collision scene at 25
// to 49 particles a side and 3 to 8 substeps (factored for the touching pairs alone), 0.3 left
// 1,492 crease crossings summed, 1 left 2,342, and at 10 layers crossed again (47 at 33 x 33).
constexpr double kContactStiffness = 0.3;
// Pairs within this many thicknesses get contact springs, so that the factor serves the steps
// after while the touching pairs stay among them.
constexpr double kContactReach = 1.2;

/// The matrix entries of a spring of weight w between rows a and b of the reduced system (-1: a
/// pinned particle, whose entries are not in it).
void add_spring_entries(std::vector<Eigen::Triplet<double>>& t, int a, int b, double w) {
  if (a >= 0) t.emplace_back(a, a, w);
  if (b >= 0) t.emplace_back(b, b, w);
  if (a >= 0 && b >= 0) {
    t.emplace_back(a, b, -w);
    t.emplace_back(b, a, -w);
  }
}
}  // namespace

MassSpringSolver::MassSpringSolver(const ClothParams& params)
    : params_(params),
      springs_(grid_springs(params)),
      pins_(pinned_particles(params)),
      triangles_(grid_triangles(params)) {
  DATADYN_CHECK_GE(params.nx, 2);
  DATADYN_CHECK_GE(params.ny, 2);
  DATADYN_CHECK_GT(params.mass, 0.0);
  DATADYN_CHECK_GT(params.time_step, 0.0);
  DATADYN_CHECK_GE(params.substeps, 1);
  if (params.self_collision.enabled) self_.emplace(params, pins_);
  const int n = params.nx * params.ny;
  x_ = rest_positions(params);
  v_ = Points3::Zero(n, 3);
  pinned_x_ = x_;
  // A particle more than a kilometre beyond the cloth's farthest start has diverged. Measured
  // from the start, not from the origin: a cloth laid out a kilometre away is not a blow-up.
  divergence_bound_ = x_.cwiseAbs().maxCoeff() + 1e3;
  std::vector<int> free_of(static_cast<std::size_t>(n), 0);  // particle -> reduced row, -1: pinned
  for (int p : pins_) free_of[static_cast<std::size_t>(p)] = -1;
  for (int i = 0; i < n; ++i)
    if (free_of[static_cast<std::size_t>(i)] >= 0) {
      free_of[static_cast<std::size_t>(i)] = static_cast<int>(free_.size());
      free_.push_back(i);
    }

  // A = M + h^2 L restricted to the free particles; the free-pinned block moves to the RHS.
  const double h = step_length(), h2 = h * h;
  const int nf = static_cast<int>(free_.size());
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(static_cast<std::size_t>(nf) + 4 * springs_.size());
  for (int f = 0; f < nf; ++f) triplets.emplace_back(f, f, params.mass);
  ThreeColumns pin_rhs = ThreeColumns::Zero(nf, 3);
  spring_weight_.resize(springs_.size());
  for (std::size_t k = 0; k < springs_.size(); ++k) {
    const Spring& s = springs_[k];
    const int fi = free_of[static_cast<std::size_t>(s.i)];
    const int fj = free_of[static_cast<std::size_t>(s.j)];
    const double w = h2 * s.k;
    spring_weight_[k] = w;
    add_spring_entries(triplets, fi, fj, w);
    // A pinned end's entry moves to the right-hand side.
    if (fi >= 0 && fj < 0) pin_rhs.row(fi) -= w * x_.row(s.j);
    if (fj >= 0 && fi < 0) pin_rhs.row(fj) -= w * x_.row(s.i);
  }
  Eigen::SparseMatrix<double> a(nf, nf);
  a.setFromTriplets(triplets.begin(), triplets.end());
  if (!system_.compute(a))
    throw RunError("cloth: the system matrix M + h^2 L could not be factored");

  // Everything per row of the system is kept in the factor's (fill-reducing) row order.
  const Eigen::VectorXi& perm = system_.permuted_row();
  row_particle_.assign(free_.size(), 0);
  pin_rhs_.resize(nf, 3);
  for (int f = 0; f < nf; ++f) {
    row_particle_[static_cast<std::size_t>(perm[f])] = free_[static_cast<std::size_t>(f)];
    pin_rhs_.row(perm[f]) = pin_rhs.row(f);
  }
  std::vector<int> count(static_cast<std::size_t>(nf) + 1, 0);
  auto row_of = [&](int particle) {
    const int f = free_of[static_cast<std::size_t>(particle)];
    return f < 0 ? -1 : perm[f];
  };
  if (self_) {
    particle_row_.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) particle_row_[static_cast<std::size_t>(i)] = row_of(i);
    std::vector<Eigen::Triplet<double>> permuted;
    permuted.reserve(triplets.size());
    for (const auto& t : triplets) permuted.emplace_back(perm[t.row()], perm[t.col()], t.value());
    permuted_matrix_.resize(nf, nf);
    permuted_matrix_.setFromTriplets(permuted.begin(), permuted.end());
    double stiffest = 0.0;
    for (const Spring& s : springs_) stiffest = std::max(stiffest, s.k);
    contact_weight_ = h2 * kContactStiffness * stiffest;
  }
  for (const Spring& s : springs_)
    for (int r : {row_of(s.i), row_of(s.j)})
      if (r >= 0) ++count[static_cast<std::size_t>(r) + 1];
  for (std::size_t r = 0; r < static_cast<std::size_t>(nf); ++r) count[r + 1] += count[r];
  incident_start_ = count;
  incident_.resize(static_cast<std::size_t>(count.back()));
  for (std::size_t k = 0; k < springs_.size(); ++k) {
    const int ri = row_of(springs_[k].i), rj = row_of(springs_[k].j);
    if (ri >= 0)
      incident_[static_cast<std::size_t>(count[static_cast<std::size_t>(ri)]++)] =
          static_cast<int>(2 * k);
    if (rj >= 0)
      incident_[static_cast<std::size_t>(count[static_cast<std::size_t>(rj)]++)] =
          static_cast<int>(2 * k + 1);
  }
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
  if (p.wind.drag > 0.0 || p.wind.drag_tangent > 0.0) {
    // Wejchert & Haumann 1991 per triangle, a third to each vertex: the normal part
    // -c A (n.v_r)|n.v_r| n and the tangential part -c_t A |v_t| v_t, v_t = v_r - (n.v_r) n.
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
      Eigen::RowVector3d fw = (-p.wind.drag * area * vn * std::abs(vn) / 3.0) * n.transpose();
      if (p.wind.drag_tangent > 0.0) {
        const Eigen::Vector3d vt = vr - vn * n;
        fw -= (p.wind.drag_tangent * area * vt.norm() / 3.0) * vt.transpose();
      }
      f.row(a) += fw;
      f.row(b) += fw;
      f.row(c) += fw;
    }
  }
  return p.force_scale * f;
}

bool MassSpringSolver::Contact::operator<(const Contact& o) const {
  return std::pair{i, j} < std::pair{o.i, o.j};
}

std::vector<MassSpringSolver::Contact> MassSpringSolver::pairs_within(
    const Points3& x, const SelfCollision::Partners& near, double distance) const {
  std::vector<Contact> found;
  const double d2 = distance * distance;
  for (std::size_t i = 0; i + 1 < near.start.size(); ++i)
    for (int k = near.start[i]; k < near.start[i + 1]; ++k) {
      const int a = static_cast<int>(i), b = near.partner[static_cast<std::size_t>(k)];
      if (b < a || (x.row(a) - x.row(b)).squaredNorm() >= d2) continue;
      const int ra = particle_row_[i], rb = particle_row_[static_cast<std::size_t>(b)];
      if (ra >= 0 || rb >= 0) found.push_back({a, b, ra, rb});
    }
  std::sort(found.begin(), found.end());
  return found;
}

const MassSpringSolver::ContactLdlt* MassSpringSolver::contact_system(
    const Points3& x, const SelfCollision::Partners& near) {
  const std::vector<Contact> touching = pairs_within(x, near, self_->thickness());
  if (touching.empty()) return nullptr;
  if (contact_factor_ &&
      std::includes(contacts_.begin(), contacts_.end(), touching.begin(), touching.end()))
    return contact_factor_.get();
  contacts_ = pairs_within(x, near, kContactReach * self_->thickness());
  std::vector<Eigen::Triplet<double>> extra;
  for (const Contact& c : contacts_) add_spring_entries(extra, c.ri, c.rj, contact_weight_);
  Eigen::SparseMatrix<double> add(permuted_matrix_.rows(), permuted_matrix_.cols());
  add.setFromTriplets(extra.begin(), extra.end());
  auto ldlt = std::make_shared<ContactLdlt>();
  if (!ldlt->compute(permuted_matrix_ + add))
    throw RunError("cloth: the system matrix with contact springs could not be factored");
  contact_factor_ = std::move(ldlt);
  return contact_factor_.get();
}

void MassSpringSolver::add_contact_terms(const std::vector<Contact>& contacts, const Points3& x,
                                         ThreeColumns& rhs) const {
  // Local step of a contact: the pair's offset if the two are a thickness apart or more (no
  // force), else the offset stretched to the thickness.
  const double t = self_->thickness(), w = contact_weight_;
  for (const Contact& c : contacts) {
    const Eigen::RowVector3d e = x.row(c.i) - x.row(c.j);
    const double len = e.norm();
    Eigen::RowVector3d d = e;
    if (len < t)
      d = len > 1e-12 * t
              ? Eigen::RowVector3d((t / len) * e)
              : Eigen::RowVector3d(t * (pinned_x_.row(c.i) - pinned_x_.row(c.j)).normalized());
    if (c.ri >= 0) rhs.row(c.ri) += w * (c.rj >= 0 ? d : Eigen::RowVector3d(d + x.row(c.j)));
    if (c.rj >= 0) rhs.row(c.rj) -= w * (c.ri >= 0 ? d : Eigen::RowVector3d(d - x.row(c.i)));
  }
}

StepResult MassSpringSolver::step() {
  const ClothParams& p = params_;
  const double h = step_length(), h2 = h * h;
  const Eigen::Index n = x_.rows();
  const Points3 f = external_forces();
  const Points3 y = x_ + h * v_ + (h2 / p.mass) * f;  // inertial target (Liu eq. 3)
  Points3 x = y;
  for (int i : pins_) x.row(i) = pinned_x_.row(i);

  const std::size_t ns = springs_.size();
  const std::size_t nf = row_particle_.size();
  Points3 d(static_cast<Eigen::Index>(ns), 3);
  const bool admm = p.solver == Integrator::Admm;
  Points3 u = admm ? Points3::Zero(static_cast<Eigen::Index>(ns), 3) : Points3();
  ThreeColumns rhs(static_cast<Eigen::Index>(nf), 3);
  std::vector<char> contact(static_cast<std::size_t>(n), 0);
  SelfCollision::Partners near;
  const ContactLdlt* with_contacts = nullptr;
  for (int it = 0; it < p.iterations; ++it) {
    // Local step (Liu eq. 12): each spring's direction at its rest length; or ADMM's proximal
    // point and dual update (see the header).
    parallel_for(ns, 2048, [&](std::size_t s0, std::size_t s1) {
      for (std::size_t s = s0; s < s1; ++s) {
        const Spring& sp = springs_[s];
        const auto row = static_cast<Eigen::Index>(s);
        const Eigen::RowVector3d e = x.row(sp.i) - x.row(sp.j);
        const Eigen::RowVector3d v = admm ? Eigen::RowVector3d(e + u.row(row)) : e;
        const double len = v.norm();
        // (r / |v|) v: a zero-length spring takes its rest direction.
        const Eigen::RowVector3d at_rest =
            len > 1e-12 ? Eigen::RowVector3d((sp.rest / len) * v)
                        : Eigen::RowVector3d(
                              sp.rest * (pinned_x_.row(sp.i) - pinned_x_.row(sp.j)).normalized());
        if (!admm) {
          d.row(row) = at_rest;
          continue;
        }
        const Eigen::RowVector3d z = 0.5 * (at_rest + v);  // length (r + |v|) / 2 along v
        u.row(row) += e - z;
        d.row(row) = z - u.row(row);
      }
    });
    // Global step (eq. 13): M y + h^2 J d (k_s in J) minus the pinned columns, per system row,
    // the springs of a particle summed in spring order.
    parallel_for(nf, 512, [&](std::size_t r0, std::size_t r1) {
      for (std::size_t r = r0; r < r1; ++r) {
        Eigen::RowVector3d b = p.mass * y.row(row_particle_[r]);
        for (int e = incident_start_[r]; e < incident_start_[r + 1]; ++e) {
          const int code = incident_[static_cast<std::size_t>(e)];
          const auto s = static_cast<std::size_t>(code >> 1);
          const Eigen::RowVector3d kd = spring_weight_[s] * d.row(static_cast<Eigen::Index>(s));
          if (code & 1)
            b -= kd;
          else
            b += kd;
        }
        rhs.row(static_cast<Eigen::Index>(r)) = b - pin_rhs_.row(static_cast<Eigen::Index>(r));
      }
    });
    if (with_contacts) {
      add_contact_terms(contacts_, x, rhs);
      rhs = with_contacts->solve(rhs);
    } else {
      system_.solve_permuted(rhs);
    }
    for (std::size_t r = 0; r < nf; ++r)
      x.row(row_particle_[r]) = rhs.row(static_cast<Eigen::Index>(r));
    project_to_colliders(p, x, free_, &contact);
    if (self_) {
      // Partners are found after the first solve, within kSelfReach thicknesses, and again
      // after the last one.
      const bool last = it + 1 == p.iterations;
      if (it == 0 || last)
        near = self_->partners(x, (last ? SelfCollision::kReach : kSelfReach) * self_->thickness());
      if (it == 0 && !last) with_contacts = contact_system(x, near);
      // Projected again only if moved: a second projection is not exactly idempotent.
      if (self_->separate(x, contact, near, last ? kSelfFinalPasses : kSelfPasses).passes > 0)
        project_to_colliders(p, x, free_, &contact);
    }
  }

  Points3 v = (x - x_) / h;
  for (Eigen::Index i = 0; i < n; ++i) {
    const char c = contact[static_cast<std::size_t>(i)];
    if (c & kOnSphere) {  // remove the velocity into the sphere
      const Eigen::Vector3d nrm = (x.row(i).transpose() - p.sphere.center).normalized();
      const double vn = v.row(i).dot(nrm.transpose());
      if (vn < 0.0) v.row(i) -= vn * nrm.transpose();
    }
    if ((c & kOnGround) && v(i, 1) < 0.0) v(i, 1) = 0.0;
  }
  // damping is per frame: each of its substeps keeps the substeps-th root of 1 - damping.
  v *= p.substeps == 1 ? 1.0 - p.damping : std::pow(1.0 - p.damping, 1.0 / p.substeps);
  for (int i : pins_) v.row(i).setZero();

  StepResult result;
  result.motion = std::sqrt((x - x_).rowwise().squaredNorm().maxCoeff());
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!x.row(i).allFinite() || !v.row(i).allFinite() ||
        x.row(i).cwiseAbs().maxCoeff() > divergence_bound_) {
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

StepResult MassSpringSolver::advance_frame() {
  StepResult r;
  double motion = 0.0;
  for (int s = 0; s < params_.substeps && r.ok; ++s) {
    r = step();
    motion = std::max(motion, r.motion);
  }
  r.motion = motion;
  return r;
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
