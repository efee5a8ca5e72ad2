#include "flesh/flesh_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include <Eigen/Dense>
#include <Eigen/SparseCholesky>

#include "core/check.hpp"
#include "core/errors.hpp"
#include "core/lattice.hpp"
#include "core/mesh_topology.hpp"
#include "core/parallel.hpp"
#include "core/polar_decomposition.hpp"
#include "core/tet_gradients.hpp"
#include "flesh/neo_hookean.hpp"

namespace datadyn::flesh {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>;

/// One backward Euler step (minimising inertia + elastic energy - gravity work, with the
/// pinned vertices held at x's values) or, without `predicted`, a quasistatic solve. x in place.
class BodySolver {
 public:
  virtual ~BodySolver() = default;
  virtual void solve(RowMatrix& x, const RowMatrix* predicted, const Eigen::Vector3d& gravity,
                     int iterations) const = 0;
};

/// Projective dynamics for Σ μ V ||X D - R||^2 with some vertices prescribed.
class ProjectiveSolver : public BodySolver {
 public:
  ProjectiveSolver(const TetMesh& mesh, const std::vector<bool>& pinned, double mu, double density,
                   double dt)
      : mesh_(mesh), pinned_(pinned), dt_(dt) {
    const Eigen::Index V = mesh.vertices.rows(), K = mesh.tets.rows();
    D_.resize(static_cast<std::size_t>(K));
    w_.resize(static_cast<std::size_t>(K));
    mass_ = Eigen::VectorXd::Zero(V);
    std::vector<Eigen::Triplet<double>> trip;
    const TetGradients tg = tet_gradients(mesh);
    for (Eigen::Index k = 0; k < K; ++k) {
      const double vol = tg.volume(k);
      DATADYN_CHECK_GT(vol, 0.0);
      const Eigen::Matrix<double, 4, 3>& D = tg.gradient[static_cast<std::size_t>(k)];
      D_[static_cast<std::size_t>(k)] = D;
      w_[static_cast<std::size_t>(k)] = 2.0 * mu * vol;
      const Eigen::Matrix4d L = w_[static_cast<std::size_t>(k)] * D * D.transpose();
      for (int a = 0; a < 4; ++a) {
        mass_[mesh.tets(k, a)] += density * vol / 4.0;
        for (int b = 0; b < 4; ++b) trip.emplace_back(mesh.tets(k, a), mesh.tets(k, b), L(a, b));
      }
    }
    // Free vertex numbering.
    index_.assign(static_cast<std::size_t>(V), -1);
    for (Eigen::Index v = 0; v < V; ++v)
      if (!pinned_[static_cast<std::size_t>(v)]) index_[static_cast<std::size_t>(v)] = free_++;
    Eigen::SparseMatrix<double> L(V, V);
    L.setFromTriplets(trip.begin(), trip.end());
    L_ = L;
    const auto factor = [&](double inertia, Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>>& s) {
      std::vector<Eigen::Triplet<double>> t;
      for (int k = 0; k < L.outerSize(); ++k)
        for (Eigen::SparseMatrix<double>::InnerIterator it(L, k); it; ++it) {
          const int r = index_[static_cast<std::size_t>(it.row())],
                    c = index_[static_cast<std::size_t>(it.col())];
          if (r >= 0 && c >= 0) t.emplace_back(r, c, it.value());
        }
      for (Eigen::Index v = 0; v < V; ++v)
        if (index_[static_cast<std::size_t>(v)] >= 0)
          t.emplace_back(index_[static_cast<std::size_t>(v)], index_[static_cast<std::size_t>(v)],
                         inertia * mass_[v]);
      Eigen::SparseMatrix<double> A(free_, free_);
      A.setFromTriplets(t.begin(), t.end());
      s.compute(A);
      if (s.info() != Eigen::Success) throw RunError("flesh simulation: system not factorisable");
    };
    factor(1.0 / (dt * dt), dynamic_);
    factor(0.0, static_);
  }

  const Eigen::VectorXd& mass() const { return mass_; }

