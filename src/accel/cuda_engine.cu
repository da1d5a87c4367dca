// The Thrust engine on an NVIDIA GPU (--backend cuda): cuBLAS strided-batched GEMMs for XQ, XK and the
// logit slabs, and a fused tile kernel for elementwise ϕ that never stores a logit, so N = 65,536 needs
// O(N·(D + d)) memory. Compiled with -fmad=false: the Philox/Box–Muller arithmetic must round exactly as
// on the CPU; the tile GEMM asks for its fused multiply-adds explicitly.
#include "backends.hpp"
#include "no_throw_release.hpp"
#include "thrust_engine.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <thrust/mr/allocator.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system/cuda/memory_resource.h>
#include <thrust/system/cuda/vector.h>

#include <algorithm>
#include <string>
#include <type_traits>

namespace attnlab::accel {
namespace {

using engine::I;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("cuda: ") + what + ": " + cudaGetErrorString(e));
}

// cuBLAS is opened on the first GEMM, not linked: its libcublasLt initialises for about 0.35 s at the start of every
// process that links it, CPU-only runs included. LD_LIBRARY_PATH's copy first, then the one this build was linked for.
struct Cublas {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasDgemmStridedBatched) dgemm_strided_batched;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched;
  decltype(&cublasGetStatusString) status_string;
};

const Cublas& cublas() {
  static const Cublas api = [] {
    void* lib = dlopen(ATTNLAB_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen(ATTNLAB_CUBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw std::runtime_error(std::string("backend cuda: cannot load cuBLAS: ") + dlerror());
    const auto symbol = [lib]<class F>(F*, const char* name) {
      void* s = dlsym(lib, name);
      if (!s) throw std::runtime_error(std::string("backend cuda: cuBLAS lacks ") + name);
      return reinterpret_cast<F*>(s);
    };
    return Cublas{symbol(decltype(&cublasCreate_v2){}, "cublasCreate_v2"),
                  symbol(decltype(&cublasDestroy_v2){}, "cublasDestroy_v2"),
                  symbol(decltype(&cublasDgemmStridedBatched){}, "cublasDgemmStridedBatched"),
                  symbol(decltype(&cublasSgemmStridedBatched){}, "cublasSgemmStridedBatched"),
                  symbol(decltype(&cublasGetStatusString){}, "cublasGetStatusString")};
  }();
  return api;
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cublas: ") + what + ": " + cublas().status_string(s));
}

// CUDA's version numbers: 12080 is 12.8.
std::string version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

constexpr int kTile = 64;           // rows and columns of logits per block
constexpr int kDepth = 16;          // head dimensions staged in shared memory at a time
constexpr int kThreads = 256;       // 16 × 16 threads, each owning a 4 × 4 block of the tile
constexpr int kResidentDepth = 64;  // up to this d, a block's rows of U are staged once for all its column tiles
// Row padding of the staged tiles: a warp stores 16 depths × 2 rows, on distinct banks for 4-byte T only with 2.
template <class T>
constexpr int kPad = sizeof(T) == 4 ? 2 : 1;

// Per-row statistics of ϕ over columns [split·span, (split + 1)·span) for a 64-row tile of one trial:
// the 64 × 64 logit tiles are built in registers from U and V staged through shared memory, evaluated,
// and reduced at once. Each row's 16 partial sums are combined by a fixed butterfly, so the result is
// deterministic. Two blocks per SM at least: the generic power would otherwise take 162 registers (one block).
template <class T, Elementwise F, int P>
__global__ void __launch_bounds__(kThreads, 2)
    fused_elementwise(const T* __restrict__ U, const T* __restrict__ V, const double* __restrict__ x2,
                      const double* __restrict__ v2, int N, int d, int span, ActivationParams a,
                      engine::RowStats* __restrict__ partial) {
  __shared__ T Us[kResidentDepth][kTile + kPad<T>], Vs[kDepth][kTile + kPad<T>];
  const I t = blockIdx.z;
  const int splits = gridDim.y, split = blockIdx.y, row0 = blockIdx.x * kTile;
  U += t * N * d;
  V += t * N * d;
  x2 += t * N;
  v2 += t * N;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int c_begin = split * span, c_end = min(N, c_begin + span);
  // Depths k0 … k0 + kDepth − 1 of the block's rows of U into Us[offset + k].
  const auto stage_u = [&](int k0, int offset) {
    for (int e = threadIdx.x; e < kTile * kDepth; e += kThreads) {
      const int r = e / kDepth, k = e % kDepth, gk = k0 + k, gr = row0 + r;
      Us[offset + k][r] = gr < N && gk < d ? U[static_cast<I>(gr) * d + gk] : T(0);
    }
  };
  const bool resident = d <= kResidentDepth;
  if (resident)
    for (int k0 = 0; k0 < d; k0 += kDepth) stage_u(k0, k0);
  double acc[4][5] = {};
  for (int c0 = c_begin; c0 < c_end; c0 += kTile) {
    T m[4][4] = {};
    for (int k0 = 0; k0 < d; k0 += kDepth) {
      if (!resident) stage_u(k0, 0);
      for (int e = threadIdx.x; e < kTile * kDepth; e += kThreads) {
        const int r = e / kDepth, k = e % kDepth, gk = k0 + k, gc = c0 + r;
        Vs[k][r] = gc < c_end && gk < d ? V[static_cast<I>(gc) * d + gk] : T(0);
      }
      __syncthreads();
      const int u_depth = resident ? k0 : 0;
#pragma unroll
      for (int k = 0; k < kDepth; ++k) {
        T u[4], v[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) u[r] = Us[u_depth + k][ty + 16 * r];
#pragma unroll
        for (int c = 0; c < 4; ++c) v[c] = Vs[k][tx + 16 * c];
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
          for (int c = 0; c < 4; ++c) m[r][c] = fma(u[r], v[c], m[r][c]);
      }
      __syncthreads();
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int col = c0 + tx + 16 * c;
      if (col >= c_end) continue;
      const double vv = v2[col], xx = x2[col];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        if (row0 + ty + 16 * r >= N) continue;
        double h, dh;
        evaluate<F, P>(a.logit_scale * static_cast<double>(m[r][c]), a.p, h, dh);
        const double phi = a.out_scale * h, g = a.out_scale * dh, g2 = g * g;
        acc[r][0] += phi;
        acc[r][1] += phi * phi;
        acc[r][2] += g2;
        acc[r][3] += g2 * vv;
        acc[r][4] += g2 * xx;
      }
    }
  }
  // The 16 threads of a row are lanes tx = 0…15 of one half-warp.
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int s = 0; s < 5; ++s)
      for (int offset = 8; offset > 0; offset /= 2) acc[r][s] += __shfl_xor_sync(0xffffffffu, acc[r][s], offset);
  if (tx != 0) return;
  for (int r = 0; r < 4; ++r) {
    const int row = row0 + ty + 16 * r;
    if (row < N) partial[(t * splits + split) * N + row] = {acc[r][0], acc[r][1], acc[r][2], acc[r][3], acc[r][4]};
  }
}

