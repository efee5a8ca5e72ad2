#pragma once
/// @file
/// Writers of one mesh frame in the formats DCC tools import: Wavefront OBJ and binary PLY.
/// Vertex order is preserved (vertex i of the cache is vertex i of the file), faces are written
/// in the mesh's face order (triangles, quads, then larger polygons, unless it has one of its own),
/// counter-clockwise seen from outside, and coordinates as they are
/// in the cache (metres, Y up). Every file is written atomically (io/atomic_file.hpp) and carries
/// the metadata it is given (generator, config, source) where the format has room: OBJ `#`
/// comments, PLY `comment` lines.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "core/surface_mesh.hpp"
#include "core/types.hpp"

namespace datadyn::io {

/// Texture coordinates per vertex: #V by 2 (u, v), (0, 0) the texture's lower left corner.
using TextureCoordinates = Eigen::Matrix<float, Eigen::Dynamic, 2, Eigen::RowMajor>;

/// A polygon mesh: points with triangles, quads and/or larger polygons (any may be empty: a point
/// cloud).
struct PolygonMesh {
  Points3 points;       ///< #V by 3, metres
  Triangles triangles;  ///< #T by 3, 0-based, counter-clockwise
  Quads quads;          ///< #Q by 4, 0-based, counter-clockwise
  /// #P faces of five or more corners, counter-clockwise (a matched mesh keeps match.file's
  /// as they are; caches hold none).
  Polygons polygons;
  TextureCoordinates uv;  ///< #V by 2 (per vertex), #M by 2 (face-varying), or empty: none
  /// Face-varying texture coordinates: one index into `uv` per corner, a row per row of
  /// `triangles` and of `quads` (docs/cache-format.md, uv/), an entry per entry of
  /// polygons.corners. All empty: `uv` is per vertex.
  Triangles uv_triangles;
  Quads uv_quads;
  std::vector<int> uv_polygons;
  /// The order files get the faces in, when it is not triangles, quads, polygons (a matched
  /// mesh: the order of match.file's faces): entry k names triangle k for k < #T, quad k - #T
  /// for k < #T + #Q and polygon k - #T - #Q above; a permutation of the #T + #Q + #P faces.
  /// Empty: triangles, then quads, then polygons.
  std::vector<Eigen::Index> face_order;

