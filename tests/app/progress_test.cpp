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
}