  /// Minimises inertia (weight 1/dt^2 towards `predicted`, or none if quasistatic) + elastic
  /// energy - gravity work, with pinned vertices at `x`'s current values. Updates x in place.
  void solve(RowMatrix& x, const RowMatrix* predicted, const Eigen::Vector3d& gravity,
             int iterations) const override {
    const Eigen::Index K = mesh_.tets.rows(), V = x.rows();
    std::vector<Eigen::Matrix<double, 3, 4>> rhs_local(static_cast<std::size_t>(K));
    for (int it = 0; it < iterations; ++it) {
      // Local step: R_t of F_t = X D, each tet's contribution w R D^T (3 by 4), in parallel.
      parallel_for(static_cast<std::size_t>(K), 256, [&](std::size_t b, std::size_t e) {
        for (std::size_t k = b; k < e; ++k) {
          Eigen::Matrix<double, 3, 4> X;
          for (int a = 0; a < 4; ++a)
            X.col(a) = x.row(mesh_.tets(static_cast<Eigen::Index>(k), a)).transpose();
          const Eigen::Matrix3d F = X * D_[k];
          const Eigen::Matrix3d R = polar_decomposition(F).R;
          rhs_local[k] = w_[k] * R * D_[k].transpose();
        }
      });
      RowMatrix rhs = RowMatrix::Zero(V, 3);
      for (Eigen::Index k = 0; k < K; ++k)
        for (int a = 0; a < 4; ++a)
          rhs.row(mesh_.tets(k, a)) += rhs_local[static_cast<std::size_t>(k)].col(a).transpose();
      for (Eigen::Index v = 0; v < V; ++v) {
        rhs.row(v) += mass_[v] * gravity.transpose();
        if (predicted) rhs.row(v) += mass_[v] / (dt_ * dt_) * predicted->row(v);
      }
      // Pinned columns move to the right-hand side.
      RowMatrix pinned_part = RowMatrix::Zero(V, 3);
      for (int k = 0; k < L_.outerSize(); ++k)
        for (Eigen::SparseMatrix<double>::InnerIterator itr(L_, k); itr; ++itr)
          if (pinned_[static_cast<std::size_t>(itr.col())] &&
              !pinned_[static_cast<std::size_t>(itr.row())])
            pinned_part.row(itr.row()) += itr.value() * x.row(itr.col());
      Eigen::MatrixXd b(free_, 3);
      for (Eigen::Index v = 0; v < V; ++v) {
        const int r = index_[static_cast<std::size_t>(v)];
        if (r >= 0) b.row(r) = rhs.row(v) - pinned_part.row(v);
      }
      const Eigen::MatrixXd sol = predicted ? dynamic_.solve(b) : static_.solve(b);
      for (Eigen::Index v = 0; v < V; ++v) {
        const int r = index_[static_cast<std::size_t>(v)];
        if (r >= 0) x.row(v) = sol.row(r);
      }
    }
  }

 private:
  const TetMesh& mesh_;
  std::vector<bool> pinned_;
  double dt_;
  std::vector<Eigen::Matrix<double, 4, 3>> D_;
  std::vector<double> w_;
  Eigen::VectorXd mass_;
  std::vector<int> index_;
  int free_ = 0;
  Eigen::SparseMatrix<double> L_;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> dynamic_, static_;
};

/// Newton's method on the stable neo-Hookean energy (neo_hookean.hpp): per-tet Hessians
/// projected to positive semi-definite, one sparse LDL^T per iteration (pattern analysed once),
/// backtracking line search on the total energy. Stops after `iterations` or when a step moves
/// no vertex by more than 1e-9 m.
class NewtonSolver : public BodySolver {
 public:
  NewtonSolver(const TetMesh& mesh, const std::vector<bool>& pinned, const Lame& lame,
               double density, double dt)
      : mesh_(mesh), pinned_(pinned), lame_(lame), dt_(dt) {
    const Eigen::Index V = mesh.vertices.rows(), K = mesh.tets.rows();
    mass_ = Eigen::VectorXd::Zero(V);
    const TetGradients tg = tet_gradients(mesh);
    for (Eigen::Index k = 0; k < K; ++k) {
      const double vol = tg.volume(k);
      DATADYN_CHECK_GT(vol, 0.0);
      D_.push_back(tg.gradient[static_cast<std::size_t>(k)]);
      vol_.push_back(vol);
      for (int a = 0; a < 4; ++a) mass_[mesh.tets(k, a)] += density * vol / 4.0;
    }
    index_.assign(static_cast<std::size_t>(V), -1);
    for (Eigen::Index v = 0; v < V; ++v)
      if (!pinned_[static_cast<std::size_t>(v)]) index_[static_cast<std::size_t>(v)] = free_++;
  }

