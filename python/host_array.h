// Host memory handed to Python through the buffer protocol (PEP 3118).
//
// Why not pybind11's py::array: it builds arrays through NumPy's C API, whose structs NumPy 2
// changed. An extension built against a pybind11 older than 2.12 (Debian 12 ships 2.10) and run
// under NumPy 2 reads those structs at the wrong offsets, and its arrays come out with wrong
// strides: silently wrong batches. The buffer protocol is part of Python's own ABI, so
// `numpy.asarray(host_array)` reads the same shape and type under every NumPy.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "core/schema.h"

namespace shardkit::python {

class HostArray {
 public:
  // A view of `data`, kept alive by `owner` (the batch whose buffer it is).
  HostArray(std::shared_ptr<const void> owner, void* data, DType dtype,
            std::vector<pybind11::ssize_t> shape, bool is_bool = false);
  // An array of its own, not initialized: the caller writes every element.
  HostArray(DType dtype, std::vector<pybind11::ssize_t> shape, bool is_bool = false);

  void* data() const { return data_; }
  size_t elements() const;
  pybind11::buffer_info buffer_info() const;

  // Registers the class (`_HostArray`) with its buffer protocol on `m`.
  static void bind(pybind11::module_& m);

 private:
  std::shared_ptr<const void> owner_;
  void* data_;
  DType dtype_;
  std::vector<pybind11::ssize_t> shape_;
  bool is_bool_;
};

}  // namespace shardkit::python
