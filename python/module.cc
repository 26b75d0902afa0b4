// _shardkit: the C++ side of the Python module. Batches leave as buffer-protocol arrays
// (host_array.h) that share the loader's buffers and keep the batch alive; the GIL is released
// while waiting.
#include <chrono>
#include <limits>
#include <mutex>
#include <thread>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "core/checksum.h"
#include "core/dataset.h"
#include "core/dataset_store.h"
#include "core/error.h"
#include "core/source_option_table.h"
#include "core/version.h"
#include "host_array.h"
#include "interruptible.h"
#include "loader/collator.h"
#include "loader/loader.h"
#include "loader/loader_option_table.h"
#include "loader/mixture_spec.h"
#include "loader/tensor_rule.h"
#include "option_kwargs.h"
#include "shardify/convert_option_table.h"
#include "write_dataset.h"

namespace py = pybind11;
using namespace shardkit;
using shardkit::python::interruptible;
using shardkit::python::raise_if_signalled;
using shardkit::python::without_gil;

namespace {

// A dict of arrays holding the batch's columns as their tensors will (loader/tensor_rule.h):
// views of the loader's buffers where the bytes already are the tensor's, copies otherwise.
py::dict batch_to_dict(std::shared_ptr<loader::Batch> batch, loader::IntOutput int_output) {
  py::dict out;
  for (loader::Column& c : batch->columns) {
    std::vector<py::ssize_t> shape(c.shape().begin(), c.shape().end());
    const loader::TensorType type = loader::tensor_type(c, int_output);
    const DType dtype = loader::tensor_dtype(type);
    const bool is_bool = type == loader::TensorType::kBool;
    if (loader::same_bytes(c, type)) {
      out[py::str(c.name())] = python::HostArray(batch, c.data(), dtype, shape, is_bool);
    } else {
      python::HostArray a(dtype, shape, is_bool);
      loader::cast_elements(c.dtype(), c.data(), dtype, a.data(), c.elements());
      out[py::str(c.name())] = std::move(a);
    }
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

// A state_dict value: a non-negative integer (an int, or any integer with __index__, as NumPy's
// and 0-d integer tensors are after a checkpoint library's round trip), else a ShardkitError
// naming the field, what it is, and the range.
uint64_t state_field(const py::handle& value, const char* name, const std::string& range) {
  const auto invalid = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, "",
                 std::string("state_dict \"") + name + "\" is " +
                     py::repr(value).cast<std::string>() + why + ": the valid range is " + range);
  };
  const std::string type = py::str(py::type::of(value).attr("__name__"));
  const auto not_integer = [&] { return invalid(", a " + type + ", not an integer"); };
  if (PyBool_Check(value.ptr()) || type == "bool_" || !PyIndex_Check(value.ptr()))
    throw not_integer();
  const auto integer = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
  if (!integer) {  // an __index__ that refuses, as a tensor of several elements does
    PyErr_Clear();
    throw not_integer();
  }
  if (integer < py::int_(0)) throw invalid("");
  try {
    return integer.cast<uint64_t>();
  } catch (const py::cast_error&) {
    throw invalid("");
  }
}

// A state_dict's "skipped_blocks": [source, block] pairs (None or absent: none), else a
// ShardkitError naming the field.
std::vector<std::pair<uint32_t, uint64_t>> skipped_blocks_field(const py::handle& value) {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  if (value.is_none()) return out;
  const auto invalid = [&] {
    return Error(ErrorCode::kInvalidArgument, "",
                 "state_dict \"skipped_blocks\" is " + py::repr(value).cast<std::string>() +
                     ": it is a list of [source, block] pairs of non-negative integers");
  };
  if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value)) throw invalid();
  for (const py::handle pair : value.cast<py::sequence>()) {
    if (!py::isinstance<py::sequence>(pair) || py::isinstance<py::str>(pair) || py::len(pair) != 2)
      throw invalid();
    const py::sequence p = pair.cast<py::sequence>();
    const uint64_t source = state_field(p[0], "skipped_blocks", "source 0..2^32-1");
    if (source > UINT32_MAX) throw invalid();
    out.emplace_back(static_cast<uint32_t>(source),
                     state_field(p[1], "skipped_blocks", "block 0..2^64-1"));
  }
  return out;
}

