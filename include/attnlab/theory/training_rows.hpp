#pragma once
// The rows of the training sweeps: their names, quantities and extra columns, named once for the sweeps that write
// them (src/sweeps) and the training claims that read them (src/theory/training/).
#include <string>

namespace attnlab::training_rows {

namespace sweep {
inline constexpr const char* k = "k_sweep";
inline constexpr const char* activation_table = "activation_table";
inline constexpr const char* norms = "training_norms";
inline constexpr const char* alpha = "alpha_sweep";
inline constexpr const char* periodic_table = "periodic_table";
inline constexpr const char* periodic_saturation = "periodic_saturation";
}  // namespace sweep

// A preset model's sweeps live in a folder of their own (results/vit-tiny/training_norms.csv), read by claims of their
// own, so that models never mix; the sweeps' own model has none.
namespace model {
inline constexpr const char* vit_tiny = "vit-tiny";
}  // namespace model
inline std::string sweep_path(const std::string& model, const std::string& sweep) {
  return model.empty() ? sweep : model + "/" + sweep;
}

// The recall task's recipes (--data recall), each trained into results/<folder>/ and read by claims of its own, so
// that recipes never mix. Runs tell them apart by the token the head reads, the clip and the peak rate.
struct RecallRecipe {
  const char* folder;
  bool reads_query;         // --readout last: one attention hop from the query fetches the answer
  bool clipped;             // the trainer's global gradient clip (else --clip 0)
  double lr;                // the peak rate it alone trains at; 0 for any other (the trainer's default)
  const char* flags;        // what trains it beyond --data recall and a sweep's grid
  const char* description;  // what the reports add to the task's name
};
inline constexpr RecallRecipe kRecallRecipes[] = {
    {"recall", false, true, 0, "", ""},
    {"recall-noclip", false, false, 0, "--clip 0", "no gradient clip"},
    {"recall-query", true, true, 0, "--readout last", "the head reading the query token"},
    {"recall-query-noclip", true, false, 0, "--readout last --clip 0",
     "the head reading the query token, no gradient clip"},
    {"recall-query-lowlr", true, false, 5e-4, "--readout last --clip 0 --steps 3000 --lr 0.0005",
     "the head reading the query token, no gradient clip, peak rate 5e-4 over 3,000 steps"},
};

// The recipe trained into `folder`, or nullptr.
inline const RecallRecipe* recall_recipe(const std::string& folder) {
  for (const auto& r : kRecallRecipes)
    if (folder == r.folder) return &r;
  return nullptr;
}

// The recipe a recall run's settings train.
inline const RecallRecipe& recall_recipe(bool reads_query, bool clipped, double lr) {
  const RecallRecipe* any_rate = nullptr;
  for (const auto& r : kRecallRecipes) {
    if (r.reads_query != reads_query || r.clipped != clipped) continue;
    if (r.lr == lr) return r;
    if (r.lr == 0) any_rate = &r;
  }
  return *any_rate;  // every readout and clip has a recipe at any rate
}

// The control runs trained beside a sweep's points, by their registered activation names: what attention can move.
namespace control {
inline constexpr const char* softmax = "softmax";
inline constexpr const char* uniform = "uniform";  // phi = 1/N: content-free mixing
inline constexpr const char* off = "off";          // phi = 0: no attention
}  // namespace control

namespace quantity {
inline constexpr const char* val_accuracy = "val_accuracy";
inline constexpr const char* val_loss = "val_loss";
inline constexpr const char* train_loss = "train_loss";
inline constexpr const char* phi_fro = "phi_fro";            // ‖ϕ(S)‖_F of a layer, mean over images and heads
inline constexpr const char* jacobian_fro = "jacobian_fro";  // ‖∂ϕ/∂S‖_F of a layer
// The largest over the layer's images and heads (points trained before they existed lack them).
inline constexpr const char* phi_fro_max = "phi_fro_max";
inline constexpr const char* jacobian_fro_max = "jacobian_fro_max";
// Of a layer, averaged over images and heads: the share of ϕ's entries with N|∂ϕ_j/∂x_j| < 0.01 (PERIODIC's saturated
// gradient) and the excess kurtosis of each row's logits (0 for Gaussian logits); points trained before lack them.
inline constexpr const char* saturated_share = "saturated_share";
inline constexpr const char* logit_kurtosis = "logit_kurtosis";
}  // namespace quantity

// Extra columns: every row has seed, validation (images), steps, batch and depth (rows written before them have
// none), function (the activation's registered name), init
// (the Q/K initialisation; rows written before it existed are timm's) and diverged_at; alpha where the activation takes
// one; h in alpha_sweep; the norms' rows step, layer, tokens (N + 1) and weight_std (of the initial Q and K weights);
// control ("yes") on the rows of a sweep's controls, which no claim judges.
namespace column {
inline constexpr const char* seed = "seed";
inline constexpr const char* validation = "validation";
inline constexpr const char* steps = "steps";
inline constexpr const char* batch = "batch";
inline constexpr const char* depth = "depth";
inline constexpr const char* function = "function";
inline constexpr const char* init = "init";
inline constexpr const char* readout = "readout";  // the token the head reads, on rows read at the last (absent: cls)
inline constexpr const char* diverged_at = "diverged_at";
inline constexpr const char* alpha = "alpha";
inline constexpr const char* h = "h";
inline constexpr const char* step = "step";
inline constexpr const char* layer = "layer";
inline constexpr const char* tokens = "tokens";
inline constexpr const char* weight_std = "weight_std";
inline constexpr const char* control = "control";
}  // namespace column

}  // namespace attnlab::training_rows
