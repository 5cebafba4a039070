#include "ffnshape/train/host_allocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ffnshape {

void keep_host_memory_mapped() {
#if defined(__GLIBC__)
  static const bool done = [] {
    mallopt(M_MMAP_MAX, 0);                  // no mmap: large blocks come from the heap too
    mallopt(M_TRIM_THRESHOLD, 1 << 30);      // keep freed heap memory for the next step
    mallopt(M_TOP_PAD, 256 << 20);           // grow the heap in large steps
    return true;
  }();
  (void)done;
#endif
}

}  // namespace ffnshape
