// Micro-benchmarks of the activation kernels: activation_rows (Y = ϕ(S) and JT = J(S)·T row by row)
// for every benchmarked activation and row length n ∈ {64, 256, 1024, 4096}, on 2^20/n rows so that
// each call covers 2^20 entries (8 MiB per matrix) whatever n. S and T are N(0, 1) (logits at scale 1:
// S is the activation's argument) from fixed Philox streams. items/s counts entries (rows·n) per second.
//
//   bench_activations --apply ACTIVATION IN OUT
// runs activation_rows once on the S and T of IN and writes Y and JT to OUT instead of benchmarking
// (scripts/bench-activations-vs-numpy compares them with the NumPy peer). Both files: four int64
// words (kMagic, kVersion, rows, n), then two row-major rows × n double matrices, native byte order.
#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/ensemble.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

using namespace attnlab;

namespace {

constexpr std::uint64_t kSeed = 1;
constexpr Index kEntries = Index{1} << 20;
constexpr Index kHeadDim = 64;  // d: the logit scale 1/√d, which activation_rows reads only for the -released ones
constexpr std::int64_t kMagic = 0x31776f726e747461;  // "attnrow1"
constexpr std::int64_t kVersion = 1;

// The benchmarked activations (as in scripts/bench-activations-vs-numpy); N = n. poly is x^3/√N (inside),
// relu and gelu are h/N.
constexpr std::array<std::string_view, 10> kActivations{
    "softmax", "softmax+prenorm", "sinsoftmax", "sirenmax", "sin2max-shifted",
    "cosmax",  "sinmax-constant", "relu",       "gelu",     "poly"};

ActivationSpec spec_of(std::string_view name) {
  ActivationSpec spec = ActivationSpec::parse(std::string(name));
  spec.k = KScale::parse("sqrtN");  // poly's 1/√N; ignored by the others
  return spec;
}

void BM_activation_rows(benchmark::State& state, std::string_view name) {
  const Index n = state.range(0), rows = kEntries / n;
  const Activation activation = spec_of(name).resolve(n, kHeadDim);
  MatrixD S(rows, n), T(rows, n), Y, JT;
  fill_gaussian(S, GaussianStream(kSeed, static_cast<std::uint64_t>(n), 0, StreamTag::Logits), 1.0);
  fill_gaussian(T, GaussianStream(kSeed, static_cast<std::uint64_t>(n), 0, StreamTag::B), 1.0);
  for (auto _ : state) {
    activation_rows(activation, S, T, Y, JT);
    benchmark::DoNotOptimize(Y.data());
    benchmark::DoNotOptimize(JT.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * rows * n);
}

bool read_matrices(std::istream& in, MatrixD& A, MatrixD& B) {
  std::array<std::int64_t, 4> header{};
  in.read(reinterpret_cast<char*>(header.data()), sizeof header);
  if (!in || header[0] != kMagic || header[1] != kVersion || header[2] < 1 || header[3] < 1) return false;
  A.resize(header[2], header[3]);
  B.resize(header[2], header[3]);
  in.read(reinterpret_cast<char*>(A.data()), static_cast<std::streamsize>(A.size() * sizeof(double)));
  in.read(reinterpret_cast<char*>(B.data()), static_cast<std::streamsize>(B.size() * sizeof(double)));
  return static_cast<bool>(in) && in.peek() == std::char_traits<char>::eof();
}

void write_matrices(std::ostream& out, const MatrixD& A, const MatrixD& B) {
  const std::array<std::int64_t, 4> header{kMagic, kVersion, A.rows(), A.cols()};
  out.write(reinterpret_cast<const char*>(header.data()), sizeof header);
  out.write(reinterpret_cast<const char*>(A.data()), static_cast<std::streamsize>(A.size() * sizeof(double)));
  out.write(reinterpret_cast<const char*>(B.data()), static_cast<std::streamsize>(B.size() * sizeof(double)));
}

// --apply: status 2 for bad input, 1 for a failure after it.
int apply_to_file(std::string_view name, const char* in_path, const char* out_path) {
  MatrixD S, T, Y, JT;
  Activation activation;
  try {
    std::ifstream in(in_path, std::ios::binary);
    if (!read_matrices(in, S, T)) {
      std::cerr << "bench_activations: " << in_path << " is not an attnrow1 file of S and T\n";
      return 2;
    }
    activation = spec_of(name).resolve(S.cols(), kHeadDim);
    if (activation.transforms.prenorm && S.cols() < 2) throw std::invalid_argument("prenorm needs rows of length >= 2");
  } catch (const std::exception& e) {
    std::cerr << "bench_activations: " << e.what() << "\n";
    return 2;
  }
  activation_rows(activation, S, T, Y, JT);
  std::ofstream out(out_path, std::ios::binary);
  write_matrices(out, Y, JT);
  if (!out.flush()) {
    std::cerr << "bench_activations: cannot write " << out_path << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--apply") {
    if (argc != 5) {
      std::cerr << "usage: bench_activations --apply ACTIVATION IN OUT\n";
      return 2;
    }
    return apply_to_file(argv[2], argv[3], argv[4]);
  }
  for (const auto name : kActivations) {
    const std::string label = "BM_activation_rows/" + std::string(name);
    benchmark::RegisterBenchmark(label.c_str(), BM_activation_rows, name)
        ->RangeMultiplier(4)
        ->Range(64, 4096)
        ->UseRealTime()  // wall time: the rows run on several threads
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
