// GPU throughput of the Monte-Carlo engine (--backend cuda): trials/s against N up to 65,536, and the
// achieved FLOP/s as a fraction of this device's GEMM peak, measured by cuBLAS in the same run.
// Timed by CUDA events (manual time). Run: build/tests/bench_gpu [--benchmark_filter=...]
#include <attnlab/accel/engine.hpp>
#include <attnlab/core/rng.hpp>

#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace {

using attnlab::accel::ActivationParams;
using attnlab::accel::Problem;

void check(cudaError_t e) {
  if (e != cudaSuccess) throw std::runtime_error(cudaGetErrorString(e));
}

// Wall time of f on the GPU, by events around it on the default stream.
template <class F>
double gpu_seconds(F&& f) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start));
  check(cudaEventCreate(&stop));
  check(cudaEventRecord(start));
  f();
  check(cudaEventRecord(stop));
  check(cudaEventSynchronize(stop));
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms * 1e-3;
}

std::map<bool, double> peak_flops;  // single precision? → FLOP/s of a large cuBLAS GEMM

void check(cublasStatus_t s) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(cublasGetStatusString(s));
}

// Uniform entries in [−1, 1): a GEMM on zeros draws less power and would overstate the peak.
template <class T>
__global__ void fill_uniform(T* out, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint32_t h = std::uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 16, h *= 0x85ebca6bu, h ^= h >> 13, h *= 0xc2b2ae35u, h ^= h >> 16;
    out[i] = T(h) * T(2.0 / 4294967296.0) - T(1);
  }
}

// The reference peak: an n × n × n GEMM in the engine's precision (no tensor-core math mode requested).
void BM_GemmPeak(benchmark::State& state) {
  const bool single = state.range(0) == 1;
  const int n = 8192;
  const std::size_t entries = std::size_t(n) * n, bytes = entries * (single ? 4 : 8);
  void *A, *B, *C;
  check(cudaMalloc(&A, bytes));
  check(cudaMalloc(&B, bytes));
  check(cudaMalloc(&C, bytes));
  for (auto [m, seed] : {std::pair{A, 1u}, std::pair{B, 2u}}) {
    if (single) fill_uniform<<<1024, 256>>>(static_cast<float*>(m), entries, seed);
    else fill_uniform<<<1024, 256>>>(static_cast<double*>(m), entries, seed);
  }
  check(cudaGetLastError());
  cublasHandle_t h;
  check(cublasCreate(&h));
  const double one = 1, zero = 0;
  const float onef = 1, zerof = 0;
  double total = 0;
  for (auto _ : state) {
    const double seconds = gpu_seconds([&] {
      if (single)
        check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &onef, static_cast<float*>(A), n,
                          static_cast<float*>(B), n, &zerof, static_cast<float*>(C), n));
      else
        check(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<double*>(A), n,
                          static_cast<double*>(B), n, &zero, static_cast<double*>(C), n));
    });
    state.SetIterationTime(seconds);
    total += seconds;
  }
  const double flops = 2.0 * n * n * double(n);
  state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  check(cublasDestroy(h));
  check(cudaFree(A));
  check(cudaFree(B));
  check(cudaFree(C));
  peak_flops[single] = flops * double(state.iterations()) / total;
}

// Trials of N × N attention (D = d = 64) per second; FLOP counts the GEMM work: the logits (2N²d), the
// projections (4NDd) and, for softmax, the two products with [V | X | ‖v‖² | ‖x‖²] (4N²(d + D + 2)).
void BM_Engine(benchmark::State& state) {
  const std::int64_t N = state.range(0);
  const bool softmax = state.range(1) == 1, single = state.range(2) == 1;
  const std::int64_t D = 64, d = 64;
  Problem p{N, D, d, 1.0, 1.0, 1, attnlab::hash_string("bench_gpu"), 1, single, {}};
  p.activations.push_back(
      softmax ? ActivationParams{true, attnlab::Elementwise::identity, 1, 0.125, 1.0}
              : ActivationParams{false, attnlab::Elementwise::power, 3, 0.125, 1.0 / std::sqrt(double(N))});
  // Enough trials per call that launch overheads are amortised.
  p.trials = static_cast<std::uint32_t>(std::max<std::int64_t>(1, (std::int64_t{1} << 28) / (N * N)));
  // One engine for every call: its cuBLAS handle and buffers are made by the warm-up, not timed.
  attnlab::accel::Engine engine(attnlab::accel::Device::cuda);
  engine.trial_norms(p);
  double total = 0;
  for (auto _ : state) {
    const double seconds = gpu_seconds([&] { engine.trial_norms(p); });
    state.SetIterationTime(seconds);
    total += seconds;
  }
  const double n = double(N), flops = 2 * n * n * d + 4 * n * D * d + (softmax ? 4 * n * n * (d + D + 2) : 0);
  state.counters["trials/s"] = benchmark::Counter(double(p.trials), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["FLOP/s"] = benchmark::Counter(flops * p.trials, benchmark::Counter::kIsIterationInvariantRate);
  const double achieved = flops * p.trials * double(state.iterations()) / total;
  if (peak_flops.count(single)) state.counters["of_gemm_peak"] = achieved / peak_flops[single];
  state.SetLabel(std::string(softmax ? "softmax" : "x^3/sqrtN (fused)") + (single ? ", float" : ", double"));
}

BENCHMARK(BM_GemmPeak)->ArgName("single")->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Engine)
    ->ArgNames({"N", "softmax", "single"})
    ->ArgsProduct({{256, 1024, 4096, 16384, 65536}, {0, 1}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (const auto why = attnlab::accel::cuda_skip_reason(); !why.empty()) {
    std::printf("bench_gpu: not run: %s\n", why.c_str());
    return 0;
  }
  if (const auto why = attnlab::accel::cuda_unavailable_reason(); !why.empty()) {
    std::fprintf(stderr, "bench_gpu: %s\n", why.c_str());
    return 1;
  }
  const std::string device = attnlab::accel::cuda_device_description();
  std::printf("device: %s\n", device.c_str());
  benchmark::AddCustomContext("device", device);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