struct CudaSystem {
  template <class T>
  using vector = thrust::cuda::vector<
      T, thrust::mr::stateless_resource_allocator<T, engine::NoThrowRelease<thrust::cuda::memory_resource>>>;
  static constexpr bool has_fused = true;
  static constexpr I default_slab_elements = I{1} << 27;  // 1 GB of double logits
  static constexpr I max_batch = 65535;                   // grid.z of the fused kernel

  cublasHandle_t blas = nullptr;  // made by the first GEMM: drawing samples and SOFT's kernel need none

  CudaSystem() = default;
  ~CudaSystem() {
    if (blas) cublas().destroy(blas);
  }
  CudaSystem(const CudaSystem&) = delete;
  CudaSystem& operator=(const CudaSystem&) = delete;

  auto policy() const { return thrust::cuda::par; }
  int device_count() const {
    int devices = 1;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    return devices;
  }
  double memory_bytes() const {  // the whole device's: what other ranks hold now is their share
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return double(total);
  }
  std::string memory_name() const {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    return "GPU " + std::to_string(device) + " (" + prop.name + ")";
  }

  template <class T>
  void gemm(const engine::GemmArgs<T>& g) {
    if (!blas) check(cublas().create(&blas), "cublasCreate");
    const auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
    const auto n = [](I v) { return static_cast<int>(v); };
    if constexpr (std::is_same_v<T, double>)
      check(cublas().dgemm_strided_batched(blas, op(g.trans_a), op(g.trans_b), n(g.m), n(g.n), n(g.k), &g.alpha, g.A,
                                           n(g.lda), g.stride_a, g.B, n(g.ldb), g.stride_b, &g.beta, g.C, n(g.ldc),
                                           g.stride_c, n(g.batch)),
            "DgemmStridedBatched");
    else
      check(cublas().sgemm_strided_batched(blas, op(g.trans_a), op(g.trans_b), n(g.m), n(g.n), n(g.k), &g.alpha, g.A,
                                           n(g.lda), g.stride_a, g.B, n(g.ldb), g.stride_b, &g.beta, g.C, n(g.ldc),
                                           g.stride_c, n(g.batch)),
            "SgemmStridedBatched");
  }

