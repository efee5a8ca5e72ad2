#include "flesh/skin_loader_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <assimp/Importer.hpp>

#include "core/errors.hpp"

namespace datadyn::flesh {
namespace {

/// motion.start must lie inside the animation: past its end every frame is the last pose, a
/// frozen body written with exit 0.
void check_start(const std::filesystem::path& path, double start, double duration) {
  if (start < duration || (duration <= 0 && start == 0)) return;
  throw UsageError("motion.start: " + std::to_string(start) + " s is at or past the end of " +
                   path.string() + "'s first animation (" + std::to_string(duration) +
                   " s); expected a start within it");
}

/// The MOTION header of a BVH file (one that starts with HIERARCHY), checked before assimp reads
/// it: "Frames:" a whole number from 1 to the count of values after the header (each frame holds
/// one per channel), "Frame Time:" seconds per frame in [1e-6, 1000]. assimp took a frame time of
/// 0 or -1 (the motion then sampled at an infinite or negative rate, exit 0) and reserved
/// memory for "Frames: -4" read as 4e9 ("std::bad_alloc"). Throws IoError naming the file and
/// the line as assimp names its own parse errors; a header laid out otherwise is left to assimp.
void check_bvh_motion_header(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const auto tokens = [](const std::string& line) {
    std::istringstream words(line);
    std::vector<std::string> out;
    for (std::string w; words >> w;) out.push_back(w);
    return out;
  };
  std::size_t k = 0;
  while (k < lines.size() && tokens(lines[k]).empty()) ++k;
  if (k == lines.size() || tokens(lines[k])[0] != "HIERARCHY") return;  // not a BVH
  while (k < lines.size() && (tokens(lines[k]).empty() || tokens(lines[k])[0] != "MOTION")) ++k;
  const auto fail = [&](std::size_t line, const std::string& what) {
    const std::string name = path.string();
    throw IoError(name + ": cannot read the motion: " + name + ":" + std::to_string(line + 1) +
                  " - " + what);
  };
  // The header's two lines and the number in each; nullopt where it is laid out otherwise.
  const auto value = [&](std::size_t line, std::size_t words) -> std::optional<std::string> {
    if (line >= lines.size()) return std::nullopt;
    const auto t = tokens(lines[line]);
    if (t.size() != words + 1) return std::nullopt;
    return t.back();
  };
  const auto number = [](const std::string& text) -> std::optional<double> {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') return std::nullopt;
    return v;
  };
  const auto next_line = [&](std::size_t l) {  // the first line after l with a word
    ++l;
    while (l < lines.size() && tokens(lines[l]).empty()) ++l;
    return l;
  };
  const std::size_t frames_line = next_line(k), time_line = next_line(frames_line);
  if (frames_line >= lines.size() || tokens(lines[frames_line])[0] != "Frames:") return;
  const auto frames_text = value(frames_line, 1);
  const auto frames = frames_text ? number(*frames_text) : std::nullopt;
  if (!frames) return;  // assimp names what it found
  std::size_t values = 0;
  for (std::size_t l = time_line + 1; l < lines.size(); ++l) values += tokens(lines[l]).size();
  if (!(*frames >= 1 && *frames <= static_cast<double>(std::max<std::size_t>(values, 1)) &&
        *frames == std::floor(*frames)))
    fail(frames_line, "Frames is " + *frames_text +
                          ", expected a whole number of frames from 1 to the " +
                          std::to_string(values) + " values that follow the header");
  const auto t = tokens(time_line < lines.size() ? lines[time_line] : std::string());
  if (t.size() < 2 || t[0] != "Frame" || t[1] != "Time:") return;
  const auto time_text = value(time_line, 2);
  const auto time = time_text ? number(*time_text) : std::nullopt;
  if (!time) return;
  if (!(*time >= 1e-6 && *time <= 1e3))
    fail(time_line, "Frame Time is " + *time_text +
                        ", expected seconds per frame in [1e-06, 1000] (0.0333333 for 30 fps)");
}

/// The tick of the animation's first key. Times are counted from it: assimp starts an FBX take at
/// 0, while a glTF animation keeps its absolute times (Blender's exporter puts frame f at f / fps,
/// so an animation from frame 1 starts one frame in).
double first_key(const aiAnimation& anim) {
  double first = anim.mDuration;
  for (unsigned c = 0; c < anim.mNumChannels; ++c) {
    const aiNodeAnim& ch = *anim.mChannels[c];
    if (ch.mNumPositionKeys > 0) first = std::min(first, ch.mPositionKeys[0].mTime);
    if (ch.mNumRotationKeys > 0) first = std::min(first, ch.mRotationKeys[0].mTime);
    if (ch.mNumScalingKeys > 0) first = std::min(first, ch.mScalingKeys[0].mTime);
  }
  return std::max(0.0, first);
}

Eigen::Matrix4d to_eigen(const aiMatrix4x4& m) {
  Eigen::Matrix4d e;
  e << m.a1, m.a2, m.a3, m.a4, m.b1, m.b2, m.b3, m.b4, m.c1, m.c2, m.c3, m.c4, m.d1, m.d2, m.d3,
      m.d4;
  return e;
}

/// Index of the last key with time <= t and the blend weight towards the next one.
template <class Key>
std::pair<unsigned, double> bracket(const Key* keys, unsigned count, double t) {
  if (count == 1 || t <= keys[0].mTime) return {0u, 0.0};
  for (unsigned k = 0; k + 1 < count; ++k)
    if (t < keys[k + 1].mTime)
      return {k, (t - keys[k].mTime) / (keys[k + 1].mTime - keys[k].mTime)};
  return {count - 1, 0.0};
}

Eigen::Matrix4d sample(const aiNodeAnim& ch, double ticks, const Eigen::Matrix4d& fallback) {
  Eigen::Vector3d t = fallback.block<3, 1>(0, 3), s = Eigen::Vector3d::Ones();
  Eigen::Quaterniond r(Eigen::Matrix3d(fallback.block<3, 3>(0, 0)));
  if (ch.mNumPositionKeys > 0) {
    const auto [k, w] = bracket(ch.mPositionKeys, ch.mNumPositionKeys, ticks);
    const aiVector3D a = ch.mPositionKeys[k].mValue;
    const aiVector3D b = ch.mPositionKeys[std::min(k + 1, ch.mNumPositionKeys - 1)].mValue;
    t = (1 - w) * Eigen::Vector3d(a.x, a.y, a.z) + w * Eigen::Vector3d(b.x, b.y, b.z);
  }
  if (ch.mNumRotationKeys > 0) {
    const auto [k, w] = bracket(ch.mRotationKeys, ch.mNumRotationKeys, ticks);
    const aiQuaternion a = ch.mRotationKeys[k].mValue;
    const aiQuaternion b = ch.mRotationKeys[std::min(k + 1, ch.mNumRotationKeys - 1)].mValue;
    r = Eigen::Quaterniond(a.w, a.x, a.y, a.z).slerp(w, Eigen::Quaterniond(b.w, b.x, b.y, b.z));
  }
  if (ch.mNumScalingKeys > 0) {
    const auto [k, w] = bracket(ch.mScalingKeys, ch.mNumScalingKeys, ticks);
    const aiVector3D a = ch.mScalingKeys[k].mValue;
    const aiVector3D b = ch.mScalingKeys[std::min(k + 1, ch.mNumScalingKeys - 1)].mValue;
    s = (1 - w) * Eigen::Vector3d(a.x, a.y, a.z) + w * Eigen::Vector3d(b.x, b.y, b.z);
  }
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.block<3, 3>(0, 0) = r.normalized().toRotationMatrix() * s.asDiagonal();
  m.block<3, 1>(0, 3) = t;
  return m;
}

/// The map from the scene's root space to metres with Y up. FBX files declare their axes and unit
/// in the scene's metadata, which assimp 5.2 reports without applying: UpAxis, FrontAxis (towards
/// the viewer) and CoordAxis (the right axis; 0, 1, 2 for x, y, z) with their signs, and
/// UnitScaleFactor in centimetres per unit. In a right-handed frame front = right x up; a file
/// whose front is the opposite holds left-handed data, and the map is a mirror (its front to +z),
/// so that the character keeps its handedness (LoadedSkin::mirrored). Without FrontAxis the frame
/// is taken as right-handed. Blender's default FBX export, for one, writes its Z-up data under a
/// root rotation to Y up, and 1 unit = 1 cm; its "Z up" export leaves the data Z up and says so.
/// Files without them (glTF: metres, Y up) map as they are.
Eigen::Matrix4d root_to_metres(const std::filesystem::path& path, const aiScene& scene,
                               std::string* description, bool* mirrored) {
  Eigen::Matrix4d c = Eigen::Matrix4d::Identity();
  int up = 1, up_sign = 1, right = 0, right_sign = 1, front = -1, front_sign = 1;
  float unit_cm = 100;
  const aiMetadata* meta = scene.mMetaData;
  const bool axes = meta && meta->Get("UpAxis", up) && meta->Get("CoordAxis", right);
  const bool unit = meta && meta->Get("UnitScaleFactor", unit_cm);
  if (!axes && !unit) {
    *description = "no declared axes or unit: taken as metres, Y up";
    return c;
  }
  if (meta) {
    meta->Get("UpAxisSign", up_sign);
    meta->Get("CoordAxisSign", right_sign);
    if (meta->Get("FrontAxis", front)) meta->Get("FrontAxisSign", front_sign);
  }
  if (up < 0 || up > 2 || right < 0 || right > 2 || up == right || std::abs(up_sign) != 1 ||
      std::abs(right_sign) != 1)
    throw IoError(path.string() + ": the file declares up axis " + std::to_string(up_sign * up) +
                  " and right axis " + std::to_string(right_sign * right) +
                  "; expected two different axes among 0, 1, 2 (x, y, z) with signs +-1");
  if (!(unit_cm > 0) || !std::isfinite(unit_cm))
    throw IoError(path.string() + ": the file declares a unit of " + std::to_string(unit_cm) +
                  " cm; expected a positive size");
  Eigen::Matrix3d r = Eigen::Matrix3d::Zero();
  r(0, right) = right_sign;
  r(1, up) = up_sign;
  r.row(2) = r.row(0).cross(r.row(1));
  const char* names[] = {"x", "y", "z"};
  std::string handed;
  if (front >= 0) {
    Eigen::RowVector3d declared = Eigen::RowVector3d::Zero();
    if (front <= 2 && std::abs(front_sign) == 1) declared[front] = front_sign;
    if (declared == -r.row(2)) {
      r.row(2) = declared;
      *mirrored = true;
      handed = std::string(", ") + (front_sign < 0 ? "-" : "+") + names[front] +
               " front (left-handed: mirrored)";
    } else if (declared != r.row(2)) {
      throw IoError(path.string() + ": the file declares front axis " +
                    std::to_string(front_sign * front) + " with up axis " +
                    std::to_string(up_sign * up) + " and right axis " +
                    std::to_string(right_sign * right) +
                    "; expected the third axis (0, 1, 2 for x, y, z) with a sign +-1");
    }
  }
  c.topLeftCorner<3, 3>() = 0.01 * unit_cm * r;
  *description = std::string("declared ") + (up_sign < 0 ? "-" : "+") + names[up] + " up, " +
                 (right_sign < 0 ? "-" : "+") + names[right] + " right" + handed +
                 ", 1 unit = " + std::to_string(unit_cm) + " cm: converted to metres, +y up";
  return c;
}

}  // namespace

LoadedSkin load_skin_animation(const std::filesystem::path& path,
                               const std::vector<double>& times) {
  Assimp::Importer importer;
  // Triangulate only: no vertex joining, so vertex i stays the file's vertex i.
  const aiScene* scene = importer.ReadFile(path.string(), aiProcess_Triangulate);
  if (!scene || !scene->mRootNode)
    throw IoError(path.string() + ": cannot read the skinned mesh: " + importer.GetErrorString());
  const aiMesh* mesh = nullptr;
  unsigned mesh_index = 0;
  for (unsigned m = 0; m < scene->mNumMeshes && !mesh; ++m)
    if (scene->mMeshes[m]->mNumBones > 0) {
      mesh = scene->mMeshes[m];
      mesh_index = m;
    }
  if (!mesh) throw IoError(path.string() + ": no skinned mesh (a mesh with bones) in the file");

  LoadedSkin out;
  out.mesh_name = mesh->mName.C_Str();
  for (unsigned m = 0; m < scene->mNumMeshes; ++m)
    if (scene->mMeshes[m]->mNumBones > 0) ++out.skinned_meshes;
  // Everything in the scene's world (the root's space times the file's axes and unit): the
  // mesh's and the armature's object transforms placed the character there.
  const Eigen::Matrix4d world = root_to_metres(path, *scene, &out.axes, &out.mirrored);
  out.triangles.resize(mesh->mNumFaces, 3);
  for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
    if (mesh->mFaces[f].mNumIndices != 3)
      throw IoError(path.string() + ": face " + std::to_string(f) + " is not a triangle");
    for (int c = 0; c < 3; ++c) out.triangles(f, c) = static_cast<int>(mesh->mFaces[f].mIndices[c]);
    // A mirror turns the faces inside out: their winding turns back with it.
    if (out.mirrored) std::swap(out.triangles(f, 1), out.triangles(f, 2));
  }
  if (mesh->HasTextureCoords(0)) {
    out.uv.resize(mesh->mNumVertices, 2);
    for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
      out.uv.row(v) << mesh->mTextureCoords[0][v].x, mesh->mTextureCoords[0][v].y;
      if (!out.uv.row(v).allFinite())
        throw IoError(path.string() + ": texture coordinate of vertex " + std::to_string(v) +
                      " is not finite");
    }
  }
  out.weights = Eigen::MatrixXd::Zero(mesh->mNumVertices, mesh->mNumBones);
  const aiAnimation* anim = scene->mNumAnimations > 0 ? scene->mAnimations[0] : nullptr;
  const double tps = anim && anim->mTicksPerSecond > 0 ? anim->mTicksPerSecond : 1.0;
  const double first = anim ? first_key(*anim) : 0.0;
  out.animated = anim != nullptr && anim->mNumChannels > 0;
  out.duration = anim ? (anim->mDuration - first) / tps : 0.0;
  if (anim && !times.empty()) check_start(path, times.front(), (anim->mDuration - first) / tps);
  const auto local = [&](const aiNode* node, double ticks) {
    const Eigen::Matrix4d rest = to_eigen(node->mTransformation);
    if (anim)
      for (unsigned c = 0; c < anim->mNumChannels; ++c)
        if (anim->mChannels[c]->mNodeName == node->mName)
          return sample(*anim->mChannels[c], ticks, rest);
    return rest;
  };
  std::vector<const aiNode*> nodes;
  for (unsigned b = 0; b < mesh->mNumBones; ++b) {
    const aiBone* bone = mesh->mBones[b];
    for (unsigned k = 0; k < bone->mNumWeights; ++k)
      out.weights(bone->mWeights[k].mVertexId, b) = bone->mWeights[k].mWeight;
    const aiNode* node = scene->mRootNode->FindNode(bone->mName);
    if (!node)
      throw IoError(path.string() + ": bone \"" + std::string(bone->mName.C_Str()) +
                    "\" has no node in the scene");
    nodes.push_back(node);
  }
  const auto rest_global = [](const aiNode* node) {
    Eigen::Matrix4d g = Eigen::Matrix4d::Identity();
    for (const aiNode* n = node; n; n = n->mParent) g = to_eigen(n->mTransformation) * g;
    return g;
  };
  // Where the mesh's vertices sit in the bind pose. FBX and most formats place a mesh by the
  // node holding it. glTF ignores that node for a skinned mesh: its joints alone place it
  // (glTF 2.0, "Skins"), so there it is where the most weighted joint puts it at rest.
  Eigen::Matrix4d placement = Eigen::Matrix4d::Identity();
  aiString format;
  const bool gltf = scene->mMetaData && scene->mMetaData->Get("SourceAsset_Format", format) &&
                    std::string(format.C_Str()).starts_with("glTF");
  if (gltf) {
    Eigen::Index heaviest = 0;
    out.weights.colwise().sum().maxCoeff(&heaviest);
    placement = rest_global(nodes[static_cast<std::size_t>(heaviest)]) *
                to_eigen(mesh->mBones[heaviest]->mOffsetMatrix);
  } else {
    std::function<const aiNode*(const aiNode*)> holder = [&](const aiNode* n) -> const aiNode* {
      for (unsigned i = 0; i < n->mNumMeshes; ++i)
        if (n->mMeshes[i] == mesh_index) return n;
      for (unsigned c = 0; c < n->mNumChildren; ++c)
        if (const aiNode* h = holder(n->mChildren[c])) return h;
      return nullptr;
    };
    placement = rest_global(holder(scene->mRootNode));
  }
  const Eigen::Matrix4d mesh_to_world = world * placement;
  const Eigen::Matrix4d world_to_mesh = mesh_to_world.inverse();
  if (!mesh_to_world.allFinite() || !world_to_mesh.allFinite())
    throw IoError(path.string() + ": the placement of the skinned mesh (" +
                  (gltf ? "its most weighted joint at rest" : "the node holding it") +
                  ") is singular or not finite");
  out.rest.resize(mesh->mNumVertices, 3);
  for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
    const Eigen::Vector4d x(mesh->mVertices[v].x, mesh->mVertices[v].y, mesh->mVertices[v].z, 1);
    out.rest.row(v) = (mesh_to_world * x).head<3>().transpose();
  }
  // The joints in the bind pose: the origins of the bones' frames, offset^-1 (0, 0, 0, 1) in
  // the mesh's space.
  for (unsigned b = 0; b < mesh->mNumBones; ++b)
    out.joints.push_back(
        (mesh_to_world * to_eigen(mesh->mBones[b]->mOffsetMatrix).inverse()).block<3, 1>(0, 3));
  for (const aiNode* node : nodes) {
    int parent = -1;
    for (const aiNode* n = node->mParent; n && parent < 0; n = n->mParent)
      for (std::size_t j = 0; j < nodes.size(); ++j)
        if (nodes[j] == n) parent = static_cast<int>(j);
    out.parents.push_back(parent);
  }
  for (const double time : times) {
    std::vector<Eigen::Isometry3d> S(nodes.size());
    for (std::size_t b = 0; b < nodes.size(); ++b) {
      Eigen::Matrix4d global = Eigen::Matrix4d::Identity();
      for (const aiNode* n = nodes[b]; n; n = n->mParent)
        global = local(n, first + time * tps) * global;
      // World bind pose -> mesh space -> bone space (offset) -> the posed bone in the world.
      S[b].matrix() = world * global * to_eigen(mesh->mBones[b]->mOffsetMatrix) * world_to_mesh;
    }
    out.motion.push_back(std::move(S));
  }
  if (!out.motion.empty()) out.transforms = out.motion.front();
  return out;
}

