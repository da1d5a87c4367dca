// The bad-input contract: every invalid input exits 2 with one stderr line naming the parameter,
// before anything is written to --out.
#include "cli_support.hpp"

#include <attnlab/accel/engine.hpp>
#include <attnlab/attention/activation.hpp>
#include <attnlab/core/machine.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>

using namespace attnlab::test::cli;

namespace {

const std::vector<std::string> ensemble_studies{"poly_frobenius", "poly_gradient"};
// Studies without Monte-Carlo trials: they take no --trials.
const std::vector<std::string> training_studies{"train",       "k_sweep",        "activation_table",   "training_norms",
                                                "alpha_sweep", "periodic_table", "periodic_saturation"};
const std::vector<std::string> all_studies{"poly_frobenius",
                                           "poly_gradient",
                                           "softmax_bounds",
                                           "relu_scaling",
                                           "periodic_properties",
                                           "soft_spectral",
                                           "newton_pinv",
                                           "soft_complexity",
                                           "verify",
                                           "train",
                                           "k_sweep",
                                           "activation_table",
                                           "training_norms",
                                           "alpha_sweep",
                                           "periodic_table",
                                           "periodic_saturation"};

// --matrix, --tokens-file or --logits-file @name stands for a scratch CSV with this content.
const std::map<std::string, std::string> matrix_files{{"@nonfinite", "1,2\n3,nan\n"},
                                                      {"@ragged", "1,2,3\n4,5\n"},
                                                      {"@zero", "0,0\n0,0\n"},
                                                      {"@logits_inf", "1,2\n\n3,inf\n"},
                                                      {"@logits_short", "1,2\n3\n"},
                                                      {"@logits_text", "0.5,zero\n"},
                                                      {"@logits_ok", "0.1,-0.2,3\n"},
                                                      {"@square", "2,1\n1,2\n"},
                                                      {"@blank", "\n \n"},
                                                      {"@trailing_comma", "1,2\n3,4,\n"},
                                                      {"@tokens_ok", "0.1,0.2\n0.3,-0.4\n0.5,0.6\n"}};

struct BadInput {
  std::string study;
  std::vector<std::string> args;
  std::vector<std::string> named;  // each must appear in the error line as a whole word
  std::string config = {};         // TOML passed with --config when non-empty
};

std::ostream& operator<<(std::ostream& os, const BadInput& c) {
  os << c.study;
  for (const auto& a : c.args) os << " " << a;
  if (!c.config.empty()) os << " --config <" << c.config.substr(0, c.config.find('\n')) << ">";
  return os;
}

std::vector<BadInput> bad_inputs() {
  std::vector<BadInput> cases;
  for (const auto& s : ensemble_studies) {
    const std::vector<BadInput> ensemble{
        {s, {"--N", "0"}, {"N"}},
        {s, {"--N", "16,-1"}, {"N"}},
        {s, {"--N", "many"}, {"N"}},
        {s, {"--D", "0"}, {"D"}},
        {s, {"--d", "0"}, {"d"}},
        {s, {"--sigma-x", "0"}, {"sigma-x"}},
        {s, {"--sigma-x", "-1"}, {"sigma-x"}},
        {s, {"--sigma-x", "nan"}, {"sigma-x"}},
        {s, {"--sigma-x", "inf"}, {"sigma-x"}},
        {s, {"--sigma-t", "0"}, {"sigma-t"}},
        {s, {"--p", "0"}, {"p"}},
        {s, {"--p", "2,-2"}, {"p"}},
        {s, {"--p", "1.5"}, {"p"}},
        {s, {"--p", "two"}, {"p"}},
        {s, {"--activation", "sinc"}, {"activation", "sinc"}},
        {s, {"--activation", "poly,sinc"}, {"activation", "sinc"}},
        {s, {"--activation", "relu", "--alpha", "-0.5"}, {"alpha"}},
        {s, {"--activation", "gelu", "--alpha", "nan"}, {"alpha"}},
        {s, {"--activation", "softmax+normalise"}, {"activation", "normalise"}},
        {s, {"--activation", "sinc+prenorm"}, {"activation", "sinc"}},
        {s, {"--activation", "softmax+prenorm", "--N", "1,8"}, {"N", "prenorm"}},
        {s, {"--activation", "softmax+prenorm-released", "--N", "1,8"}, {"N", "prenorm"}},
        {s, {"--activation", "softmax+prenorm+prenorm-released"}, {"activation", "prenorm"}},
        {s, {"--activation", "sinsoftmax+prenorm-release"}, {"activation", "prenorm-release"}},
        {s, {"--backend", "thrust", "--activation", "sin2max-released"}, {"backend", "thrust", "cpu"}},
        {s, {"--backend", "thrust", "--activation", "poly+prenorm-released"}, {"backend", "thrust", "cpu"}},
        {s, {"--activation", "relu+qkln", "--d", "1"}, {"d", "qk-layernorm"}},
        {s, {"--k", "0"}, {"k"}},
        {s, {"--convention", "sideways"}, {"convention"}},
        {s, {"--precision", "half"}, {"precision"}},
        {s, {"--backend", "gpu"}, {"backend", "gpu"}},
        {s, {"--activation", "softmax", "--alpha", "-1"}, {"alpha"}},  // checked though softmax reads no alpha
        {s, {"--N", "99999999999"}, {"N", "GB"}},                      // refused before any allocation
        {s, {"--N", "50000000", "--trials", "1"}, {"N", "GB"}},
        {s, {"--trails", "10"}, {"--trails", "--trials"}},
        {s, {"--backend", "thrust", "--activation", "sinmax"}, {"backend", "thrust", "sinmax", "cpu"}},
        {s, {"--backend", "thrust", "--activation", "softmax+prenorm"}, {"backend", "thrust", "cpu"}},
        {s, {}, {"N"}, "N = [8, 0]\n"},
        {s, {}, {"sigma-x"}, "sigma-x = -0.5\n"},
        {s, {}, {"p"}, "p = 2.5\n"},
    };
    cases.insert(cases.end(), ensemble.begin(), ensemble.end());
  }
  for (const auto& s : all_studies) {
    const std::vector<BadInput> common{
        {s, {"--trials", "0"}, {"trials"}},
        {s, {"--trials", "-3"}, {"trials"}},
        {s, {"--trials", "4294967296"}, {"trials"}},  // would wrap to 0 (the default) as a uint32
        {s, {"--trials", "many"}, {"trials"}},
        {s, {"--threads", "-1"}, {"threads"}},
        {s, {"--seed", "-1"}, {"seed"}},
        {s, {"--frobnicate"}, {"--frobnicate"}},
        {s, {"--seeed", "3"}, {"--seeed", "--seed"}},  // the closest flag is named
        {s, {"--config", "/nonexistent/attnlab.toml"}, {"config"}},
        {s, {}, {"config"}, "trials = [1\n"},                   // malformed TOML
        {s, {}, {"config", "frobnicate"}, "frobnicate = 1\n"},  // unknown key
        {s, {}, {"trials"}, "trials = 0\n"},
    };
    cases.insert(cases.end(), common.begin(), common.end());
  }
  for (const auto& s : {"soft_spectral", "newton_pinv", "soft_complexity"}) {
    const std::vector<BadInput> soft{
        {s, {"--m", "0"}, {"m"}},
        {s, {"--n", "64", "--m", "100"}, {"m"}},
        {s, {"--n", "0"}, {"n"}},
        {s, {"--n", "9999999"}, {"n", "GB"}},
        {s, {"--d", "0"}, {"d"}},
        {s, {"--sampler", "middle"}, {"sampler", "middle"}},
        {s, {"--tokens", "fractal"}, {"tokens", "fractal"}},
        {s, {"--tolerance", "-1e-3"}, {"tolerance"}},
        {s, {"--tolerance", "nan"}, {"tolerance"}},
        {s, {"--max-iterations", "0"}, {"max-iterations"}},
        {s, {"--matrix", "/nonexistent/A.csv"}, {"matrix"}},
        {s, {"--matrix", "@nonfinite"}, {"matrix", "non-finite"}},
        {s, {"--matrix", "@ragged"}, {"matrix", "square"}},
        {s, {"--matrix", "@zero"}, {"matrix", "zero"}},
        {s, {"--tokens-file", "/nonexistent/T.csv"}, {"tokens-file"}},
        {s, {"--tokens-file", "@blank"}, {"tokens-file", "empty"}},
        {s, {"--tokens-file", "@ragged"}, {"tokens-file", "row", "2"}},
        {s, {"--tokens-file", "@logits_text"}, {"tokens-file", "zero", "1"}},
        {s, {"--tokens-file", "@trailing_comma"}, {"tokens-file", "row", "2"}},
        {s, {"--tokens-file", "@nonfinite"}, {"tokens-file", "non-finite", "2"}},
        {s, {"--tokens-file", "@logits_inf"}, {"tokens-file", "non-finite", "2"}},
        {s, {"--tokens-file", "@tokens_ok", "--matrix", "@square"}, {"tokens-file", "matrix"}},
        {s, {"--tokens-file", "@tokens_ok", "--n", "64"}, {"n", "tokens-file", "3"}},
        {s, {"--tokens-file", "@tokens_ok", "--d", "64"}, {"d", "tokens-file", "2"}},
        {s, {"--tokens-file", "@tokens_ok", "--m", "4"}, {"m", "3"}},  // the file sets n = 3
        {s, {"--claims", "poly.frob_growth"}, {"claims", "poly.frob_growth"}},
    };
    cases.insert(cases.end(), soft.begin(), soft.end());
  }
  const std::vector<BadInput> logits{
      {"periodic_properties", {"--logits-file", "/nonexistent/logits.csv"}, {"logits-file"}},
      {"periodic_properties", {"--logits-file", "@logits_inf"}, {"logits-file", "inf", "3"}},
      {"periodic_properties", {"--logits-file", "@logits_short"}, {"logits-file", "2"}},
      {"periodic_properties", {"--logits-file", "@logits_text"}, {"logits-file", "zero", "1"}},
      {"periodic_properties",
       {"--logits-file", "@logits_ok", "--claims", "periodic.saturation"},
       {"logits-file", "periodic.saturation"}},
  };
  cases.insert(cases.end(), logits.begin(), logits.end());

  cases.push_back({"newton_pinv", {"--method", "newton,cholesky"}, {"method", "cholesky"}});
  cases.push_back({"newton_pinv", {"--rank-tolerance", "-1"}, {"rank-tolerance"}});
  for (const auto& s : {"periodic_properties", "verify"}) {
    cases.push_back({s, {"--N", "8"}, {"--N"}});  // no grid to explore
    cases.push_back({s, {}, {"config", "N"}, "N = [8]\n"});
  }
  for (const auto& s : {"softmax_bounds", "relu_scaling", "periodic_properties", "verify"})
    cases.push_back({s, {"--claims", "poly.no_such_claim"}, {"claims", "poly.no_such_claim"}});
  // A claim is checked on its own grid: grid flags explore instead.
  cases.push_back({"relu_scaling", {"--claims", "relu.frob", "--N", "8,16"}, {"claims", "grid"}});
  cases.push_back({"softmax_bounds", {"--claims", "poly.softmax_fro_bound", "--sigma-t", "0.3"}, {"claims", "grid"}});
  cases.push_back({"relu_scaling", {"--alpha", "-1"}, {"alpha"}});
  cases.push_back({"poly_frobenius", {"--reference-slope", "nan"}, {"reference-slope"}});
  for (BadInput c : std::vector<BadInput>{
           {"k_sweep", {"--N", "12"}, {"N"}},
           {"k_sweep", {"--N", "2048"}, {"N"}},
           {"k_sweep", {"--k", "0"}, {"k"}},
           {"k_sweep", {"--seeds", "0"}, {"seeds"}},
           {"k_sweep", {"--init", "zero"}, {"init", "zero"}},
           {"k_sweep", {"--p", "0"}, {"p", "0"}},
           {"k_sweep", {"--p", "3,3"}, {"twice"}},
           {"k_sweep", {"--readout", "first"}, {"readout", "first"}},
           {"k_sweep", {"--train-limit", "500", "--validation", "700"}, {"validation", "train-limit"}},
           {"activation_table", {"--activation", "x^q"}, {"activation", "x^q"}},
           {"activation_table", {"--activation", "softmax/L"}, {"activation", "softmax/L"}},
           {"activation_table", {"--depth", "0"}, {"depth"}},
           {"alpha_sweep", {"--h", "sinc"}, {"sinc"}},
           {"alpha_sweep", {"--alpha", "-1"}, {"alpha"}},
           {"periodic_table", {"--depths", "0"}, {"depths"}},
           {"training_norms", {"--data-dir", "/nonexistent"}, {"data-dir"}},
           {"training_norms", {"--heads", "3"}, {"dim", "heads"}},
           {"k_sweep", {"--data", "recall", "--crop"}, {"crop", "recall"}},
           {"k_sweep", {"--data", "recall", "--N", "1025"}, {"N", "1025", "recall"}},
           {"k_sweep", {"--controls", "sinc"}, {"controls", "sinc"}},
           {"k_sweep", {"--controls", "softmax,softmax"}, {"control"}},
       })
    cases.push_back(c);
  const std::string t = "train";
  for (BadInput c : std::vector<BadInput>{
           {t, {"--heads", "5"}, {"dim", "heads"}},
           {t, {"--dim", "-4"}, {"dim"}},
           {t, {"--patch", "5x5"}, {"patch", "tile"}},
           {t, {"--patch", "4by4"}, {"patch"}},
           {t, {"--model", "huge"}, {"model"}},
           {t, {"--init", "kaiming"}, {"init", "kaiming"}},
           {t, {"--matmul", "fp8"}, {"matmul", "fp8"}},
           {t, {"--readout", "mean"}, {"readout", "mean"}},
           {t, {"--activation", "sinc"}, {"sinc"}},
           {t, {"--data", "mnist"}, {"data"}},
           {t, {"--data", "recall", "--patch", "32x32"}, {"patch", "recall"}},
           {t, {"--data", "recall", "--patch", "5x5"}, {"patch", "tile"}},
           {t, {"--data", "recall", "--flip"}, {"flip", "recall"}},
           {t, {"--data-dir", "/nonexistent"}, {"data-dir"}},
           {t, {"--lr", "0"}, {"learning", "rate"}},
           {t, {"--label-smoothing", "1"}, {"smoothing"}},
           {t, {"--steps", "0"}, {"steps"}},
           {t, {"--batch", "0"}, {"batch"}},
           {t, {"--validation", "0"}, {"validation"}},
           {t, {"--eval-every", "0"}, {"eval-every"}},
           {t, {"--warmup", "-1"}, {"warm-up"}},
       })
    cases.push_back(c);
  return cases;
}

// `word` occurs in `line` with no letter, digit or '_' on either side.
bool names(const std::string& line, const std::string& word) {
  const auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (auto at = line.find(word); at != std::string::npos; at = line.find(word, at + 1)) {
    const bool left = at == 0 || !is_word(line[at - 1]);
    const bool right = at + word.size() == line.size() || !is_word(line[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

// Exit 2, exactly one stderr line "<study>: error: ..." naming every expected word.
void expect_one_line_naming(const Run& r, const std::string& study, const std::vector<std::string>& named) {
  EXPECT_EQ(r.code, 2) << r.err;
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 1u) << "stderr:\n" << r.err;
  const std::string prefix = study + ": error: ";
  ASSERT_EQ(lines[0].rfind(prefix, 0), 0u) << lines[0];
  const std::string message = lines[0].substr(prefix.size());
  for (const auto& word : named) EXPECT_TRUE(names(message, word)) << "'" << word << "' not named in: " << lines[0];
}

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

// Exit 2, one line naming the parameter, nothing written.
TEST_P(BadInputTest, RefusedInOneLine) {
  const auto& c = GetParam();
  const ScratchDir dir("bad_input");
  const auto out = dir / "out";
  auto args = c.args;
  for (auto& a : args)
    if (matrix_files.contains(a)) {
      const auto file = dir / (a.substr(1) + ".csv");
      std::ofstream(file) << matrix_files.at(a);
      a = file.string();
    }
  args.push_back("--quick");  // should validation regress, the run that follows stays short
  if (!c.config.empty()) {
    std::ofstream(dir / "config.toml") << c.config;
    args.insert(args.end(), {"--config", (dir / "config.toml").string()});
  }
  args.insert(args.end(), {"--out", out.string()});
  const auto r = run(c.study, args);
  expect_one_line_naming(r, c.study, c.named);
  EXPECT_FALSE(fs::exists(out)) << "--out was created; files: " << ::testing::PrintToString(files_under(out));
}

std::string case_name(const ::testing::TestParamInfo<BadInput>& info) {
  std::string name = std::to_string(info.index) + "_" + info.param.study;
  for (const auto& a : info.param.args) name += "_" + a;
  if (!info.param.config.empty()) name += "_toml_" + info.param.config;
  std::string id;
  for (char ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    if (ch != '_' || id.empty() || id.back() != '_') id += ch;
  }
  return id;
}

INSTANTIATE_TEST_SUITE_P(AllStudies, BadInputTest, ::testing::ValuesIn(bad_inputs()), case_name);

// Tests may run as root, which may write anywhere: use paths no permission bit can open.
TEST(BadInput, UnwritableOutExitsTwoNamingOut) {
  const ScratchDir dir("unwritable_out");
  const auto file = dir / "a_file";
  std::ofstream(file) << "not a directory\n";
  const std::vector<fs::path> unwritable{file / "sub", file, "/proc/attnlab_cli_out"};
  for (const auto& study : all_studies) {
    for (const auto& out : unwritable) {
      SCOPED_TRACE(study + " --out " + out.string());
      const auto r = run(study, {"--quick", "--out", out.string()});
      expect_one_line_naming(r, study, {"--out"});
      EXPECT_EQ(slurp(file), "not a directory\n");
      EXPECT_FALSE(fs::exists(out / (study + ".csv")));
    }
    EXPECT_EQ(files_under(dir.path), std::vector<std::string>{"a_file"});
  }
}

// Only the ensemble sweeps take --backend, and they need a usable GPU for cuda.
TEST(BadInput, BackendsAStudyCannotUseAreAClearError) {
  const bool gpu = attnlab::accel::cuda_unavailable_reason().empty();
  for (const auto& study : all_studies) {
    const bool accelerated = std::find(ensemble_studies.begin(), ensemble_studies.end(), study) !=
                             ensemble_studies.end();
    if (accelerated && gpu) continue;
    const ScratchDir dir("cuda_backend");
    const auto r = run(study, {"--quick", "--backend", "cuda", "--out", (dir / "out").string()});
    if (accelerated) expect_one_line_naming(r, study, {"backend", "cuda", "cpu"});
    else expect_one_line_naming(r, study, {"unknown", "--backend"});
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}

TEST(BadInput, HelpExitsZeroDocumentsEveryFlagAndWritesNothing) {
  const std::vector<std::string> common{"--out", "--seed", "--threads", "--quick", "--config"};
  const std::vector<std::string> ensemble{"--N",       "--D",       "--d",          "--p",          "--k",
                                          "--sigma-x", "--sigma-t", "--activation", "--convention", "--precision"};
  for (const auto& study : all_studies) {
    SCOPED_TRACE(study);
    const ScratchDir dir("help");
    const auto r = run(study, {"--help", "--out", (dir / "out").string()});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    auto flags = common;
    const bool monte_carlo = std::find(training_studies.begin(), training_studies.end(), study) ==
                             training_studies.end();
    EXPECT_EQ(names(r.out, "--trials"), monte_carlo) << "--trials listed only by the Monte-Carlo studies:\n" << r.out;
    const bool sweeps = study == "poly_frobenius" || study == "poly_gradient";
    if (sweeps || study == "relu_scaling" || study == "softmax_bounds") {
      flags.insert(flags.end(), ensemble.begin(), ensemble.end());
      flags.push_back("--reference-slope");
      if (sweeps) flags.push_back("--backend");
      // --activation lists every registered name and transform.
      for (const auto& info : attnlab::activation_registry()) flags.push_back(info.name);
      for (const char* transform : {"prenorm", "prenorm-released", "qkln"}) flags.push_back(transform);
    }
    if (study == "verify") flags.push_back("--claims");
    if (study == "periodic_properties") flags.push_back("--logits-file");
    if (study == "soft_spectral" || study == "newton_pinv" || study == "soft_complexity")
      flags.insert(flags.end(), {"--matrix", "--tokens-file"});
    for (const auto& flag : flags) EXPECT_TRUE(names(r.out, flag)) << flag << " missing from --help:\n" << r.out;
    if (std::find(flags.begin(), flags.end(), "--backend") == flags.end()) {
      EXPECT_FALSE(names(r.out, "--backend")) << "--backend listed by a cpu-only study:\n" << r.out;
    }
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}

}  // namespace

namespace {

// A numbers file as large as the machine's memory (sparse: it takes no disk) is refused from its size alone, before a
// byte is read: parsed, it would need up to four times that.
TEST(BadInput, NumbersFilesLargerThanMemoryAllowsAreRefusedBeforeTheyAreRead) {
  const ScratchDir dir("huge_numbers_file");
  const auto huge = dir / "huge.csv";
  { std::ofstream(huge) << "1,2\n"; }
  fs::resize_file(huge, static_cast<std::uintmax_t>(attnlab::physical_memory_bytes()));
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {"newton_pinv", {"--matrix", huge.string()}},
      {"soft_spectral", {"--tokens-file", huge.string()}},
      {"periodic_properties", {"--logits-file", huge.string()}},
      {"activation_rows", {"--rows", huge.string()}},
  };
  for (const auto& [study, args] : cases) {
    SCOPED_TRACE(study);
    auto full = args;
    full.insert(full.end(), {"--out", (dir / "out").string()});
    const auto started = std::chrono::steady_clock::now();
    const auto r = run(study, full);
    expect_one_line_naming(r, study, {"huge.csv", "GB", args[0].substr(2)});
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20)) << "the file was read";
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}

}  // namespace
