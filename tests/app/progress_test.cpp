#include <doctest/doctest.h>

#include "app/progress.hpp"
#include "app/tool.hpp"

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
}
