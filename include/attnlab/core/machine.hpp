#pragma once
// What the machine offers, for refusing work that cannot fit before allocating it.
#include <unistd.h>

namespace attnlab {

inline double physical_memory_bytes() { return double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE)); }

}  // namespace attnlab
