// Output path templates: #### and %04d frame tokens, {sequence}.

#include <doctest/doctest.h>

#include "core/errors.hpp"
#include "io/path_template.hpp"

using namespace datadyn;
using namespace datadyn::io;

TEST_CASE("path templates: #### and %0Nd pad, %d does not, negatives keep the width") {
  CHECK(expand_frame("out/a.####.obj", 7) == "out/a.0007.obj");
  CHECK(expand_frame("out/a.####.obj", 12345) == "out/a.12345.obj");
  CHECK(expand_frame("a.##.obj", -3) == "a.-3.obj");
  CHECK(expand_frame("a.####.obj", -3) == "a.-003.obj");
  CHECK(expand_frame("a.%04d.vdb", 42) == "a.0042.vdb");
  CHECK(expand_frame("a.%d.vdb", 42) == "a.42.vdb");
  CHECK(expand_frame("100%%_a.%03d.ply", 5) == "100%_a.005.ply");
  // Tokens in directory names are left alone: only the file name is a template.
  CHECK(expand_frame("take#1/a.####.obj", 1) == "take#1/a.0001.obj");
  CHECK(has_frame_token("a.####.obj"));
  CHECK_FALSE(has_frame_token("a.obj"));
  CHECK_THROWS_AS(expand_frame("a.obj", 1), UsageError);
  CHECK_THROWS_AS(expand_frame("a.%s.obj", 1), UsageError);
}

TEST_CASE("path templates: frame token insertion, sequences, extensions") {
  CHECK(with_frame_token("out/a.obj") == "out/a.####.obj");
  CHECK(with_frame_token("out/a.%04d.obj") == "out/a.%04d.obj");
  CHECK(expand_sequence("out/{sequence}/x.{sequence}.obj", "cloth", true) ==
        "out/cloth/x.cloth.obj");
  CHECK(expand_sequence("out/body.####.obj", "cloth", true) == "out/body_cloth.####.obj");
  CHECK(expand_sequence("out/body.####.obj", "cloth", false) == "out/body.####.obj");
  CHECK(expand_sequence("out/body", "cloth", true) == "out/body_cloth");
  CHECK(replace_extension("out/body.pc2", ".obj") == "out/body.obj");
}

TEST_CASE("side files are named after the cache without its .h5") {
  CHECK(sidecar("out/springs.h5", ".report.json") == "out/springs.report.json");
  CHECK(sidecar("parts/surface.1.h5", ".heights.svg") == "parts/surface.1.heights.svg");
  CHECK(sidecar("out/run.v2", ".report.json") == "out/run.v2.report.json");  // only .h5 goes
  CHECK(sidecar("model", ".checkpoint.h5") == "model.checkpoint.h5");
  CHECK(sidecar("out/.h5", ".report.json") == "out/.h5.report.json");  // a hidden name, no stem
}