// `caller` is the class whose keywords these are, as a message about one names it.
loader::LoaderOptions options_from(const py::dict& kw, const char* caller = "Loader") {
  loader::LoaderOptions o;
  python::apply_kwargs(loader::loader_option_table(), o, kw, caller);
  return o;
}

// A source's weight schedule: (axis "samples" or "tokens", linear, tokens_per_sample, [(at,
// weight), ...]).
using ScheduleTuple =
    std::tuple<std::string, bool, uint64_t, std::vector<std::pair<uint64_t, double>>>;
// (path, weight, repeat, choose, schedule) per source, as shardkit/__init__.py normalises them.
using SourceTuple = std::tuple<std::string, std::optional<double>, std::optional<double>,
                               std::optional<uint64_t>, std::optional<ScheduleTuple>>;

std::optional<loader::WeightSchedule> schedule_from(const std::optional<ScheduleTuple>& t) {
  if (!t) return std::nullopt;
  const auto& [axis, linear, tokens_per_sample, points] = *t;
  loader::WeightSchedule w;
  w.axis = axis == "tokens" ? loader::ScheduleAxis::kTokens : loader::ScheduleAxis::kSamples;
  w.linear = linear;
  w.tokens_per_sample = tokens_per_sample;
  for (const auto& [at, weight] : points) w.points.push_back({at, weight});
  return w;
}

std::optional<ScheduleTuple> schedule_tuple(const std::optional<loader::WeightSchedule>& w) {
  if (!w) return std::nullopt;
  std::vector<std::pair<uint64_t, double>> points;
  for (const loader::WeightPoint& p : w->points) points.emplace_back(p.at, p.weight);
  return ScheduleTuple{w->axis == loader::ScheduleAxis::kTokens ? "tokens" : "samples", w->linear,
                       w->tokens_per_sample, points};
}

std::vector<loader::MixtureSource> sources_from(const std::vector<SourceTuple>& list) {
  std::vector<loader::MixtureSource> out;
  for (const auto& [path, weight, repeat, choose, schedule] : list)
    out.push_back({path, weight, repeat, choose, schedule_from(schedule)});
  return out;
}

// What reading the loader's sources has cost so far, summed over them (a local source adds 0):
// the remote store's counters (core/dataset_store.h) as a dict named as IoStats' fields.
py::dict io_stats_of(const loader::Loader& l) {
  IoStats total;
  for (size_t i = 0; i < l.sources(); ++i) {
    const IoStats s = l.dataset(i).io_stats();
    total.requests += s.requests;
    total.bytes_fetched += s.bytes_fetched;
    total.retries += s.retries;
    total.cache_hits += s.cache_hits;
    total.cache_write_failures += s.cache_write_failures;
    total.cache_evictions += s.cache_evictions;
  }
  py::dict out;
  out["requests"] = total.requests;
  out["bytes_fetched"] = total.bytes_fetched;
  out["retries"] = total.retries;
  out["cache_hits"] = total.cache_hits;
  out["cache_write_failures"] = total.cache_write_failures;
  out["cache_evictions"] = total.cache_evictions;
  return out;
}

// A Loader that takes back the batch its last next() returned, when an exception (Python's
// KeyboardInterrupt as next() returns, a preemption handler's) kept it from the caller: the
// module's Python side calls hand_back() then. The batch comes again with the next call, and
// state() is as before it, so that a checkpoint saved in the handler resumes with it.
//
// loader::Loader serves one consumer at a time, and next() waits without the GIL, so Python
// threads sharing a Loader take turns here: each batch goes to one of them, and none is left
// waiting for a batch past the epoch's end (which two waiting at once did, forever).
struct KeepingLoader : loader::Loader {
  using loader::Loader::Loader;

