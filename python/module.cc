// _shardkit: the C++ side of the Python module. Batches leave as NumPy arrays that share the
// loader's buffers (a capsule keeps the batch alive); the GIL is released while waiting.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "core/dataset.h"
#include "core/dataset_store.h"
#include "core/error.h"
#include "interruptible.h"
#include "loader/loader.h"
#include "loader/mixture_spec.h"
#include "write_dataset.h"

namespace py = pybind11;
using namespace shardkit;
using shardkit::python::interruptible;
using shardkit::python::raise_if_signalled;

namespace {

py::dtype numpy_dtype(DType d) {
  switch (d) {
    case DType::kU8:
      return py::dtype::of<uint8_t>();
    case DType::kU16:
      return py::dtype::of<uint16_t>();
    case DType::kU32:
      return py::dtype::of<uint32_t>();
    case DType::kI32:
      return py::dtype::of<int32_t>();
    case DType::kI64:
      return py::dtype::of<int64_t>();
    case DType::kF32:
      return py::dtype::of<float>();
  }
  throw std::logic_error("unknown dtype");
}

// A dict of arrays viewing the batch's columns without copying.
py::dict batch_to_dict(std::shared_ptr<loader::Batch> batch) {
  auto* owner = new std::shared_ptr<loader::Batch>(batch);
  py::capsule keep_alive(owner,
                         [](void* p) { delete static_cast<std::shared_ptr<loader::Batch>*>(p); });
  py::dict out;
  for (loader::Column& c : batch->columns) {
    std::vector<py::ssize_t> shape(c.shape().begin(), c.shape().end());
    out[py::str(c.name())] = py::array(numpy_dtype(c.dtype()), shape, c.data(), keep_alive);
  }
  return out;
}

py::list schema_list(const Schema& s) {
  py::list fields;
  for (const Field& f : s.fields()) {
    py::dict d;
    d["name"] = f.name;
    d["dtype"] = std::string(dtype_name(f.dtype));
    d["shape"] = f.shape;
    fields.append(d);
  }
  return fields;
}

// How shard bytes are read: local read mode, remote transport and cache. True when `key` is
// one of these options.
bool source_option(const std::string& key, const py::handle& value, SourceOptions& s) {
  if (key == "read_mode")
    s.read_mode = parse_read_mode(value.cast<std::string>());
  else if (key == "remote_concurrency")
    s.remote_concurrency = value.cast<unsigned>();
  else if (key == "cache_dir")
    s.cache_dir = py::str(value).cast<std::string>();
  else if (key == "cache_limit")
    s.cache_limit = value.cast<uint64_t>();
  else if (key == "remote_retries")
    s.remote_retries = value.cast<unsigned>();
  else if (key == "remote_timeout_ms")
    s.remote_timeout_ms = value.cast<unsigned>();
  else if (key == "max_manifest_bytes")
    s.max_manifest_bytes = value.cast<uint64_t>();
  else
    return false;
  return true;
}

// A state_dict value: a non-negative integer, else a ShardkitError naming the field and range.
uint64_t state_field(const py::handle& value, const char* name, const std::string& range) {
  const auto invalid = [&] {
    return Error(ErrorCode::kInvalidArgument, "",
                 std::string("state_dict \"") + name + "\" is " +
                     py::repr(value).cast<std::string>() + ": the valid range is " + range);
  };
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) throw invalid();
  if (value.cast<py::int_>() < py::int_(0)) throw invalid();
  try {
    return value.cast<uint64_t>();
  } catch (const py::cast_error&) {
    throw invalid();
  }
}

