#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>

#include "app/progress.hpp"
#include "app/tool.hpp"
#include "io/atomic_file.hpp"
#include "io/cache.hpp"
#include "io/temporary_files.hpp"
#include "support/temp_dir.hpp"

using namespace datadyn::app;

TEST_CASE("progress: one line per unit with rate and eta") {
  // 12 of 100 frames in 0.0372 s: 3.1 ms per frame, 88 left -> 0.27 s -> eta 0:00:00.
  CHECK(Progress::format_line("frame", 12, 100, 0.0372, "") ==
        "frame 12/100 (12%) 3.1 ms/frame, eta 0:00:00");
  // 3 of 10 epochs in 90 s: 30 s each, 7 left -> 210 s.
  CHECK(Progress::format_line("epoch", 3, 10, 90.0, "loss 0.5") ==
        "epoch 3/10 (30%) 30 s/epoch, eta 0:03:30, loss 0.5");
}

TEST_CASE("progress: the first and last line, then at most one a second unless verbose") {
  CHECK(Progress::should_print(1, 1000, 0.0, false));     // the first
  CHECK(Progress::should_print(1000, 1000, 0.0, false));  // the last
  CHECK_FALSE(Progress::should_print(2, 1000, 0.999, false));
  CHECK(Progress::should_print(2, 1000, 1.0, false));
  CHECK(Progress::should_print(2, 1000, 0.0, true));  // -v: every unit
  CHECK(Progress::should_print(7, 0, 0.0, false));    // no total known: every unit is the last
}

TEST_CASE("shell_quote: a re-runnable command line") {
  CHECK(shell_quote({"mps-gen", "-o", "db.h5"}) == "mps-gen -o db.h5");
  CHECK(shell_quote({"x", "--set", "name=a b", "it's"}) == "x --set 'name=a b' 'it'\\''s'");
  CHECK(shell_quote({"x", ""}) == "x ''");
}

TEST_CASE("reproducible_args: threads and logging flags are left out of the provenance") {
  using V = std::vector<std::string>;
  CHECK(reproducible_args(V{"t", "--threads", "4", "-o", "x.h5", "-vv", "-q"}) ==
        V{"t", "-o", "x.h5"});
  CHECK(reproducible_args(V{"t", "--threads=2", "--log-format", "json", "--log-level=debug", "-c",
                            "a.json"}) == V{"t", "-c", "a.json"});
  CHECK(reproducible_args(V{"t", "--set", "threads=3", "-v"}) == V{"t", "--set", "threads=3"});
  // Clusters of -q and -v: "-qv" was kept, so its bytes differed from "-q -v".
  CHECK(reproducible_args(V{"t", "-qv", "-vq", "-o", "x.h5"}) == V{"t", "-o", "x.h5"});
  CHECK(reproducible_args(V{"t", "-o", "-q.h5"}) == V{"t", "-o", "-q.h5"});
  // The program by name: the path it was run by (an install or build directory) is not the
  // output's, and a shard run by path merged with one run from PATH depended on -i order.
  CHECK(reproducible_args(V{"/opt/datadyn/bin/t", "-o", "/x/y.h5"}) == V{"t", "-o", "/x/y.h5"});
  CHECK(reproducible_args(V{"./t"}) == V{"t"});
}

TEST_CASE("shell_split and merged_command_line: a shard's line becomes the single run's") {
  using V = std::vector<std::string>;
  // shell_split inverts shell_quote, quotes and escaped quotes included.
  for (const V& words : {V{"mps-gen", "-o", "db.h5"}, V{"x", "--set", "name=a b", "it's"},
                         V{"x", "", "a'b'c", "--set=q r"}})
    CHECK(shell_split(shell_quote(words)) == words);
  CHECK(merged_command_line("mps-gen -c db.json --shard 3/10 -o db.3.h5", "db.h5") ==
        "mps-gen -c db.json -o db.h5");
  CHECK(merged_command_line("sim --shard=2/4 --output=part.h5 --set 'a=b c'", "all.h5") ==
        "sim --output=all.h5 --set 'a=b c'");
  CHECK(merged_command_line("sim --output 'my part.h5'", "my all.h5") ==
        "sim --output 'my all.h5'");
  CHECK(merged_command_line("sim -opart.h5 --shard 1/2", "all.h5") == "sim -oall.h5");
  // Mesh files keep their output and lose the shard only.
  CHECK(unsharded_command_line("mesh-export -i s.h5 --shard 2/3 -o 'f ####.obj'") ==
        "mesh-export -i s.h5 -o 'f ####.obj'");
  CHECK(unsharded_command_line("mesh-export --shard=1/2 -i s.h5") == "mesh-export -i s.h5");
}

