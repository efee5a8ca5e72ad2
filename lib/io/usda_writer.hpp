#pragma once
/// @file
/// USD ASCII (`.usda`) layers of one animated mesh, for Houdini Solaris, Maya, Blender builds with
/// USD, and usdview. Debian has no USD library: this writes the text format directly, following
/// the USD file-format grammar:
///
///   #usda 1.0
///   ( customLayerData = { string generator = "..." ... }
///     defaultPrim = "root", start/endTimeCode, timeCodesPerSecond, framesPerSecond, upAxis,
///     metersPerUnit )
///   def Xform "root" (kind = "component") {
///     def Mesh "<name>" {
///       uniform token subdivisionScheme = "none"     (USD's default is catmullClark)
///       uniform bool doubleSided = 1                 (a fixed topology with a border: a sheet)
///       int[] faceVertexCounts / faceVertexIndices   (static, or .timeSamples when the topology
///                                                     changes per frame, e.g. water)
///       point3f[] points.timeSamples, float3[] extent.timeSamples, normal3f[] normals.timeSamples
///       (vertex interpolation, when asked for)
///       primvars:<attribute> (interpolation = "vertex"; time-sampled, or a single value for an
///       attribute the cache holds once), primvars:displayColor,
///       texCoord2f[] primvars:st (static; vertex interpolation, or faceVarying with
///       int[] primvars:st:indices) for a mesh with texture coordinates
///   } }
///
/// Frames stream: each time-sampled attribute is spooled to its own temporary file beside the
/// output, and the layer is assembled from them by commit(), so memory holds one frame.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/mesh_formats.hpp"

namespace datadyn::io {

class AtomicFile;

/// Layer metadata of a USDA stage.
struct UsdaStage {
  double start_time_code = 1;         ///< first frame number
  double end_time_code = 1;           ///< last frame number
  double time_codes_per_second = 24;  ///< frames per second of the cache
  std::string up_axis = "Y";          ///< "Y" or "Z"
  double meters_per_unit = 1;
  Metadata metadata;  ///< written as string entries of customLayerData
};

class UsdaWriter {
 public:
  /// @param mesh_name         prim name; characters outside [A-Za-z0-9_] become '_'
  /// @param varying_topology  faces are time-sampled (each frame's mesh has its own faces);
  ///                          otherwise the faces of the first frame are static and every frame
  ///                          must have the same point count
  /// @param normals           write `normal3f[] normals` (vertex interpolation, time-sampled:
  ///                          vertex_normals of every frame), so that renderers shade the
  ///                          non-subdivided mesh smooth instead of faceted
  UsdaWriter(std::filesystem::path path, UsdaStage stage, std::string mesh_name,
             bool varying_topology, bool normals = false);
  ~UsdaWriter();
  UsdaWriter(const UsdaWriter&) = delete;
  UsdaWriter& operator=(const UsdaWriter&) = delete;

  /// Appends the samples of one frame at `time_code` (increasing): points, extent, faces (varying
  /// topology, or the first frame's as static faces, with the first frame's texture coordinates
  /// as primvars:st), and per-vertex primvars (float[] for one component, float3[] for three;
  /// a static attribute once, from the first frame, as an unsampled value) and
  /// `primvars:displayColor` from `colors`. The attributes and colours must be the same set on
  /// every frame.
  void write_frame(double time_code, const PolygonMesh& mesh,
                   const std::vector<VertexAttribute>& attributes = {},
                   const VertexColors* colors = nullptr);
  /// Assembles the layer and renames it into place. Throws IoError if no frame was written.
  void commit();

 private:
  struct Spool;
  Spool& spool(const std::string& declaration, const std::string& metadata);
  std::filesystem::path path_;
  UsdaStage stage_;
  std::string name_;
  bool varying_;
  bool normals_;
  std::size_t frames_ = 0;
  Eigen::Index points_ = 0;
  std::string static_faces_;
  std::string static_primvars_;                 ///< the static attributes' declarations
  std::vector<std::string> static_attributes_;  ///< and their names
  std::vector<std::unique_ptr<Spool>> spools_;
};

/// `s` as a USDA string literal, quotes included ("a \"b\"\n" -> "\"a \\\"b\\\"\\n\"").
std::string usda_quote(const std::string& s);
/// `s` as a USD identifier: [A-Za-z_][A-Za-z0-9_]* ("my-mesh 2" -> "my_mesh_2", "2x" -> "_2x").
std::string usda_identifier(const std::string& s);

}  // namespace datadyn::io
