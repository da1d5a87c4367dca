#pragma once
// The two builds of the Thrust engine behind accel::trial_norms and accel::draw.
#include <attnlab/mc/accelerated.hpp>

namespace attnlab::accel::detail {

std::vector<AttentionNormsSquared> omp_trial_norms(const Problem&, const Options&, const Progress&);
Sample omp_draw(const Problem&, std::uint32_t trial);
SpectralResult omp_gaussian_kernel_norm(const std::vector<double>& Q, const std::vector<double>& K, std::int64_t d,
                                        double tolerance, int max_iterations);

// Defined only where CUDA is built (ATTNLAB_HAVE_CUDA), with cuda_unavailable_reason and cuda_device_description.
std::vector<AttentionNormsSquared> cuda_trial_norms(const Problem&, const Options&, const Progress&);
Sample cuda_draw(const Problem&, std::uint32_t trial);
SpectralResult cuda_gaussian_kernel_norm(const std::vector<double>& Q, const std::vector<double>& K, std::int64_t d,
                                         double tolerance, int max_iterations);

}  // namespace attnlab::accel::detail
