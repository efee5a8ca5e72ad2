// The shared command line, run as processes: exit codes 0/1/2, messages that name file, key and
// value, --print-config, --dry-run, atomic outputs on failure and on SIGTERM, JSON logs,
// determinism across thread counts.

#include <doctest/doctest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "io/cache.hpp"
#include "support/file_bytes.hpp"
#include "support/process.hpp"

using datadyn::test::file_bytes;
using datadyn::test::run_command;
using datadyn::test::TempDir;

namespace {

const std::string kFixture = DATADYN_FIXTURE;
const std::string kCacheTool = std::string(DATADYN_BIN_DIR) + "/dd-cache";
const std::string kMeshExport = std::string(DATADYN_BIN_DIR) + "/mesh-export";

bool dir_is_empty_but(const std::filesystem::path& dir, const std::string& keep) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename() != keep) return false;
  return true;
}

}  // namespace

TEST_CASE("a default run succeeds and writes a valid cache") {
  TempDir dir;
  const auto out = dir / "wave.h5";
  const auto r = run_command(kFixture + " -o " + out.string());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  // The last line says what was written, its size and the time taken.
  const auto line = r.err.find("[info] wrote " + out.string() + " (");
  REQUIRE(line != std::string::npos);
  CHECK(r.err.find(" kB) in ", line) != std::string::npos);  // the cache is 73 kB
  datadyn::io::CacheReader cache(out);
  const auto s = cache.sequence("wave");
  CHECK(s.frame_count() == 48);
  CHECK(s.point_count() == 100);
  const auto prov = cache.provenance();
  CHECK(prov.generator == "datadyn-fixture 0.1.0");
  CHECK(prov.command_line.find("-o " + out.string()) != std::string::npos);
  const auto cfg = nlohmann::json::parse(prov.config_json);
  CHECK(cfg["frames"] == 48);  // the resolved config, defaults filled in
  CHECK(cfg["amplitude"] == 0.1);
}

