#include <attnlab/core/text.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/mc/statistics.hpp>
#include <attnlab/sweeps/train_run.hpp>
#include <attnlab/sweeps/train_study.hpp>
#include <attnlab/train/trainer.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace attnlab::sweeps {

namespace {

// The train study's own settings besides the run's.
struct Schedule {
  long eval_every = 100, checkpoint_every = 50;
};

struct TrainStudy {
  TrainRun run;
  Schedule schedule;
};

// The defaults: the small model on Fashion-MNIST for 1,000 steps; with --quick a CI-sized run (every stage, little
// compute).
TrainStudy defaults(bool quick) {
  TrainStudy s;
  auto& c = s.run.config;
  c.model.activation.p = 3, c.model.activation.k = KScale::parse("sqrtN");
  if (quick) {
    c.steps = 20, c.batch = 32, c.log_every = 5;
    s.run.data.train_limit = 2000, s.run.data.test_limit = 1000, s.run.data.validation = 200;
    s.schedule.eval_every = 10;
  }
  return s;
}

void validate(const TrainStudy& s) {
  const auto& data = s.run.data;
  if (s.schedule.eval_every < 1)
    throw std::invalid_argument(text("eval-every must be at least 1 (got ", s.schedule.eval_every, ")"));
  if (s.schedule.checkpoint_every < 1)
    throw std::invalid_argument(text("checkpoint-every must be at least 1 (got ", s.schedule.checkpoint_every, ")"));
  if (data.train_limit < 0) throw std::invalid_argument(text("train-limit must be >= 0 (got ", data.train_limit, ")"));
  if (data.validation < 1)
    throw std::invalid_argument(text("validation must be at least 1 (got ", data.validation, ")"));
  require_data_files(data.dir, data_files(data));
  auto c = s.run.config;
  fit_model_to_data(c.model, data);
  if (data.name == "recall") {
    if (c.augment.random_crop || c.augment.flip)
      throw std::invalid_argument("crop and flip move pixels: --data recall's tokens take neither");
    if (data.validation >= training_examples(data))
      throw std::invalid_argument(text("validation (", data.validation, ") must be smaller than the ",
                                       training_examples(data), " training examples (train-limit ", data.train_limit,
                                       ")"));
  }
  c.validate();
}

std::string percent_text(double accuracy) { return sig(100 * accuracy, 3); }

ResultRow row(const train::TrainConfig& c, const std::string& quantity, long step, double value,
              ExtraColumns extra = {}) {
  ResultRow r;
  r.study = "train";
  r.quantity = quantity;
  r.activation = c.model.activation.label();
  r.N = c.model.patches(), r.D = c.model.dim, r.d = c.model.head_dim();
  if (find_activation(c.model.activation.name).uses_p) r.p = c.model.activation.p, r.k = c.model.activation.k;
  r.trials = 1;
  r.value = estimate(std::vector<double>{value});
  extra.insert(extra.begin(), {"step", step});
  r.extra = std::move(extra);
  return r;
}

study::StudyOutput outputs(const train::Trainer& t, const train::TrainConfig& c, const train::Evaluation& test) {
  study::StudyOutput out;
  Figure loss{
      .name = "train_loss", .title = "training and validation loss", .xlabel = "step", .ylabel = "cross-entropy"};
  Figure accuracy{
      .name = "train_accuracy", .title = "training and validation accuracy", .xlabel = "step", .ylabel = "accuracy"};
  Figure norms{.name = "train_norms",
               .title = "per-layer ||phi(S)||_F and ||d phi/d S||_F (mean over images and heads)",
               .xlabel = "step",
               .ylabel = "norm",
               .logy = true};
  Series train_loss{.label = "train"}, train_accuracy{.label = "train"};
  std::vector<Series> phi(std::size_t(c.model.depth)), jacobian(std::size_t(c.model.depth));
  for (Index l = 0; l < c.model.depth; ++l) {
    phi[std::size_t(l)].label = text("||phi||_F layer ", l + 1);
    jacobian[std::size_t(l)].label = text("||J||_F layer ", l + 1);
  }
  for (const auto& r : t.records()) {
    out.rows.push_back(row(c, "loss", r.step, r.loss, {{"split", "train"}}));
    out.rows.push_back(row(c, "accuracy", r.step, r.accuracy, {{"split", "train"}}));
    out.rows.push_back(row(c, "lr", r.step, r.lr));
    out.rows.push_back(row(c, "grad_norm", r.step, r.grad_norm));
    train_loss.x.push_back(double(r.step)), train_loss.y.push_back(r.loss);
    train_accuracy.x.push_back(double(r.step)), train_accuracy.y.push_back(r.accuracy);
    for (std::size_t l = 0; l < r.norms.size(); ++l) {
      out.rows.push_back(row(c, "phi_fro", r.step, r.norms[l].phi, {{"layer", l + 1}}));
      out.rows.push_back(row(c, "jacobian_fro", r.step, r.norms[l].jacobian, {{"layer", l + 1}}));
      phi[l].x.push_back(double(r.step)), phi[l].y.push_back(r.norms[l].phi);
      jacobian[l].x.push_back(double(r.step)), jacobian[l].y.push_back(r.norms[l].jacobian);
    }
  }
  Series validation_loss{.label = "validation"}, validation_accuracy{.label = "validation"};
  for (const auto& e : t.validations()) {
    out.rows.push_back(row(c, "loss", e.step, e.loss, {{"split", "validation"}}));
    out.rows.push_back(row(c, "accuracy", e.step, e.accuracy, {{"split", "validation"}}));
    validation_loss.x.push_back(double(e.step)), validation_loss.y.push_back(e.loss);
    validation_accuracy.x.push_back(double(e.step)), validation_accuracy.y.push_back(e.accuracy);
  }
  // Issue #15's budget rule: the validation accuracy on a plateau, within 1 point over the last fifth of the steps.
  const auto flat = train::plateau(t.validations(), c.steps);
  out.rows.push_back(row(c, "plateau_spread", c.steps, flat.spread,
                         {{"from_step", flat.from_step},
                          {"evaluations", flat.evaluations},
                          {"gain", flat.gain},
                          {"plateau", flat.reached ? "yes" : "no"}}));
  out.summary = text(
      "validation accuracy ", percent_text(t.validations().empty() ? 0 : t.validations().back().accuracy),
      "; over the last fifth of the steps (", flat.evaluations, " evaluations from step ", flat.from_step,
      ") it spans ", percent_text(flat.spread), " points and gains ", percent_text(flat.gain), ": ",
      flat.reached ? "on a plateau (within 1 point)"
                   : "not on a plateau (more than 1 point, or fewer than two evaluations)",
      "\n");
  out.rows.push_back(row(c, "loss", test.step, test.loss, {{"split", "test"}}));
  out.rows.push_back(row(c, "accuracy", test.step, test.accuracy, {{"split", "test"}}));
  loss.series = {train_loss, validation_loss};
  accuracy.series = {train_accuracy, validation_accuracy};
  norms.series = phi;
  norms.series.insert(norms.series.end(), jacobian.begin(), jacobian.end());
  out.figures = {loss, accuracy, norms};
  return out;
}

}  // namespace

