// Runs are reproducible: the thread count never changes a byte of the CSV, and a run killed
// with SIGKILL leaves no truncated output and resumes to exactly the uninterrupted result.
#include "cli_support.hpp"

#include <attnlab/theory/claims.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

using namespace attnlab::test::cli;

namespace {

// soft.complexity measures this machine's wall time and memory, the one thing no seed reproduces:
// its rows are left out of the byte comparisons.
std::string reproducible(const std::string& csv) {
  std::string kept;
  std::size_t start = 0;
  while (start < csv.size()) {
    const auto end = std::min(csv.find('\n', start), csv.size());
    const auto line = csv.substr(start, end - start);
    if (line.find("soft.complexity") == std::string::npos) kept += line + '\n';
    start = end + 1;
  }
  return kept;
}

void expect_same_bytes_for_1_and_2_threads(const std::string& study, std::vector<std::string> args,
                                           const std::vector<std::string>& files) {
  const ScratchDir dir("threads_" + study);
  args.insert(args.end(), {"--seed", "11"});
  for (const char* threads : {"1", "2"}) {
    auto a = args;
    a.insert(a.end(), {"--threads", threads, "--out", (dir / threads).string()});
    const auto r = run(study, a);
    ASSERT_EQ(r.code, 0) << "--threads " << threads << "\n" << r.err;
  }
  for (const auto& f : files) {
    const auto one = reproducible(slurp(dir / "1" / f));
    EXPECT_FALSE(one.empty()) << f;
    EXPECT_TRUE(one == reproducible(slurp(dir / "2" / f))) << f << " differs between --threads 1 and --threads 2";
  }
}

TEST(Robustness, VerifyCsvIsByteIdenticalFor1And2Threads) {
  expect_same_bytes_for_1_and_2_threads("verify", {"--quick"}, {"verify.csv", "claims.csv"});
}

TEST(Robustness, PolyGradientCsvIsByteIdenticalFor1And2Threads) {
  expect_same_bytes_for_1_and_2_threads("poly_gradient", {"--quick"}, {"poly_gradient.csv"});
}

// Waits for the first complete checkpoint line, then SIGKILLs; the run may have ended first.
Run kill_after_first_checkpoint(Child& child, const fs::path& checkpoint) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (child.running()) {
    if (slurp(checkpoint).find('\n') != std::string::npos) {
      child.kill(SIGKILL);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "no checkpoint line in " << checkpoint << " after 2 minutes";
      child.kill(SIGKILL);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return child.wait();
}

// Every claim but SOFT's: they are half of verify's time and resume from the same checkpoint (faults.random_kills
// kills a verify of one of them).
std::string claims_but_soft() {
  std::string ids;
  for (const auto& claim : attnlab::claim_registry().all())
    if (!claim.id.starts_with("soft.")) ids += (ids.empty() ? "" : ",") + claim.id;
  return ids;
}

std::vector<std::string> verify_args(const fs::path& out, std::uint32_t trials) {
  return {"--quick", "--trials", std::to_string(trials), "--seed", "5",         "--threads",
          "2",       "--claims", claims_but_soft(),      "--out",  out.string()};
}

TEST(Robustness, KilledVerifyResumesToTheUninterruptedCsv) {
  const ScratchDir dir("resume");
  const auto killed = dir / "killed", reference = dir / "reference";
  const auto checkpoint = killed / ".partial" / "verify.jsonl";
  // A run that outpaces the poll is retried with more work: the kill must really happen.
  std::uint32_t trials = 200;
  bool interrupted = false;
  for (int attempt = 0; attempt < 4; ++attempt) {
    fs::remove_all(killed);
    Child child("verify", verify_args(killed, trials));
    const auto r = kill_after_first_checkpoint(child, checkpoint);
    if (r.signal == SIGKILL) {
      interrupted = true;
      break;
    }
    ASSERT_EQ(r.code, 0) << r.err;
    trials *= 4;
  }
  ASSERT_TRUE(interrupted) << "verify finished before it could be killed, up to --trials " << trials;
  RecordProperty("killed_with_trials", static_cast<int>(trials));

  const auto full = run("verify", verify_args(reference, trials));
  ASSERT_EQ(full.code, 0) << full.err;
  EXPECT_EQ(full.err.find("resumed"), std::string::npos) << full.err;

  ASSERT_TRUE(fs::exists(checkpoint)) << "no .partial checkpoint after the kill";
  for (const char* f : {"verify.csv", "claims.csv"}) {
    if (fs::exists(killed / f)) {
      EXPECT_TRUE(reproducible(slurp(killed / f)) == reproducible(slurp(reference / f)))
          << f << " left by the killed run is not complete";
    }
  }

  const auto resumed = run("verify", verify_args(killed, trials));
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("verify: resumed "), std::string::npos) << resumed.err;
  for (const char* f : {"verify.csv", "claims.csv"}) {
    EXPECT_FALSE(slurp(reference / f).empty()) << f;
    EXPECT_TRUE(reproducible(slurp(killed / f)) == reproducible(slurp(reference / f)))
        << f << " after resuming differs from the uninterrupted run";
  }
  EXPECT_FALSE(fs::exists(killed / ".partial")) << "the checkpoint outlived a finished run";
}

// The trainer: killed after its first checkpoint, a rerun resumes and ends with the CSV of an uninterrupted run.
std::vector<std::string> train_args(const fs::path& out, const std::string& steps,
                                    const std::string& checkpoint_every = "2") {
  return {"--quick",        "--model", "micro", "--steps", steps,       "--checkpoint-every",
          checkpoint_every, "--seed",  "3",     "--out",   out.string()};
}

// The warm-up follows --steps unless given: a short run is not refused for the default's 100 steps.
TEST(Robustness, ShortTrainingRunsWithTheDefaultWarmUp) {
  const ScratchDir dir("train_short");
  const auto r = run("train", {"--model", "micro", "--steps", "10", "--train-limit", "256", "--validation", "64",
                               "--batch", "16", "--eval-every", "5", "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(dir / "out" / "train.json").find(":warmup=1:"), std::string::npos) << "a tenth of 10 steps";
}

// --data recall: the generated task, its N from the patch (8x8: N = 16 tokens of one row each), named in the JSON.
TEST(Robustness, TrainsTheRecallTaskAndRecordsIt) {
  const ScratchDir dir("train_recall");
  const auto r = run("train", {"--quick", "--model", "micro", "--data", "recall", "--patch", "8x8", "--seed", "3",
                               "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto json = nlohmann::json::parse(slurp(dir / "out" / "train.json"));
  const auto& config = json.at("config");
  EXPECT_EQ(config["data"], "recall") << json.dump();
  const std::string run_config = config["run"];
  EXPECT_NE(run_config.find("vit:16x27x1:"), std::string::npos) << run_config;
  EXPECT_NE(run_config.find(":patch=1x27:"), std::string::npos) << run_config;
  EXPECT_EQ(config["test_examples"], 1000);
  const auto csv = read_csv(dir / "out" / "train.csv");
  EXPECT_EQ(csv.at(0, "N"), "16");
}

// Looked for while stopped, so the state seen is the state killed; a run that ends between two looks (a scheduler that
// left this test waiting) is started again.
TEST(Robustness, KilledTrainingResumesToTheUninterruptedCsv) {
  const ScratchDir dir("train_resume");
  const auto killed = dir / "killed", reference = dir / "reference";
  const auto state = killed / ".partial" / "train.state";
  bool interrupted = false;
  for (int attempt = 0; attempt < 4 && !interrupted; ++attempt) {
    fs::remove_all(killed);
    Child child("train", train_args(killed, "20"));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (child.running() && std::chrono::steady_clock::now() < deadline) {
      child.stop();
      if ((interrupted = fs::exists(state))) break;
      child.resume();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    child.kill(SIGKILL);
    const auto r = child.wait();
    if (interrupted) ASSERT_EQ(r.signal, SIGKILL) << r.err;
    else ASSERT_EQ(r.code, 0) << r.err;
  }
  ASSERT_TRUE(interrupted) << "train finished before its first checkpoint could be seen, 4 times";
  EXPECT_FALSE(fs::exists(killed / "train.csv"));
  const std::string saved = slurp(state);

  const auto resumed = run("train", train_args(killed, "20"));
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("train: resumed at step "), std::string::npos) << resumed.err;
  const auto full = run("train", train_args(reference, "20"));
  ASSERT_EQ(full.code, 0) << full.err;
  EXPECT_FALSE(slurp(reference / "train.csv").empty());
  EXPECT_TRUE(slurp(killed / "train.csv") == slurp(reference / "train.csv")) << "the resumed run's train.csv differs";
  EXPECT_FALSE(fs::exists(state)) << "the state outlived a finished run";
  // The same state with one byte flipped (a weight's) or cut short fails its checksum: the run says so, trains from
  // step 0 and ends where the uninterrupted run did. (A valid state of another configuration is refused: test_train.)
  for (const std::string& damaged :
       {saved.substr(0, saved.size() / 2) + char(saved[saved.size() / 2] ^ 0x04) + saved.substr(saved.size() / 2 + 1),
        saved.substr(0, saved.size() - 100)}) {
    fs::create_directories(state.parent_path());
    std::ofstream(state, std::ios::binary) << damaged;
    const auto retrained = run("train", train_args(killed, "20"));
    ASSERT_EQ(retrained.code, 0) << retrained.err;
    EXPECT_NE(retrained.err.find("train.state: checkpoint: checksum mismatch"), std::string::npos) << retrained.err;
    EXPECT_EQ(retrained.err.find("resumed at step"), std::string::npos) << retrained.err;
    EXPECT_TRUE(slurp(killed / "train.csv") == slurp(reference / "train.csv"))
        << "the retrained run's train.csv differs";
  }
}

// A diverging run stops with one line naming the step and keeps the last good checkpoint.
TEST(Robustness, NonFiniteLossStopsTrainingAndKeepsTheCheckpoint) {
  const ScratchDir dir("train_nan");
  auto args = train_args(dir / "out", "20", "1");
  args.insert(args.end(), {"--lr", "1e30", "--warmup", "0", "--clip", "0"});
  const auto r = run("train", args);
  EXPECT_EQ(r.code, 1) << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("train: error: step "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": the loss is "), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir / "out" / ".partial" / "train.state"));
  EXPECT_FALSE(fs::exists(dir / "out" / "train.csv"));
}

}  // namespace

// A disk that fills up mid-run (writes limited to 1 KB by `ulimit -f`): the run exits 1 with one line naming the
// file it could not write, the outputs of the previous run stay as they were with no temporary file beside them,
// and once there is room again the same command completes with the outputs of a run that never failed.
TEST(Robustness, AFullDiskLeavesThePreviousOutputsAndTheRerunCompletes) {
  const ScratchDir dir("full_disk");
  const auto args = [&](const fs::path& out, const char* seed) {
    return std::vector<std::string>{"--quick", "--N", "8,16,32", "--trials",  "5",
                                    "--seed",  seed,  "--out",   out.string()};
  };
  ASSERT_EQ(run("poly_frobenius", args(dir / "out", "1")).code, 0);
  std::map<std::string, std::string> before;
  for (const auto& f : files_under(dir / "out")) before[f] = slurp(dir / "out" / f);

  const auto failed = Child("poly_frobenius", args(dir / "out", "2"), {}, 2).wait();
  EXPECT_EQ(failed.code, 1) << failed.err;
  const auto lines = failed.err_lines();
  ASSERT_EQ(lines.size(), 1u) << failed.err;
  EXPECT_EQ(lines[0].rfind("poly_frobenius: error: cannot ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find((dir / "out").string()), std::string::npos) << "names the file: " << lines[0];
  for (const auto& [name, content] : before) EXPECT_TRUE(slurp(dir / "out" / name) == content) << name << " changed";
  for (const auto& f : files_under(dir / "out")) EXPECT_EQ(f.find(".tmp."), std::string::npos) << f << " left behind";

  const auto rerun = run("poly_frobenius", args(dir / "out", "2"));
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  ASSERT_EQ(run("poly_frobenius", args(dir / "fresh", "2")).code, 0);
  EXPECT_TRUE(slurp(dir / "out" / "poly_frobenius.csv") == slurp(dir / "fresh" / "poly_frobenius.csv"));
}