TEST_CASE("--help and --version exit 0, parse errors exit 2") {
  auto r = run_command(kFixture + " --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--frames LIST") != std::string::npos);
  CHECK(r.out.find("--threads N") != std::string::npos);
  r = run_command(kFixture + " --version");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("datadyn-fixture 0.1.0") != std::string::npos);
  // A subcommand takes it too, as every common flag (it was "not expected", exit 2).
  for (const std::string command : {"info", "check", "merge"}) {
    r = run_command(kCacheTool + " " + command + " --version");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("dd-cache 0.1.0") != std::string::npos);
  }
  r = run_command(kFixture + " --no-such-flag");
  CHECK(r.exit_code == 2);
  // --threads names what it takes (it answered "abc" with a range up to a 300-digit number).
  // A billion threads ran for 20 s and ended "out of memory" without naming the flag.
  for (const std::string bad : {"-3", "abc", "1.5", "4097", "1000000000"}) {
    r = run_command(kFixture + " --threads " + bad);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--threads: expected a whole number in [0, 4096] (0: all cores), got '" + bad +
                     "'") != std::string::npos);
  }
  // -o's help says what the command writes: a template only where files are per frame.
  CHECK(run_command(kMeshExport + " --help").out.find("path template with ####") !=
        std::string::npos);
  CHECK(run_command(kCacheTool + " merge --help").out.find("####") == std::string::npos);
  r = run_command(kCacheTool);  // a subcommand is required
  CHECK(r.exit_code == 2);
  // An empty value (an unset shell variable) is not the default.
  TempDir dir;
  for (const std::string flag : {"-o", "-c", "--frames", "-i"}) {
    r = run_command("cd " + dir.path().string() + " && " + kFixture + " " + flag + " ''");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(flag) != std::string::npos);
    CHECK(r.err.find("empty") != std::string::npos);
  }
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("config errors exit 2 and name file, key, value and what was expected") {
  TempDir dir;
  std::ofstream(dir / "scene.json") << "{\n  // fewer frames\n  \"frames\": 0\n}\n";
  auto r = run_command(kFixture + " -c " + (dir / "scene.json").string() + " -o " +
                       (dir / "o.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("scene.json: /frames: expected an integer >= 1, got 0") != std::string::npos);

  r = run_command(kFixture + " --set amplitud=0.3 -o " + (dir / "o.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(
            "--set amplitud: /amplitud: unknown key \"amplitud\" (did you mean \"amplitude\"?)") !=
        std::string::npos);

  r = run_command(kFixture + " -c " + (dir / "missing.json").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("missing.json: no such file") != std::string::npos);

  r = run_command(kFixture + " --frames 5-1");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--frames '5-1'") != std::string::npos);
  r = run_command(kFixture + " --shard 3/2");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--shard '3/2'") != std::string::npos);
  r = run_command(kFixture + " --log-level chatty");
  CHECK(r.exit_code == 2);
  CHECK(std::filesystem::is_empty(dir.path()) == false);  // only scene.json
  CHECK(dir_is_empty_but(dir.path(), "scene.json"));
}

TEST_CASE("--print-config prints the resolved config and writes nothing") {
  TempDir dir;
  const auto r = run_command("cd " + dir.path().string() + " && " + kFixture +
                             " --print-config --set points=7");
  CHECK(r.exit_code == 0);
  const auto cfg = nlohmann::json::parse(r.out);
  CHECK(cfg["points"] == 7);
  CHECK(cfg["frame_rate"] == 24.0);
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("--dry-run validates and writes nothing") {
  TempDir dir;
  auto r = run_command(kFixture + " --dry-run --frames 1-10 -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("would write 10 frames") != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path()));
  r = run_command(kFixture + " --dry-run --set frames=-1");  // still validated
  CHECK(r.exit_code == 2);
  // The output directory too: a dry run is the check before a farm job, so a directory that is
  // not there fails it as it would fail the run (exit 1), naming the missing part.
  r = run_command(kFixture + " --dry-run -o " + (dir / "no/../x.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot write: directory " + (dir / "no").string() + " does not exist") !=
        std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("an output that is an input is refused before it is touched") {
  TempDir dir;
  const auto in = dir / "in.h5";
  REQUIRE(run_command(kFixture + " -q --frames 1-3 -o " + in.string()).exit_code == 0);
  const auto before = file_bytes(in);
  // The same file by another name: a relative path with "..", and a hard link.
  std::filesystem::create_directories(dir / "sub");
  std::filesystem::create_hard_link(in, dir / "link.h5");
  for (const auto& out : {(dir / "sub" / ".." / "in.h5").string(), (dir / "link.h5").string()}) {
    const auto r = run_command(kFixture + " -q -i " + in.string() + " -o " + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("-o/--output: " + out + " is also an input, which it would overwrite") !=
          std::string::npos);
  }
  CHECK(file_bytes(in) == before);
}

TEST_CASE("SOURCE_DATE_EPOCH must be whole seconds, and -o a file name") {
  TempDir dir;
  for (const char* epoch : {"abc", "1e9", "1700000000.5", "99999999999999"}) {
    const auto r = run_command(std::string("SOURCE_DATE_EPOCH=") + epoch + " " + kFixture +
                               " -q --frames 1 -o " + (dir / "e.h5").string());
    INFO(epoch);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("SOURCE_DATE_EPOCH: expected whole seconds") != std::string::npos);
  }
  const auto r = run_command(kFixture + " -q --frames 1 -o " + dir.path().string() + "/");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("names a directory; give a file name") != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path()));
  // The same directory without the slash is the same mistake (it was exit 1).
  const auto d = run_command(kFixture + " -q --frames 1 -o " + dir.path().string());
  CHECK(d.exit_code == 2);
  CHECK(d.err.find(dir.path().string() + " is a directory; give a file name") != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("-i on a command that reads no input is refused, not ignored") {
  TempDir dir;
  const std::string bin = DATADYN_BIN_DIR;
  for (const std::string& cmd : {bin + "/sm-example-sim", bin + "/mps-gen",
                                 bin + "/cloth-train simulate", bin + "/spring-fit simulate"}) {
    const auto r =
        run_command(cmd + " -q -i " + (dir / "any.h5").string() + " -o " + (dir / "x.h5").string());
    INFO(cmd);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("reads no input file") != std::string::npos);
  }
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("a failed run exits 1, names the frame, and leaves no file") {
  TempDir dir;
  const auto out = dir / "fail.h5";
  const auto r = run_command(kFixture + " --set fail_at_frame=20 -o " + out.string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("frame 20: particle 0 diverged") != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path()));  // neither the output nor a temporary file
}

TEST_CASE(
    "a run that fails after its files are finished leaves the earlier run's files as they were") {
  // The cache and a report finished, then a failure (as a report that cannot be written after
  // the cache, or a point cache's mesh): the files used to be replaced one by one, so the
  // failed run left the new cache beside the old report.
  TempDir dir;
  const auto out = dir / "w.h5", report = dir / "w.txt";
  const std::string run = kFixture + " -q --set report_file=" + report.string() + " -o " +
                          out.string() + " --set amplitude=";
  REQUIRE(run_command(run + "0.1").exit_code == 0);
  const std::string cache_before = file_bytes(out), report_before = file_bytes(report);
  const auto r = run_command(run + "0.2 --set fail_at_end=true");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("failed after the cache and the report") != std::string::npos);
  CHECK(r.err.find("kept") == std::string::npos);
  CHECK(file_bytes(out) == cache_before);
  CHECK(file_bytes(report) == report_before);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
    ++files;
  }
  CHECK(files == 2);
  // The same run without the failure replaces both.
  REQUIRE(run_command(run + "0.2").exit_code == 0);
  CHECK(file_bytes(report) == "amplitude 0.200000\n");
  CHECK(file_bytes(out) != cache_before);
}

TEST_CASE("an output directory that does not exist exits 1 with a clear message") {
  TempDir dir;
  const auto r = run_command(kFixture + " -o " + (dir / "no/dir/x.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("does not exist") != std::string::npos);
}

TEST_CASE("a full disk exits 1 naming the file and the cause, and leaves no file") {
  // A file-size limit of a few kB (its signal ignored, so writes fail with EFBIG as they would
  // with ENOSPC) stops the cache mid-write. HDF5 1.10 used to crash at exit on the file whose
  // close had failed: a segfault after the message.
  TempDir dir;
  const auto out = dir / "big.h5";
  const auto r =
      run_command("ulimit -f 8; trap '' XFSZ; exec " + kFixture + " -q -o " + out.string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(out.string() + ": ") != std::string::npos);
  CHECK(r.err.find("File too large") != std::string::npos);
  // One line for the error: HDF5's message held a time stamp ending in a newline.
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("a request beyond the memory exits 1 saying so, and leaves no file") {
  // 2e8 points need 4.8 GB; the address space is capped at 2 GB. The message used to be the bare
  // "std::bad_alloc".
  TempDir dir;
  const auto r = run_command("ulimit -v 2000000; exec " + kFixture +
                             " -q --set points=200000000 -o " + (dir / "x.h5").string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("out of memory: the inputs or settings ask for more than this machine has") !=
        std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("SIGTERM mid-run exits 1 and leaves no file, not even a temporary one") {
  TempDir dir;
  const std::string out = (dir / "slow.h5").string();
  const pid_t pid = datadyn::test::spawn(
      {kFixture, "-q", "--set", "sleep_ms=50", "--set", "frames=200", "-o", out});
  REQUIRE(pid > 0);
  // Wait until the temporary file exists, so the signal lands mid-run.
  bool started = false;
  for (int i = 0; i < 200 && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      if (e.path().string().find(".tmp-") != std::string::npos) started = true;
  }
  CHECK(started);
  CHECK(datadyn::test::terminate_and_wait(pid) == 1);
  CHECK(std::filesystem::is_empty(dir.path()));
}

namespace {

/// Starts the fixture on a frame that sleeps `sleep_ms` and waits until its temporary output
/// exists, so that a signal lands in the middle of that step.
pid_t start_slow_step(const TempDir& dir, const std::string& sleep_ms,
                      const std::string& stderr_file, const std::string& side_file = "") {
  const pid_t pid =
      datadyn::test::spawn({kFixture, "-q", "--set", "sleep_ms=" + sleep_ms, "--set", "frames=3",
                            "--set", "side_file=" + side_file, "-o", (dir / "slow.h5").string()},
                           stderr_file);
  bool started = false;
  for (int i = 0; i < 500 && !started && pid > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      if (e.path().string().find(".tmp-") != std::string::npos) started = true;
  }
  CHECK(started);
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("a log reader that goes away leaves the run to finish its output whole") {
  // `tool ... 2>&1 | head -1`: the next log line raised SIGPIPE, which ended the process on the
  // spot and left <output>.tmp-<pid> behind. The log lines are lost now, the output is whole.
  TempDir dir;
  // (The whole pipeline in parentheses: run_command's redirections then apply to it, not to
  // head alone.)
  const auto r = run_command("((" + kFixture + " --set sleep_ms=20 --set frames=60 -o " +
                             (dir / "slow.h5").string() + " 2>&1; echo \"exit $?\" > " +
                             (dir / "code").string() + ") | head -1)");
  CHECK(r.out.find("fixture") != std::string::npos);  // the one line head took
  std::ifstream code(dir / "code");
  std::string text;
  std::getline(code, text);
  CHECK(text == "exit 0");
  CHECK(datadyn::io::CacheReader(dir / "slow.h5").sequence_names().size() == 1);
  std::filesystem::remove(dir / "code");
  std::filesystem::remove(dir / "slow.h5");
  CHECK(std::filesystem::is_empty(dir.path()));  // no temporary file
}

TEST_CASE("output on stdout that cannot be written fails the run") {
  // `--print-config > scene.json` on a full disk left an empty file, with exit 0.
  if (!std::filesystem::exists("/dev/full")) return;
  auto r = run_command("(" + kFixture + " --print-config >/dev/full)");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("stdout: cannot write what the run printed: No space left on device") !=
        std::string::npos);
  r = run_command("(" + kFixture + " --print-config >&-)");
  CHECK(r.exit_code == 1);
  r = run_command("(" + kFixture + " --print-config)");
  CHECK(r.exit_code == 0);
  // --help and --version too (they exited 0 with nothing written).
  for (const std::string flag : {"--help", "--version"}) {
    CAPTURE(flag);
    r = run_command("(" + kFixture + " " + flag + " >/dev/full)");
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("stdout: cannot write what the run printed: No space left on device") !=
          std::string::npos);
    // A reader that goes away after a byte is not a failure (the tool's own exit, not head's).
    r = run_command("((" + kFixture + " " + flag + "; echo \"tool exit $?\" >&2) | head -c 1)");
    CHECK(r.err.find("tool exit 0") != std::string::npos);
  }
}

TEST_CASE("SIGTERM during a step longer than the grace still ends the run and its temporaries") {
  // A frame of ten minutes never reaches the next tick; a farm would SIGKILL it and keep the
  // temporary file. The watchdog removes it and exits 1 once the grace (10 s) has passed.
  TempDir dir, logs;
  const pid_t pid = start_slow_step(dir, "600000", (logs / "err.txt").string());
  REQUIRE(pid > 0);
  const auto start = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  CHECK(wait_exit(pid) == 1);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("ended " << waited << " s after SIGTERM");
  // That the watchdog, not the end of the step, ended it is in the log line below (no timed
  // assertion: a loaded machine may be slow).
  CHECK(std::filesystem::is_empty(dir.path()));
  std::ifstream in(logs / "err.txt");
  const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(err.find("interrupted by SIGTERM: the work did not stop within 10 s; 1 temporary file "
                 "removed, the run ends") != std::string::npos);
}

TEST_CASE("a second SIGTERM ends a stuck run at once and removes its temporaries") {
  TempDir dir, logs;
  // A side file finished before the stuck step stays, and the forced end says so (-q shows it).
  const auto side = logs / "side.txt";
  const pid_t pid = start_slow_step(dir, "600000", (logs / "err.txt").string(), side.string());
  REQUIRE(pid > 0);
  kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(pid, SIGTERM);
  CHECK(wait_exit(pid) == 1);
  CHECK(std::filesystem::is_empty(dir.path()));
  std::ifstream in(logs / "err.txt");
  const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(err.find("interrupted by SIGTERM: a second signal came before the work stopped; 1 "
                 "temporary file removed") != std::string::npos);
  CHECK(std::filesystem::exists(side));
  CHECK(err.find("[warning] kept " + side.string() + " (5 B), written before the failure") !=
        std::string::npos);
}

TEST_CASE("dd-cache merge takes more shards than the soft limit of open files") {
  // 200 shards with `ulimit -n 128` failed at the 125th ("Too many open files"); a farm's 1,024
  // stops a frame-per-task array of a longer shot. The merge raises the soft limit to the hard
  // one, and where that is too low says how to merge instead.
  rlimit limit{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &limit) == 0);
  if (limit.rlim_max < 200) {
    MESSAGE("open-file hard limit " << limit.rlim_max << " below 200: not testable here");
    return;
  }
  TempDir dir;
  const int n = 150;
  std::string inputs;
  for (int k = 1; k <= n; ++k) {
    const auto path = dir / ("p" + std::to_string(k) + ".h5");
    datadyn::io::CacheWriter w(
        path, {"fixture 0.1.0",
               "fixture --shard " + std::to_string(k) + "/" + std::to_string(n) + " -o x.h5", "{}",
               "2026-01-01T00:00:00Z"});
    datadyn::Points3 x = datadyn::Points3::Constant(2, 3, k);
    w.add_sequence("s", {24.0, 3})
        .append_frame(k, k / 24.0, {{"points/position", datadyn::io::view(x)}});
    w.commit();
    inputs += " -i " + path.string();
  }
  auto r = run_command("ulimit -Sn 64 && " + kCacheTool + " merge -q" + inputs + " -o " +
                       (dir / "m.h5").string());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(datadyn::io::CacheReader(dir / "m.h5").sequence("s").frame_count() == n);
  r = run_command("ulimit -n 100 && " + kCacheTool + " merge -q" + inputs + " -o " +
                  (dir / "m2.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("150 shards, but this process may open only 100 files at once (ulimit -Hn): "
                   "merge them in groups") != std::string::npos);
}

TEST_CASE("--log-format json writes one JSON object per line") {
  TempDir dir;
  const auto r =
      run_command(kFixture + " -v --log-format json --frames 1-3 -o " + (dir / "j.h5").string());
  CHECK(r.exit_code == 0);
  std::istringstream lines(r.err);
  std::string line;
  int progress_lines = 0, count = 0;
  while (std::getline(lines, line)) {
    INFO(line);
    const auto j = nlohmann::json::parse(line);  // throws (fails the test) if not JSON
    CHECK(j["tool"] == "datadyn-fixture");
    CHECK(j.contains("time"));
    if (j["message"].get<std::string>().rfind("frame ", 0) == 0) ++progress_lines;
    ++count;
  }
  CHECK(count >= 4);
  CHECK(progress_lines == 3);  // at -v one flushed progress line per frame
  // Errors in the command line itself, found before the logger exists, are JSON lines too
  // (they were plain text, which a log collector expecting JSON could not parse).
  for (const std::string bad :
       {" --no-such-flag", " --threads abc", " --log-level loud", " --frames 5-1 --dry-run"}) {
    const auto e = run_command(kFixture + " --log-format json" + bad);
    INFO(bad << ": " << e.err);
    CHECK(e.exit_code == 2);
    std::istringstream err(e.err);
    int errors = 0;
    while (std::getline(err, line)) {
      const auto j = nlohmann::json::parse(line);
      errors += j["level"] == "error";
    }
    CHECK(errors == 1);
  }
  const auto e = run_command(kCacheTool + " nonsense --log-format=json");
  CHECK(e.exit_code == 2);
  CHECK(nlohmann::json::parse(e.err)["message"].get<std::string>().find(
            "unknown command \"nonsense\"") == 0);
}

TEST_CASE("the same inputs give the same bytes for any thread count") {
  TempDir dir;
  const std::string env = "SOURCE_DATE_EPOCH=1700000000 ";
  const std::string cfg = " --set points=5000 --set frames=10 -q ";
  // The command line is part of the provenance: run from the same directory with the same -o.
  auto run = [&](const std::string& threads, const std::string& name) {
    const auto r = run_command("cd " + dir.path().string() + " && " + env + kFixture + cfg +
                               "--threads " + threads + " -o out.h5 && mv out.h5 " + name);
    REQUIRE(r.exit_code == 0);
  };
  run("1", "t1.h5");
  run("2", "t2.h5");
  const std::string a = file_bytes(dir / "t1.h5"), b = file_bytes(dir / "t2.h5");
  CHECK(a.size() > 1000);
  CHECK(a == b);
}

TEST_CASE("shards split the frames into contiguous parts that cover them once") {
  TempDir dir;
  std::vector<std::int64_t> all;
  for (int k = 1; k <= 3; ++k) {
    const auto out = dir / ("part" + std::to_string(k) + ".h5");
    const auto r = run_command(kFixture + " -q --frames 1-20x2 --shard " + std::to_string(k) +
                               "/3 -o " + out.string());
    REQUIRE(r.exit_code == 0);
    const auto s = datadyn::io::CacheReader(out).sequence("wave");
    all.insert(all.end(), s.frames().begin(), s.frames().end());
  }
  CHECK(all == std::vector<std::int64_t>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19});
}

TEST_CASE("dd-cache info and check, and h5ls and h5dump read the cache independently") {
  TempDir dir;
  const auto out = dir / "w.h5";
  REQUIRE(run_command(kFixture + " -q --set points=4 --frames 1-3 -o " + out.string()).exit_code ==
          0);
  auto r = run_command(kCacheTool + " info -q -i " + out.string());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("/sequences/wave: 3 frames (1-3") != std::string::npos);
  CHECK(r.out.find("points/position [3, 4, 3] per frame") != std::string::npos);
  r = run_command(kCacheTool + " check -q -i " + out.string());
  CHECK(r.exit_code == 0);

  r = run_command("h5ls -r " + out.string());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("/sequences/wave/points/position Dataset {3/Inf, 4, 3}") != std::string::npos);
  // Point 1 at frame 3 (t = 2/24 s): y = 0.1 sin(0.2 - 0.25) = -0.0049979...
  r = run_command("h5dump -d /sequences/wave/points/position -s 2,1,0 -c 1,1,3 " + out.string());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("0.01, -0.00499") != std::string::npos);

  // A truncated copy: check fails with exit 1 and names the file.
  const auto cut = dir / "cut.h5";
  std::filesystem::copy_file(out, cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(out) - 100);
  r = run_command(kCacheTool + " check -i " + cut.string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cut.h5") != std::string::npos);
}

TEST_CASE("dd-cache: a file that crashes the HDF5 library exits 1 naming the file and object") {
  // HDF5 1.10 (Debian 12) follows a root attribute's header without checking it: with the first
  // byte of the name `generator` zeroed, H5Aiterate2 ends in a segmentation fault (in H5A__close;
  // seen in gdb), and every command that lists the root's attributes used to die with exit 139
  // and no file name. Each shard has its own fixture run, so the two differ only in frames.
  TempDir dir;
  const auto good = dir / "a.h5", bad = dir / "b.h5", merged = dir / "m.h5";
  REQUIRE(run_command(kFixture + " -q --set points=4 --frames 1-6 --shard 1/2 -o " + good.string())
              .exit_code == 0);
  REQUIRE(run_command(kFixture + " -q --set points=4 --frames 1-6 --shard 2/2 -o " + bad.string())
              .exit_code == 0);
  std::string bytes = file_bytes(bad);
  const std::size_t at = bytes.find("generator");
  REQUIRE(at != std::string::npos);
  bytes[at] = '\0';
  std::ofstream(bad, std::ios::binary | std::ios::trunc) << bytes;

  auto r = run_command(kCacheTool + " check -i " + bad.string());
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("[error] " + bad.string() +
                   ": /: the list of attributes: the HDF5 library crashed reading this; the file "
                   "is damaged") != std::string::npos);
  // As a JSON line with --log-format json.
  r = run_command(kCacheTool + " check --log-format json -i " + bad.string());
  CHECK(r.exit_code == 1);
  const std::string last = r.err.substr(r.err.rfind('{'));
  const auto line = nlohmann::json::parse(last);
  CHECK(line["level"] == "error");
  CHECK(line["tool"] == "dd-cache");
  CHECK(line["message"].get<std::string>().find(bad.string() + ": /: the list of attributes") == 0);
  // The merge looks the shard's provenance up first, and HDF5 answers that lookup with an error
  // (which once read as "no generator" and went on into the crash): no output, no temporary file.
  r = run_command(kCacheTool + " merge -i " + good.string() + " -i " + bad.string() + " -o " +
                  merged.string());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("[error] " + bad.string() +
                   ": /: attribute generator: cannot look it up (damaged file?)") !=
        std::string::npos);
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    CHECK_MESSAGE(e.path().filename().string().rfind("m.h5", 0) != 0, e.path());
}

TEST_CASE(
    "dd-cache merge: shards of sm-example-sim, mps-gen and cloth-train equal the single run byte "
    "for byte") {
  TempDir dir;
  const std::string bin = DATADYN_BIN_DIR;
  const std::string env =
      "cd " + dir.path().string() + " && export SOURCE_DATE_EPOCH=1700000000 && ";
  std::filesystem::create_directories(dir / "single");
  std::filesystem::create_directories(dir / "merged");
  // Frames sharded (sm-example-sim simulates from frame 1 and writes its part) and simulations
  // sharded (mps-gen: 15 small simulations over 4 shards).
  const std::vector<std::pair<std::string, std::string>> runs = {
      {bin + "/sm-example-sim", " -q --frames 1-24"},
      {bin + "/mps-gen", " -q --set scene.duration=0.1 --set scene.l0=0.025"},
      // Runs of the variations sharded (4 runs of a small curtain).
      {bin + "/cloth-train",
       " simulate -q -c " + std::string(DATADYN_SOURCE_DIR) +
           "/configs/cloth/curtain.json --set cloth.frames=5 --set runs.mass=0.008,0.012"
           " --set runs.k_structural=1500,2500"}};
  for (const auto& [tool, args] : runs) {
    INFO(tool);
    REQUIRE(run_command(env + "cd single && " + tool + args + " -o out.h5").exit_code == 0);
    std::string inputs;
    for (int k = 1; k <= 4; ++k) {
      const std::string part = "part" + std::to_string(k) + ".h5";
      const auto r =
          run_command(env + tool + args + " --shard " + std::to_string(k) + "/4 -o " + part);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      inputs += " -i ../" + part;
    }
    const auto r =
        run_command(env + "cd merged && " + kCacheTool + " merge" + inputs + " -o out.h5");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(file_bytes(dir / "merged" / "out.h5") == file_bytes(dir / "single" / "out.h5"));
    // Progress in per-frame chunks, ending at the total counted from the inputs.
    CHECK(std::regex_search(r.err, std::regex(R"(chunk (\d+)/\1 \(100%\))")));
    CHECK(datadyn::io::CacheReader(dir / "merged" / "out.h5")
              .provenance()
              .command_line.find("--shard") == std::string::npos);
  }
  // A shard of runs not given leaves no gap in any sequence's frames (cloth-train's runs are
  // whole sequences): the command lines tell it (it merged silently without them).
  auto missing =
      run_command(env + kCacheTool + " merge -i part1.h5 -i part3.h5 -i part4.h5 -o " + "three.h5");
  CHECK(missing.exit_code == 0);
  CHECK(missing.err.find("three.h5: shard 2 of 4 not among the inputs") != std::string::npos);
  missing = run_command(env + kCacheTool + " merge -i part1.h5 -i part2.h5 -i part3.h5 -i " +
                        "part4.h5 -o four.h5");
  CHECK(missing.err.find("not among the inputs") == std::string::npos);
  // A shard given twice overlaps itself: exit 1 naming the frame.
  auto r = run_command(env + kCacheTool + " merge -i part1.h5 -i part1.h5 -o twice.h5");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("is also in part1.h5") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "twice.h5"));
  r = run_command(env + kCacheTool + " merge -i part1.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("-o/--output") != std::string::npos);
  // --dry-run writes nothing (it wrote the merged file, over an existing one too).
  r = run_command(env + kCacheTool + " merge --dry-run -i part1.h5 -i part2.h5 -o dry.h5");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("would merge 2 caches") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "dry.h5"));
  // The merged cache named like a shard would destroy the shard.
  const auto before = file_bytes(dir / "part1.h5");
  r = run_command(env + kCacheTool + " merge -i part1.h5 -i part2.h5 -o ./part1.h5");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("./part1.h5 is also an input, which it would overwrite") != std::string::npos);
  CHECK(file_bytes(dir / "part1.h5") == before);
}