  void solve(RowMatrix& x, const RowMatrix* predicted, const Eigen::Vector3d& gravity,
             int iterations) const override {
    const Eigen::Index V = x.rows(), K = mesh_.tets.rows(), n = 3 * free_;
    const double inertia = predicted ? 1.0 / (dt_ * dt_) : 0.0;
    std::vector<Eigen::Matrix<double, 12, 1>> g_local(static_cast<std::size_t>(K));
    std::vector<Eigen::Matrix<double, 12, 12>> H_local(static_cast<std::size_t>(K));
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt;
    bool analysed = false;
    for (int it = 0; it < iterations; ++it) {
      parallel_for(static_cast<std::size_t>(K), 256, [&](std::size_t b, std::size_t e) {
        for (std::size_t k = b; k < e; ++k) {
          const auto dens = neo_hookean_density(deformation(x, k), lame_, true);
          // vec(F) = B x_local with B(i + 3j, 3a + i) = D(a, j).
          Eigen::Matrix<double, 9, 12> B = Eigen::Matrix<double, 9, 12>::Zero();
          for (int a = 0; a < 4; ++a)
            for (int j = 0; j < 3; ++j)
              for (int i = 0; i < 3; ++i) B(i + 3 * j, 3 * a + i) = D_[k](a, j);
          Eigen::Matrix<double, 9, 1> P;
          for (int j = 0; j < 3; ++j) P.segment<3>(3 * j) = dens.P.col(j);
          g_local[k] = vol_[k] * B.transpose() * P;
          H_local[k] = vol_[k] * B.transpose() * dens.H * B;
        }
      });
      Eigen::VectorXd g = Eigen::VectorXd::Zero(n);
      std::vector<Eigen::Triplet<double>> trip;
      for (Eigen::Index k = 0; k < K; ++k)
        for (int a = 0; a < 4; ++a) {
          const int ra = index_[static_cast<std::size_t>(mesh_.tets(k, a))];
          if (ra < 0) continue;
          g.segment<3>(3 * ra) += g_local[static_cast<std::size_t>(k)].segment<3>(3 * a);
          for (int b = 0; b < 4; ++b) {
            const int rb = index_[static_cast<std::size_t>(mesh_.tets(k, b))];
            if (rb < 0) continue;
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 3; ++j)
                trip.emplace_back(3 * ra + i, 3 * rb + j,
                                  H_local[static_cast<std::size_t>(k)](3 * a + i, 3 * b + j));
          }
        }
      for (Eigen::Index v = 0; v < V; ++v) {
        const int r = index_[static_cast<std::size_t>(v)];
        if (r < 0) continue;
        Eigen::Vector3d gv = -mass_[v] * gravity;
        if (predicted) gv += mass_[v] * inertia * (x.row(v) - predicted->row(v)).transpose();
        g.segment<3>(3 * r) += gv;
        // The inertia term, and a tiny regularisation for the quasistatic solve.
        const double d = predicted ? mass_[v] * inertia : 1e-9 * mass_[v];
        for (int i = 0; i < 3; ++i) trip.emplace_back(3 * r + i, 3 * r + i, d);
      }
      Eigen::SparseMatrix<double> H(n, n);
      H.setFromTriplets(trip.begin(), trip.end());
      if (!analysed) {
        ldlt.analyzePattern(H);
        analysed = true;
      }
      ldlt.factorize(H);
      if (ldlt.info() != Eigen::Success) throw RunError("flesh simulation: Newton system singular");
      const Eigen::VectorXd step = -ldlt.solve(g);
      // Backtracking (Armijo) on the total energy. A step that no fraction down to 2^-29 makes
      // lower is not taken, and the solve ends: the energy is flat to rounding along it. (Such a
      // step used to be taken at 2^-29, after which the step test below, with t halved once
      // more, ended the solve as if it had converged.)
      const double e0 = energy(x, predicted, gravity), slope = g.dot(step);
      double t = 1.0;
      bool lower = false;
      RowMatrix trial = x;
      for (int ls = 0; ls < 30 && !lower; ++ls) {
        t = std::ldexp(1.0, -ls);
        trial = x;
        for (Eigen::Index v = 0; v < V; ++v) {
          const int r = index_[static_cast<std::size_t>(v)];
          if (r >= 0) trial.row(v) += t * step.segment<3>(3 * r).transpose();
        }
        lower = energy(trial, predicted, gravity) <= e0 + 1e-4 * t * slope;
      }
      if (!lower) break;
      x = trial;
      if (t * step.cwiseAbs().maxCoeff() < 1e-9) break;
    }
  }