  py::object next() {
    // First, before the wait for a turn (Ctrl-C may end it): if anything below throws,
    // hand_back() must not bring back the batch of this thread's call before, which the caller
    // already has.
    if (last_owner_ == std::this_thread::get_id()) last_.reset();
    const std::unique_lock turn = consumer_turn();
    const loader::LoaderState before = state();
    std::shared_ptr<loader::Batch> b = std::move(kept_);
    kept_.reset();
    if (!b) b = without_gil([this] { return loader::Loader::next(raise_if_signalled); });
    if (!b) {
      ended_ = true;
      return py::none();
    }
    last_ = b;
    last_owner_ = std::this_thread::get_id();
    state_before_last_ = before;
    return py::make_tuple(batch_to_dict(b, options().int_output), b->records, b->index, b->sources);
  }
  // Nothing unless this thread's last next() returned a batch (and no other thread's came
  // since: with threads sharing a loader, an exception as a batch arrives may lose it).
  void hand_back() {
    if (!last_ || last_owner_ != std::this_thread::get_id()) return;
    kept_ = std::move(last_);
    last_.reset();
    state_before_kept_ = state_before_last_;
  }
  loader::LoaderState state() const { return kept_ ? state_before_kept_ : loader::Loader::state(); }
  uint64_t batches_left() const { return loader::Loader::batches_left() + (kept_ ? 1 : 0); }
  void set_epoch(uint64_t epoch) {
    const std::unique_lock turn = consumer_turn();
    start_epoch(epoch);
  }
  void restore(const loader::LoaderState& state) {
    const std::unique_lock turn = consumer_turn();
    kept_.reset();
    last_.reset();
    ended_ = false;
    loader::Loader::restore(state);
  }
  bool pass_ended() const { return ended_; }
  // A pass's start: after a pass that reached its epoch's end, or at a state restored there, the
  // next epoch. One call, so that no signal lands between deciding and doing.
  void start_pass() {
    const std::unique_lock turn = consumer_turn();
    if (!ended_ && batches_left() > 0) return;
    if (epoch() == std::numeric_limits<uint64_t>::max())
      throw Error(ErrorCode::kInvalidArgument, "",
                  "epoch " + std::to_string(epoch()) + " was the last one: epochs are 64-bit");
    start_epoch(epoch() + 1);
  }

 private:
  void start_epoch(uint64_t epoch) {
    kept_.reset();
    last_.reset();
    ended_ = false;
    loader::Loader::set_epoch(epoch);
  }
  // The turn of this thread (GIL held) to use the loader as its consumer. Another thread's turn
  // may last as long as its wait for a batch: this one waits without the GIL, which that thread
  // needs to end its turn, and looks for signals every 50 ms, as next() does (Ctrl-C ends it).
  std::unique_lock<std::timed_mutex> consumer_turn() {
    std::unique_lock turn(consumer_, std::defer_lock);
    if (turn.try_lock()) return turn;
    without_gil([&] {
      while (!turn.try_lock_for(std::chrono::milliseconds(50))) raise_if_signalled();
    });
    return turn;
  }

  std::shared_ptr<loader::Batch> kept_, last_;
  std::thread::id last_owner_;  // the thread whose next() returned last_
  loader::LoaderState state_before_kept_, state_before_last_;
  bool ended_ = false;  // the last next() found the end of the epoch's batches
  std::timed_mutex consumer_;
};

// Opening a remote dataset waits on the network: interruptible.
std::unique_ptr<KeepingLoader> open_loader(const std::vector<SourceTuple>& sources,
                                           loader::LoaderOptions options) {
  auto stop = std::make_shared<Interrupt>();
  options.source.interrupt = stop;
  return interruptible(
      [&] { return std::make_unique<KeepingLoader>(sources_from(sources), std::move(options)); },
      *stop);
}

}  // namespace

