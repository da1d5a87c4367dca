// The training sweeps as a user runs them: outputs and verdicts in quick mode, a killed sweep resuming to the
// uninterrupted CSV, two processes sharing one sweep, and verify reading (or retraining) the sweeps.
#include "cli_support.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <thread>

using namespace attnlab::test::cli;

namespace {

std::vector<std::string> sweep_args(const fs::path& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--quick", "--seed", "4", "--out", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// The sum of N over the lines "<sweep>: trained N of M points here" (and "... refined points here"); −1 without one.
int trained_here(const Run& r) {
  const std::regex pattern(": trained ([0-9]+) of ([0-9]+) (refined )?points here");
  int trained = -1;
  for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), pattern); it != std::sregex_iterator(); ++it)
    trained = std::max(trained, 0) + std::stoi((*it)[1]);
  return trained;
}

std::size_t files_ending(const fs::path& dir, const std::string& suffix) {
  const auto files = files_under(dir);
  return std::size_t(
      std::count_if(files.begin(), files.end(), [&](const std::string& f) { return f.ends_with(suffix); }));
}

// Whether some point is finished and another is being trained: a lock file whose point has no result yet.
bool point_in_progress_after_one_finished(const fs::path& dir) {
  const auto files = files_under(dir);
  const auto has = [&](const std::string& f) { return std::find(files.begin(), files.end(), f) != files.end(); };
  const auto stem = [](const std::string& f) { return f.substr(0, f.rfind('.')); };
  const bool finished = std::any_of(files.begin(), files.end(),
                                    [](const std::string& f) { return f.ends_with(".json"); });
  return finished && std::any_of(files.begin(), files.end(),
                                 [&](const std::string& f) { return f.ends_with(".lock") && !has(stem(f) + ".json"); });
}

// The second stage of a quick k_sweep (seeds 4, 5 on the grid 0.1, 1, 10; --refine-seeds 3): per N, the k with
// seeds 4, 5 and 6 are the best grid k (by seed-mean accuracy) and a quarter and half decade either side of it.
void expect_refined_around_the_best_k(const Csv& csv) {
  std::map<std::string, std::map<double, std::pair<double, int>>> grid;  // N → log10 k → (Σ accuracy, seeds)
  std::map<std::string, std::map<double, std::set<std::string>>> seeds;  // N → log10 k → seeds
  for (std::size_t i = 0; i < csv.rows.size(); ++i)
    if (csv.at(i, "quantity") == "val_accuracy") {
      const double log_k = std::log10(std::stod(csv.at(i, "k")));
      const auto& seed = csv.at(i, "seed");
      seeds[csv.at(i, "N")][log_k].insert(seed);
      if (seed != "6")
        grid[csv.at(i, "N")][log_k].first += std::stod(csv.at(i, "mean")), ++grid[csv.at(i, "N")][log_k].second;
    }
  for (const auto& [N, by_k] : seeds) {
    double best = 0, best_mean = -1;
    for (double log_k : {-1.0, 0.0, 1.0}) {
      const auto& [sum, n] = grid[N].at(log_k);
      if (sum / n > best_mean) best_mean = sum / n, best = log_k;
    }
    std::set<double> refined;
    for (const auto& [log_k, s] : by_k)
      if (s == std::set<std::string>{"4", "5", "6"}) refined.insert(std::round(4 * (log_k - best)) / 4);
    EXPECT_EQ(refined, (std::set<double>{-0.5, -0.25, 0, 0.25, 0.5})) << "N = " << N << ", best log k " << best;
  }
}

}  // namespace

