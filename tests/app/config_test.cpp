// Config loading: typed values, ranges, defaults, --set, unknown keys, messages.

#include <doctest/doctest.h>

#include <array>
#include <fstream>

#include "app/config.hpp"
#include "support/temp_dir.hpp"

using namespace datadyn;
using namespace datadyn::app;

namespace {

enum class Method { Greedy, Optimal };

struct Walls {
  double restitution = 0.6;
  double friction = 0.3;
};
struct Body {
  std::string name = "cuboid";
  double alpha = 0.2;
};
struct Params {
  double dt = 1.0 / 300.0;
  int substeps = 5;
  bool gravity_on = true;
  std::string label = "default";
  Eigen::Vector3d gravity{0.0, -9.81, 0.0};
  std::vector<double> heights{0.1, 0.2};
  Method method = Method::Greedy;
  Walls walls;
  std::vector<Body> bodies{Body{}};
};

void read(ConfigReader& r, Params& p) {
  r.get("dt", p.dt, positive());
  r.get("substeps", p.substeps, at_least(1));
  r.get("gravity_on", p.gravity_on);
  r.get("label", p.label);
  r.get("gravity", p.gravity);
  r.get("heights", p.heights, positive());
  r.get_enum("method", p.method, {{"greedy", Method::Greedy}, {"optimal", Method::Optimal}});
  ConfigReader w = r.child("walls");
  w.get("restitution", p.walls.restitution, unit_interval());
  w.get("friction", p.walls.friction, non_negative());
  r.get_list<Body>("bodies", p.bodies, Body{}, [](ConfigReader& b, Body& body) {
    b.get("name", body.name);
    b.get("alpha", body.alpha, unit_interval());
  });
}

Params load(const std::string& text, const std::vector<std::string>& sets = {}) {
  ConfigReader r =
      ConfigReader::from_json(json::parse(text, nullptr, true, true), "scene.json", sets);
  Params p;
  read(r, p);
  r.finish();
  return p;
}

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    load(text, sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

}  // namespace

TEST_CASE("config: defaults stay when keys are absent, and the resolved config records them") {
  ConfigReader r = ConfigReader::from_json(json::object(), "<defaults>");
  Params p;
  read(r, p);
  r.finish();
  CHECK(p.substeps == 5);
  const json& res = r.resolved();
  CHECK(res["dt"].get<double>() == doctest::Approx(1.0 / 300.0));
  CHECK(res["method"] == "greedy");
  CHECK(res["walls"]["restitution"] == 0.6);
  CHECK(res["gravity"] == json::array({0.0, -9.81, 0.0}));
  CHECK(res["bodies"].size() == 1);
  CHECK(res["bodies"][0]["alpha"] == 0.2);
}

TEST_CASE("config: values from the document, comments allowed") {
  const Params p = load(R"({
    // a comment
    "dt": 0.01, "substeps": 3.0, "label": "x", "gravity": [0, 0, -1],
    "method": "optimal", "walls": {"friction": 0.5},
    /* two bodies */
    "bodies": [{"name": "a"}, {"name": "b", "alpha": 1}]
  })");
  CHECK(p.dt == 0.01);
  CHECK(p.substeps == 3);
  CHECK(p.gravity.z() == -1.0);
  CHECK(p.method == Method::Optimal);
  CHECK(p.walls.friction == 0.5);
  CHECK(p.walls.restitution == 0.6);
  REQUIRE(p.bodies.size() == 2);
  CHECK(p.bodies[1].alpha == 1.0);
  CHECK(p.bodies[0].alpha == 0.2);  // element defaults come from the prototype
}

