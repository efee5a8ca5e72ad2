#include "elastic/scene.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>

#include <Eigen/Cholesky>

#include "core/parallel.hpp"

namespace datadyn::elastic {

namespace {

constexpr std::size_t kParticleGrain = 256;

double now(const StepTimings* t) {
  if (t && t->clock) return t->clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Moments of the body for the rigid-motion-preserving damping.
struct Moments {
  double m = 0.0;
  Eigen::Vector3d mx = Eigen::Vector3d::Zero();   // Σ m x
  Eigen::Vector3d mv = Eigen::Vector3d::Zero();   // Σ m v
  Eigen::Vector3d mxv = Eigen::Vector3d::Zero();  // Σ m x × v
  Eigen::Matrix3d mxx = Eigen::Matrix3d::Zero();  // Σ m x xᵀ
};

}  // namespace

void step_body(Body& b, const SceneParams& params, double h, StepTimings* timings) {
  const auto n = static_cast<std::size_t>(b.particle_count());
  const double t0 = timings ? now(timings) : 0.0;
  double t_proj = 0.0;

  // 1. Shape matching (eq. 1).
  match_regions(b.regions, b.x, b.frames);
  // 2-3. Goals (eqs. 2-3, 6-7).
  if (b.example_count() > 0) {
    const double p0 = timings ? now(timings) : 0.0;
    project_strain(b.examples, b.frames.strain, b.params.beta, b.params.convex_weights, b.weights);
    blend_strains(b.examples, b.weights, b.projected);
    if (timings) t_proj = now(timings) - p0;
    example_goals(b.regions, b.frames, b.projected, b.goals);
  } else {
    plain_goals(b.regions, b.frames, b.goals);
  }
  b.goal.resize(b.particle_count(), 3);
  particle_goals(b.regions, b.rest, b.goals, b.goal);
  // Example residuals (BodyParams::exact_examples): g_i += R_i Σ_k w_k e_k,i − mean.
  Eigen::RowVector3d detail_mean = Eigen::RowVector3d::Zero();
  if (!b.detail.empty()) {
    const int ne = b.example_count();
    const auto columns = static_cast<std::size_t>(ne + 1);
    const Eigen::Vector4d sum = parallel_reduce(
        n, kParticleGrain, Eigen::Vector4d(Eigen::Vector4d::Zero()),
        [&](std::size_t begin, std::size_t end) {
          Eigen::Vector4d part = Eigen::Vector4d::Zero();
          for (std::size_t i = begin; i < end; ++i) {
            const double* w =
                &b.weights[static_cast<std::size_t>(b.examples.region_group[i]) * columns];
            Eigen::Vector3d e = Eigen::Vector3d::Zero();
            for (int k = 0; k < ne; ++k) {
              const double* d = &b.detail[(static_cast<std::size_t>(k) * n + i) * 3];
              e += w[k + 1] * Eigen::Vector3d(d[0], d[1], d[2]);
            }
            const Eigen::Vector3d corr = b.frames.rotation_matrix[i] * e;
            b.goal.row(static_cast<Eigen::Index>(i)) += corr.transpose();
            part.head<3>() += b.mass(static_cast<Eigen::Index>(i)) * corr;
          }
          return part;
        },
        [](const Eigen::Vector4d& a, const Eigen::Vector4d& c) -> Eigen::Vector4d {
          return a + c;
        });
    detail_mean = (sum.head<3>() / b.mass.sum()).transpose();
  }

  // 4. Velocities (eq. 4).
  const double alpha_h = b.params.alpha / h;
  const Eigen::RowVector3d dv_gravity = h * params.gravity.transpose();
  parallel_for(n, kParticleGrain, [&](std::size_t begin, std::size_t end) {
    for (auto i = static_cast<Eigen::Index>(begin); i < static_cast<Eigen::Index>(end); ++i) {
      b.goal.row(i) -= detail_mean;
      b.v.row(i) += alpha_h * (b.goal.row(i) - b.x.row(i)) + dv_gravity;
    }
  });
  if (b.params.damping > 0.0) {
    const Moments mo = parallel_reduce(
        n, kParticleGrain, Moments{},
        [&](std::size_t begin, std::size_t end) {
          Moments part;
          for (auto i = static_cast<Eigen::Index>(begin); i < static_cast<Eigen::Index>(end); ++i) {
            const double m = b.mass(i);
            const Eigen::Vector3d x = b.x.row(i).transpose(), v = b.v.row(i).transpose();
            part.m += m;
            part.mx += m * x;
            part.mv += m * v;
            part.mxv += m * x.cross(v);
            part.mxx.noalias() += m * x * x.transpose();
          }
          return part;
        },
        [](Moments a, const Moments& c) {
          a.m += c.m;
          a.mx += c.mx;
          a.mv += c.mv;
          a.mxv += c.mxv;
          a.mxx += c.mxx;
          return a;
        });
    const Eigen::Vector3d centre = mo.mx / mo.m, v_cm = mo.mv / mo.m;
    // About the centre of mass: Σ m r rᵀ and the angular momentum Σ m r × v.
    const Eigen::Matrix3d rr = mo.mxx - mo.m * centre * centre.transpose();
    const Eigen::Vector3d angular = mo.mxv - mo.m * centre.cross(v_cm);
    const Eigen::Matrix3d inertia = rr.trace() * Eigen::Matrix3d::Identity() - rr;
    const Eigen::LDLT<Eigen::Matrix3d> ldlt(inertia);
    Eigen::Vector3d omega = Eigen::Vector3d::Zero();
    if (ldlt.info() == Eigen::Success && ldlt.isPositive() && inertia.trace() > 0.0)
      omega = ldlt.solve(angular);
    if (!omega.allFinite()) omega.setZero();
    const double d = b.params.damping;
    parallel_for(n, kParticleGrain, [&](std::size_t begin, std::size_t end) {
      for (auto i = static_cast<Eigen::Index>(begin); i < static_cast<Eigen::Index>(end); ++i) {
        const Eigen::Vector3d r = b.x.row(i).transpose() - centre;
        const Eigen::Vector3d rigid = v_cm + omega.cross(r);
        b.v.row(i) -= d * (b.v.row(i) - rigid.transpose());
      }
    });
  }

  // 5. Positions (eq. 5), drag, planes, pins.
  const double keep = 1.0 - b.params.drag;
  parallel_for(n, kParticleGrain, [&](std::size_t begin, std::size_t end) {
    for (auto i = static_cast<Eigen::Index>(begin); i < static_cast<Eigen::Index>(end); ++i) {
      Eigen::Vector3d v = keep * b.v.row(i).transpose();
      Eigen::Vector3d x = b.x.row(i).transpose() + h * v;
      for (const Plane& p : params.planes) {
        const double depth = p.normal.dot(x - p.point);
        if (depth >= 0.0) continue;
        x -= depth * p.normal;
        const double vn = p.normal.dot(v);
        if (vn >= 0.0) continue;
        Eigen::Vector3d vt = v - vn * p.normal;
        const double speed_t = vt.norm();
        const double e = -vn > p.resting_speed ? p.restitution : 0.0;
        const double dvn = (1.0 + e) * (-vn);
        if (speed_t > 0.0) vt *= std::max(0.0, speed_t - p.friction * dvn) / speed_t;
        v = vt - e * vn * p.normal;
      }
      b.x.row(i) = x.transpose();
      b.v.row(i) = v.transpose();
    }
  });
  for (std::size_t k = 0; k < b.pinned.size(); ++k) {
    b.x.row(b.pinned[k]) = b.pin_position.row(static_cast<Eigen::Index>(k));
    b.v.row(b.pinned[k]).setZero();
  }
  if (timings) {
    const double total = now(timings) - t0;
    timings->projection += t_proj;
    timings->shape_matching += total - t_proj;
    timings->steps += 1;
  }
}

void step_scene(Scene& scene, double h, StepTimings* timings) {
  for (Body& b : scene.bodies) step_body(b, scene.params, h, timings);
}

SceneHealth check_health(const Scene& scene) {
  SceneHealth health;
  for (std::size_t bi = 0; bi < scene.bodies.size(); ++bi) {
    const Body& b = scene.bodies[bi];
    for (Eigen::Index i = 0; i < b.x.rows(); ++i) {
      const bool finite = b.x.row(i).allFinite() && b.v.row(i).allFinite();
      const double speed = finite ? b.v.row(i).norm() : std::nan("");
      if (finite && speed <= scene.params.max_speed) continue;
      health.ok = false;
      health.body = static_cast<int>(bi);
      health.particle = static_cast<int>(i);
      health.speed = speed;
      if (!finite) {
        health.reason = "non-finite position or velocity";
      } else {
        char text[128];
        std::snprintf(text, sizeof text, "speed %.3g m/s above max_speed %.3g m/s", speed,
                      scene.params.max_speed);
        health.reason = text;
      }
      return health;
    }
  }
  return health;
}

}  // namespace datadyn::elastic
