#include "elastic/shape_matching.hpp"

#include <stdexcept>
#include <string>

#include <Eigen/Eigenvalues>

#include "core/mesh_topology.hpp"
#include "core/parallel.hpp"
#include "core/polar_decomposition.hpp"
#include "elastic/rotation_extraction.hpp"

namespace datadyn::elastic {

namespace {

constexpr std::size_t kRegionGrain = 256;

void store_strain(const Eigen::Matrix3d& S, double* s) {
  s[0] = S(0, 0);
  s[1] = S(1, 1);
  s[2] = S(2, 2);
  s[3] = 0.5 * (S(0, 1) + S(1, 0));
  s[4] = 0.5 * (S(1, 2) + S(2, 1));
  s[5] = 0.5 * (S(2, 0) + S(0, 2));
}

}  // namespace

RegionSet one_ring_regions(const Points3& rest, const Tets& tets, const Eigen::VectorXd& masses) {
  const int n = static_cast<int>(rest.rows());
  if (masses.size() != n)
    throw std::invalid_argument("masses: expected " + std::to_string(n) + " values, got " +
                                std::to_string(masses.size()));
  for (Eigen::Index k = 0; k < tets.rows(); ++k)
    for (int a = 0; a < 4; ++a)
      if (tets(k, a) < 0 || tets(k, a) >= n)
        throw std::invalid_argument("tet " + std::to_string(k) + ": vertex index " +
                                    std::to_string(tets(k, a)) + " out of range [0, " +
                                    std::to_string(n) + ")");
  const auto rings = vertex_one_ring(tets, n);
  RegionSet rs;
  rs.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int r = 0; r < n; ++r) {
    if (rings[static_cast<std::size_t>(r)].empty())
      throw std::invalid_argument("particle " + std::to_string(r) + " is in no tetrahedron");
    if (!(masses(r) > 0.0))
      throw std::invalid_argument("particle " + std::to_string(r) + ": mass " +
                                  std::to_string(masses(r)) + " is not positive");
    rs.offsets[static_cast<std::size_t>(r) + 1] =
        rs.offsets[static_cast<std::size_t>(r)] +
        static_cast<int>(rings[static_cast<std::size_t>(r)].size()) + 1;
  }
  rs.members.resize(static_cast<std::size_t>(rs.offsets.back()));
  rs.inverse_count.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const auto& ring = rings[static_cast<std::size_t>(r)];
    int k = rs.offsets[static_cast<std::size_t>(r)];
    bool self_done = false;
    for (int j : ring) {
      if (!self_done && r < j) {
        rs.members[static_cast<std::size_t>(k++)] = r;
        self_done = true;
      }
      rs.members[static_cast<std::size_t>(k++)] = j;
    }
    if (!self_done) rs.members[static_cast<std::size_t>(k++)] = r;
    rs.inverse_count[static_cast<std::size_t>(r)] = 1.0 / static_cast<double>(ring.size() + 1);
  }
  rs.member_mass.resize(rs.members.size());
  rs.rest_offset.resize(rs.members.size());
  rs.rest_centre.resize(static_cast<std::size_t>(n));
  rs.aqq_inverse.resize(static_cast<std::size_t>(n));
  rs.region_mass.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const int b = rs.offsets[static_cast<std::size_t>(r)],
              e = rs.offsets[static_cast<std::size_t>(r) + 1];
    double mass = 0.0;
    Eigen::Vector3d c = Eigen::Vector3d::Zero();
    for (int k = b; k < e; ++k) {
      const int i = rs.members[static_cast<std::size_t>(k)];
      const double w = masses(i) * rs.inverse_count[static_cast<std::size_t>(i)];
      rs.member_mass[static_cast<std::size_t>(k)] = w;
      mass += w;
      c += w * rest.row(i).transpose();
    }
    c /= mass;
    Eigen::Matrix3d aqq = Eigen::Matrix3d::Zero();
    for (int k = b; k < e; ++k) {
      const Eigen::Vector3d q = rest.row(rs.members[static_cast<std::size_t>(k)]).transpose() - c;
      rs.rest_offset[static_cast<std::size_t>(k)] = q;
      aqq += rs.member_mass[static_cast<std::size_t>(k)] * q * q.transpose();
    }
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(aqq);
    const Eigen::Vector3d lambda = eig.eigenvalues();
    Eigen::Vector3d inv = Eigen::Vector3d::Zero();
    for (int a = 0; a < 3; ++a)
      if (lambda(a) > 1e-12 * lambda(2)) inv(a) = 1.0 / lambda(a);
    rs.aqq_inverse[static_cast<std::size_t>(r)] =
        eig.eigenvectors() * inv.asDiagonal() * eig.eigenvectors().transpose();
    rs.rest_centre[static_cast<std::size_t>(r)] = c;
    rs.region_mass[static_cast<std::size_t>(r)] = mass;
  }
  return rs;
}

