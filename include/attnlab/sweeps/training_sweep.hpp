#pragma once
// Training sweeps: grids of whole ViT training runs on Fashion-MNIST ("points"), each judged by the training
// claims it feeds. k_sweep (poly.k_vs_N), activation_table (poly.table1, poly.scales_table, poly.high_p),
// training_norms (poly.train_norms, poly.iid_at_init) and alpha_sweep (relu.alpha_sweep).
//
// Every finished point is written atomically to <out>/points/<sweep>/<key>.json (committed with results/), keyed by
// its whole training configuration, so a killed run loses at most the points in progress and a rerun (or a rerun after
// the outputs exist) trains nothing twice. Several processes may run the same command on one machine: each trains a
// point only while it holds an exclusive flock on the point's lock file (released by the kernel if the process dies),
// checks for the finished point after taking the lock, skips points locked by others and waits for them at the
// end, so every process ends by writing the same outputs.
#include <attnlab/study/study.hpp>

#include <string>
#include <vector>

namespace attnlab::sweeps {

const std::vector<std::string>& training_sweep_names();

// The study binary of sweep `name` (one of training_sweep_names()).
study::StudyDefinition training_sweep_study(const std::string& name);

// Trains (or resumes) sweep `name` on its default grid and budget (quick or full, as `options`) with its points
// under <options.out>/points/<name>/, and returns its rows: verify --retrain. "<model>/<sweep>"
// (vit-tiny/training_norms) trains the sweep's grid of that preset model into <options.out>/<model>/, as its campaign
// in results/ is kept.
std::vector<ResultRow> retrain_sweep(const std::string& name, const study::StudyOptions& options,
                                     study::StudyContext& ctx);

}  // namespace attnlab::sweeps