  // Row statistics of elementwise ϕ for every row of nb trials, columns split by fused_column_splits(N).
  template <class T>
  void fused_elementwise_rows(const ActivationParams& a, I nb, I N, I d, engine::Workspace<CudaSystem, T>& w) {
    static_assert(kFusedSplitColumns % kTile == 0);
    const I tiles = (N + kTile - 1) / kTile, span = kFusedSplitColumns, splits = fused_column_splits(N);
    if (static_cast<I>(w.partial.size()) < nb * splits * N) w.partial.resize(nb * splits * N);
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits), static_cast<unsigned>(nb));
    with_elementwise(a.fn, a.p, [&]<Elementwise F, int P>() {
      fused_elementwise<T, F, P><<<grid, kThreads>>>(engine::raw<T>(w.U), engine::raw<T>(w.V),
                                                     engine::raw<double>(w.x2), engine::raw<double>(w.v2),
                                                     static_cast<int>(N), static_cast<int>(d), static_cast<int>(span),
                                                     a, engine::raw<engine::RowStats>(w.partial));
    });
    check(cudaGetLastError(), "fused_elementwise launch");
    engine::for_each_index(*this, nb * N,
                           engine::CombineChunks{engine::raw<engine::RowStats>(w.partial), N, splits, 0, N,
                                                 engine::raw<engine::RowStats>(w.rows)});
  }
};

}  // namespace

CudaStatus cuda_status() {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);  // 0: no driver is installed
  cudaRuntimeGetVersion(&runtime);
  if (driver == 0) return {CudaAvailability::no_device, "backend cuda: no NVIDIA driver on this machine"};
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0))
    return {CudaAvailability::no_device, "backend cuda: no CUDA device on this machine"};
  if (e != cudaSuccess)
    return {CudaAvailability::fault, std::string("backend cuda: ") + cudaGetErrorName(e) + ": " +
                                         cudaGetErrorString(e) + " (driver " + version(driver) + ", runtime " +
                                         version(runtime) + ")"};
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp prop{};
    if (const auto pe = cudaGetDeviceProperties(&prop, device); pe != cudaSuccess)
      return {CudaAvailability::fault,
              std::string("backend cuda: device ") + std::to_string(device) + ": " + cudaGetErrorString(pe)};
    if (prop.major < 8)
      return {CudaAvailability::fault, std::string("backend cuda: ") + prop.name + " is sm_" +
                                           std::to_string(prop.major) + std::to_string(prop.minor) +
                                           "; this build has kernels for sm_80 and later"};
  }
  return {CudaAvailability::usable, {}};
}

std::string cuda_device_description() {
  if (const auto why = cuda_unavailable_reason(); !why.empty()) throw std::runtime_error(why);
  int device = 0, driver = 0, runtime = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
         std::to_string(prop.multiProcessorCount) + " SMs, driver " + version(driver) + ", runtime " +
         version(runtime) + ")";
}

namespace detail {

// The GPU is Options::device modulo the devices present (an MPI job passes its node-local rank); the handle and buffers
// belong to it, and are made again if a call names another. draw and gaussian_kernel_norm run on the last device named
// (0 first).
struct CudaBackend final : Backend {
  int device = -1;
  std::unique_ptr<engine::Session<CudaSystem>> session;
  engine::Session<CudaSystem>& on(int wanted) {
    int devices = 1;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    if (wanted % devices != device) {
      session.reset();
      device = wanted % devices;
      check(cudaSetDevice(device), "cudaSetDevice");
      session = std::make_unique<engine::Session<CudaSystem>>();
    }
    return *session;
  }
  std::vector<AttentionNormsSquared> trial_norms(const Problem& p, const Options& o,
                                                 const Progress& progress) override {
    auto out = on(o.device).trial_norms(p, o, progress);
    check(cudaDeviceSynchronize(), "trial_norms");
    return out;
  }
  void refuse_what_cannot_fit(const Problem& p, const Options& o) override {
    on(o.device).refuse_what_cannot_fit(p, o);
  }
  Sample draw(const Problem& p, std::uint32_t trial) override { return on(std::max(device, 0)).draw(p, trial); }
  bool has_fused_kernel() const override { return CudaSystem::has_fused; }
  SpectralResult gaussian_kernel_norm(const std::vector<double>& Q, const std::vector<double>& K, std::int64_t d,
                                      double tolerance, int max_iterations) override {
    return on(std::max(device, 0)).gaussian_kernel_norm(Q, K, d, tolerance, max_iterations);
  }
};

std::unique_ptr<Backend> cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace detail
}  // namespace attnlab::accel