TEST_CASE("config: errors name the file, the JSON pointer, what was expected and what was given") {
  CHECK(error_of(R"({"dt": -0.1})") == "scene.json: /dt: expected a number > 0, got -0.1");
  CHECK(error_of(R"({"substeps": 2.5})") ==
        "scene.json: /substeps: expected an integer >= 1, got 2.5");
  CHECK(error_of(R"({"substeps": "3"})") ==
        "scene.json: /substeps: expected an integer >= 1, got \"3\"");
  // Whole numbers the key's int cannot hold are refused, not wrapped into range.
  CHECK(error_of(R"({"substeps": -1000000000000000})") ==
        "scene.json: /substeps: expected an integer >= 1 and <= 2147483647, got -1000000000000000");
  CHECK(error_of(R"({"substeps": 4294967297})") ==
        "scene.json: /substeps: expected an integer >= 1 and <= 2147483647, got 4294967297");
  CHECK(error_of(R"({"substeps": 18446744073709551615})") ==
        "scene.json: /substeps: expected an integer >= 1 and <= 2147483647, got "
        "18446744073709551615");
  CHECK(error_of(R"({"substeps": 1e300})") ==
        "scene.json: /substeps: expected an integer >= 1 and <= 2147483647, got 1e+300");
  CHECK(error_of("{}", {"substeps=3e9"})
            .rfind("--set substeps: /substeps: expected an integer >= 1 and <= 2147483647, got 3",
                   0) == 0);
  CHECK(load(R"({"substeps": 2147483647})").substeps == 2147483647);
  CHECK(error_of(R"({"gravity_on": 1})") ==
        "scene.json: /gravity_on: expected true or false, got 1");
  CHECK(error_of(R"({"gravity": [0, 1]})") ==
        "scene.json: /gravity: expected a list of 3 numbers, got [0,1]");
  CHECK(error_of(R"({"heights": [0.1, -2]})") ==
        "scene.json: /heights: expected a list of numbers, each > 0, got [0.1,-2]");
  CHECK(error_of(R"({"method": "best"})") ==
        "scene.json: /method: expected one of \"greedy\", \"optimal\", got \"best\"");
  CHECK(error_of(R"({"walls": {"restitution": 1.5}})") ==
        "scene.json: /walls/restitution: expected a number in [0, 1], got 1.5");
  CHECK(error_of(R"({"walls": 3})") == "scene.json: /walls: expected an object, got 3");
  CHECK(error_of(R"({"bodies": [{"alpha": -1}]})") ==
        "scene.json: /bodies/0/alpha: expected a number in [0, 1], got -1");
}

TEST_CASE("config: a number beyond 1e15 in magnitude is refused as read, in lists too") {
  // 1e308 passed every check and overflowed later (float32 caches, solvers, integrators).
  CHECK(error_of("{}", {"dt=1e15"}) == "(no ConfigError)");
  CHECK(error_of("{}", {"dt=2e15"}) ==
        "--set dt: /dt: expected a number of magnitude at most 1e15, got 2e+15");
  CHECK(error_of("{}", {"gravity.1=-1e308"}) ==
        "--set gravity.1: /gravity: expected a list of 3 numbers of magnitude at most 1e15, got "
        "[0.0,-1e+308,0.0]");
  CHECK(error_of(R"({"heights": [1, 1e300]})") ==
        "scene.json: /heights: expected a list of numbers of magnitude at most 1e15, got "
        "[1,1e+300]");
  ConfigReader r =
      ConfigReader::from_json(json::parse(R"({"points": [[0, 1], [2, -1e20]]})"), "scene.json", {});
  std::vector<std::vector<double>> points;
  CHECK_THROWS_WITH_AS(r.get("points", points),
                       doctest::Contains("/points: expected a list of lists of magnitude at most "
                                         "1e15"),
                       ConfigError);
  // A list of fixed-size lists says their size (cloth-train's runs.wind_velocity).
  ConfigReader winds =
      ConfigReader::from_json(json::parse(R"({"winds": [[6, 0, 1.5], [1, 2]]})"), "scene.json", {});
  std::vector<std::array<double, 3>> velocities;
  CHECK_THROWS_WITH_AS(winds.get("winds", velocities),
                       "scene.json: /winds: expected a list of lists of 3 numbers, got "
                       "[[6,0,1.5],[1,2]]",
                       ConfigError);
  // Free-form values too (mps-gen's sweep velocities took 1e308).
  ConfigReader free =
      ConfigReader::from_json(json::parse(R"({"v": [[0, 0], [1e300, 0]]})"), "scene.json", {});
  json v;
  CHECK_THROWS_WITH_AS(free.get_json("v", v),
                       "scene.json: /v: expected values of magnitude at most 1e15, got "
                       "[[0,0],[1e+300,0]]",
                       ConfigError);
  // Integers are bounded by their type instead.
  ConfigReader big =
      ConfigReader::from_json(json::parse(R"({"seed": 9000000000000000000})"), "scene.json", {});
  std::int64_t seed = 0;
  big.get("seed", seed);
  CHECK(seed == 9000000000000000000);
}

TEST_CASE("config: a long value in a message is cut, with its size said") {
  CHECK(json_text(json::array({1, 2})) == "[1,2]");
  json many = json::array();
  for (int i = 0; i < 1000000; ++i) many.push_back(i);
  const std::string text = json_text(many);
  CHECK(text.size() < 240);  // the whole list made a message line of 6.9 MB
  CHECK(text.rfind("[0,1,2,3,", 0) == 0);
  CHECK(text.find("... (1000000 items in all)") != std::string::npos);
  // Cut on a character, not inside one: 150 two-byte characters.
  std::string accented;
  for (int i = 0; i < 150; ++i) accented += "\u00e9";
  const std::string cut = json_text(json(accented));
  CHECK(json::parse("\"" + cut.substr(1, cut.find("...") - 1) + "\"").is_string());
  CHECK(cut.find("bytes in all") != std::string::npos);
}