 private:
  Eigen::Matrix3d deformation(const RowMatrix& x, std::size_t k) const {
    Eigen::Matrix<double, 3, 4> X;
    for (int a = 0; a < 4; ++a)
      X.col(a) = x.row(mesh_.tets(static_cast<Eigen::Index>(k), a)).transpose();
    return X * D_[k];
  }
  double energy(const RowMatrix& x, const RowMatrix* predicted,
                const Eigen::Vector3d& gravity) const {
    const std::size_t K = static_cast<std::size_t>(mesh_.tets.rows());
    double e = parallel_reduce(
        K, 256, 0.0,
        [&](std::size_t b, std::size_t end) {
          double s = 0.0;
          for (std::size_t k = b; k < end; ++k)
            s += vol_[k] * neo_hookean_density(deformation(x, k), lame_, false).psi;
          return s;
        },
        [](double a, double b) { return a + b; });
    for (Eigen::Index v = 0; v < x.rows(); ++v) {
      e -= mass_[v] * gravity.dot(x.row(v).transpose());
      if (predicted)
        e += 0.5 * mass_[v] / (dt_ * dt_) * (x.row(v) - predicted->row(v)).squaredNorm();
    }
    return e;
  }

  const TetMesh& mesh_;
  std::vector<bool> pinned_;
  Lame lame_;
  double dt_;
  std::vector<Eigen::Matrix<double, 4, 3>> D_;
  std::vector<double> vol_;
  Eigen::VectorXd mass_;
  std::vector<int> index_;
  int free_ = 0;
};

}  // namespace

BodySurface body_surface(const FleshBody& body) {
  // The body's own surface (its vertices in index order), else the tet mesh's boundary (its
  // vertices in the order the boundary first meets them).
  const Eigen::Index V = body.mesh.vertices.rows();
  const bool own = body.surface.rows() > 0;
  const Triangles boundary = own ? body.surface : boundary_triangles(body.mesh.tets);
  std::vector<int> index(static_cast<std::size_t>(V), -1);
  BodySurface out;
  const auto add = [&](Eigen::Index v) {
    index[static_cast<std::size_t>(v)] = static_cast<int>(out.vertices.size());
    out.vertices.push_back(v);
  };
  if (own) {
    DATADYN_CHECK(boundary.minCoeff() >= 0 && boundary.maxCoeff() < V);
    std::vector<bool> used(static_cast<std::size_t>(V), false);
    for (Eigen::Index t = 0; t < boundary.rows(); ++t)
      for (int c = 0; c < 3; ++c) used[static_cast<std::size_t>(boundary(t, c))] = true;
    for (Eigen::Index v = 0; v < V; ++v)
      if (used[static_cast<std::size_t>(v)]) add(v);
  } else {
    for (Eigen::Index t = 0; t < boundary.rows(); ++t)
      for (int c = 0; c < 3; ++c)
        if (index[static_cast<std::size_t>(boundary(t, c))] < 0) add(boundary(t, c));
  }
  out.triangles.resize(boundary.rows(), 3);
  for (Eigen::Index t = 0; t < boundary.rows(); ++t)
    for (int c = 0; c < 3; ++c)
      out.triangles(t, c) = index[static_cast<std::size_t>(boundary(t, c))];
  return out;
}

