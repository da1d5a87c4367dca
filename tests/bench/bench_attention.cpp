// Micro-benchmarks of the attention-norms estimator (x^3, k = 1, inside, double, D = d = 64) and of
// Eigen's dgemm, the roofline it is judged against. Run with --benchmark_format=json; the FLOP/s
// counters count 2N²d + 4NDd flops per trial (U = XQ, V = XK, S = UVᵀ).
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/tile_product.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/norms/attention_norms.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>

using namespace attnlab;

namespace {

constexpr Index kD = 64, kd = 64;
constexpr std::uint64_t kSeed = 1;

const ActivationSpec kCube{"poly", 3, KScale{}, Convention::inside};
// x^3/√N built in and as a formula (issue 43: the formula within 2× of the built-in)
const ActivationSpec kCubeSqrtN{"poly", 3, KScale::parse("sqrtN"), Convention::inside};
const ActivationSpec kCubeSqrtNFormula = ActivationSpec::parse("expr:x^3/sqrt(N)");

double flops_per_trial(Index N) { return 2.0 * N * N * kd + 4.0 * N * kD * kd; }

void report(benchmark::State& state, double flops_per_item, double items_per_iteration) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * items_per_iteration));
  state.counters["FLOP/s"] = benchmark::Counter(flops_per_item * items_per_iteration,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_attention_norms_trial(benchmark::State& state) {
  const EnsembleSpec spec{state.range(0), kD, kd};
  const auto activation = kCube.resolve(spec.N, spec.d);
  EnsembleSample<double> sample;
  std::uint32_t trial = 0;
  for (auto _ : state) {
    draw_ensemble(spec, kSeed, trial++, sample);
    benchmark::DoNotOptimize(attention_norms_streamed(sample.X, sample.Q, sample.K, activation));
  }
  report(state, flops_per_trial(spec.N), 1);
}

// Sampling alone, one trial's X, Q and K (N·D + 2·D·d normals, items/s counting normals): what bounds small N.
void BM_draw_ensemble(benchmark::State& state) {
  const EnsembleSpec spec{state.range(0), kD, kd};
  EnsembleSample<double> sample;
  std::uint32_t trial = 0;
  for (auto _ : state) {
    draw_ensemble(spec, kSeed, trial++, sample);
    benchmark::DoNotOptimize(sample.X.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * (spec.N * kD + 2 * kD * kd));
}

template <class T>
void fused_kernel(benchmark::State& state, bool gradients = true, const ActivationSpec& phi = kCube) {
  const EnsembleSpec spec{state.range(0), kD, kd};
  const auto activation = phi.resolve(spec.N, spec.d);
  EnsembleSample<T> sample;
  draw_ensemble(spec, kSeed, 0, sample);
  for (auto _ : state)
    benchmark::DoNotOptimize(attention_norms_streamed(sample.X, sample.Q, sample.K, activation, {}, gradients));
  report(state, flops_per_trial(spec.N), 1);
}
void BM_fused_kernel(benchmark::State& state) { fused_kernel<double>(state); }
// --precision float: float tiles, reductions in double (issue 19's target: 1.8x the double kernel at N >= 1024).
void BM_fused_kernel_float(benchmark::State& state) { fused_kernel<float>(state); }
// poly_frobenius's kernel: no Q- or K-gradient (a study computes only what it writes), in each precision.
void BM_fused_kernel_norms_only(benchmark::State& state) { fused_kernel<double>(state, false); }
void BM_fused_kernel_float_norms_only(benchmark::State& state) { fused_kernel<float>(state, false); }
void BM_cube_sqrtN_builtin(benchmark::State& state) { fused_kernel<double>(state, true, kCubeSqrtN); }
void BM_cube_sqrtN_formula(benchmark::State& state) { fused_kernel<double>(state, true, kCubeSqrtNFormula); }
void BM_cube_sqrtN_builtin_norms_only(benchmark::State& state) { fused_kernel<double>(state, false, kCubeSqrtN); }
void BM_cube_sqrtN_formula_norms_only(benchmark::State& state) {
  fused_kernel<double>(state, false, kCubeSqrtNFormula);
}

// Enough trials per run that dynamic scheduling keeps both threads busy at N ≤ 256.
std::uint32_t trials_per_run(Index N) {
  return static_cast<std::uint32_t>(std::max<Index>(4, (Index{1} << 20) / (N * N)));
}

void mc_run(benchmark::State& state, bool gradients) {
  AttentionMcConfig config;
  config.ensemble = EnsembleSpec{state.range(0), kD, kd};
  config.activations = {kCube};
  config.seed = kSeed;
  config.trials = trials_per_run(config.ensemble.N);
  config.gradients = gradients;
  for (auto _ : state) benchmark::DoNotOptimize(run_attention_norms(config));
  report(state, flops_per_trial(config.ensemble.N), config.trials);
}
void BM_mc_run(benchmark::State& state) { mc_run(state, true); }
// What poly_frobenius computes: no Q- or K-gradient (its whole-process rate is judged against this one).
void BM_mc_run_norms_only(benchmark::State& state) { mc_run(state, false); }

void BM_dgemm(benchmark::State& state) {
  const Index n = state.range(0);
  const MatrixD A = MatrixD::Random(n, n), B = MatrixD::Random(n, n);
  MatrixD C(n, n);
  for (auto _ : state) {
    C.noalias() = A * B;
    benchmark::DoNotOptimize(C.data());
  }
  report(state, 2.0 * n * n * n, 1);
}

// The GEMM of one tile of attention_norms_streamed (64 rows × 256 columns, inner size d), one thread:
// compare with BM_dgemm to see how much of the large-N gap is the tile shape, and float's tile with double's to see
// the most the float path can gain over the double one.
template <class T>
void gemm_tile(benchmark::State& state) {
  const TileShape tile{};
  const Matrix<T> U = Matrix<T>::Random(tile.rows, kd), V = Matrix<T>::Random(tile.cols, kd);
  Matrix<T> S(tile.rows, tile.cols);
  Eigen::setNbThreads(1);
  for (auto _ : state) {
    S.noalias() = U * V.transpose();
    benchmark::DoNotOptimize(S.data());
  }
  Eigen::setNbThreads(0);  // back to OpenMP's default for the benchmarks after this one
  report(state, 2.0 * tile.rows * tile.cols * kd, 1);
}
void BM_dgemm_tile(benchmark::State& state) { gemm_tile<double>(state); }
void BM_sgemm_tile(benchmark::State& state) { gemm_tile<float>(state); }

// The same tile by the estimators' packed product (operands packed once, outside the loop, as per trial there).
template <class T>
void packed_tile(benchmark::State& state) {
  const TileShape tile{};
  const Matrix<T> U = Matrix<T>::Random(tile.rows, kd), V = Matrix<T>::Random(tile.cols, kd);
  Matrix<T> S(tile.rows, tile.cols);
  PackedColumns<T> columns;
  columns.pack(V, tile.cols);
  PackedRows<T> rows;
  rows.pack(U, 0, tile.rows);
  for (auto _ : state) {
    tile_product(rows, columns, 0, tile.cols, S.data(), S.cols());
    benchmark::DoNotOptimize(S.data());
  }
  report(state, 2.0 * tile.rows * tile.cols * kd, 1);
}
void BM_packed_dgemm_tile(benchmark::State& state) { packed_tile<double>(state); }
void BM_packed_sgemm_tile(benchmark::State& state) { packed_tile<float>(state); }

void sizes(benchmark::internal::Benchmark* b) {
  for (Index N : {16, 64, 256, 1024, 4096}) b->Arg(N);
  b->UseRealTime()->Unit(benchmark::kMicrosecond);  // wall time: the work runs on several threads
}

}  // namespace

BENCHMARK(BM_attention_norms_trial)->Apply(sizes);
BENCHMARK(BM_draw_ensemble)->Arg(16)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_fused_kernel)->Apply(sizes);
BENCHMARK(BM_fused_kernel_float)->Apply(sizes);
BENCHMARK(BM_fused_kernel_norms_only)->Apply(sizes);
BENCHMARK(BM_fused_kernel_float_norms_only)->Apply(sizes);
BENCHMARK(BM_cube_sqrtN_builtin)->Apply(sizes);
BENCHMARK(BM_cube_sqrtN_formula)->Apply(sizes);
BENCHMARK(BM_cube_sqrtN_builtin_norms_only)->Apply(sizes);
BENCHMARK(BM_cube_sqrtN_formula_norms_only)->Apply(sizes);
BENCHMARK(BM_mc_run)->Apply(sizes);
BENCHMARK(BM_mc_run_norms_only)->Arg(64)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_dgemm)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_dgemm_tile)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_sgemm_tile)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_packed_dgemm_tile)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_packed_sgemm_tile)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
