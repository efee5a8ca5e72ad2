#pragma once
/// @file
/// XDMF 3 sidecars, so ParaView (and VisIt) open a datadyn cache itself: no data is copied, the
/// `.xmf` points into the HDF5 datasets. One sequence becomes a Temporal collection of Uniform
/// grids, one per frame, each with `<Time Value="seconds"/>`:
///   - points: Geometry XYZ (XY for 2D) from frame f of points/position [F, N, D], selected with
///     XDMF 3's "cache.h5:/path|start:stride:count:dataspace" DataItem content; Topology from
///     topology/triangles, quads or tetrahedra, else Polyvertex; per-vertex Attributes from
///     points/<name> (per-frame arrays by HyperSlab, static as is);
///   - each grid grids/<name> [F, nz, ny, nx]: a 3DCoRectMesh with ORIGIN_DXDYDZ and one Node
///     attribute, in a Temporal collection of its own.
/// Paths in the sidecar are relative to its directory. ParaView opens it with its Xdmf3 readers
/// ("Xdmf3 Reader S/T"; the legacy "XDMF Reader" does not know XDMF 3's selections), which need
/// the `.xmf` path with a directory part (`./cache.xmf`).

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "io/mesh_formats.hpp"

namespace datadyn::io {

/// Writes `xmf` (atomically) for sequence `sequence` of the cache at `cache`, listing the frames
/// at `frame_indices` (0-based, increasing) with the point arrays `attributes`. Metadata goes into
/// `<Information>` elements. Throws IoError for a missing sequence or array.
void write_xdmf(const std::filesystem::path& xmf, const std::filesystem::path& cache,
                const std::string& sequence, const std::vector<std::size_t>& frame_indices,
                const std::vector<std::string>& attributes, const Metadata& metadata = {});

/// `s` with XML's five special characters escaped (for attribute values and text).
std::string xml_escape(const std::string& s);

}  // namespace datadyn::io