TEST_CASE("config: unknown keys are rejected with the nearest known key") {
  CHECK(error_of(R"({"dtt": 0.1})") ==
        "scene.json: /dtt: unknown key \"dtt\" (did you mean \"dt\"?)");
  CHECK(error_of(R"({"walls": {"fiction": 0.1}})") ==
        "scene.json: /walls/fiction: unknown key \"fiction\" (did you mean \"friction\"?)");
  CHECK(error_of(R"({"bodies": [{}, {"nmae": "x"}]})") ==
        "scene.json: /bodies/1/nmae: unknown key \"nmae\" (did you mean \"name\"?)");
  const std::string far = error_of(R"({"zzzzzzzz": 1})");
  CHECK(far.find("known keys: bodies, dt, gravity") != std::string::npos);
}

TEST_CASE("config: --set parses by the type of the value it replaces") {
  const Params p =
      load("{}", {"dt=0.002", "substeps=7", "gravity_on=off", "label=12", "gravity=0,0,-9.8",
                  "heights=[1,2,3]", "method=optimal", "walls.friction=0", "bodies.0.alpha=0.9"});
  CHECK(p.dt == 0.002);
  CHECK(p.substeps == 7);
  CHECK_FALSE(p.gravity_on);
  CHECK(p.label == "12");  // a string stays a string even when it looks like a number
  CHECK(p.gravity.z() == -9.8);
  CHECK(p.heights == std::vector<double>{1, 2, 3});
  CHECK(p.method == Method::Optimal);
  CHECK(p.walls.friction == 0.0);
  CHECK(p.bodies[0].alpha == 0.9);
  // --set wins over the file.
  CHECK(load(R"({"dt": 0.5})", {"dt=0.25"}).dt == 0.25);
}

TEST_CASE("config: a --set list index beyond any integer is a config error, not a crash") {
  CHECK(error_of("{}", {"bodies.99999999999999999999.alpha=1"}) ==
        "--set bodies.99999999999999999999.alpha: /bodies/99999999999999999999/alpha: index "
        "99999999999999999999 is past the end of /bodies, a list of 1; --set changes elements of "
        "a list, it cannot add one (give the list in the config file)");
}

TEST_CASE("config: bad --set values and unknown --set keys") {
  CHECK(error_of("{}", {"dt=abc"}) == "--set dt: /dt: expected a number > 0, got \"abc\"");
  CHECK(error_of("{}", {"walls.restitution=2"}) ==
        "--set walls.restitution: /walls/restitution: expected a number in [0, 1], got 2");
  CHECK(
      error_of("{}", {"walls.fricton=1"}) ==
      "--set walls.fricton: /walls/fricton: unknown key \"fricton\" (did you mean \"friction\"?)");
  CHECK(error_of("{}", {"noequals"}).find("expected key.path=value") != std::string::npos);
  CHECK(error_of("{}", {"walls=1"}).find("/walls: expected a key inside this section") !=
        std::string::npos);
}