loader::LoaderOptions options_from(const py::dict& kw) {
  loader::LoaderOptions o;
  for (auto [key_obj, value] : kw) {
    const std::string key = py::str(key_obj);
    if (value.is_none()) continue;
    if (source_option(key, value, o.source)) continue;
    if (key == "batch_size")
      o.batch_size = value.cast<uint64_t>();
    else if (key == "shuffle")
      o.shuffle = value.cast<bool>();
    else if (key == "seed")
      o.seed = value.cast<uint64_t>();
    else if (key == "rank")
      o.rank = value.cast<uint32_t>();
    else if (key == "world_size")
      o.world_size = value.cast<uint32_t>();
    else if (key == "max_samples")
      o.max_samples = value.cast<uint64_t>();
    else if (key == "max_tokens")
      o.max_tokens = value.cast<uint64_t>();
    else if (key == "source_field")
      o.source_field = value.cast<bool>();
    else if (key == "drop_last")
      o.drop_last = value.cast<bool>();
    else if (key == "window_blocks")
      o.window_blocks = value.cast<uint64_t>();
    else if (key == "threads")
      o.threads = value.cast<unsigned>();
    else if (key == "memory_budget")
      o.memory_budget = value.cast<size_t>();
    else if (key == "prefetch_batches")
      o.prefetch_batches = value.cast<size_t>();
    else if (key == "timeout_ms")
      o.timeout = std::chrono::milliseconds(value.cast<int64_t>());
    else if (key == "fields")
      o.fields = value.cast<std::vector<std::string>>();
    else if (key == "include_metadata")
      o.include_metadata = value.cast<bool>();
    else if (key == "int32")
      o.int_output = value.cast<bool>() ? loader::IntOutput::kInt32 : loader::IntOutput::kInt64;
    else if (key == "dynamic_padding")
      o.dynamic_padding = value.cast<bool>();
    else if (key == "pad_to_multiple_of")
      o.pad_to_multiple_of = value.cast<uint32_t>();
    else if (key == "attention_mask")
      o.attention_mask = value.cast<bool>();
    else if (key == "document_positions")
      o.documents.position_ids = value.cast<bool>();
    else if (key == "cu_seqlens")
      o.documents.cu_seqlens = value.cast<bool>();
    else if (key == "document_mask")
      o.documents.attention_mask = value.cast<bool>();
    else if (key == "max_mask_length")
      o.documents.max_mask_length = value.cast<uint32_t>();
    else if (key == "separator_id")
      o.documents.separator_id = value.cast<uint32_t>();
    else if (key == "sft_labels")
      o.sft_labels = value.cast<bool>();
    else if (key == "mlm_probability") {
      o.mlm.enabled = true;
      o.mlm.probability = value.cast<double>();
    } else if (key == "mask_token_id")
      o.mlm.mask_token_id = value.cast<int64_t>();
    else if (key == "vocab_size")
      o.mlm.vocab_size = value.cast<uint64_t>();
    else if (key == "special_ids")
      o.mlm.special_ids = value.cast<std::vector<int64_t>>();
    else
      throw py::type_error("Loader: unknown option '" + key + "'");
  }
  return o;
}

// (path, weight, repeat, choose) per source, as shardkit/__init__.py normalises them.
using SourceTuple =
    std::tuple<std::string, std::optional<double>, std::optional<double>, std::optional<uint64_t>>;

std::vector<loader::MixtureSource> sources_from(const std::vector<SourceTuple>& list) {
  std::vector<loader::MixtureSource> out;
  for (const auto& [path, weight, repeat, choose] : list)
    out.push_back({path, weight, repeat, choose});
  return out;
}

// Opening a remote dataset waits on the network: interruptible.
std::unique_ptr<loader::Loader> open_loader(const std::vector<SourceTuple>& sources,
                                            loader::LoaderOptions options) {
  auto stop = std::make_shared<Interrupt>();
  options.source.interrupt = stop;
  return interruptible(
      [&] { return std::make_unique<loader::Loader>(sources_from(sources), std::move(options)); },
      *stop);
}

}  // namespace