RegionFrames rest_frames(const RegionSet& regions) {
  const auto m = static_cast<std::size_t>(regions.region_count());
  RegionFrames f;
  f.centre = regions.rest_centre;
  f.rotation.assign(m, Eigen::Quaterniond::Identity());
  f.rotation_matrix.assign(m, Eigen::Matrix3d::Identity());
  f.strain.assign(kStrainSize * m, 0.0);
  for (std::size_t r = 0; r < m; ++r)
    f.strain[kStrainSize * r] = f.strain[kStrainSize * r + 1] = f.strain[kStrainSize * r + 2] = 1.0;
  return f;
}

void match_regions(const RegionSet& regions, const Eigen::Ref<const Points3>& x,
                   RegionFrames& frames, bool exact) {
  const auto m = static_cast<std::size_t>(regions.region_count());
  frames.centre.resize(m);
  frames.rotation.resize(m, Eigen::Quaterniond::Identity());
  frames.rotation_matrix.resize(m);
  frames.strain.resize(kStrainSize * m);
  parallel_for(m, kRegionGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      const int b = regions.offsets[r], e = regions.offsets[r + 1];
      // Offsets from the region's own particle: Σ w q = 0, so A_pq is unchanged, and large
      // translations cost no precision.
      const Eigen::Vector3d origin = x.row(static_cast<Eigen::Index>(r)).transpose();
      Eigen::Vector3d sum_p = Eigen::Vector3d::Zero();
      Eigen::Matrix3d apq = Eigen::Matrix3d::Zero();
      for (int k = b; k < e; ++k) {
        const double w = regions.member_mass[static_cast<std::size_t>(k)];
        const Eigen::Vector3d p =
            w * (x.row(regions.members[static_cast<std::size_t>(k)]).transpose() - origin);
        sum_p += p;
        apq.noalias() += p * regions.rest_offset[static_cast<std::size_t>(k)].transpose();
      }
      frames.centre[r] = origin + sum_p / regions.region_mass[r];
      const Eigen::Matrix3d A = apq * regions.aqq_inverse[r];
      Eigen::Matrix3d R;
      if (exact) {
        const PolarDecomposition pd = polar_decomposition(A);
        R = pd.R;
        Eigen::Quaterniond q(R);
        if (q.dot(frames.rotation[r]) < 0.0) q.coeffs() = -q.coeffs();
        frames.rotation[r] = q.normalized();
      } else {
        rotation_warm_started(A, frames.rotation[r]);
        R = frames.rotation[r].toRotationMatrix();
      }
      frames.rotation_matrix[r] = R;
      store_strain(R.transpose() * A, &frames.strain[kStrainSize * r]);
    }
  });
}

std::vector<double> strain_vector(const RegionSet& regions, const Eigen::Ref<const Points3>& x) {
  RegionFrames f = rest_frames(regions);
  match_regions(regions, x, f, /*exact=*/true);
  return f.strain;
}

void plain_goals(const RegionSet& regions, const RegionFrames& frames, RegionGoals& goals) {
  const auto m = static_cast<std::size_t>(regions.region_count());
  goals.linear.resize(m);
  goals.translation.resize(m);
  parallel_for(m, kRegionGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      goals.linear[r] = frames.rotation_matrix[r];
      goals.translation[r] = frames.centre[r] - goals.linear[r] * regions.rest_centre[r];
    }
  });
}

void example_goals(const RegionSet& regions, const RegionFrames& frames,
                   const std::vector<double>& projected_strain, RegionGoals& goals) {
  const auto m = static_cast<std::size_t>(regions.region_count());
  goals.linear.resize(m);
  goals.translation.resize(m);
  parallel_for(m, kRegionGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      goals.linear[r].noalias() =
          frames.rotation_matrix[r] * strain_matrix(&projected_strain[kStrainSize * r]);
      goals.translation[r] = frames.centre[r] - goals.linear[r] * regions.rest_centre[r];
    }
  });
}

void particle_goals(const RegionSet& regions, const Eigen::Ref<const Points3>& rest,
                    const RegionGoals& region_goals, Eigen::Ref<Points3> goals) {
  const auto n = static_cast<std::size_t>(regions.region_count());
  parallel_for(n, kRegionGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      Eigen::Matrix3d sum_m = Eigen::Matrix3d::Zero();
      Eigen::Vector3d sum_t = Eigen::Vector3d::Zero();
      for (int k = regions.offsets[i]; k < regions.offsets[i + 1]; ++k) {
        const auto r = static_cast<std::size_t>(regions.members[static_cast<std::size_t>(k)]);
        sum_m += region_goals.linear[r];
        sum_t += region_goals.translation[r];
      }
      goals.row(static_cast<Eigen::Index>(i)) =
          (regions.inverse_count[i] *
           (sum_m * rest.row(static_cast<Eigen::Index>(i)).transpose() + sum_t))
              .transpose();
    }
  });
}

}  // namespace datadyn::elastic