TEST_CASE("committed_line: what a run wrote, with sizes and the time taken") {
  datadyn::test::TempDir dir;
  const auto file = [&](const std::string& name, std::size_t bytes) {
    std::ofstream(dir / name, std::ios::binary) << std::string(bytes, 'x');
    return dir / name;
  };
  const auto a = file("a.h5", 1234), b = file("b.json", 999), c = file("c.svg", 999500);
  CHECK(committed_line({}, 1.0, true).empty());
  CHECK(committed_line({a}, 2.5, true) == "wrote " + a.string() + " (1.23 kB) in 2.5 s");
  // 999.5 kB rounds to 1 MB, not "1e+03 kB"; a.h5 spelt two ways is named once.
  CHECK(committed_line({a, b, c, dir / "." / "a.h5"}, 0.0123, true) ==
        "wrote " + a.string() + " (1.23 kB), " + b.string() + " (999 B) and " + c.string() +
            " (1 MB) in 0.0123 s");
  // Times: milliseconds below one, seconds to three digits below a minute, then h:mm:ss rounded
  // (59.97 s read "60 s", 999.7 s "1e+03 s").
  CHECK(committed_line({a}, 1e-5, true).ends_with(" in 0.01 ms"));
  CHECK(committed_line({a}, 59.94, true).ends_with(" in 59.9 s"));
  CHECK(committed_line({a}, 59.97, true).ends_with(" in 0:01:00"));
  CHECK(committed_line({a}, 999.7, true).ends_with(" in 0:16:40"));
  CHECK(committed_line({a}, 3725.0, true).ends_with(" in 1:02:05"));
  std::vector<std::filesystem::path> frames;
  for (int k = 1; k <= 5; ++k) frames.push_back(file("f." + std::to_string(k) + ".obj", 1000));
  CHECK(committed_line(frames, 1.5, true) == "wrote 5 files (5 kB) in 1.5 s, from " +
                                                 frames.front().string() + " to " +
                                                 frames.back().string());
  // A failed run names what it kept; a file removed since is left out.
  CHECK(committed_line({a, dir / "gone.h5"}, 9.0, false) ==
        "kept " + a.string() + " (1.23 kB), written before the failure");
  CHECK(committed_line({dir / "gone.h5"}, 9.0, false).empty());
  CHECK(committed_line(frames, 9.0, false) ==
        "kept 5 files (5 kB), from " + frames.front().string() + " to " + frames.back().string() +
            ", written before the failure");
}

TEST_CASE("take_committed: the writers note each file they put in place") {
  datadyn::test::TempDir dir;
  (void)datadyn::io::take_committed();  // whatever other tests committed
  {
    datadyn::io::AtomicFile f(dir / "done.txt");
    f.write("x");
    f.commit();
  }
  { datadyn::io::AtomicFile f(dir / "abandoned.txt"); }  // discarded: not noted
  CHECK(datadyn::io::take_committed() == std::vector<std::filesystem::path>{dir / "done.txt"});
  CHECK(datadyn::io::take_committed().empty());  // taking clears the list
}

TEST_CASE("a stop signal that came while the last file was written discards it, not the old one") {
  // A SIGTERM during the canonical copy of a large cache was seen by no check: the run renamed
  // the file into place and exited 0. The stop signal is process-wide and stays set, so the
  // writers run in a child process.
  datadyn::test::TempDir dir;
  for (const char* name : {"a.txt", "b.h5"}) std::ofstream(dir / name) << "old";
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int failures = 0;
    datadyn::io::note_stop_signal(SIGTERM);
    try {
      datadyn::io::AtomicFile f(dir / "a.txt");
      f.write("new");
      f.commit();
      ++failures;
    } catch (const datadyn::RunError& e) {
      failures += std::string(e.what()).find("interrupted by SIGTERM") == std::string::npos;
    }
    try {
      datadyn::io::CacheWriter w(dir / "b.h5", {"test", "", "{}", ""});
      w.commit();
      ++failures;
    } catch (const datadyn::RunError& e) {
      failures += std::string(e.what()).find("interrupted by SIGTERM") == std::string::npos;
    }
    _exit(failures);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  for (const char* name : {"a.txt", "b.h5"}) {
    std::ifstream in(dir / name);
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str() == "old");
  }
  // Nothing else is left: no temporary file, no canonical copy.
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                      std::filesystem::directory_iterator()) == 2);
}

TEST_CASE("missing_shards: the K of N that no command line names") {
  CHECK(missing_shards({"mps-gen --shard 1/3 -o a.h5", "mps-gen --shard=3/3 -o c.h5"}) ==
        "shard 2 of 3");
  CHECK(missing_shards({"t --shard 2/2", "t --shard 1/2"}).empty());
  CHECK(missing_shards({"t --shard 1/2", "t -o x.h5"}).empty());      // not all shards
  CHECK(missing_shards({"t --shard 1/2", "t --shard 1/3"}).empty());  // other runs
  CHECK(missing_shards({"t --shard 4/4", "t --shard 2/4"}) == "shards 1 and 3 of 4");
  CHECK(missing_shards({"t --shard 4/4"}) == "shards 1, 2 and 3 of 4");
  // A huge N is neither a huge allocation nor a flood of lines.
  CHECK(missing_shards({"t --shard 1/2000000000", "t --shard 5/2000000000"}) ==
        "1999999998 of 2000000000 shards (2, 3, 4, 6, 7, 8, 9, 10 and more)");
  CHECK(command_line_shard("t --shard 0/2") == std::nullopt);  // no such task
}
