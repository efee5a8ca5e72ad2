#pragma once
/// @file
/// One cloth run of Lee, Oh, Lee 2019: a rectangular particle grid with structural, shear and
/// bending springs (Liu et al. 2013, sec. 5), its pins, external forces (gravity, wind after
/// Wejchert & Haumann 1991) and colliders (a sphere, the ground plane), and the paper's three
/// scenes (curtain, flag, collision; sec. 5, fig. 6). The grid's topology and rest shape are here;
/// the integrator is in mass_spring_solver.hpp.

#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/types.hpp"

namespace datadyn::cloth {

/// Which particles are held at their initial positions.
enum class PinMode {
  None,        ///< free cloth
  TopRow,      ///< every particle of row 0
  TopCorners,  ///< the two ends of row 0
  LeftColumn,  ///< every particle of column 0 (a flag on its pole)
};

/// Wind after Wejchert & Haumann 1991: a uniform air velocity, optionally gusting.
struct Wind {
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();  ///< m/s
  double drag = 0.0;  ///< c in f = -c A (n.v_r)|n.v_r| n, kg/m^3 (air: about 0.6)
  /// c_t in the tangential part -c_t A |v_t| v_t, v_t = v_r - (n.v_r) n, kg/m^3: the drag of air
  /// along the sheet, which holds a flag out downwind (0: the normal part alone)
  double drag_tangent = 0.0;
  double gust = 0.0;         ///< relative amplitude of a sinusoidal gust, in [0, 1]
  double gust_period = 1.0;  ///< s, > 0
};

/// How a step's implicit Euler problem is solved: both alternate a local step per spring with the
/// same global solve (M + h^2 L) x = M y + h^2 J d.
enum class Integrator {
  Projective,  ///< Liu et al. 2013: d = the spring's direction at its rest length
  Admm,        ///< Overby et al. 2017: d = z - u, z the spring energy's proximal point, u dual
};

struct Sphere {
  bool enabled = false;
  Eigen::Vector3d center = Eigen::Vector3d::Zero();  ///< m
  double radius = 0.25;                              ///< m, > 0
};

struct Ground {
  bool enabled = false;
  double height = 0.0;  ///< m: the plane y = height, cloth stays above
};

/// Particles kept apart from the rest of the sheet (self_collision.hpp).
struct SelfCollisionParams {
  bool enabled = false;
  double thickness = 0.0;  ///< m kept between particles; 0: the rest spacing
};

struct ClothParams {
  int nx = 33;                             ///< particles per row (grid u axis), >= 2
  int ny = 33;                             ///< rows (grid v axis), >= 2
  double spacing = 1.0 / 32;               ///< rest distance between row/column neighbours, m
  Eigen::Vector3d origin{-0.5, 1.5, 0.0};  ///< particle (row 0, column 0), m
  Eigen::Vector3d axis_u{1.0, 0.0, 0.0};   ///< direction of a row (normalised on use)
  Eigen::Vector3d axis_v{0.0, -1.0, 0.0};  ///< direction from row to row (normalised on use)
  double mass = 0.01;                      ///< per particle, kg
  /// N/m; stiff enough that the cloth barely stretches, so its miniature hangs like it does.
  double k_structural = 2000.0;
  double k_shear = 1000.0;      ///< N/m
  double k_bending = 20.0;      ///< N/m (springs between particles two apart)
  double time_step = 1.0 / 60;  ///< s between output frames
  /// Implicit steps per output frame, each time_step / substeps long. 1 (the paper's one step a
  /// frame) for the curtain; 8 for the flag, whose light sheet the explicit wind crumples at
  /// longer steps; 3 for the collision scene, whose sheet a step of 1/60 s pulls through the
  /// sphere (docs/tools/cloth-train.md, Limits).
  int substeps = 1;
  int iterations = 10;  ///< local/global iterations per step (Liu et al. alg. 1)
  Integrator solver = Integrator::Projective;
  double damping = 0.01;  ///< fraction of the velocity removed per frame, in [0, 1)
  int frames = 120;       ///< frames to simulate (frame 0 is the initial state)
  Eigen::Vector3d gravity{0.0, -9.81, 0.0};  ///< m/s^2
  Wind wind;
  PinMode pins = PinMode::TopRow;
  Sphere sphere;
  Ground ground;
  double collision_margin = 0.005;  ///< m kept between particles and colliders
  SelfCollisionParams self_collision;
  /// Multiplies every external force (gravity, wind): 1 for the target, 1/f for a miniature of
  /// DSDS factor f (sec. 4.1, eq. 8).
  double force_scale = 1.0;
  /// The wind's relative velocity is velocity_scale * v - v_wind: 1 for the target, f for a
  /// miniature, whose velocities are 1/f of the target's (see miniature.hpp).
  double velocity_scale = 1.0;
};

/// The flag scene's fabric, kg/m^2 (flag cloth weighs 0.1-0.2 kg/m^2).
inline constexpr double kFlagAreaDensity = 0.15;
/// c_t of air along a flat sheet, kg/m^3: both sides' skin friction 2 (rho/2) C_f with the
/// turbulent flat-plate C_f = 0.074 Re^(-1/5) (Schlichting, Boundary-Layer Theory) at
/// Re = 6 m/s x 1 m / 1.5e-5 m^2/s = 4e5 and rho = 1.2 kg/m^3.
inline constexpr double kFlatPlateFriction = 0.0067;

/// The paper's scenes as defaults for ClothParams: "curtain" (pinned along its top row, released
/// tilted so it swings), "flag" (flag fabric pinned at its left column, in gusting wind),
/// "collision" (falls flat onto a sphere, ground below). The grid's origin follows nx, ny and
/// spacing, and the flag's particle mass the spacing: set them first. Returns false for an
/// unknown name.
bool apply_scene_preset(const std::string& scene, ClothParams& params);
/// The names apply_scene_preset knows.
std::vector<std::string> scene_names();

/// A spring between particles i and j with rest length `rest` (m) and stiffness k (N/m).
struct Spring {
  int i = 0, j = 0;
  double rest = 0.0;
  double k = 0.0;
};

/// Index of the particle at row r, column c: r * nx + c.
inline int grid_index(const ClothParams& p, int r, int c) {
  return r * p.nx + c;
}
/// #nx*ny by 3 rest positions: origin + c spacing u + r spacing v.
Points3 rest_positions(const ClothParams& p);
/// Structural (row and column neighbours), shear (both diagonals) and bending (two apart along
/// rows and columns) springs with rest lengths from the rest positions.
std::vector<Spring> grid_springs(const ClothParams& p);
/// Two triangles per grid cell (#2(nx-1)(ny-1) by 3), counter-clockwise seen from the side
/// v x u points to.
Triangles grid_triangles(const ClothParams& p);
/// One quad per grid cell (#(nx-1)(ny-1) by 4).
Quads grid_quads(const ClothParams& p);
/// Texture coordinates of the grid (#nx*ny by 2): u = c / (nx - 1) along a row, v = 1 - r /
/// (ny - 1), so a texture covers the cloth, row 0 along its top edge, and reads unmirrored from
/// the side grid_triangles face (an image of the cloth's aspect has square texels on it).
Eigen::Matrix<float, Eigen::Dynamic, 2, Eigen::RowMajor> grid_uv(const ClothParams& p);
/// Indices of the pinned particles, ascending.
std::vector<int> pinned_particles(const ClothParams& p);

}  // namespace datadyn::cloth