  bool face_varying_uv() const {
    return uv_triangles.rows() + uv_quads.rows() > 0 || !uv_polygons.empty();
  }
  Eigen::Index face_count() const {
    return triangles.rows() + quads.rows() + static_cast<Eigen::Index>(polygons.sizes.size());
  }
};

/// Throws IoError naming `path` unless mesh.face_order is empty or a permutation of the faces.
void check_face_order(const std::filesystem::path& path, const PolygonMesh& mesh);

/// One face of a PolygonMesh as for_each_face gives it.
struct FaceCorners {
  enum Kind { Triangle, Quad, Polygon } kind;
  std::span<const int> vertices;  ///< its corners, counter-clockwise
  /// their indices into PolygonMesh::uv when face-varying (and given for every face), else empty
  std::span<const int> uv;
  /// Where the corners are in the mesh's corner lists: row `row` of triangles or quads, or from
  /// entry `row` of polygons.corners on.
  Eigen::Index row;
};

/// Calls `f(corners, first)` for each polygon of `p` in order: its corners and where they start
/// in p.corners.
template <class F>
void for_each_polygon(const Polygons& p, F&& f) {
  std::size_t first = 0;
  for (const int size : p.sizes) {
    const auto n = static_cast<std::size_t>(size);
    f(std::span<const int>(p.corners.data() + first, n), first);
    first += n;
  }
}

/// Calls `f(FaceCorners)` for each face of `mesh` in the order files get them (face_order).
template <class F>
void for_each_face(const PolygonMesh& mesh, F&& f) {
  const Eigen::Index t = mesh.triangles.rows(), q = mesh.quads.rows();
  // Texture-coordinate corners only where every face has them (the writers check that first
  // and name the file; a mesh without them for some face gets none here rather than a read
  // past an array).
  const bool uv = mesh.face_varying_uv() && mesh.uv_triangles.rows() == t &&
                  mesh.uv_quads.rows() == q &&
                  mesh.uv_polygons.size() == mesh.polygons.corners.size();
  std::vector<Eigen::Index> first{0};  // polygon p's corners from first[p] on
  for (const int n : mesh.polygons.sizes) first.push_back(first.back() + n);
  const auto face = [&](Eigen::Index k) {
    if (k < t) {
      f(FaceCorners{
          FaceCorners::Triangle,
          {mesh.triangles.row(k).data(), 3},
          uv ? std::span<const int>(mesh.uv_triangles.row(k).data(), 3) : std::span<const int>(),
          k});
    } else if (k < t + q) {
      f(FaceCorners{
          FaceCorners::Quad,
          {mesh.quads.row(k - t).data(), 4},
          uv ? std::span<const int>(mesh.uv_quads.row(k - t).data(), 4) : std::span<const int>(),
          k - t});
    } else {
      const auto p = static_cast<std::size_t>(k - t - q);
      const auto at = static_cast<std::size_t>(first[p]);
      const auto n = static_cast<std::size_t>(mesh.polygons.sizes[p]);
      f(FaceCorners{
          FaceCorners::Polygon,
          {mesh.polygons.corners.data() + at, n},
          uv ? std::span<const int>(mesh.uv_polygons.data() + at, n) : std::span<const int>(),
          first[p]});
    }
  };
  if (mesh.face_order.empty())
    for (Eigen::Index k = 0; k < mesh.face_count(); ++k) face(k);
  else
    for (const Eigen::Index k : mesh.face_order) face(k);
}

/// Face-varying texture coordinates made one per vertex, as PLY holds them: a vertex whose
/// corners carry k different values becomes k vertices. The first value a vertex meets keeps the
/// vertex's index; each further one is a copy appended after the mesh's vertices, in the order the
/// corners first show it (faces in the mesh's face order), so vertex i < vertex_count is still
/// vertex i. Values are told apart bit for bit. Vertices on no face get (0, 0).
struct SeamSplit {
  std::vector<Eigen::Index> copied;  ///< the original of vertex vertex_count + k
  Triangles triangles;               ///< the mesh's faces on the split vertices
  Quads quads;
  std::vector<int> polygon_corners;  ///< polygons.corners on the split vertices
  TextureCoordinates uv;             ///< (vertex_count + copied.size()) by 2
  Eigen::Index seam_vertices = 0;    ///< vertices with at least one copy
  /// The original vertex of split vertex `i`.
  Eigen::Index original(Eigen::Index i, Eigen::Index vertex_count) const {
    return i < vertex_count ? i : copied[static_cast<std::size_t>(i - vertex_count)];
  }
};

/// Splits `mesh`'s vertices at its texture seams (SeamSplit). The mesh's points are not used.
/// @pre mesh.face_varying_uv(), face indices < vertex_count.
SeamSplit split_uv_seams(const PolygonMesh& mesh, Eigen::Index vertex_count);

/// Ordered key/value text recorded in an output ("generator", "config", "source", ...).
using Metadata = std::vector<std::pair<std::string, std::string>>;

/// A per-vertex attribute: #V by C values (C = 1 for a scalar map, 3 for a vector).
struct VertexAttribute {
  std::string name;
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> values;
  /// The values do not change over the frames (the cache holds them once): a USDA layer writes
  /// them once, not as time samples.
  bool is_static = false;
};

/// #V by 3 vertex colours, 0-255 (PLY red/green/blue).
using VertexColors = Eigen::Matrix<std::uint8_t, Eigen::Dynamic, 3, Eigen::RowMajor>;

/// The edges of a mesh that belong to one face only (an open surface such as cloth): how many,
/// and the first in sorted order (vertex indices, the lower first). Closed: count 0.
struct BorderEdges {
  std::size_t count = 0;
  std::pair<int, int> first{-1, -1};
};
BorderEdges border_edges(const PolygonMesh& mesh);

/// Unit vertex normals of a mesh: the sum of the normals of the faces around each vertex, each
/// weighted by its area (a quad's from its diagonals, a larger polygon's by Newell's sum of its
/// edges' cross products), normalised; counter-clockwise faces give
/// outward normals. A vertex on no face, or whose faces' normals cancel, gets (0, 1, 0).
Points3 vertex_normals(const PolygonMesh& mesh);

/// Face-varying texture coordinates by box projection of the `reference` positions (#V by 3, the
/// rest pose, so that the texture stays on the surface as it moves), Blender's Cube Projection:
/// each face goes along the axis its reference normal points most along (ties to the first of x,
/// y, z) onto the tile of its direction in a 3 x 2 grid over the unit square (+x, -x, +y in the
/// bottom row, -y, +z, -z in the top), read unmirrored from outside the face (v along +y on the
/// four side tiles). One scale for all: 0.3 over the largest extent of the reference, so a
/// checker texture shows squares of one size. Fills mesh.uv, uv_triangles, uv_quads and
/// uv_polygons; the
/// corners of one vertex on one tile share a value.
void box_projection_uv(const Points3& reference, PolygonMesh& mesh);

/// Writes an OBJ: metadata as `# key: value` comments, `o <object_name>`, `v x y z` per vertex
/// (shortest text that reads back to the same float), with texture coordinates `vt u v` (one per
/// vertex, or the face-varying values) and `f a/ta b/tb c/tc`, else `f a b c` (1-based); with
/// `smooth_shading`, `s 1` before the faces (smoothing group 1: importers interpolate normals
/// across the faces). Throws IoError.
void write_obj(const std::filesystem::path& path, const PolygonMesh& mesh,
               const std::string& object_name, const Metadata& metadata = {},
               bool smooth_shading = false);

/// Writes a binary little-endian PLY: `element vertex` with float x, y, z, with `smooth_shading`
/// (and faces) float nx, ny, nz (vertex_normals), float s, t (texture coordinates, when the mesh
/// has them: the names Blender's and trimesh's readers take), one float property per attribute
/// component (`<name>` for C = 1, `<name>_0`..`<name>_{C-1}` otherwise; for a "normal" attribute
/// with C = 3: nx, ny, nz, which then stand for the computed ones), optional uchar
/// red/green/blue, and `element face` with `list uchar int vertex_indices` (omitted for a point
/// cloud). Face-varying texture coordinates are split at their seams (split_uv_seams): a copy
/// carries its original's position, normal, attributes and colour. Metadata as `comment key:
/// value` lines. @pre every attribute and `colors` (if not null) has #V rows.
void write_ply(const std::filesystem::path& path, const PolygonMesh& mesh,
               const std::vector<VertexAttribute>& attributes = {},
               const VertexColors* colors = nullptr, const Metadata& metadata = {},
               bool smooth_shading = false);

/// Colours of a scalar map through a perceptual ramp (viridis, 9 stops): values at or below
/// `lo` are dark blue, at or above `hi` yellow. @pre hi > lo.
VertexColors colors_from_scalar(const Eigen::Ref<const Eigen::VectorXf>& values, double lo,
                                double hi);

}  // namespace datadyn::io
