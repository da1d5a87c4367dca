// Micro-benchmarks of the SOFT layer, double, d = 64 (token dimension), c = 64 (value dimension):
//   BM_soft_attention/n/m         soft_attention(Q, V, pool m of the √n × √n grid, newton 20 iterations, no
//                                 tolerance, no trace) at n ∈ {1024, 4096}, m ∈ {49, 256}; items/s = tokens/s;
//   BM_pseudo_inverse/m           pseudo_inverse of A = exp(Q̃ ⊖ Q̃) (the pooled tokens of the 64×64 grid),
//                                 the same options; FLOP/s counts the 2·2m³ of X ← 2X − XAX per iteration;
//   BM_spectral_norm_lanczos/m    spectral_norm(A) (Lanczos on AᵀA, default options) and
//   BM_spectral_norm_svd/m        spectral_norm_svd(A) (one-sided Jacobi SVD) of the same A;
//   BM_spectral_norm_soft_operator  Lanczos on Ŝ = Pᵀ A⁺ P (n = 4096, m = 49) matrix-free through
//                                 v ↦ Pᵀ(A⁺(Pv)) and u ↦ Pᵀ(A⁺ᵀ(Pu)), never n×n.
// Q is the grid ensemble (draw_tokens: smooth image tokens plus noise, spread 0.1) and V is N(0, 1), both
// from fixed Philox streams.
//
//   bench_soft --apply IN OUT
// runs soft_attention once on the problem in IN and writes Ŝ V to OUT instead of benchmarking
// (scripts/bench-soft-vs-numpy compares it with the NumPy peer). IN: nine int64 words (kInMagic, kVersion,
// n, d, c, grid_h, grid_w, m, iterations), then Q (n×d) and V (n×c), row-major doubles. OUT: four int64
// words (kOutMagic, kVersion, n, c), then Ŝ V (n×c). Native byte order.
#include <attnlab/core/ensemble.hpp>
#include <attnlab/soft/kernel.hpp>
#include <attnlab/soft/pinv.hpp>
#include <attnlab/soft/spectral.hpp>
#include <attnlab/soft/tokens.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <string_view>

using namespace attnlab;