TEST(TrainingSweeps, QuickSweepsWriteRowsFiguresAndVerdicts) {
  const std::map<std::string, std::vector<std::string>> outputs{
      {"k_sweep", {"k_sweep.png", "k_sweep_best_k.png"}},
      {"activation_table", {"activation_table.png", "activation_table_p.png"}},
      {"training_norms", {"training_norms_phi.png", "training_norms_jacobian.png", "training_norms_drift.png"}},
      {"alpha_sweep", {"alpha_sweep.png"}},
      {"periodic_table", {"periodic_table2.png"}},
      {"periodic_saturation", {}}};
  // k_sweep: 2 N × 3 k × 2 seeds, then per N 5 k around the best × 3 seeds less the 2 seeds the best k already has.
  const std::map<std::string, std::size_t> points{{"k_sweep", 2 * 3 * 2 + 2 * (5 * 3 - 2)},
                                                  {"activation_table", 7},
                                                  {"training_norms", 3},
                                                  {"alpha_sweep", 2 * 2 * 3 * 2},
                                                  {"periodic_table", 3 * 2 * 2},  // functions x depths x seeds
                                                  {"periodic_saturation", 2 * 2}};
  for (const auto& [sweep, figures] : outputs) {
    const ScratchDir dir(sweep);
    const auto r = run(sweep, sweep_args(dir.path));
    ASSERT_EQ(r.code, 0) << sweep << "\n" << r.err;
    EXPECT_EQ(trained_here(r), int(points.at(sweep))) << r.err;
    const auto csv = read_csv(dir / (sweep + ".csv"));
    std::size_t accuracies = 0;
    for (std::size_t i = 0; i < csv.rows.size(); ++i)
      if (csv.at(i, "quantity") == "val_accuracy") {
        ++accuracies;
        const double a = std::stod(csv.at(i, "mean"));
        EXPECT_TRUE(a >= 0 && a <= 1) << sweep << " accuracy " << a;
      }
    EXPECT_EQ(accuracies, points.at(sweep)) << sweep << ": one validation accuracy per point";
    if (sweep == "k_sweep") expect_refined_around_the_best_k(csv);
    for (const auto& f : figures) EXPECT_TRUE(fs::exists(dir / f)) << f;
    expect_strict_csvs(dir.path);
    const auto md = slurp(dir / (sweep + ".md"));
    EXPECT_NE(md.find("Produced by `"), std::string::npos) << md;
    EXPECT_NE(md.find("--quick"), std::string::npos) << "the exact command is recorded";
    const auto json = slurp(dir / (sweep + ".json"));
    EXPECT_NE(json.find("\"verdicts\""), std::string::npos);
    EXPECT_NE(json.find("\"budget\""), std::string::npos);
    EXPECT_EQ(files_ending(dir.path / "points", ".json"), points.at(sweep)) << "every point persisted";
    EXPECT_EQ(files_ending(dir.path / "points", ".lock"), 0u) << "no lock file outlives its point";

    // A rerun trains nothing and writes the same CSV.
    const auto before = slurp(dir / (sweep + ".csv"));
    const auto again = run(sweep, sweep_args(dir.path));
    ASSERT_EQ(again.code, 0) << again.err;
    EXPECT_EQ(trained_here(again), 0) << again.err;
    EXPECT_TRUE(slurp(dir / (sweep + ".csv")) == before) << sweep << ".csv changed on a rerun";
  }
}

// --data recall trains the generated task, its points keyed apart from Fashion-MNIST's; --controls adds softmax,
// uniform and off beside the grid at every N and seed, their rows marked control and left out of the claim's curves.
TEST(TrainingSweeps, RecallDataAndControlsAreTrainedAndMarked) {
  const ScratchDir dir("sweep_recall");
  const std::vector<std::string> grid{"--N", "8", "--k", "1", "--seeds", "1", "--refine-seeds", "0"};
  auto recall_args = grid;
  recall_args.insert(recall_args.end(), {"--data", "recall", "--controls", "softmax,uniform,off"});
  const auto r = run("k_sweep", sweep_args(dir.path, recall_args));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(trained_here(r), 4) << r.err;
  const auto csv = read_csv(dir / "k_sweep.csv");
  std::map<std::string, std::string> control_of;  // function → its control column
  for (std::size_t i = 0; i < csv.rows.size(); ++i)
    if (csv.at(i, "quantity") == "val_accuracy") control_of[csv.at(i, "function")] = csv.at(i, "control");
  EXPECT_EQ(control_of,
            (std::map<std::string, std::string>{{"poly", ""}, {"softmax", "yes"}, {"uniform", "yes"}, {"off", "yes"}}));
  const auto json = nlohmann::json::parse(slurp(dir / "k_sweep.json"));
  const auto& config = json.at("config");
  EXPECT_EQ(config["budget"]["data"], "recall") << json.dump();
  EXPECT_EQ(config["controls"], nlohmann::json({"softmax", "uniform", "off"}));
  // The same grid on Fashion-MNIST: none of the recall points is reused.
  const auto fashion = run("k_sweep", sweep_args(dir.path, grid));
  ASSERT_EQ(fashion.code, 0) << fashion.err;
  EXPECT_EQ(trained_here(fashion), 1) << fashion.err;
}

