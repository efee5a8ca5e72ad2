#pragma once
/// @file
/// Readers for triangle meshes (Wavefront OBJ) and tetrahedral meshes (TetGen .node/.ele).
/// Every error throws IoError with `file:line: what was found, what was expected`.

#include <filesystem>

#include "core/surface_mesh.hpp"
#include "core/tet_mesh.hpp"

namespace datadyn {

/// Whether load_obj reads texture coordinates: a body or a pose needs only the geometry, and a
/// damaged `vt` line there should not stop it.
enum class ObjTexture { Ignore, Read };

/// Reads the geometry of a Wavefront OBJ file, and its texture coordinates with ObjTexture::Read.
/// `v x y z [w ...]` lines give vertices (metres; extra numbers such as w or vertex colours are
/// ignored); `vt u [v [w]]` lines give texture coordinates (v = 0 when missing, w ignored; within
/// float32's range); `f` lines give polygons with corners `v`, `v/vt`, `v/vt/vn` or `v//vn`,
/// 1-based, or negative = relative to the last vertex (texture coordinate) read so far (-1 is
/// the last). Polygons with more than three corners are cut into triangles: a convex one as a fan
/// from its first corner, (c0, c_i, c_i+1), a concave one by ear clipping in its plane; the
/// polygons as given are kept in SurfaceMesh::polygons. `#` starts a comment; a line ending in `\`
/// continues on the next line; vn, o, g, s, usemtl, mtllib, l, p and any other statement are
/// ignored (as Blender and Houdini do), and so are vt lines and the vt of a corner (but for its
/// syntax) with ObjTexture::Ignore. Positive face indices may refer to vertices defined later in
/// the file.
/// @return #V vertices and #T triangles, in file order, winding kept as in the file; with
///   ObjTexture::Read the `vt` values and every triangle corner's index into them when some
///   corner has one (a corner without one gets (0, 0), an extra last row, as Blender's importer
///   gives it).
/// @throws IoError if the file cannot be read, a number is malformed or not finite, a face has
///   fewer than three corners, an index is 0 or out of range, or the file has no vertex.
SurfaceMesh load_obj(const std::filesystem::path& path, ObjTexture texture = ObjTexture::Ignore);

/// Reads a TetGen mesh: `stem.node` and `stem.ele`.
/// @param node_or_ele_or_stem `mesh.node`, `mesh.ele` or the stem `mesh` (`mesh.1` means
///   `mesh.1.node` and `mesh.1.ele`).
/// .node: header `<#points> 3 <#attributes> <0|1 markers>`, then `<index> x y z [attrs] [marker]`.
/// .ele: header `<#tets> <4|10 nodes per tet> <0|1 region attribute>`, then
/// `<index> n0 n1 n2 n3 [n4..n9] [attr]`. `#` starts a comment anywhere. Numbering is 0- or
/// 1-based as the first point index of the .node file says (TetGen's rule); point indices must
/// then be consecutive. Attributes, markers and second-order nodes are skipped.
/// @return #V vertices (metres) and #K tets in file order; a tet with negative volume gets its
///   vertices 2 and 3 swapped so that all are positively oriented.
/// @throws IoError if a file is missing or malformed, an index is out of range, or a tet has zero
///   volume (its four points coplanar).
TetMesh load_tetgen(const std::filesystem::path& node_or_ele_or_stem);

}  // namespace datadyn