TEST_CASE("--help gives each common flag's default, and what -i and -c mean for the command") {
  const std::string bin = DATADYN_BIN_DIR;
  // The line of `flag` in the help of `command`.
  const auto line = [](const std::string& command, const std::string& flag) {
    const auto r = run_command(command + " --help");
    REQUIRE(r.exit_code == 0);
    std::istringstream lines(r.out);
    for (std::string l; std::getline(lines, l);)
      if (l.find("  " + flag) == 0) return l;
    return std::string();
  };
  // CLI11's type label read "--threads N:N=0" (the validator's name and the captured default).
  const auto threads = line(kFixture, "--threads");
  CHECK(threads.find("--threads N ") == 2);
  CHECK(threads.find("Worker threads; default 0 = all cores") != std::string::npos);
  CHECK(line(kFixture, "--log-level").find("default: info") != std::string::npos);
  CHECK(line(kFixture, "--shard").find("--shard K/N ") == 2);
  CHECK(line(kFixture, "--log-format").find("--log-format text|json ") == 2);
  // -i said "Input cache(s)" for every command: which caches, and how many.
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {bin + "/wave-edit", "The database (mps-gen's cache); exactly one, required"},
      {kMeshExport, "The cache to export; exactly one, required"},
      {kCacheTool + " info", "Caches to list; one or more"},
      {kCacheTool + " check", "Caches to check; one or more"},
      {kCacheTool + " merge", "The shards' caches, one -i per shard"},
      {bin + "/spring-fit fit", "Training caches (from simulate"},
      {bin + "/spring-fit apply", "The animation cache and the springs cache (from fit)"},
      {bin + "/cloth-train train", "Target caches (from simulate); one or more"},
      {bin + "/cloth-train upscale", "The model (from train; required for --method network)"},
      {bin + "/cloth-train evaluate", "The target cache (from simulate), then one or more models"}};
  for (const auto& [command, text] : inputs) {
    INFO(command);
    CHECK(line(command, "-i,--input").find(text) != std::string::npos);
  }
  // -c's default: mesh-export and spring-fit fit have no scene.
  for (const std::string& command : {kMeshExport, bin + "/spring-fit fit"}) {
    INFO(command);
    CHECK(line(command, "-c,--config").find("default: built-in defaults") != std::string::npos);
  }
  CHECK(line(bin + "/mps-gen", "-c,--config").find("default: built-in scene") != std::string::npos);
}