// --init is recorded in every row and in the JSON, and changes what is trained (the same seed, other Q/K weights).
TEST(TrainingSweeps, InitIsRecordedAndChangesTheRun) {
  const ScratchDir dir("sweep_init");
  std::map<std::string, std::string> loss;
  for (const char* init : {"timm", "unit"}) {
    const auto r = run("k_sweep", sweep_args(dir / init, {"--N", "8", "--k", "1", "--seeds", "1", "--init", init}));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto csv = read_csv(dir / init / "k_sweep.csv");
    ASSERT_FALSE(csv.rows.empty());
    for (std::size_t i = 0; i < csv.rows.size(); ++i) {
      EXPECT_EQ(csv.at(i, "init"), init);
      if (csv.at(i, "quantity") == "train_loss") loss[init] = csv.at(i, "mean");
    }
    const auto json = nlohmann::json::parse(slurp(dir / init / "k_sweep.json"));
    EXPECT_EQ(json["config"]["init"], nlohmann::json::array({init}));
  }
  EXPECT_NE(loss["timm"], loss["unit"]) << "the initialisation did not change the run";
}

// --matmul bf16 is recorded in the JSON and changes what is trained (the linear layers' operands rounded to bfloat16).
TEST(TrainingSweeps, Bf16ProductsAreRecordedAndChangeTheRun) {
  const ScratchDir dir("sweep_matmul");
  std::map<std::string, std::string> loss;
  for (const char* matmul : {"native", "bf16"}) {
    const auto r = run("k_sweep",
                       sweep_args(dir / matmul, {"--N", "8", "--k", "1", "--seeds", "1", "--matmul", matmul}));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto csv = read_csv(dir / matmul / "k_sweep.csv");
    for (std::size_t i = 0; i < csv.rows.size(); ++i)
      if (csv.at(i, "quantity") == "train_loss") loss[matmul] = csv.at(i, "mean");
    const auto json = nlohmann::json::parse(slurp(dir / matmul / "k_sweep.json"));
    EXPECT_NE(json.dump().find(std::string("\"matmul\":\"") + matmul + "\""), std::string::npos) << json.dump();
  }
  ASSERT_FALSE(loss["native"].empty());
  EXPECT_NE(loss["native"], loss["bf16"]) << "bf16 products did not change the run";
}