PYBIND11_MODULE(_shardkit, m) {
  m.doc() = "shardkit: compressed token shards streamed into PyTorch";

  py::register_exception<Error>(m, "ShardkitError", PyExc_RuntimeError);
  python::register_option_error(m);
  python::HostArray::bind(m);
  m.attr("__version__") = py::str(std::string(kVersion));
  // The option tables, for the docstrings, the type stub and the option-parity test.
  m.def("loader_options", [] { return python::option_specs(loader::loader_option_table()); });
  m.def("source_options", [] { return python::option_specs(source_option_table()); });
  m.def("convert_options", [] { return python::option_specs(shardify::convert_option_table()); });
  m.def(
      "resolved_loader_options",
      [](const std::string& caller, const py::kwargs& kw) {
        return loader::loader_option_table().to_json(options_from(kw, caller.c_str()));
      },
      py::arg("caller"));

  py::class_<Dataset>(m, "Dataset")
      .def(py::init([](const std::string& path, const py::kwargs& kw) {
             DatasetOptions options;
             python::apply_kwargs(source_option_table(), options.source, kw, "Dataset");
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
      // XXH3 of the manifest's bytes: the same for a copy of the dataset, another for any
      // other dataset (a pickled Dataset checks it where it is opened again).
      .def_property_readonly("identity",
                             [](const Dataset& d) {
                               const std::string text = d.manifest().serialize();
                               return checksum_hex(xxh3_64(text.data(), text.size()));
                             })
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
              // Types torch lacks widen (uint16 to int32, uint32 to int64), as in batches.
              const DType to = f.dtype == DType::kU16   ? DType::kI32
                               : f.dtype == DType::kU32 ? DType::kI64
                                                        : f.dtype;
              std::vector<py::ssize_t> shape(f.shape.begin(), f.shape.end());
              python::HostArray a(to, shape);
              loader::cast_elements(f.dtype, rec.data() + f.offset, to, a.data(),
                                    f.byte_size() / dtype_size(f.dtype));
              out[py::str(f.name)] = std::move(a);
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
          sources.emplace_back(s.path, s.weight, s.repeat, s.choose, schedule_tuple(s.schedule));
        return py::make_tuple(sources, spec.seed, spec.max_samples);
      },
      py::arg("file"));

  py::class_<KeepingLoader>(m, "Loader")
      .def(py::init([](const std::string& path, const py::kwargs& kw) {
             return open_loader(std::vector<SourceTuple>{{path, {}, {}, {}, {}}}, options_from(kw));
           }),
           py::arg("path"))
      .def(py::init([](const std::vector<SourceTuple>& sources, const py::kwargs& kw) {
             return open_loader(sources, options_from(kw));
           }),
           py::arg("sources"))
      .def_property_readonly("epoch_samples", &loader::Loader::epoch_samples)
      .def("set_epoch", &KeepingLoader::set_epoch, py::arg("epoch"))
      .def_property_readonly("epoch", &loader::Loader::epoch)
      .def_property_readonly("pass_ended", &KeepingLoader::pass_ended)
      .def_property_readonly("threads", &loader::Loader::threads)
      .def_property_readonly("window_blocks", &loader::Loader::window_blocks)
      .def("batches", &loader::Loader::batches)
      .def("batches_left", &KeepingLoader::batches_left)
      .def("epoch_batches", &loader::Loader::epoch_batches)
      .def("next", &KeepingLoader::next)
      .def("hand_back", &KeepingLoader::hand_back)
      .def("start_pass", &KeepingLoader::start_pass)
      .def("state",
           [](const KeepingLoader& l) {
             loader::LoaderState s = l.state();
             return py::make_tuple(s.seed, s.epoch, s.samples_consumed, s.tokens_consumed,
                                   s.fingerprint, s.blocks_skipped, s.skipped_blocks);
           })
      .def(
          "restore",
          [](KeepingLoader& l, py::object seed, py::object epoch, py::object consumed,
             py::object tokens, py::object fingerprint, py::object skipped,
             py::object skipped_blocks) {
            const bool one = l.sources() == 1 && l.options().max_samples == 0;
            const std::string size = std::to_string(l.epoch_samples());
            l.restore(
                {state_field(seed, "seed", "0..2^64-1"), state_field(epoch, "epoch", "0..2^64-1"),
                 state_field(
                     consumed, "samples_consumed",
                     "0.." + size + (one ? " (the dataset's records)" : " (the epoch's samples)")),
                 state_field(tokens, "tokens_consumed", "0..2^64-1"),
                 fingerprint.is_none() ? std::string() : py::str(fingerprint).cast<std::string>(),
                 state_field(skipped, "blocks_skipped", "0..2^64-1"),
                 skipped_blocks_field(skipped_blocks)});
          },
          py::arg("seed"), py::arg("epoch"), py::arg("samples_consumed"),
          py::arg("tokens_consumed") = py::int_(0), py::arg("fingerprint") = py::none(),
          py::arg("blocks_skipped") = py::int_(0), py::arg("skipped_blocks") = py::none())
      .def("planned_records", &loader::Loader::planned_records, py::arg("batch"))
      .def("io_stats", [](const KeepingLoader& l) { return io_stats_of(l); });

  python::bind_write_dataset(m);
}