namespace {

constexpr std::uint64_t kSeed = 1;
constexpr Index kDim = 64, kValueDim = 64;
constexpr int kIterations = 20;
constexpr std::int64_t kInMagic = 0x3130767174666f73;   // "softqv01"
constexpr std::int64_t kOutMagic = 0x3174756f74666f73;  // "softout1"
constexpr std::int64_t kVersion = 1;

PinvOptions newton_options(int iterations = kIterations) {
  return PinvOptions{.method = PinvMethod::newton, .max_iterations = iterations, .tolerance = 0, .trace = false};
}

Index grid_side(Index n) { return static_cast<Index>(std::llround(std::sqrt(double(n)))); }

// Q: grid tokens on the √n × √n grid; V: N(0, 1).
struct Problem {
  MatrixD Q, V;
  Index side = 0;
};

Problem make_problem(Index n) {
  Problem p;
  p.side = grid_side(n);
  TokenSpec spec;
  spec.kind = TokenEnsemble::grid;
  spec.n = n;
  spec.d = kDim;
  spec.grid_h = spec.grid_w = p.side;
  p.Q = draw_tokens(spec, kSeed, 0);
  p.V.resize(n, kValueDim);
  fill_gaussian(p.V, GaussianStream(kSeed, static_cast<std::uint64_t>(n), 0, StreamTag::B), 1.0);
  return p;
}

BottleneckSpec pool(Index m, Index side) { return BottleneckSpec{Sampler::pool, m, side, side}; }

// A = exp(Q̃ ⊖ Q̃) of the pooled tokens of the 64×64 grid problem.
MatrixD bottleneck_matrix(Index m) {
  const Problem p = make_problem(4096);
  const MatrixD Qt = bottleneck_tokens(p.Q, pool(m, p.side), kSeed);
  return gaussian_kernel(Qt, Qt);
}

void BM_soft_attention(benchmark::State& state) {
  const Index n = state.range(0), m = state.range(1);
  const Problem p = make_problem(n);
  const auto options = newton_options();
  for (auto _ : state) {
    MatrixD out = soft_attention(p.Q, p.V, pool(m, p.side), options, kSeed);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_pseudo_inverse(benchmark::State& state) {
  const Index m = state.range(0);
  const MatrixD A = bottleneck_matrix(m);
  const auto options = newton_options();
  for (auto _ : state) {
    PinvResult r = pseudo_inverse(A, options);
    benchmark::DoNotOptimize(r.inverse.data());
    benchmark::ClobberMemory();
  }
  state.counters["FLOP/s"] = benchmark::Counter(4.0 * double(m) * double(m) * double(m) * kIterations,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_spectral_norm_lanczos(benchmark::State& state) {
  const MatrixD A = bottleneck_matrix(state.range(0));
  SpectralNorm s;
  for (auto _ : state) {
    s = spectral_norm(A);
    benchmark::DoNotOptimize(s.value);
  }
  state.counters["krylov"] = s.iterations;
}

void BM_spectral_norm_svd(benchmark::State& state) {
  const MatrixD A = bottleneck_matrix(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(spectral_norm_svd(A));
}

void BM_spectral_norm_soft_operator(benchmark::State& state) {
  const Index n = state.range(0), m = state.range(1);
  const Problem p = make_problem(n);
  const auto f = nystrom_factors(bottleneck_tokens(p.Q, pool(m, p.side), kSeed), p.Q);
  const MatrixD X = pseudo_inverse(f.A, newton_options()).inverse;
  const MatrixD Xt = X.transpose();
  const LinearMap apply = [&](const VectorD& v) -> VectorD { return f.P.transpose() * (X * (f.P * v)); };
  const LinearMap apply_transpose = [&](const VectorD& u) -> VectorD { return f.P.transpose() * (Xt * (f.P * u)); };
  SpectralNorm s;
  for (auto _ : state) {
    s = spectral_norm(apply, apply_transpose, n, n);
    benchmark::DoNotOptimize(s.value);
  }
  state.counters["krylov"] = s.iterations;
  state.counters["norm"] = s.value;
}

// --apply: status 2 for bad input, 1 for a failure after it.
int apply_to_file(const char* in_path, const char* out_path) {
  std::array<std::int64_t, 9> h{};
  std::ifstream in(in_path, std::ios::binary);
  in.read(reinterpret_cast<char*>(h.data()), sizeof h);
  const auto [magic, version, n, d, c, grid_h, grid_w, m, iterations] = h;
  if (!in || magic != kInMagic || version != kVersion || n < 1 || d < 1 || c < 1 || iterations < 0 ||
      iterations > 1000) {
    std::cerr << "bench_soft: " << in_path << " is not a softqv01 file\n";
    return 2;
  }
  MatrixD Q(n, d), V(n, c);
  in.read(reinterpret_cast<char*>(Q.data()), static_cast<std::streamsize>(Q.size() * sizeof(double)));
  in.read(reinterpret_cast<char*>(V.data()), static_cast<std::streamsize>(V.size() * sizeof(double)));
  if (!in || in.peek() != std::char_traits<char>::eof()) {
    std::cerr << "bench_soft: " << in_path << " does not hold Q (" << n << "x" << d << ") and V (" << n << "x" << c
              << ")\n";
    return 2;
  }
  MatrixD out;
  try {
    out = soft_attention(Q, V, BottleneckSpec{Sampler::pool, m, grid_h, grid_w},
                         newton_options(static_cast<int>(iterations)), kSeed);
  } catch (const std::invalid_argument& e) {
    std::cerr << "bench_soft: " << e.what() << "\n";
    return 2;
  }
  std::ofstream file(out_path, std::ios::binary);
  const std::array<std::int64_t, 4> header{kOutMagic, kVersion, out.rows(), out.cols()};
  file.write(reinterpret_cast<const char*>(header.data()), sizeof header);
  file.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(double)));
  if (!file.flush()) {
    std::cerr << "bench_soft: cannot write " << out_path << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--apply") {
    if (argc != 4) {
      std::cerr << "usage: bench_soft --apply IN OUT\n";
      return 2;
    }
    try {
      return apply_to_file(argv[2], argv[3]);
    } catch (const std::exception& e) {
      std::cerr << "bench_soft: " << e.what() << "\n";
      return 1;
    }
  }
  benchmark::RegisterBenchmark("BM_soft_attention", BM_soft_attention)
      ->ArgNames({"n", "m"})
      ->ArgsProduct({{1024, 4096}, {49, 256}})
      ->UseRealTime()  // wall time: whatever runs on several threads
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_pseudo_inverse", BM_pseudo_inverse)
      ->ArgName("m")
      ->Arg(49)
      ->Arg(256)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_spectral_norm_lanczos", BM_spectral_norm_lanczos)
      ->ArgName("m")
      ->Arg(49)
      ->Arg(256)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_spectral_norm_svd", BM_spectral_norm_svd)
      ->ArgName("m")
      ->Arg(49)
      ->Arg(256)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_spectral_norm_soft_operator", BM_spectral_norm_soft_operator)
      ->ArgNames({"n", "m"})
      ->Args({4096, 49})
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