TEST_CASE(
    "config: files: missing, syntax errors with line and column, numbers and keys JSON allows") {
  test::TempDir dir;
  CHECK_THROWS_WITH_AS(ConfigReader::load(dir / "none.json"),
                       doctest::Contains("none.json: no such file"), ConfigError);
  std::filesystem::create_directories(dir / "adir");  // was "invalid JSON: ... line 1, column 1"
  CHECK_THROWS_WITH_AS(ConfigReader::load(dir / "adir"),
                       doctest::Contains("adir: is a directory, not a config file"), ConfigError);
  std::ofstream(dir / "bad.json") << "{\n  \"dt\": 0.1,\n  \"x\": }\n";
  CHECK_THROWS_WITH_AS(ConfigReader::load(dir / "bad.json"),
                       doctest::Contains("bad.json: invalid JSON: parse error at line 3, column 8"),
                       ConfigError);
  std::ofstream(dir / "list.json") << "[1, 2]";
  CHECK_THROWS_WITH_AS(ConfigReader::load(dir / "list.json"),
                       doctest::Contains("expected a JSON object at the top level"), ConfigError);
  // A number beyond a double: the parser's bare "number overflow" ended the run with exit 1.
  std::ofstream(dir / "huge.json") << "{\n  \"dt\": 0.1,\n  \"max_speed\": 1e400\n}\n";
  CHECK_THROWS_WITH_AS(ConfigReader::load(dir / "huge.json"),
                       doctest::Contains("huge.json: invalid JSON at line 3, column 16: number "
                                         "overflow parsing '1e400' (beyond a double's range)"),
                       ConfigError);
  // The same text earlier in comments and in a string (after an escaped quote) does not take
  // the place: it was the line of the text's first occurrence.
  std::ofstream(dir / "huge2.json") << "{\n  // up to 1e400\n  \"name\": \"1e400 \\\" 1e400\",\n"
                                       "  /* 1e400\n 1e400 */ \"dt\": [21e4, 0.5],\n"
                                       "  \"max_speed\": -1e400\n}\n";
  CHECK_THROWS_WITH_AS(ConfigReader::load(dir / "huge2.json"),
                       doctest::Contains("huge2.json: invalid JSON at line 6, column 16: number "
                                         "overflow parsing '-1e400'"),
                       ConfigError);
  // A key given twice in one object: JSON leaves it to the reader, and the last one won.
  std::ofstream(dir / "twice.json")
      << R"({"dt": 0.1, "bodies": [{"name": "a"}, {"name": "b", "alpha": 1, "alpha": 2}],
             "walls": {"friction": 0.5}, "x": {"friction": 1}})";
  CHECK_THROWS_WITH_AS(ConfigReader::load(dir / "twice.json"),
                       doctest::Contains("twice.json: /bodies/1/alpha: key given twice in one "
                                         "object"),
                       ConfigError);
  std::ofstream(dir / "twice_slash.json") << R"({"a/b~c": 1, "a/b~c": 2})";
  CHECK_THROWS_WITH_AS(ConfigReader::load(dir / "twice_slash.json"),
                       doctest::Contains("twice_slash.json: /a~1b~0c: key given twice"),
                       ConfigError);
  std::ofstream(dir / "twice_top.json") << R"({"a": [[1, 2], {"b": 1}], "dt": 1, "dt": 2})";
  CHECK_THROWS_WITH_AS(ConfigReader::load(dir / "twice_top.json"),
                       doctest::Contains("twice_top.json: /dt: key given twice"), ConfigError);
  std::ofstream(dir / "ok.json") << "{\"dt\": 0.5} // trailing comment\n";
  ConfigReader r = ConfigReader::load(dir / "ok.json");
  Params p;
  read(r, p);
  r.finish();
  CHECK(p.dt == 0.5);
}

TEST_CASE("config: require and get_json") {
  ConfigReader r =
      ConfigReader::from_json(json::parse(R"({"extra": {"any": [1, {"x": 2}]}})"), "c.json");
  double missing = 0;
  CHECK_THROWS_WITH_AS(
      r.require("needed", missing),
      doctest::Contains("c.json: /needed: expected a number (this key is required), got nothing"),
      ConfigError);
  json extra;
  r.get_json("extra", extra);
  CHECK(extra["any"][1]["x"] == 2);
  CHECK_NOTHROW(r.finish());  // the free-form subtree counts as known
}

TEST_CASE("config: lists of strings from the file and from --set") {
  ConfigReader r =
      ConfigReader::from_json(json::parse(R"({"names": ["a", "b"]})"), "c.json", {"more=x,y z"});
  std::vector<std::string> names, more;
  r.get("names", names);
  r.get("more", more);
  r.finish();
  CHECK(names == std::vector<std::string>{"a", "b"});
  CHECK(more == std::vector<std::string>{"x", "y z"});
  CHECK(r.resolved()["more"] == json::array({"x", "y z"}));
  ConfigReader bad = ConfigReader::from_json(json::parse(R"({"names": ["a", 1]})"), "c.json");
  CHECK_THROWS_WITH_AS(
      bad.get("names", names),
      doctest::Contains("c.json: /names: expected a list of strings, got [\"a\",1]"), ConfigError);
}