FleshSimulationResult simulate_body(const FleshBody& body, const FleshSimulationParams& p,
                                    const ProgressCallback& progress) {
  DATADYN_CHECK_GE(p.frames, 3);
  DATADYN_CHECK(p.frame_rate > 0 && p.substeps >= 1);
  const TetMesh& mesh = body.mesh;
  const std::vector<bool>& pinned = body.pinned;
  const Eigen::Index V = mesh.vertices.rows();
  DATADYN_CHECK_EQ(pinned.size(), static_cast<std::size_t>(V));
  const int pinned_count = static_cast<int>(std::count(pinned.begin(), pinned.end(), true));
  if (pinned_count == 0) throw RunError("flesh simulation: no vertex follows the bones");

  const BodySurface surface = body_surface(body);
  FleshSimulationResult out;
  if (body.surface.rows() > 0) out.uv = body.surface_uv;
  out.tet_vertices = static_cast<int>(V);
  out.tets = static_cast<int>(mesh.tets.rows());
  out.pinned = pinned_count;
  out.triangles = surface.triangles;
  const auto gather = [&](const RowMatrix& x) {
    Points3 s(static_cast<Eigen::Index>(surface.vertices.size()), 3);
    for (std::size_t i = 0; i < surface.vertices.size(); ++i)
      s.row(static_cast<Eigen::Index>(i)) = x.row(surface.vertices[i]);
    return s;
  };
  out.rest = gather(mesh.vertices);

  const auto skin = [&](double t) -> RowMatrix { return body.skin(t); };
  const double mu = p.youngs_modulus / (2.0 * (1.0 + p.poisson_ratio));
  const double dt = 1.0 / (p.frame_rate * p.substeps);
  std::unique_ptr<BodySolver> solver_ptr;
  if (p.model == ElasticModel::NeoHookean)
    solver_ptr = std::make_unique<NewtonSolver>(
        mesh, pinned, lame_parameters(p.youngs_modulus, p.poisson_ratio), p.density, dt);
  else
    solver_ptr = std::make_unique<ProjectiveSolver>(mesh, pinned, mu, p.density, dt);
  const BodySolver& solver = *solver_ptr;
  const auto pin = [&](RowMatrix& x, const RowMatrix& skinned) {
    for (Eigen::Index v = 0; v < V; ++v)
      if (pinned[static_cast<std::size_t>(v)]) x.row(v) = skinned.row(v);
  };

  // The quasistatic targets first: they depend on the bones only. Frame 0 from the skin with
  // more iterations; later frames warm-started from the previous equilibrium carried along with
  // the skin.
  std::vector<RowMatrix> skinned(static_cast<std::size_t>(p.frames)),
      qs(static_cast<std::size_t>(p.frames));
  for (int f = 0; f < p.frames; ++f) {
    const std::size_t k = static_cast<std::size_t>(f);
    skinned[k] = skin(f / p.frame_rate);
    if (f == 0) {
      qs[k] = skinned[k];
      solver.solve(qs[k], nullptr, p.gravity, 4 * p.quasistatic_iterations);
    } else {
      qs[k] = qs[k - 1] + (skinned[k] - skinned[k - 1]);
      pin(qs[k], skinned[k]);
      solver.solve(qs[k], nullptr, p.gravity, p.quasistatic_iterations);
    }
    if (!qs[k].allFinite())
      throw RunError("flesh simulation: frame " + std::to_string(f) +
                     ": quasistatic state is not finite");
    // Both passes report: the quasistatic one alone ran for half a minute with no line, and the
    // first estimate counted it into a frame (2 h 55 min for a 72 s run).
    if (progress) progress(k + 1, 2 * static_cast<std::size_t>(p.frames));
  }

  // The dynamic state starts in the frame-0 equilibrium with the targets' velocity
  // (x̂^1 - x̂^0)/Δt: the state the springs start from (x = x̂, x' = x̂' of the C1 cubic, whose
  // first tangent is one-sided). Starting at rest instead would jolt the body wherever the
  // motion is under way at t = 0 (every motion capture, the swing), a start-up transient the
  // springs cannot have.
  RowMatrix x = qs[0], v = (qs[1] - qs[0]) * p.frame_rate;
  for (int f = 0; f < p.frames; ++f) {
    if (f > 0 && p.dynamic) {
      for (int s = 1; s <= p.substeps; ++s) {
        const double ts = (f - 1 + double(s) / p.substeps) / p.frame_rate;
        const RowMatrix bones = skin(ts);
        const RowMatrix predicted = x + dt * v;
        RowMatrix next = predicted;
        pin(next, bones);
        solver.solve(next, &predicted, p.gravity, p.iterations);
        v = (next - x) / dt;
        x = next;
      }
    }
    if (!x.allFinite())
      throw RunError("flesh simulation: frame " + std::to_string(f) + ": state is not finite");
    out.skinned.push_back(gather(skinned[static_cast<std::size_t>(f)]));
    out.quasistatic.push_back(gather(qs[static_cast<std::size_t>(f)]));
    if (p.dynamic) out.dynamic.push_back(gather(x));
    out.times.push_back(f / p.frame_rate);
    if (progress)
      progress(static_cast<std::size_t>(p.frames + f + 1), 2 * static_cast<std::size_t>(p.frames));
  }
  return out;
}

