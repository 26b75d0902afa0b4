#include "host_array.h"

#include <cstdint>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace shardkit::python {
namespace {

std::string buffer_format(DType dtype, bool is_bool) {
  if (is_bool) return "?";
  switch (dtype) {
    case DType::kU8:
      return py::format_descriptor<uint8_t>::format();
    case DType::kU16:
      return py::format_descriptor<uint16_t>::format();
    case DType::kU32:
      return py::format_descriptor<uint32_t>::format();
    case DType::kI32:
      return py::format_descriptor<int32_t>::format();
    case DType::kI64:
      return py::format_descriptor<int64_t>::format();
    case DType::kF32:
      return py::format_descriptor<float>::format();
  }
  throw std::logic_error("unknown dtype");
}

size_t product(const std::vector<py::ssize_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), size_t{1}, std::multiplies<size_t>());
}

}  // namespace

HostArray::HostArray(std::shared_ptr<const void> owner, void* data, DType dtype,
                     std::vector<py::ssize_t> shape, bool is_bool)
    : owner_(std::move(owner)),
      data_(data),
      dtype_(dtype),
      shape_(std::move(shape)),
      is_bool_(is_bool) {}

HostArray::HostArray(DType dtype, std::vector<py::ssize_t> shape, bool is_bool)
    : dtype_(dtype), shape_(std::move(shape)), is_bool_(is_bool) {
  // At least one byte, so that an empty array still has an address to export. Not zeroed: the
  // callers write every element, and a batch's bytes were written twice.
  std::shared_ptr<uint8_t[]> bytes(
      new uint8_t[std::max<size_t>(1, elements()) * dtype_size(dtype_)]);
  data_ = bytes.get();
  owner_ = std::move(bytes);
}

size_t HostArray::elements() const { return product(shape_); }

py::buffer_info HostArray::buffer_info() const {
  const auto itemsize = static_cast<py::ssize_t>(dtype_size(dtype_));
  std::vector<py::ssize_t> strides(shape_.size());
  py::ssize_t stride = itemsize;
  for (size_t i = shape_.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape_[i];
  }
  return py::buffer_info(data_, itemsize, buffer_format(dtype_, is_bool_),
                         static_cast<py::ssize_t>(shape_.size()), shape_, strides);
}

void HostArray::bind(py::module_& m) {
  py::class_<HostArray>(m, "_HostArray", py::buffer_protocol()).def_buffer([](const HostArray& a) {
    return a.buffer_info();
  });
}

}  // namespace shardkit::python