TEST_CASE("config: input files are found beside the config and a missing one is a config error") {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "scene" / "meshes");
  std::ofstream(dir / "scene" / "meshes" / "body.obj") << "v 0 0 0\n";
  std::ofstream(dir / "scene" / "meshes" / "cube.node") << "1 3 0 0\n1 0 0 0\n";
  std::ofstream(dir / "scene" / "c.json")
      << R"({"mesh": "meshes/body.obj", "stem": "meshes/cube", "none": "", "gone": "gone.obj",
            "folder": "meshes"})";
  ConfigReader r = ConfigReader::load(dir / "scene" / "c.json");
  std::string mesh, stem, none, gone, folder;
  // Relative to the config file's directory, not the working directory; the resolved config
  // keeps the name as written, so a provenance record reads like the config.
  r.get_input_file("mesh", mesh);
  CHECK(mesh == (dir / "scene" / "meshes" / "body.obj").string());
  CHECK(r.resolved()["mesh"] == "meshes/body.obj");
  r.get_input_file("stem", stem, {".node"});
  CHECK(stem == (dir / "scene" / "meshes" / "cube").string());
  r.get_input_file("none", none);
  CHECK(none.empty());
  const std::string no_stem = "/stem: expected an existing file, got \"meshes/cube\" (" +
                              (dir / "scene" / "meshes" / "cube").string() + ": no such file)";
  CHECK_THROWS_WITH_AS(r.get_input_file("stem", stem), doctest::Contains(no_stem.c_str()),
                       ConfigError);
  CHECK_THROWS_WITH_AS(r.get_input_file("gone", gone),
                       doctest::Contains("c.json: /gone: expected an existing file, got "
                                         "\"gone.obj\""),
                       ConfigError);
  CHECK_THROWS_WITH_AS(r.get_input_file("folder", folder),
                       doctest::Contains("meshes: a directory)"), ConfigError);
  std::string absent;
  CHECK_THROWS_WITH_AS(r.require_input_file("absent", absent),
                       doctest::Contains("/absent: expected a file name (this key is required)"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(r.require_input_file("none", none),
                       doctest::Contains("/none: expected a file name, got \"\""), ConfigError);

  // A --set names a file as a shell would: relative to the working directory.
  const std::string body = (dir / "scene" / "meshes" / "body.obj").string();
  ConfigReader s = ConfigReader::load(dir / "scene" / "c.json", {"mesh=" + body, "gone=x.obj"});
  s.get_input_file("mesh", mesh);
  CHECK(mesh == body);
  CHECK_THROWS_WITH_AS(s.get_input_file("gone", gone),
                       doctest::Contains("--set gone: /gone: expected an existing file, got "
                                         "\"x.obj\" (x.obj: no such file)"),
                       ConfigError);
}

TEST_CASE("config: a check across keys that fails on a default shows the default") {
  // "ks_max > ks_min" with only ks_min given: the message said "got nothing".
  ConfigReader r = ConfigReader::from_json(json::parse(R"({"fit": {"ks_min": 1e5}})"), "c.json");
  ConfigReader f = r.child("fit");
  double ks_min = 1.0, ks_max = 1e4;
  f.get("ks_min", ks_min);
  f.get("ks_max", ks_max);
  CHECK_THROWS_WITH_AS(f.fail("ks_max", "a number > ks_min"),
                       doctest::Contains("/fit/ks_max: expected a number > ks_min, got 10000.0 "
                                         "(the default)"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(f.fail("absent", "something"),
                       doctest::Contains("/fit/absent: expected something, got nothing"),
                       ConfigError);
}

TEST_CASE("config: a check across keys names the --set that gave one of them") {
  // A column that did not fit the tank, set by --set sweep.heights, was blamed on
  // "<defaults>: /sweep".
  const datadyn::app::ConfigOrigin origin("c.json", {"sweep.heights=[1]", "scene=x", "a.b.c=1"});
  CHECK(origin({"sweep"}) == "--set sweep.heights");           // a key under it
  CHECK(origin({"scene.l0"}) == "--set scene");                // a key above it
  CHECK(origin({"/sweep/heights"}) == "--set sweep.heights");  // a JSON pointer
  CHECK(origin({"sweep.height"}) == "c.json");                 // a prefix of a name is not a parent
  CHECK(origin({"solver.dt"}) == "c.json");
  CHECK(origin({"a.b", "scene.l0", "sweep"}) == "--set sweep.heights, --set scene, --set a.b.c");
  CHECK(datadyn::app::ConfigOrigin()({"x"}) == "<defaults>");
  // A --set whose key is a prefix of another's text is named too (the names were matched as
  // substrings of what was already said).
  const datadyn::app::ConfigOrigin dt("c.json", {"solver.dt_min=0.01", "solver.dt=0.001"});
  CHECK(dt({"solver.dt_min", "solver.dt"}) == "--set solver.dt_min, --set solver.dt");

  ConfigReader r = ConfigReader::from_json(json::parse(R"({"fit": {"ks_max": 5}})"), "c.json",
                                           {"fit.ks_min=10"});
  ConfigReader f = r.child("fit");
  double ks_min = 1.0, ks_max = 1e4;
  f.get("ks_min", ks_min);
  f.get("ks_max", ks_max);
  CHECK(f.dotted("ks_min") == "fit.ks_min");
  CHECK(f.origin({"ks_min"}) == "--set fit.ks_min");
  CHECK(f.origin({"ks_max"}) == "c.json");
  CHECK_THROWS_WITH_AS(f.fail("ks_max", "a number > ks_min", {"fit.ks_min"}),
                       doctest::Contains("--set fit.ks_min: /fit/ks_max: expected a number > "
                                         "ks_min, got 5"),
                       ConfigError);
  // Without depends_on the origin is the key's own.
  CHECK_THROWS_WITH_AS(f.fail("ks_max", "a number > ks_min"),
                       doctest::Contains("c.json: /fit/ks_max: expected"), ConfigError);
}

TEST_CASE("config: a list of objects longer than its bound fails before an element is read") {
  ConfigReader r = ConfigReader::from_json(
      json::parse(R"({"bodies": [{"alpha": 7}, {"alpha": 7}, {"alpha": 7}]})"), "scene.json");
  std::vector<Body> bodies;
  int read_count = 0;
  const auto read_body = [&](ConfigReader& b, Body& body) {
    ++read_count;
    b.get("alpha", body.alpha, unit_interval());
  };
  CHECK_THROWS_WITH_AS(r.get_list<Body>("bodies", bodies, Body{}, read_body, 2),
                       doctest::Contains("scene.json: /bodies: expected a list of at most 2 "
                                         "objects, got [{\"alpha\":7}"),
                       ConfigError);
  CHECK(read_count == 0);
  // At the bound, the elements are read (and the first one's alpha fails its range).
  CHECK_THROWS_WITH_AS(r.get_list<Body>("bodies", bodies, Body{}, read_body, 3),
                       doctest::Contains("/bodies/0/alpha"), ConfigError);
  CHECK(read_count == 1);
}

TEST_CASE("config: a check of keys together blames the last the config gave") {
  // A --set rings too many for the default layers was reported on layers, "got 8 (the default)".
  const auto message = [](const char* doc, std::vector<std::string> sets) {
    ConfigReader r = ConfigReader::from_json(json::parse(doc), "c.json", sets);
    int rings = 1, segments = 2, layers = 3;
    r.get("rings", rings);
    r.get("segments", segments);
    r.get("layers", layers);
    try {
      r.fail_together({"rings", "segments", "layers"}, "fewer");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no ConfigError)");
  };
  CHECK(message("{}", {"rings=100"}) == "--set rings: /rings: expected fewer, got 100");
  CHECK(message(R"({"segments": 7})", {}) == "c.json: /segments: expected fewer, got 7");
  CHECK(message(R"({"rings": 7, "layers": 9})", {}) == "c.json: /layers: expected fewer, got 9");
  CHECK(message("{}", {}) == "c.json: /layers: expected fewer, got 3 (the default)");
}

TEST_CASE("config: a failed order of two keys blames the one the config gave") {
  // A --set min_corner above the default max_corner was reported on max_corner.
  const auto message = [](const char* doc, std::vector<std::string> sets) {
    ConfigReader r = ConfigReader::from_json(json::parse(doc), "c.json", sets);
    std::vector<double> lo{0, 0}, hi{1, 1};
    r.get("min_corner", lo);
    r.get("max_corner", hi);
    try {
      r.fail_order("min_corner", "max_corner", true, " on every axis");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no ConfigError)");
  };
  CHECK(message("{}", {"min_corner=[5,5]"}) ==
        "--set min_corner: /min_corner: expected a value below max_corner ([1.0,1.0]) on every "
        "axis, got [5,5]");
  // Text that is not JSON was read as a string, and is quoted as one.
  {
    ConfigReader s = ConfigReader::from_json(json::parse("{}"), "c.json", {"name=[5,x]"});
    std::string name = "a";
    s.get("name", name);
    CHECK_THROWS_WITH_AS(s.fail("name", "another name"),
                         "--set name: /name: expected another name, got \"[5,x]\"", ConfigError);
  }
  // An element's --set counts as given too.
  CHECK(message("{}", {"min_corner.1=5"})
            .find("--set min_corner.1: /min_corner: expected a value "
                  "below max_corner ([1.0,1.0]) on every axis") == 0);
  // Both given, or neither: the upper key, with the lower one's origin named too.
  CHECK(message(R"({"max_corner": [0, 2]})", {"min_corner=[5,5]"}) ==
        "--set min_corner: /max_corner: expected a value above min_corner ([5.0,5.0]) on every "
        "axis, got [0,2]");
  CHECK(message(R"({"max_corner": [0, 2]})", {}) ==
        "c.json: /max_corner: expected a value above min_corner ([0.0,0.0]) on every axis, got "
        "[0,2]");
  ConfigReader r = ConfigReader::from_json(json::parse(R"({"max": 1})"), "c.json");
  double lo = 2, hi = 0;
  r.get("min", lo);
  r.get("max", hi);
  CHECK_THROWS_WITH_AS(r.fail_order("min", "max", false),
                       doctest::Contains("/max: expected a value not below min (2.0), got 1"),
                       ConfigError);
}

TEST_CASE("config: a --set index past the end of a list says so") {
  // "bodies.1.alpha" with one body was an "unknown key".
  const std::string m = error_of("{}", {"bodies.1.alpha=0.5"});
  CHECK(m.find("--set bodies.1.alpha: /bodies/1/alpha: index 1 is past the end of /bodies, a list "
               "of 1; --set changes elements of a list, it cannot add one") != std::string::npos);
  CHECK(error_of("{}", {"bodies.0.alpha=0.5"}) == "(no ConfigError)");
  // Not an index: "-1" was "unknown key alpha", "00" "index 00 is past the end".
  for (const char* bad : {"-1", "00", "x"})
    CHECK(error_of("{}", {std::string("bodies.") + bad + ".alpha=0.5"}) ==
          std::string("--set bodies.") + bad + ".alpha: /bodies/" + bad +
              "/alpha: expected an index of /bodies, a list of 1 (0 for the first), got \"" + bad +
              "\"");
  // A misspelt group is named with the nearest key: it was "unknown key \"alpha\" (no keys are
  // known here)".
  const std::string group = error_of("{}", {"bodie.0.alpha=0.5"});
  CHECK(group.find("--set bodie.0.alpha: /bodie: unknown key \"bodie\" (did you mean "
                   "\"bodies\"?)") == 0);
}

TEST_CASE("config: --set empties a list of objects with [], and nothing else replaces it whole") {
  // "examples": [] means plain shape matching, but --set could not say it.
  CHECK(load(R"({"bodies": [{"name": "a"}, {"name": "b"}]})", {"bodies=[]"}).bodies.empty());
  ConfigReader r = ConfigReader::from_json(json::object(), "<defaults>", {"bodies=[]"});
  Params p;
  read(r, p);
  r.finish();
  CHECK(p.bodies.empty());
  CHECK(r.resolved()["bodies"] == json::array());
  // A whole list in one --set is refused (its elements' keys would go unchecked), with the way
  // to set an element.
  CHECK(error_of("{}", {R"(bodies=[{"alpha": 5}])"}) ==
        "--set bodies: /bodies: expected [] for an empty list, or one key of an element (e.g. "
        "bodies.0.<key>=...), got \"[{\"alpha\": 5}]\"");
  CHECK(error_of("{}", {"bodies=x"}).find("expected [] for an empty list") != std::string::npos);
}

TEST_CASE("config: counts in messages take the noun's number") {
  CHECK(datadyn::app::counted(1, "body", "bodies") == "1 body");
  CHECK(datadyn::app::counted(0, "body", "bodies") == "0 bodies");
  CHECK(datadyn::app::counted(12, "file", "files") == "12 files");
  // Sizes as `ls -h --si` shows them: three significant digits, decimal units, rounding up to
  // the next unit at 999.5.
  CHECK(datadyn::app::byte_text(812) == "812 B");
  CHECK(datadyn::app::byte_text(1000) == "1 kB");
  CHECK(datadyn::app::byte_text(1190040) == "1.19 MB");
  CHECK(datadyn::app::byte_text(999600) == "1 MB");
  CHECK(datadyn::app::byte_text(2200000000) == "2.2 GB");
}

TEST_CASE("config: --set changes one element of a list of numbers or of points by index") {
  // Documented in docs/command-line.md, but only lists of objects took it: "unknown key "1"".
  // On the default (an Eigen vector, a std::vector), on a list from the file, after a --set of
  // the whole list, and for an element that is itself a list.
  CHECK(load("{}", {"gravity.1=-5"}).gravity == Eigen::Vector3d(0.0, -5.0, 0.0));
  CHECK(load("{}", {"heights.0=0.3"}).heights == std::vector<double>{0.3, 0.2});
  CHECK(load(R"({"heights": [1, 2, 3]})", {"heights.2=4"}).heights == std::vector<double>{1, 2, 4});
  CHECK(load("{}", {"heights=1,2,3", "heights.1=5"}).heights == std::vector<double>{1, 5, 3});
  {
    ConfigReader r = ConfigReader::from_json(json::parse(R"({"points": [[0, 1], [2, 3]]})"),
                                             "scene.json", {"points.1=[4,5]"});
    std::vector<std::vector<double>> points;
    r.get("points", points);
    r.finish();
    CHECK(points == std::vector<std::vector<double>>{{0, 1}, {4, 5}});
    CHECK(r.resolved()["points"][1][0] == 4.0);
  }
  // The element's range is checked, the --set named; an index past the end says so.
  CHECK(error_of("{}", {"heights.1=-1"}) ==
        "--set heights.1: /heights: expected a list of numbers, each > 0, got [0.1,-1]");
  CHECK(
      error_of("{}", {"gravity.3=1"})
          .find("--set gravity.3: /gravity/3: index 3 is past the end of /gravity, a list of 3") ==
      0);
  // An index on a number: it said "index 0 is past the end of /gravity/1, a list of 0".
  CHECK(error_of("{}", {"gravity.1.0=2"})
            .find("--set gravity.1.0: /gravity/1/0: /gravity/1 is -9.81, not a list: it has no "
                  "element 0") == 0);
  CHECK(error_of("{}", {"gravity.1=abc"})
            .find("--set gravity.1: /gravity: expected a list of 3 "
                  "numbers") == 0);
}

TEST_CASE("config: --set reaches an element of a list of lists, typed or free-form") {
  // "scene.tank.vertices.1.0=2.5" was an unknown key "1": the index went one level deep only,
  // and free-form values (get_json) took none.
  for (const bool typed : {true, false}) {
    CAPTURE(typed);
    ConfigReader r = ConfigReader::from_json(json::parse(R"({"points": [[0, 1], [2, 3]]})"),
                                             "scene.json", {"points.1.0=4", "points.0=[7,8]"});
    json points;
    if (typed) {
      std::vector<std::vector<double>> p;
      r.get("points", p);
      points = p;
    } else {
      r.get_json("points", points);
    }
    r.finish();
    CHECK(points == json::parse("[[7, 8], [4, 3]]"));
    CHECK(r.resolved()["points"] == points);
  }
  ConfigReader r = ConfigReader::from_json(json::parse(R"({"points": [[0, 1]]})"), "scene.json",
                                           {"points.0.2=4"});
  json points;
  CHECK_THROWS_WITH_AS(
      r.get_json("points", points),
      doctest::Contains("--set points.0.2: /points/0/2: index 2 is past the end of "
                        "/points/0, a list of 2"),
      ConfigError);
}

TEST_CASE("config: a check on a list that an element's --set changed names that --set") {
  // It named the file (or <defaults>) and called the changed list "the default".
  ConfigReader r = ConfigReader::from_json(json::object(), "scene.json", {"gravity.1=0"});
  Eigen::Vector3d gravity{0.0, -9.81, 0.0};
  r.get("gravity", gravity);
  CHECK_THROWS_WITH_AS(r.fail("gravity", "a non-zero vector"),
                       "--set gravity.1: /gravity: expected a non-zero vector, got [0.0,0.0,0.0]",
                       ConfigError);
}

TEST_CASE("config: JSON nested deeper than kMaxJsonDepth is refused, not a stack overflow") {
  // 100,000 levels of arrays crashed every tool (SIGSEGV in the parser) from a config, and
  // cloth-train from a cache's cloth_json attribute.
  test::TempDir dir;
  const std::size_t n = 100000;
  std::ofstream(dir / "deep.json")
      << "{\"dt\": " << std::string(n, '[') << std::string(n, ']') << "}";
  CHECK_THROWS_WITH_AS(ConfigReader::load(dir / "deep.json"),
                       doctest::Contains("deep.json: invalid JSON: nested deeper than 256 levels"),
                       ConfigError);
  const auto nested = [](int levels) {
    return std::string(static_cast<std::size_t>(levels), '[') +
           std::string(static_cast<std::size_t>(levels), ']');
  };
  // The depth nlohmann counts: the outermost array is level 1.
  CHECK_FALSE(parse_json(nested(kMaxJsonDepth)).is_discarded());
  std::string error;
  CHECK(parse_json(nested(kMaxJsonDepth + 1), &error).is_discarded());
  CHECK(error == "nested deeper than 256 levels of arrays and objects");
  CHECK(parse_json(nested(static_cast<int>(n))).is_discarded());
  CHECK_THROWS_WITH_AS(parse_json_text(nested(static_cast<int>(n)), "c.h5: /s@cloth_json"),
                       doctest::Contains("c.h5: /s@cloth_json: invalid JSON: nested deeper"),
                       IoError);
  CHECK_THROWS_WITH_AS(
      parse_json_text("{bad", "c.h5: /s@cloth_json"),
      doctest::Contains("c.h5: /s@cloth_json: invalid JSON: parse error at line 1"), IoError);
  CHECK(parse_json_text("{\"a\": [1, 2]} // note", "x") == json::parse(R"({"a": [1, 2]})"));
}

TEST_CASE("config: a key with a NUL byte is shown, not where the message ends") {
  // what() is a C string: the message read "nul.json: /" and stopped.
  test::TempDir dir;
  std::ofstream(dir / "nul.json") << R"({"\u0000x": 1})";
  ConfigReader r = ConfigReader::load(dir / "nul.json");
  Params p;
  read(r, p);
  CHECK_THROWS_WITH_AS(r.finish(), doctest::Contains("nul.json: /\\u0000x: unknown key"),
                       ConfigError);
}