study::StudyDefinition train_study() {
  auto study = std::make_shared<TrainStudy>();
  study::StudyDefinition s;
  s.name = "train";
  s.description = "train the ViT mini-trainer and record loss, accuracy and attention norms";
  s.ensemble_flags = false;
  s.monte_carlo = false;
  s.add_flags = [study](CLI::App& app, bool quick) {
    *study = defaults(quick);
    add_train_flags(app, study->run, TrainFlags::every);
    // The recall task has a budget of its own unless given; the warm-up follows --steps unless given: a tenth of the
    // steps, at most 100.
    auto* steps = app.get_option("--steps");
    steps->description(
        text("optimisation steps (default ", study->run.config.steps, "; ", kRecallSteps, " with --data recall)"));
    auto* warmup = app.get_option("--warmup");
    warmup->description("linear warm-up steps (default: a tenth of --steps, at most 100)");
    app.final_callback([steps, warmup, quick, &run = study->run] {
      if (run.data.name == "recall" && steps->count() == 0 && !quick) run.config.steps = kRecallSteps;
      if (warmup->count() == 0) run.config.warmup = std::min(100L, run.config.steps / 10);
    });
    app.add_option("--eval-every", study->schedule.eval_every, "steps between validation passes")
        ->capture_default_str();
    app.add_option("--checkpoint-every", study->schedule.checkpoint_every, "steps between checkpoints")
        ->capture_default_str();
  };
  s.validate = [study](const study::StudyOptions&) { validate(*study); };
  s.run = [study](const study::StudyOptions& o, study::StudyContext& ctx) {
    const auto& schedule = study->schedule;
    auto config = study->run.config;
    fit_model_to_data(config.model, study->run.data);
    config.seed = o.seed;
    auto data = load_splits(study->run.data, config.model, o.seed);
    train::Trainer trainer(config, data.train, data.validation);
    const auto state = o.out / ".partial" / "train.state";
    if (std::filesystem::exists(state)) {
      try {
        trainer.restore(io::read_file(state));
        std::fprintf(stderr, "train: resumed at step %ld\n", trainer.step());
      } catch (const train::CorruptStateError& e) {
        ctx.warnings.push_back(text(state.string(), ": ", e.what(), "; trained from step 0 instead"));
      } catch (const std::runtime_error& e) {
        throw std::runtime_error(text(state.string(), ": ", e.what(), "; remove it or choose another --out"));
      }
    }
    const auto progress = ctx.progress->task(text("train ", config.model.activation.label()));
    while (!trainer.done()) {
      trainer.train_step();
      if (trainer.step() % schedule.eval_every == 0 || trainer.done()) trainer.record_validation();
      if (trainer.step() % schedule.checkpoint_every == 0 || trainer.done()) {
        std::filesystem::create_directories(state.parent_path());
        io::write_atomically(state, trainer.save());
      }
      if (progress) progress(std::uint32_t(trainer.step()), std::uint32_t(config.steps));
    }
    auto out = outputs(trainer, config, trainer.evaluate(data.test));
    out.config = {{"run", train::fingerprint(config)},
                  {"data", study->run.data.name},
                  {"data_dir", study->run.data.dir.string()},
                  {"train_examples", data.train.size()},
                  {"validation_examples", data.validation.size()},
                  {"test_examples", data.test.size()},
                  {"eval_every", schedule.eval_every},
                  {"checkpoint_every", schedule.checkpoint_every},
                  {"parameters", trainer.model().parameters().size()}};
    std::filesystem::remove(state);
    return out;
  };
  return s;
}

}  // namespace attnlab::sweeps
