// _shardkit.write_dataset: Python rows through the shardify converter (write_dataset.cc).
#pragma once

#include <pybind11/pybind11.h>

namespace shardkit::python {

void bind_write_dataset(pybind11::module_& m);

}  // namespace shardkit::python
