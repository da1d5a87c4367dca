// The cuda engine's vectors release memory through NoThrowRelease: after a sticky device error every CUDA call fails,
// the free included, and that must not turn the error being reported into std::terminate. Host memory whose release
// throws stands in for the device's, so this runs without a GPU.
#define THRUST_DEVICE_SYSTEM THRUST_DEVICE_SYSTEM_OMP
#include <thrust/mr/allocator.h>
#include <no_throw_release.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace {

constexpr const char* kDeviceFault = "cuda: an illegal memory access was encountered";

struct FreeFails final : thrust::mr::memory_resource<void*> {
  void* do_allocate(std::size_t bytes, std::size_t) override { return ::operator new(bytes); }
  void do_deallocate(void* p, std::size_t, std::size_t) override {
    ::operator delete(p);
    throw std::runtime_error("CUDA free failed");
  }
};

template <class Resource>
void fault_while_holding_memory() {
  const std::vector<double, thrust::mr::stateless_resource_allocator<double, Resource>> buffer(1000);
  throw std::runtime_error(kDeviceFault);
}

TEST(DeviceMemory, AFailingReleaseLetsTheDeviceErrorThrough) {
  try {
    fault_while_holding_memory<attnlab::accel::engine::NoThrowRelease<FreeFails>>();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), kDeviceFault);
  }
}

// The defect the wrapper removes: the resource's own throwing release ends the process while the error unwinds.
TEST(DeviceMemoryDeathTest, AThrowingReleaseTerminatesTheProcess) {
  EXPECT_DEATH(fault_while_holding_memory<FreeFails>(), "");
}

}  // namespace