LoadedSkin load_skin(const std::filesystem::path& path, double time) {
  LoadedSkin out = load_skin_animation(path, {time});
  out.motion.clear();
  return out;
}

ChainMotion load_chain_motion(const std::filesystem::path& path, const std::string& root,
                              const std::vector<std::string>& joints, double scale, double start,
                              double frame_rate, int frames) {
  check_bvh_motion_header(path);
  Assimp::Importer importer;
  const aiScene* scene = importer.ReadFile(path.string(), 0);
  if (!scene || !scene->mRootNode)
    throw IoError(path.string() + ": cannot read the motion: " + importer.GetErrorString());
  if (scene->mNumAnimations == 0) throw IoError(path.string() + ": no animation in the file");
  const aiAnimation* anim = scene->mAnimations[0];
  const double tps = anim->mTicksPerSecond > 0 ? anim->mTicksPerSecond : 1.0;
  const double first = first_key(*anim);
  check_start(path, start, (anim->mDuration - first) / tps);
  const auto find = [&](const std::string& name, int joint) {
    const aiNode* n = scene->mRootNode->FindNode(name.c_str());
    if (!n) {
      std::vector<std::string> names;
      std::function<void(const aiNode*)> walk = [&](const aiNode* node) {
        names.emplace_back(node->mName.C_Str());
        for (unsigned c = 0; c < node->mNumChildren; ++c) walk(node->mChildren[c]);
      };
      walk(scene->mRootNode);
      throw MissingJoint(path.string() + ": no joint \"" + name + "\" in the skeleton", joint,
                         std::move(names));
    }
    return n;
  };
  const auto local = [&](const aiNode* node, double ticks) {
    const Eigen::Matrix4d rest = to_eigen(node->mTransformation);
    for (unsigned c = 0; c < anim->mNumChannels; ++c)
      if (anim->mChannels[c]->mNodeName == node->mName)
        return sample(*anim->mChannels[c], ticks, rest);
    return rest;
  };
  const aiNode* root_node = find(root, -1);
  std::vector<const aiNode*> joint_nodes;
  for (std::size_t j = 0; j < joints.size(); ++j)
    joint_nodes.push_back(find(joints[j], static_cast<int>(j)));
  ChainMotion motion;
  motion.kind = "keyframes";
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();
  for (int f = 0; f < frames; ++f) {
    const double t = start + f / frame_rate;
    const double ticks = std::min(first + t * tps, anim->mDuration);
    Eigen::Matrix4d global = Eigen::Matrix4d::Identity();
    for (const aiNode* n = root_node; n; n = n->mParent) global = local(n, ticks) * global;
    if (!global.allFinite())
      throw IoError(path.string() + ": frame at " + std::to_string(t) + " s is not finite");
    ChainKeyframe k;
    k.time = f / frame_rate;
    const Eigen::Vector3d p = scale * global.block<3, 1>(0, 3);
    if (f == 0) origin = p;
    k.root = p - origin;
    k.root_rotation = Eigen::Quaterniond(Eigen::Matrix3d(global.block<3, 3>(0, 0))).normalized();
    for (const aiNode* n : joint_nodes)
      k.joints.push_back(
          Eigen::Quaterniond(Eigen::Matrix3d(local(n, ticks).block<3, 3>(0, 0))).normalized());
    motion.keyframes.push_back(std::move(k));
  }
  return motion;
}

}  // namespace datadyn::flesh
