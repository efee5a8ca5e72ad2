#pragma once
/// @file
/// wave-edit's glue: the edit config, the features cache next to the database, and the run that
/// writes the 3D level-set sequence, the report (JSON) and the picture (SVG, like the paper's
/// fig. 7).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "core/shard.hpp"
#include "io/cache.hpp"
#include "wave/slice_blend.hpp"
#include "wave/slice_selection.hpp"

namespace datadyn::wave {

enum class SelectionMethod { Greedy, Optimal };

struct EditParams {
  // Features: the grid every simulation is converted to (eq. 3).
  double grid_spacing = 0.0;               ///< metres; 0: l0 of the database (its attribute)
  std::vector<double> grid_min, grid_max;  ///< metres, [x, y]; empty: the particles' bounds
  double influence_radius = 2.1;           ///< r_e in l0 (MPS's density radius)
  double iso_fraction = 0.5;  ///< surface at this fraction of the bulk density π r_e²/l0²
  std::string features;       ///< features cache; "": <database without .h5>.features.h5

  // The edit (section 5).
  // The defaults are configs/water/edit.json's: a crest rising toward the middle of the front,
  // within the heights mps-gen's built-in database reaches at s = 1 m (0.153-0.270 m).
  double cross_section = 1.0;  ///< s, metres along the travel direction
  std::vector<std::vector<double>> target_points{
      {0.0, 0.16}, {0.45, 0.26}, {0.9, 0.16}};  ///< (z, h)
  /// CSV (z,h per line) or SVG polyline; when given, read_edit_params puts its curve in
  /// target_points (and so in the resolved config)
  std::string target_file;
  double svg_scale = 1.0;      ///< metres per SVG unit (SVG y points down: h = −y · scale)
  int slice_count = 10;        ///< S >= 1
  double slice_spacing = 0.1;  ///< metres between slices
  double first_z = 0.0;        ///< metres, z of slice 0
  double alpha = 0.7;          ///< [0, 1]
  std::vector<FixedSlice> fixed{{4, -1}};
  SelectionMethod method = SelectionMethod::Optimal;
  /// Targets beyond the database's range of H_n(s) by more than this (metres) are refused;
  /// smaller excesses are clamped to the range, with a warning.
  double target_tolerance = 0.05;
  bool align_time = false;         ///< shift slices so the waves reach s together
  double arrival_fraction = 0.25;  ///< arrival = h(s, t) risen by this fraction of its rise
  BlendMethod blend = BlendMethod::Linear;
  double band = 3.0;  ///< level-set half width, voxels
  /// Close the water body half a slice spacing beyond the outer slices (each slice stands for
  /// the slab of water around it), so its surface is closed; false: the grid ends at the outer
  /// slices and the surface is open there.
  bool close_ends = true;
};

void read_edit_params(app::ConfigReader& r, EditParams& p);

struct EditRun {
  std::filesystem::path database, output, report, plot;
  std::filesystem::path features;  ///< the features cache (read if it matches, else rewritten)
  app::ConfigOrigin origin;  ///< where the config's values came from, for errors found running
  std::optional<std::vector<std::int64_t>> frames;  ///< database frame numbers; all if empty
  Shard shard;  ///< `--shard K/N`: the K-th contiguous part of those frames
  bool dry_run = false;
  io::Provenance provenance;
};

/// Runs the edit. Throws ConfigError for targets out of range or fixed slices out of range,
/// IoError for a database that is not usable (not 2D, mixed frame rates or frame counts).
void run_wave_edit(const EditParams& params, const EditRun& run);

}  // namespace datadyn::wave
