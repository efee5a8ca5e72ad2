#include "io/xdmf_writer.hpp"

#include <hdf5.h>

#include <map>

#include "core/errors.hpp"
#include "io/atomic_file.hpp"
#include "io/cache.hpp"
#include "io/hdf5_handle.hpp"
#include "io/number_text.hpp"

namespace datadyn::io {

namespace {

/// XDMF NumberType and Precision of a dataset as stored in the file.
struct NumberType {
  std::string type = "Float";
  int precision = 4;
};

NumberType number_type(hid_t file, const std::string& file_name, const std::string& path) {
  h5::Handle ds = h5::check_id(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose,
                               file_name + ": " + path + ": cannot open dataset");
  h5::Handle type(H5Dget_type(ds.get()), H5Tclose);
  NumberType n;
  n.precision = static_cast<int>(H5Tget_size(type.get()));
  if (H5Tget_class(type.get()) == H5T_FLOAT) {
    n.type = "Float";
  } else {
    const bool is_signed = H5Tget_sign(type.get()) == H5T_SGN_2;
    n.type = n.precision == 1 ? (is_signed ? "Char" : "UChar") : (is_signed ? "Int" : "UInt");
  }
  return n;
}

std::string dims(const Shape& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? " " : "") + std::to_string(s[i]);
  return out;
}

std::string number(double v) {
  std::string s;
  text::append_number(s, v);
  return s;
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void write_xdmf(const std::filesystem::path& xmf, const std::filesystem::path& cache,
                const std::string& sequence, const std::vector<std::size_t>& frame_indices,
                const std::vector<std::string>& attributes, const Metadata& metadata) {
  const CacheReader reader(cache);
  const SequenceReader seq = reader.sequence(sequence);
  const std::string file_name = cache.string();
  const h5::ReadScope reading(file_name);
  h5::Handle file =
      h5::check_id(H5Fopen(file_name.c_str(), H5F_ACC_RDONLY, h5::file_access_plist().get()),
                   H5Fclose, file_name + ": cannot open");

  std::error_code ec;
  const auto xmf_dir = std::filesystem::absolute(xmf, ec).parent_path();
  auto rel = std::filesystem::relative(std::filesystem::absolute(cache, ec), xmf_dir, ec);
  if (ec || rel.empty()) rel = std::filesystem::absolute(cache, ec);
  const std::string h5name = xml_escape(rel.string());
  const std::string group = "/sequences/" + sequence;
  std::map<std::string, NumberType> types;  // per dataset, looked up once
  auto type_of = [&](const std::string& path) -> const NumberType& {
    auto it = types.find(path);
    if (it == types.end())
      it = types.emplace(path, number_type(file.get(), file_name, group + "/" + path)).first;
    return it->second;
  };

  // Item `f` of a dataset of shape `full` (F first), selected by the XDMF 3 heavy-data syntax
  // "file:/path|start:stride:count:dataspace". (ParaView's Xdmf3 readers do not read the XDMF 2
  // HyperSlab DataItem: they report "unrecognized array type [None]" and show no points.)
  auto slab = [&](const std::string& path, const Shape& full, std::size_t f,
                  const std::string& indent) {
    const NumberType& nt = type_of(path);
    Shape count = full;
    count[0] = 1;
    std::string start = std::to_string(f), stride = "1";
    for (std::size_t i = 1; i < full.size(); ++i) {
      start += " 0";
      stride += " 1";
    }
    return indent + "<DataItem Dimensions=\"" + dims(count) + "\" NumberType=\"" + nt.type +
           "\" Precision=\"" + std::to_string(nt.precision) + "\" Format=\"HDF\">" + h5name + ":" +
           group + "/" + path + "|" + start + ":" + stride + ":" + dims(count) + ":" + dims(full) +
           "</DataItem>\n";
  };
  auto whole = [&](const std::string& path, const std::string& indent) {
    const NumberType& nt = type_of(path);
    return indent + "<DataItem Dimensions=\"" + dims(seq.shape(path)) + "\" NumberType=\"" +
           nt.type + "\" Precision=\"" + std::to_string(nt.precision) + "\" Format=\"HDF\">" +
           h5name + ":" + group + "/" + path + "</DataItem>\n";
  };

  for (const auto& a : attributes)
    if (!seq.has("points/" + a))
      throw IoError(file_name + ": " + group + "/points/" + a + ": no such point array");

  AtomicFile out(xmf);
  std::string x = "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n";
  x += "<Xdmf xmlns:xi=\"http://www.w3.org/2001/XInclude\" Version=\"3.0\">\n  <Domain>\n";
  for (const auto& [k, v] : metadata)
    x += "    <Information Name=\"" + xml_escape(k) + "\" Value=\"" + xml_escape(v) + "\"/>\n";
  out.write(x);

  const auto& times = seq.times();
  const auto& frames = seq.frames();
  if (seq.has("points/position")) {
    const Shape pshape = seq.shape("points/position");
    const std::size_t n = pshape[1];
    std::string topo_kind, topo_type;
    for (const auto& [kind, type] : {std::pair<std::string, std::string>{"triangles", "Triangle"},
                                     {"quads", "Quadrilateral"},
                                     {"tetrahedra", "Tetrahedron"}})
      if (topo_kind.empty() && seq.has("topology/" + kind)) {
        topo_kind = kind;
        topo_type = type;
      }
    x = "    <Grid Name=\"" + xml_escape(sequence) +
        "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (std::size_t f : frame_indices) {
      x += "      <Grid Name=\"" + xml_escape(sequence) + "_" + std::to_string(frames.at(f)) +
           "\" GridType=\"Uniform\">\n";
      x += "        <Time Value=\"" + number(times.at(f)) + "\"/>\n";
      if (!topo_kind.empty()) {
        const Shape t = seq.shape("topology/" + topo_kind);
        x += "        <Topology TopologyType=\"" + topo_type + "\" NumberOfElements=\"" +
             std::to_string(t[0]) + "\">\n" + whole("topology/" + topo_kind, "          ") +
             "        </Topology>\n";
      } else if (f == frame_indices.front()) {
        // Points without faces: one vertex cell per point. ParaView's Xdmf3 reader shows a
        // Polyvertex without connectivity as points with no cell, which no representation
        // draws; the list 0..n-1 is written once, in the first frame, and included by the
        // others (its path: Xdmf, Domain, the sequence's Grid after the Information elements,
        // the first frame's Grid, its Topology after Time).
        x += "        <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" +
             std::to_string(n) + "\" NodesPerElement=\"1\">\n          <DataItem Dimensions=\"" +
             std::to_string(n) + "\" NumberType=\"Int\" Format=\"XML\">";
        for (std::size_t i = 0; i < n; ++i) x += (i ? " " : "") + std::to_string(i);
        x += "</DataItem>\n        </Topology>\n";
      } else {
        x += "        <xi:include xpointer=\"element(/1/1/" + std::to_string(metadata.size() + 1) +
             "/1/2)\"/>\n";
      }
      x += std::string("        <Geometry GeometryType=\"") +
           (seq.dimension() == 2 ? "XY" : "XYZ") + "\">\n" +
           slab("points/position", pshape, f, "          ") + "        </Geometry>\n";
      for (const auto& a : attributes) {
        const std::string path = "points/" + a;
        const Shape s = seq.shape(path);
        const bool per_frame = seq.is_per_frame(path);
        std::size_t comps = 1;
        for (std::size_t i = per_frame ? 2 : 1; i < s.size(); ++i) comps *= s[i];
        const char* type = comps == 1 ? "Scalar" : comps == 3 ? "Vector" : "Matrix";
        x += "        <Attribute Name=\"" + xml_escape(a) + "\" AttributeType=\"" + type +
             "\" Center=\"Node\">\n" +
             (per_frame ? slab(path, s, f, "          ") : whole(path, "          ")) +
             "        </Attribute>\n";
      }
      x += "      </Grid>\n";
      if (x.size() > (1u << 20)) {
        out.write(x);
        x.clear();
      }
    }
    x += "    </Grid>\n";
    out.write(x);
  }
  for (const auto& g : seq.grids()) {
    const GridSpec spec = seq.grid_spec(g);
    const Shape gshape = seq.shape("grids/" + g);
    x = "    <Grid Name=\"" + xml_escape(sequence + "/" + g) +
        "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (std::size_t f : frame_indices) {
      x += "      <Grid Name=\"" + xml_escape(g) + "_" + std::to_string(frames.at(f)) +
           "\" GridType=\"Uniform\">\n";
      x += "        <Time Value=\"" + number(times.at(f)) + "\"/>\n";
      x += "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" +
           std::to_string(spec.nz) + " " + std::to_string(spec.ny) + " " + std::to_string(spec.nx) +
           "\"/>\n";
      x += "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n";
      x += "          <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
           "Format=\"XML\">" +
           number(spec.origin.z()) + " " + number(spec.origin.y()) + " " + number(spec.origin.x()) +
           "</DataItem>\n";
      x += "          <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
           "Format=\"XML\">" +
           number(spec.voxel_size) + " " + number(spec.voxel_size) + " " + number(spec.voxel_size) +
           "</DataItem>\n";
      x += "        </Geometry>\n";
      x += "        <Attribute Name=\"" + xml_escape(g) +
           "\" AttributeType=\"Scalar\" Center=\"Node\">\n" +
           slab("grids/" + g, gshape, f, "          ") + "        </Attribute>\n";
      x += "      </Grid>\n";
      if (x.size() > (1u << 20)) {
        out.write(x);
        x.clear();
      }
    }
    x += "    </Grid>\n";
    out.write(x);
  }
  out.write("  </Domain>\n</Xdmf>\n");
  out.commit();
}

}  // namespace datadyn::io