FleshBody cylinder_body(const FleshSimulationParams& p) {
  const double height = std::accumulate(p.chain.lengths.begin(), p.chain.lengths.end(), 0.0);
  CylinderLatticeSpec spec;
  spec.radius = p.radius;
  spec.height = height;
  spec.rings = p.rings;
  spec.segments = p.segments;
  spec.layers = p.layers;
  spec.base = p.chain.base;
  FleshBody body;
  body.mesh = cylinder_lattice(spec);
  const Points3& rest = body.mesh.vertices;
  const Eigen::Index V = rest.rows();
  body.pinned.assign(static_cast<std::size_t>(V), false);
  int pinned_count = 0;
  for (Eigen::Index v = 0; v < V; ++v) {
    const double r = std::hypot(rest(v, 0) - p.chain.base.x(), rest(v, 2) - p.chain.base.z());
    if (r <= p.pin_radius + 1e-12) {
      body.pinned[static_cast<std::size_t>(v)] = true;
      ++pinned_count;
    }
  }
  if (pinned_count == 0) throw RunError("flesh simulation: pin_radius pins no vertex");
  // The skin keeps its own copies: the body outlives the caller's params.
  body.skin = [chain = p.chain, motion = p.motion, skinning = p.skinning, rest,
               weights = chain_weights(p.chain, rest)](double t) -> Points3 {
    const auto S = skinning_transforms(chain, chain_pose(chain, motion, t));
    return skinning == SkinningMethod::LinearBlend ? linear_blend_skinning(rest, weights, S)
                                                   : dual_quaternion_skinning(rest, weights, S);
  };
  return body;
}

FleshSimulationResult simulate_flesh(const FleshSimulationParams& p,
                                     const ProgressCallback& progress) {
  DATADYN_CHECK_GE(p.frames, 3);
  DATADYN_CHECK(p.frame_rate > 0 && p.substeps >= 1);
  return simulate_body(cylinder_body(p), p, progress);
}

}  // namespace datadyn::flesh