PYBIND11_MODULE(_shardkit, m) {
  m.doc() = "shardkit: compressed token shards streamed into PyTorch";

  py::register_exception<Error>(m, "ShardkitError", PyExc_RuntimeError);

  py::class_<Dataset>(m, "Dataset")
      .def(
          py::init([](const std::string& path, const py::kwargs& kw) {
            DatasetOptions options;
            for (auto [key, value] : kw)
              if (!value.is_none() && !source_option(py::str(key), value, options.source))
                throw py::type_error("Dataset: unknown option '" + std::string(py::str(key)) + "'");
            auto stop = std::make_shared<Interrupt>();
            options.source.interrupt = stop;
            return interruptible([&] { return Dataset::open(path, options); }, *stop);
          }),
          py::arg("path"))
      .def("__len__", &Dataset::size)
      .def_property_readonly("schema", [](const Dataset& d) { return schema_list(d.schema()); })
      .def_property_readonly("shards", [](const Dataset& d) { return d.manifest().shards.size(); })
      .def_property_readonly("blocks", &Dataset::block_count)
      .def_property_readonly("bytes_on_disk",
                             [](const Dataset& d) { return d.manifest().bytes_on_disk(); })
      .def_property_readonly("info_json", [](const Dataset& d) { return d.info().to_json(); })
      .def_property_readonly("metadata_json",
                             [](const Dataset& d) {
                               py::dict out;
                               for (const auto& [k, v] : d.manifest().metadata) out[py::str(k)] = v;
                               return out;
                             })
      .def(
          "record",
          [](const Dataset& d, uint64_t i) {
            const Schema& s = d.schema();
            std::vector<unsigned char> rec(s.record_size());
            // A remote block not held yet may wait on the network: off this thread.
            if (!is_remote_location(d.path().string()))
              d.read(i, rec.data());
            else if (!d.read_resident(i, rec.data()))
              interruptible([&] { d.read(i, rec.data()); }, d.interrupt());
            py::dict out;
            for (const Field& f : s.fields()) {
              std::vector<py::ssize_t> shape(f.shape.begin(), f.shape.end());
              py::array a(numpy_dtype(f.dtype), shape);
              std::memcpy(a.mutable_data(), rec.data() + f.offset, f.byte_size());
              out[py::str(f.name)] = a;
            }
            return out;
          },
          py::arg("index"));

  m.def(
      "read_mixture_spec",
      [](const std::string& file) {
        const loader::MixtureSpec spec = loader::read_mixture_spec(file);
        std::vector<SourceTuple> sources;
        for (const loader::MixtureSource& s : spec.sources)
          sources.emplace_back(s.path, s.weight, s.repeat, s.choose);
        return py::make_tuple(sources, spec.seed, spec.max_samples);
      },
      py::arg("file"));

  py::class_<loader::Loader>(m, "Loader")
      .def(py::init([](const std::string& path, const py::kwargs& kw) {
             return open_loader(std::vector<SourceTuple>{{path, {}, {}, {}}}, options_from(kw));
           }),
           py::arg("path"))
      .def(py::init([](const std::vector<SourceTuple>& sources, const py::kwargs& kw) {
             return open_loader(sources, options_from(kw));
           }),
           py::arg("sources"))
      .def_property_readonly("epoch_samples", &loader::Loader::epoch_samples)
      .def("set_epoch", &loader::Loader::set_epoch, py::arg("epoch"))
      .def_property_readonly("epoch", &loader::Loader::epoch)
      .def_property_readonly("threads", &loader::Loader::threads)
      .def_property_readonly("window_blocks", &loader::Loader::window_blocks)
      .def("batches", &loader::Loader::batches)
      .def("next",
           [](loader::Loader& l) -> py::object {
             std::shared_ptr<loader::Batch> b;
             {
               py::gil_scoped_release release;
               b = l.next(raise_if_signalled);
             }
             if (!b) return py::none();
             py::dict d = batch_to_dict(b);
             return py::make_tuple(d, b->records, b->index, b->sources);
           })
      .def("state",
           [](const loader::Loader& l) {
             loader::LoaderState s = l.state();
             return py::make_tuple(s.seed, s.epoch, s.samples_consumed, s.tokens_consumed);
           })
      .def(
          "restore",
          [](loader::Loader& l, py::object seed, py::object epoch, py::object consumed,
             py::object tokens) {
            const bool one = l.sources() == 1 && l.options().max_samples == 0;
            const std::string size = std::to_string(l.epoch_samples());
            l.restore(
                {state_field(seed, "seed", "0..2^64-1"), state_field(epoch, "epoch", "0..2^64-1"),
                 state_field(
                     consumed, "samples_consumed",
                     "0.." + size + (one ? " (the dataset's records)" : " (the epoch's samples)")),
                 state_field(tokens, "tokens_consumed", "0..2^64-1")});
          },
          py::arg("seed"), py::arg("epoch"), py::arg("samples_consumed"),
          py::arg("tokens_consumed") = py::int_(0))
      .def("planned_records", &loader::Loader::planned_records, py::arg("batch"));

  python::bind_write_dataset(m);
}
