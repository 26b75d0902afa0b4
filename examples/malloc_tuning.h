// Keeps the memory a libtorch training step frees for the next step. examples/README.md ("Why
// the C++ trainer was 8x slower than Python") has the measurements.
#pragma once

#include <malloc.h>

namespace examples {

// Every step of a CPU training loop allocates and frees the same few large tensors: an
// embedding's dense gradient is vocab x dim floats (7.8 MB for BERT's 30,522 x 64) and Adam's
// temporaries are as large again. With its default thresholds glibc gives such blocks back to
// the kernel when they are freed (unmapped, or trimmed off the top of the heap), so the next
// step faults every page in again: 682,045 page faults in one epoch of the demo against 73,711
// for the same loop in Python, 10x the wall time on this machine. Serving blocks up to 32 MiB
// (glibc's maximum) from the heap and keeping up to 1 GiB free at its top removes the faults.
// Call once, before the first tensor is allocated.
inline void keep_freed_tensor_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace examples