// alpha_sweep's second stage: around the best grid alpha (by the mean over seeds 4, 5), the alpha an eighth and a
// quarter either side with the same seeds, none below 0; the grid's own points are not trained again.
TEST(TrainingSweeps, AlphaSweepRefinesAroundTheBestAlpha) {
  const ScratchDir dir("sweep_alpha_refined");
  const auto r = run("alpha_sweep", sweep_args(dir.path, {"--N", "8", "--h", "relu", "--refine-seeds", "2"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csv = read_csv(dir / "alpha_sweep.csv");
  std::map<double, std::vector<double>> by_alpha;  // alpha → accuracy per seed
  for (std::size_t i = 0; i < csv.rows.size(); ++i)
    if (csv.at(i, "quantity") == "val_accuracy")
      by_alpha[std::stod(csv.at(i, "alpha"))].push_back(std::stod(csv.at(i, "mean")));
  double best = 0, best_mean = -1;
  for (double a : {0.0, 1.0, 2.0}) {
    ASSERT_EQ(by_alpha[a].size(), 2u) << "alpha " << a << ": seeds 4 and 5, once each";
    const double mean = (by_alpha[a][0] + by_alpha[a][1]) / 2;
    if (mean > best_mean) best_mean = mean, best = a;
  }
  std::set<double> expected{0.0, 1.0, 2.0};
  for (double offset : {-0.25, -0.125, 0.125, 0.25})
    if (best + offset >= 0) expected.insert(best + offset);
  std::set<double> trained;
  for (const auto& [a, accuracies] : by_alpha) {
    trained.insert(a);
    EXPECT_EQ(accuracies.size(), 2u) << "alpha " << a;
  }
  EXPECT_EQ(trained, expected) << "best grid alpha " << best;
  EXPECT_EQ(trained_here(r), int(2 * expected.size())) << r.err;
}

TEST(TrainingSweeps, ThreadCountDoesNotChangeAByte) {
  const ScratchDir dir("sweep_threads");
  for (const char* threads : {"1", "2"}) {
    auto args = sweep_args(dir / threads);
    args.insert(args.end(), {"--threads", threads});
    ASSERT_EQ(run("alpha_sweep", args).code, 0);
  }
  EXPECT_FALSE(slurp(dir / "1" / "alpha_sweep.csv").empty());
  EXPECT_TRUE(slurp(dir / "1" / "alpha_sweep.csv") == slurp(dir / "2" / "alpha_sweep.csv"));
}

// A finished point whose file was damaged on disk (one digit of a measurement changed, or the file cut short) fails
// its checksum: that point alone is trained again, and the CSV is the undamaged sweep's.
TEST(TrainingSweeps, DamagedPointIsTrainedAgainNotTrusted) {
  const ScratchDir dir("sweep_damaged");
  const auto args = sweep_args(dir / "out", {"--refine-seeds", "0"});
  ASSERT_EQ(run("k_sweep", args).code, 0);
  const std::string reference = slurp(dir / "out" / "k_sweep.csv");
  std::vector<fs::path> points;
  for (const auto& e : fs::directory_iterator(dir / "out" / "points" / "k_sweep"))
    if (e.path().extension() == ".json") points.push_back(e.path());
  ASSERT_EQ(points.size(), 12u);
  std::sort(points.begin(), points.end());
  std::string text = slurp(points[0]);
  const auto at = text.find_first_of("123456789", text.find("\"measurements\""));
  ASSERT_NE(at, std::string::npos);
  text[at] = text[at] == '9' ? '8' : char(text[at] + 1);
  std::ofstream(points[0], std::ios::trunc) << text;
  const std::string whole = slurp(points[1]);
  std::ofstream(points[1], std::ios::trunc) << whole.substr(0, whole.size() / 2);

  const auto rerun = run("k_sweep", args);
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  EXPECT_EQ(trained_here(rerun), 2) << rerun.err;
  EXPECT_TRUE(slurp(dir / "out" / "k_sweep.csv") == reference) << "the CSV after retraining the damaged points differs";
}

// --finished-only assembles a campaign from its finished points alone: the N = 16 points of a quick run are written
// with their norms and per-matrix maxima, the N = 8 ones are counted as missing, and nothing is trained (no images).
TEST(TrainingSweeps, FinishedOnlyWritesTheFinishedPointsAndTrainsNothing) {
  const ScratchDir dir("sweep_finished_only");
  ASSERT_EQ(run("training_norms", sweep_args(dir.path)).code, 0);
  const auto partial = run("training_norms",
                           sweep_args(dir.path, {"--N", "8,16", "--finished-only", "--data-dir", "/nonexistent"}));
  ASSERT_EQ(partial.code, 0) << partial.err;
  EXPECT_NE(partial.err.find("training_norms: 3 of 6 points not finished yet, left out (--finished-only)"),
            std::string::npos)
      << partial.err;
  EXPECT_EQ(trained_here(partial), -1) << partial.err;
  EXPECT_EQ(files_ending(dir.path / "points", ".json"), 3u) << "no point trained";
  EXPECT_EQ(files_ending(dir.path / "points", ".lock"), 0u) << "no point locked";
  const auto csv = read_csv(dir / "training_norms.csv");
  std::set<std::string> sizes;
  std::size_t accuracies = 0, maxima = 0;
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    if (csv.at(i, "quantity") == "val_accuracy") ++accuracies, sizes.insert(csv.at(i, "N"));
    if (csv.at(i, "quantity") == "phi_fro_max") ++maxima;
    if (csv.at(i, "quantity") == "phi_fro_max" && csv.at(i, "activation") == "softmax") {
      EXPECT_LE(std::stod(csv.at(i, "mean")), std::sqrt(std::stod(csv.at(i, "tokens"))) * (1 + 1e-12)) << "Thm 4.1 (6)";
    }
  }
  EXPECT_EQ(accuracies, 3u);
  EXPECT_EQ(sizes, std::set<std::string>{"16"});
  EXPECT_GT(maxima, 0u) << "the largest ||phi||_F over images and heads is kept";
  // the outputs say they are partial, not only stderr
  const auto config = nlohmann::json::parse(slurp(dir / "training_norms.json"))["config"];
  EXPECT_EQ(config["points"], 6);
  EXPECT_EQ(config["points_left_out"], 3);
  EXPECT_NE(slurp(dir / "training_norms.md").find("**Partial:** 3 of the 6 points are not finished yet"),
            std::string::npos);
}

// The CSV keeps every third logged step of a run with 150 (the stride ceil(150/72) = 3 keeps at most 72 + 1, the first
// and the last always), and per layer one largest per-matrix norm: the largest the point's file holds over all 150
// steps.
TEST(TrainingSweeps, CsvThinsTheNormsButKeepsEachLayersLargestMatrix) {
  const ScratchDir dir("sweep_thinned");
  const auto r = run("training_norms",
                     sweep_args(dir.path, {"--activation", "softmax", "--steps", "150", "--log-every", "1"}));
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<fs::path> points;
  for (const auto& e : fs::directory_iterator(dir / "points" / "training_norms"))
    if (e.path().extension() == ".json") points.push_back(e.path());
  ASSERT_EQ(points.size(), 1u);
  std::map<std::string, double> largest;  // layer → the file's largest phi_fro_max
  std::set<long> logged;
  const auto point = nlohmann::json::parse(slurp(points[0]));
  for (const auto& m : point["measurements"]) {
    if (m[0] == "phi_fro") logged.insert(m[2].get<long>());
    if (m[0] == "phi_fro_max") {
      auto& l = largest[std::to_string(m[3].get<long>())];
      l = std::max(l, m[1].get<double>());
    }
  }
  ASSERT_EQ(logged.size(), 150u) << "the point keeps every logged step";
  const auto csv = read_csv(dir / "training_norms.csv");
  std::map<std::string, std::set<long>> steps;
  std::map<std::string, int> maxima;
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    if (csv.at(i, "quantity") == "phi_fro") steps[csv.at(i, "layer")].insert(std::stol(csv.at(i, "step")));
    if (csv.at(i, "quantity") == "phi_fro_max") {
      ++maxima[csv.at(i, "layer")];
      const double want = largest.at(csv.at(i, "layer"));  // the CSV writes 10 significant digits
      EXPECT_NEAR(std::stod(csv.at(i, "mean")), want, 1e-9 * want) << "layer " << csv.at(i, "layer");
    }
  }
  ASSERT_EQ(steps.size(), largest.size());
  for (const auto& [layer, kept] : steps) {
    EXPECT_EQ(kept.size(), 51u) << "steps 0, 3, ..., 147 and the last, 149";
    EXPECT_TRUE(kept.count(0) && kept.count(3) && kept.count(149) && !kept.count(1) && !kept.count(148))
        << "layer " << layer;
    EXPECT_EQ(maxima[layer], 1) << "layer " << layer;
  }
}

// The norms are kept for POLY's layers 2, 7 and 12 at ViT-Tiny's depth, and for the same fractions of other depths
// (rounded down, the middle past the first): 1, 3 and 6 at depth 6, the committed campaign's; 1, 2, 3 at the quick 3.
TEST(TrainingSweeps, NormsAreKeptForThePapersLayers) {
  for (const auto& [depth, want] : std::map<std::string, std::set<std::string>>{
           {"12", {"2", "7", "12"}}, {"6", {"1", "3", "6"}}, {"3", {"1", "2", "3"}}}) {
    const ScratchDir dir("sweep_layers_" + depth);
    const auto r = run("training_norms", sweep_args(dir.path, {"--activation", "softmax", "--depth", depth}));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto csv = read_csv(dir / "training_norms.csv");
    std::set<std::string> layers;
    for (std::size_t i = 0; i < csv.rows.size(); ++i)
      if (csv.at(i, "quantity") == "phi_fro") layers.insert(csv.at(i, "layer"));
    EXPECT_EQ(layers, want) << "depth " << depth;
  }
}

// Killed while training, the sweep keeps the finished points and the claim of the dead process is taken over.
TEST(TrainingSweeps, KilledSweepResumesToTheUninterruptedCsv) {
  const ScratchDir dir("sweep_resume");
  const auto killed = dir / "killed", reference = dir / "reference";
  const std::vector<std::string> slow{"--steps", "30", "--refine-seeds", "0"};
  Child child("k_sweep", sweep_args(killed, slow));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  // Killed mid-point: between one point's result and the next point's lock there would be no lock to take over. The
  // child is stopped while the points are looked at, so that it cannot finish the point between the look and the kill.
  while (child.running() && std::chrono::steady_clock::now() < deadline) {
    child.stop();
    if (point_in_progress_after_one_finished(killed / "points")) break;
    child.resume();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  child.kill(SIGKILL);
  const auto r = child.wait();
  ASSERT_EQ(r.signal, SIGKILL) << "k_sweep finished before it could be killed: " << r.err;
  EXPECT_FALSE(fs::exists(killed / "k_sweep.csv"));
  const std::size_t kept = files_ending(killed / "points", ".json");
  EXPECT_GE(kept, 1u);
  EXPECT_EQ(files_ending(killed / "points", ".lock"), 1u) << "the point in progress keeps the dead process's lock file";

  const auto resumed = run("k_sweep", sweep_args(killed, slow));
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(trained_here(resumed), int(12 - kept)) << resumed.err;
  EXPECT_EQ(files_ending(killed / "points", ".lock"), 0u) << "the dead process's point was not taken over";
  ASSERT_EQ(run("k_sweep", sweep_args(reference, slow)).code, 0);
  EXPECT_FALSE(slurp(reference / "k_sweep.csv").empty());
  EXPECT_TRUE(slurp(killed / "k_sweep.csv") == slurp(reference / "k_sweep.csv")) << "the resumed sweep's CSV differs";
}

// Two processes on one sweep train every point once between them and write the single-process CSV. Both train on any
// scheduler: the first is stopped once it has finished a point and holds another, the second trains one of the rest
// before the first goes on, and from then on they share what is left.
TEST(TrainingSweeps, TwoProcessesShareTheSweep) {
  const ScratchDir dir("sweep_shared");
  const std::vector<std::string> slow{"--steps", "40"};
  const auto points = dir / "shared" / "points";
  constexpr std::size_t kPoints = 24;  // alpha_sweep --quick's grid
  Child first("alpha_sweep", sweep_args(dir / "shared", slow));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  bool holding = false;  // a point finished, another in progress and at least one more left for the second
  while (first.running() && std::chrono::steady_clock::now() < deadline) {
    first.stop();
    if ((holding = point_in_progress_after_one_finished(points) && files_ending(points, ".json") + 2 <= kPoints)) break;
    first.resume();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(holding) << "the first alpha_sweep was never seen holding a point with others left";
  const std::size_t finished_by_first = files_ending(points, ".json");
  Child second("alpha_sweep", sweep_args(dir / "shared", slow));
  while (second.running() && files_ending(points, ".json") == finished_by_first &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  first.resume();
  const auto a = first.wait(), b = second.wait();
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(trained_here(a) + trained_here(b), 24) << a.err << b.err;
  EXPECT_GT(trained_here(a), 0) << "both processes train: " << a.err;
  EXPECT_GT(trained_here(b), 0) << "both processes train: " << b.err;
  ASSERT_EQ(run("alpha_sweep", sweep_args(dir / "single", slow)).code, 0);
  EXPECT_TRUE(slurp(dir / "shared" / "alpha_sweep.csv") == slurp(dir / "single" / "alpha_sweep.csv"));
}

// verify reads the sweeps' CSVs from --training-results, or trains them with --retrain.
TEST(TrainingSweeps, VerifyJudgesTrainingClaimsFromSweepResults) {
  const ScratchDir dir("verify_training");
  ASSERT_EQ(run("activation_table", sweep_args(dir / "sweeps")).code, 0);
  const auto sweep_md = slurp(dir / "sweeps" / "activation_table.md");

  const auto r = run("verify", {"--quick", "--seed", "4", "--claims", "poly.table1,poly.k_vs_N", "--training-results",
                                (dir / "sweeps").string(), "--out", (dir / "read").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csv = read_csv(dir / "read" / "claims.csv");
  ASSERT_EQ(csv.rows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& id = csv.at(i, "claim_id");
    const auto& detail = csv.at(i, "detail");
    if (id == "poly.table1") {
      EXPECT_EQ(detail.find("no activation_table results"), std::string::npos) << detail;
      EXPECT_NE(sweep_md.find("## poly.table1: " + csv.at(i, "verdict") + "\n\n" + detail), std::string::npos)
          << "verify and the sweep judge the same rows alike: " << detail;
    } else {
      EXPECT_EQ(csv.at(i, "verdict"), "inconclusive");
      EXPECT_NE(detail.find("no k_sweep results"), std::string::npos) << detail;
    }
  }
  EXPECT_FALSE(fs::exists(dir / "read" / "activation_table.csv")) << "reading trains nothing";

  const auto retrained = run("verify", {"--quick", "--seed", "4", "--retrain", "--claims", "relu.alpha_sweep", "--out",
                                        (dir / "retrain").string()});
  ASSERT_EQ(retrained.code, 0) << retrained.err;
  EXPECT_EQ(trained_here(retrained), 24) << retrained.err;
  const auto alpha = read_csv(dir / "retrain" / "alpha_sweep.csv");
  EXPECT_FALSE(alpha.rows.empty());
  EXPECT_EQ(read_csv(dir / "retrain" / "claims.csv").at(0, "detail").find("no alpha_sweep results"), std::string::npos);
}

// ViT-Tiny's claims retrain the catalogue's ViT-Tiny grids into a folder of their own, as its campaign lives in
// results/vit-tiny/, and are judged from those rows alone.
TEST(TrainingSweeps, VerifyRetrainsVitTinyIntoItsOwnFolder) {
  const ScratchDir dir("verify_vit_tiny");
  // training_norms' quick grid, 3 activations (k_sweep's preset takes the same path: the preset, not the sweep,
  // routes).
  for (const auto& [claim, sweep, points] :
       {std::tuple<std::string, std::string, int>{"poly.train_norms.vit_tiny", "training_norms", 3}}) {
    const auto out = dir / sweep / "verify";
    const auto r = run("verify", {"--quick", "--seed", "4", "--retrain", "--claims", claim, "--out", out.string()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(trained_here(r), points) << claim << r.err;
    EXPECT_EQ(files_ending(out / "vit-tiny" / "points" / sweep, ".json"), std::size_t(points)) << claim;
    EXPECT_FALSE(fs::exists(out / "points")) << "nothing of the sweeps' own model is trained";
    const auto csv = read_csv(out / "vit-tiny" / (sweep + ".csv"));
    ASSERT_FALSE(csv.rows.empty());
    EXPECT_EQ(csv.at(0, "depth"), "12");
    const auto detail = read_csv(out / "claims.csv").at(0, "detail");
    EXPECT_EQ(detail.find("no vit-tiny/" + sweep + " rows"), std::string::npos) << detail;
  }
}

// The sweep run with --model vit-tiny judges ViT-Tiny's claim as verify does from that run's rows.
TEST(TrainingSweeps, VitTinySweepJudgesItsOwnClaims) {
  const ScratchDir dir("sweep_vit_tiny");
  const auto sweep = run("training_norms", sweep_args(dir / "vit-tiny", {"--model", "vit-tiny"}));
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  const auto verify = run("verify", {"--quick", "--seed", "4", "--claims", "poly.train_norms.vit_tiny",
                                     "--training-results", dir.path.string(), "--out", (dir / "verify").string()});
  ASSERT_EQ(verify.code, 0) << verify.err;
  const auto claims = read_csv(dir / "verify" / "claims.csv");
  EXPECT_EQ(claims.at(0, "detail").find("no vit-tiny/training_norms rows"), std::string::npos)
      << claims.at(0, "detail");
  EXPECT_NE(slurp(dir / "vit-tiny" / "training_norms.md")
                .find("## poly.train_norms.vit_tiny: " + claims.at(0, "verdict") + "\n\n" + claims.at(0, "detail")),
            std::string::npos);
}
