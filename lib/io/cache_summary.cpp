#include "io/cache_summary.hpp"

#include <cmath>
#include <sstream>

#include "core/errors.hpp"
#include "io/cache.hpp"

namespace datadyn::io {

std::string cache_summary(const std::filesystem::path& path) {
  CacheReader r(path);
  const Provenance p = r.provenance();
  std::ostringstream os;
  os << path.string() << ": datadyn cache, format version " << r.format_version() << "\n"
     << "  generator:    " << p.generator << "\n"
     << "  created:      " << p.created_utc << "\n"
     << "  command line: " << p.command_line << "\n";
  const auto names = r.sequence_names();
  os << "  sequences:    " << names.size() << "\n";
  for (const auto& name : names) {
    const SequenceReader s = r.sequence(name);
    os << "  /sequences/" << name << ": " << s.frame_count() << " frames";
    if (s.frame_count() > 0)
      os << " (" << s.frames().front() << "-" << s.frames().back() << ", t " << s.times().front()
         << "-" << s.times().back() << " s)";
    os << " at " << s.frame_rate() << " fps, " << s.dimension() << "D, " << s.point_count()
       << " points\n";
    for (const auto& a : s.point_arrays())
      os << "    points/" << a << " " << shape_string(s.shape("points/" + a))
         << (s.is_per_frame("points/" + a) ? " per frame" : " static") << "\n";
    if (s.has("rest/position"))
      os << "    rest/position " << shape_string(s.shape("rest/position")) << "\n";
    for (const auto& t : s.topologies())
      os << "    topology/" << t << " " << shape_string(s.shape("topology/" + t)) << "\n";
    for (const auto& g : s.grids()) {
      const GridSpec spec = s.grid_spec(g);
      os << "    grids/" << g << " " << shape_string(s.shape("grids/" + g)) << " "
         << (spec.grid_class == GridClass::LevelSet ? "level_set" : "density") << ", voxel "
         << spec.voxel_size << " m, origin (" << spec.origin.x() << ", " << spec.origin.y() << ", "
         << spec.origin.z() << ")\n";
    }
    for (const auto& [k, v] : s.attributes())
      if (k != "frame_rate" && k != "dimension")
        os << "    @" << k << " = " << attribute_string(v) << "\n";
  }
  return os.str();
}

void check_cache(const std::filesystem::path& path,
                 const std::function<void(const std::string&, std::size_t)>& on_sequence) {
  CacheReader r(path);
  for (const auto& name : r.sequence_names()) {
    const SequenceReader s = r.sequence(name);
    std::vector<std::string> per_frame;
    for (const auto& a : s.point_arrays()) {
      const std::string rel = "points/" + a;
      if (s.is_per_frame(rel))
        per_frame.push_back(rel);
      else
        (void)s.read_static<double>(rel);
    }
    for (const auto& g : s.grids()) per_frame.push_back("grids/" + g);
    if (s.has("rest/position")) (void)s.read_static<double>("rest/position");
    for (const auto& t : s.topologies()) (void)s.topology(t);  // checks index ranges
    for (std::size_t f = 0; f < s.frame_count(); ++f) {
      for (const auto& rel : per_frame) {
        const Array<double> a = s.read_frame<double>(rel, f);
        for (double v : a.data) {
          if (!std::isfinite(v)) {
            throw IoError(path.string() + ": /sequences/" + name + "/" + rel + ": frame " +
                          std::to_string(s.frames()[f]) + " holds NaN or infinity");
          }
        }
      }
    }
    if (on_sequence) on_sequence(name, s.frame_count());
  }
}

}  // namespace datadyn::io