TEST_CASE("dd-cache merge --dry-run counts the sequences of the merged cache, as the merge does") {
  TempDir dir;
  const std::string sim = std::string(DATADYN_BIN_DIR) + "/sm-example-sim -q --set frames=6";
  const std::string env = "cd " + dir.path().string() + " && ";
  // Frame shards: each holds both of the scene's sequences (the body's surface and particles),
  // which the merge joins into 2 sequences, not 4.
  for (int k = 1; k <= 2; ++k)
    REQUIRE(run_command(env + sim + " --shard " + std::to_string(k) + "/2 -o part" +
                        std::to_string(k) + ".h5")
                .exit_code == 0);
  const std::string args = " merge -i part1.h5 -i part2.h5 -o m.h5";
  const auto dry = run_command(env + kCacheTool + args + " --dry-run");
  INFO(dry.err);
  REQUIRE(dry.exit_code == 0);
  CHECK(dry.out == "would merge 2 caches (2 sequences in all) into m.h5\n");
  const auto r = run_command(env + kCacheTool + args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("merged 2 caches into m.h5: 2 sequences, 12 frames") != std::string::npos);
}

TEST_CASE(
    "a command that cannot split its work or reads no config refuses those flags, not ignores "
    "them") {
  TempDir dir;
  const auto out = dir / "w.h5";
  REQUIRE(run_command(kFixture + " -q --frames 1-2 -o " + out.string()).exit_code == 0);
  auto r = run_command(kCacheTool + " check --shard 2/3 -i " + out.string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--shard: dd-cache check cannot be split into shards") != std::string::npos);
  r = run_command(kCacheTool + " info --frames 1-2 -i " + out.string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--frames: dd-cache info works on whole sequences") != std::string::npos);
  // dd-cache reads no config: -c or --set would be silently ignored.
  r = run_command(kCacheTool + " check --set fiction=1 -i " + out.string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set: dd-cache check takes no config") != std::string::npos);
  r = run_command(kCacheTool + " info -c nope.json -i " + out.string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("-c/--config: dd-cache info takes no config") != std::string::npos);
  // --print-config printed the listing and exited 0, as if it had been understood.
  r = run_command(kCacheTool + " info --print-config -i " + out.string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--print-config: dd-cache info takes no config") != std::string::npos);
  CHECK(r.out.empty());
  // A misspelt command is named, with the nearest one (CLI11 said only "A subcommand is required").
  r = run_command(kCacheTool + " infoo -i " + out.string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("dd-cache: unknown command \"infoo\" (did you mean \"info\"?)") !=
        std::string::npos);
  r = run_command(kCacheTool + " show -i " + out.string());
  CHECK(r.err.find("unknown command \"show\" (commands: info, check, merge)") != std::string::npos);
  // And --help lists only the flags a command takes.
  r = run_command(kCacheTool + " info --help");
  CHECK(r.exit_code == 0);
  for (const char* flag : {"--config", "--set", "--print-config", "--frames", "--shard"})
    CHECK_MESSAGE(r.out.find(flag) == std::string::npos, flag);
  CHECK(r.out.find("--input") != std::string::npos);
  CHECK(r.out.find("--output") == std::string::npos);
  // Where the output goes without -o, per command (the help did not say).
  r = run_command(std::string(DATADYN_BIN_DIR) + "/spring-fit fit --help");
  CHECK(r.out.find("default: springs.h5") != std::string::npos);
  r = run_command(kCacheTool + " merge --help");
  CHECK(r.out.find("Output file; required") != std::string::npos);
  // info and check print; an -o was ignored.
  r = run_command(kCacheTool + " check -i " + out.string() + " -o " + (dir / "o.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("-o/--output: dd-cache check writes no file") != std::string::npos);
  // cloth-train train reads whole caches: a shard would train a different model.
  r = run_command(std::string(DATADYN_BIN_DIR) + "/cloth-train train --shard 1/2 -i " +
                  out.string() + " -o " + (dir / "m.h5").string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--shard: cloth-train train cannot be split") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "m.h5"));
  // 1/1 is the whole work: allowed everywhere.
  CHECK(run_command(kCacheTool + " check -q --shard 1/1 -i " + out.string()).exit_code == 0);
}
