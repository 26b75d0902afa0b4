// The C++ half of shardkit.write_dataset: the same converter as the shardify CLI, fed by Python
// rows. The converter pulls a chunk of rows from their iterator on its reading thread, taking the
// GIL only for that, and tokenizes and writes with the GIL released. A row that is an exact dict
// of plain values has its fields taken out here, under the GIL; every other row is turned into a
// JSON line by Python (_rows.encode_rows) and read by the JSONL rules, as it would be from a
// JSONL file. The reading stage runs on whichever of the pipeline's threads is free, so the
// conversion runs on a thread of its own and the caller's thread watches for Ctrl-C.
#include "write_dataset.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "core/error.h"
#include "core/progress.h"
#include "option_kwargs.h"
#include "shardify/convert.h"
#include "shardify/convert_option_table.h"

namespace py = pybind11;

namespace shardkit::python {
namespace {

using shardify::RowChunk;
using shardify::RowFields;

// Appends the UTF-8 of a str; false for a lone surrogate (JSON would carry it as invalid UTF-8,
// which the reader reports for the whole row: that row goes the JSON way). Non-ASCII text is
// encoded by CPython into a temporary bytes object: PyUnicode_AsUTF8 would keep a cached copy
// inside each of the user's strings for as long as they live.
bool append_utf8(PyObject* s, std::string& out) {
#if PY_VERSION_HEX < 0x030C0000
  if (PyUnicode_READY(s) != 0) {
    PyErr_Clear();
    return false;
  }
#endif
  if (PyUnicode_IS_ASCII(s)) {
    out.append(static_cast<const char*>(PyUnicode_DATA(s)),
               static_cast<size_t>(PyUnicode_GET_LENGTH(s)));
    return true;
  }
  const auto utf8 = py::reinterpret_steal<py::object>(PyUnicode_AsUTF8String(s));
  if (!utf8) {  // a lone surrogate: UnicodeEncodeError
    PyErr_Clear();
    return false;
  }
  out.append(PyBytes_AS_STRING(utf8.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(utf8.ptr())));
  return true;
}

bool has_surrogate(PyObject* s) {
#if PY_VERSION_HEX < 0x030C0000
  if (PyUnicode_READY(s) != 0) {
    PyErr_Clear();
    return true;
  }
#endif
  const int kind = PyUnicode_KIND(s);
  if (kind == PyUnicode_1BYTE_KIND) return false;
  const Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  const void* data = PyUnicode_DATA(s);
  bool any = false;
  if (kind == PyUnicode_2BYTE_KIND) {
    const Py_UCS2* u = static_cast<const Py_UCS2*>(data);
    for (Py_ssize_t i = 0; i < n; ++i) any |= (u[i] & 0xF800) == 0xD800;
  } else {
    const Py_UCS4* u = static_cast<const Py_UCS4*>(data);
    for (Py_ssize_t i = 0; i < n; ++i) any |= (u[i] & 0xFFFFF800) == 0xD800;
  }
  return any;
}

// An int that simdjson reads back (within [-2^63, 2^64)); sets `text` to its digits.
bool json_int(PyObject* v, std::string* text) {
  int overflow = 0;
  const long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (overflow == 0) {
    if (i == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    if (text) *text = std::to_string(i);
    return true;
  }
  if (overflow < 0) return false;
  const unsigned long long u = PyLong_AsUnsignedLongLong(v);
  if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  if (text) *text = std::to_string(u);
  return true;
}

// Whether `v` becomes JSON that the reader parses without error, as _rows.encode_rows writes it:
// None, booleans, ints in simdjson's range, finite floats, str without lone surrogates, and
// exact lists, tuples and dicts (str keys) of these, not too deep. Anything else (NaN, objects
// that need _rows._plain, subclasses of containers) is for the JSON route to judge.
bool plain_json(PyObject* v, int depth) {
  if (v == Py_None || PyBool_Check(v)) return true;
  if (PyUnicode_Check(v)) return !has_surrogate(v);
  if (PyLong_Check(v)) return json_int(v, nullptr);
  if (PyFloat_Check(v)) return std::isfinite(PyFloat_AS_DOUBLE(v));
  if (depth >= 16) return false;
  if (PyDict_CheckExact(v)) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(v, &pos, &key, &value))
      if (!PyUnicode_CheckExact(key) || has_surrogate(key) || !plain_json(value, depth + 1))
        return false;
    return true;
  }
  if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    PyObject** items = PySequence_Fast_ITEMS(v);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!plain_json(items[i], depth + 1)) return false;
    return true;
  }
  return false;
}

// Thrown by the feed once Python's thread has seen a signal; write_dataset raises that instead.
struct Interrupted {};

// Pulls rows from a Python iterator, kChunkRows at a time, on the converter's threads (which
// hold no GIL otherwise). A row is dropped as soon as its fields are taken (a chunk of live
// rows would survive the GC's young collections and make it scan the old generations); the rows
// it cannot take fields from go to encode_rows(rows, keys read), which returns (bytes of JSON
// lines, [(row in its list, reason)]). on_chunk(n), when not None, hears of every n rows pulled.
class PythonRowFeed : public shardify::RowFeed {
 public:
  static constexpr size_t kChunkRows = 1024;

  PythonRowFeed(py::object rows, py::object on_chunk, py::object encode_rows,
                const std::atomic<bool>& interrupted)
      : rows_(std::move(rows)),
        on_chunk_(std::move(on_chunk)),
        encode_rows_(std::move(encode_rows)),
        interrupted_(interrupted) {}
  ~PythonRowFeed() override {
    py::gil_scoped_acquire gil;
    rows_ = on_chunk_ = encode_rows_ = py::object();
    text_ = pair_ = label_ = keys_read_ = py::object();
  }

  void start(const shardify::ReaderOptions& options) override {
    py::gil_scoped_acquire gil;
    keys_read_ = py::tuple(py::cast(shardify::keys_read(options)));
    const auto d = shardify::direct_fields(options);
    if (!d) return;
    direct_ = true;
    if (d->text) text_ = py::str(*d->text);
    if (d->pair) pair_ = py::str(*d->pair);
    if (d->label) label_ = py::str(*d->label);
  }

  bool next(RowChunk& chunk) override {
    if (done_) return false;
    // Ctrl-C arrives here, between chunks: the conversion unwinds, then write_dataset raises
    // the KeyboardInterrupt that Python's thread took (convert_watching_signals).
    if (interrupted_) throw Interrupted{};
    py::gil_scoped_acquire gil;
    py::list slow;
    slow_rows_.clear();
    size_t n = 0;
    for (; n < kChunkRows; ++n) {
      // An exception from the rows (a generator raising, a KeyboardInterrupt) passes through.
      const auto row = py::reinterpret_steal<py::object>(PyIter_Next(rows_.ptr()));
      if (!row) {
        if (PyErr_Occurred()) throw py::error_already_set();
        done_ = true;
        break;
      }
      RowFields f;
      if (direct_ && take_fields(row.ptr(), f)) {
        chunk.direct.emplace_back(n, std::move(f));
      } else {
        slow.append(row);
        slow_rows_.push_back(n);
      }
    }
    if (n == 0) return false;
    if (!slow_rows_.empty()) add_json(chunk, slow, slow_rows_);
    if (!on_chunk_.is_none()) on_chunk_(n);
    return true;
  }

 private:
  // The fields of an exact dict of plain values whose fields read without error; false sends
  // the row the JSON way (which also gives every error its usual wording).
  bool take_fields(PyObject* row, RowFields& f) const {
    if (!PyDict_CheckExact(row) || !plain_json(row, 0)) return false;
    if (text_ && !take_string(row, text_.ptr(), f.text)) return false;
    if (pair_ && !take_string(row, pair_.ptr(), f.text_pair)) return false;
    if (label_) {
      PyObject* v = PyDict_GetItemWithError(row, label_.ptr());
      if (v == nullptr) {
        PyErr_Clear();
        return false;
      }
      if (PyUnicode_Check(v)) return append_utf8(v, f.label);
      if (PyBool_Check(v)) {
        f.label = v == Py_True ? "true" : "false";
        return true;
      }
      return PyLong_Check(v) && json_int(v, &f.label);
    }
    return true;
  }

  static bool take_string(PyObject* row, PyObject* key, std::string& out) {
    PyObject* v = PyDict_GetItemWithError(row, key);
    if (v == nullptr) {
      PyErr_Clear();
      return false;
    }
    return PyUnicode_Check(v) && append_utf8(v, out);
  }

  // The JSON lines of `rows` (chunk rows `at`) and their problems.
  void add_json(RowChunk& chunk, const py::list& rows, const std::vector<size_t>& at) {
    const auto parts = encode_rows_(rows, keys_read_).cast<py::tuple>();
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(parts[0].ptr(), &data, &size) != 0) throw py::error_already_set();
    chunk.json.assign(data, static_cast<size_t>(size));
    for (py::handle p : parts[1].cast<py::list>()) {
      const auto problem = p.cast<py::tuple>();
      const auto i = problem[0].cast<size_t>();
      chunk.problems.emplace_back(at.at(i), problem[1].cast<std::string>());
    }
  }

  py::object rows_, on_chunk_, encode_rows_;
  bool direct_ = false, done_ = false;
  py::object text_, pair_, label_;  // the keys read directly (null: not read)
  py::object keys_read_;            // tuple of shardify::keys_read(), for encode_rows
  std::vector<size_t> slow_rows_;
  const std::atomic<bool>& interrupted_;
};

// The keyword for shardify's flag `name` (with '_' for '-'): "force=True" for a switch,
// "pack=False" for its --no- form, "text_field" for a value; nullopt for no option of Python's.
std::optional<std::string> keyword(const std::string& name) {
  const auto& table = shardify::convert_option_table();
  const options::Alias* alias = nullptr;
  const auto* option = table.find(name, &alias);
  bool negated = alias && alias->negated;
  if (!option && name.rfind("no_", 0) == 0) {
    option = table.find(name.substr(3));
    negated = true;
  }
  if (!option || !option->unavailable_in_python.empty()) return std::nullopt;
  if (option->kind != options::Kind::kBool)
    return negated ? std::nullopt : std::optional(option->name);
  return option->name + (negated ? "=False" : "=True");
}

// A conversion's messages name shardify's flags ("already exists; pass --force to replace it");
// write_dataset's caller knows them as keywords. Each flag of the table in `message` becomes its
// keyword, a switch's with "=True": "pass force=True to replace it".
std::string as_keywords(const std::string& message) {
  std::string out;
  for (size_t at = 0; at < message.size();) {
    const size_t dashes = message.find("--", at);
    if (dashes == std::string::npos) {
      out.append(message, at);
      break;
    }
    out.append(message, at, dashes - at);
    size_t end = dashes + 2;
    while (end < message.size() &&
           (std::islower(static_cast<unsigned char>(message[end])) ||
            std::isdigit(static_cast<unsigned char>(message[end])) || message[end] == '-'))
      ++end;
    std::string name = message.substr(dashes + 2, end - dashes - 2);
    std::replace(name.begin(), name.end(), '-', '_');
    out += keyword(name).value_or(message.substr(dashes, end - dashes));
    at = end;
  }
  return out;
}

// Runs the conversion on a thread of its own while the calling thread waits without the GIL,
// looking for signals every 10 ms: Python runs signal handlers (KeyboardInterrupt) on its main
// thread only, and the feed runs on whichever pipeline thread reads the input.
std::string convert_watching_signals(shardify::ConvertOptions o, std::atomic<bool>& interrupted) {
  std::string summary;
  std::exception_ptr failure;
  bool done = false;
  std::mutex mu;
  std::condition_variable finished;
  bool signalled = false;
  {
    py::gil_scoped_release release;
    std::thread converter([&] {
      try {
        shardify::ConvertResult result = shardify::convert(o);
        for (std::string& error : result.first_errors) error = as_keywords(error);
        summary = result.to_json();
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard lock(mu);
      done = true;
      finished.notify_all();
    });
    std::unique_lock lock(mu);
    while (!finished.wait_for(lock, std::chrono::milliseconds(10), [&] { return done; })) {
      lock.unlock();
      {
        py::gil_scoped_acquire gil;
        // The error stays set on this thread until it is raised below.
        signalled = PyErr_CheckSignals() != 0;
      }
      lock.lock();
      if (signalled) {
        interrupted = true;
        break;
      }
    }
    lock.unlock();
    converter.join();
  }
  if (signalled) throw py::error_already_set();
  try {
    if (failure) std::rethrow_exception(failure);
  } catch (const options::OptionError&) {
    throw;  // names the keyword already
  } catch (const Error& e) {
    throw Error(e.code(), e.file(), as_keywords(e.reason()), e.block());
  }
  return summary;
}

// shardify's options as keywords, named as the table names them (flags with '_' for '-').
shardify::ConvertOptions convert_options(const py::dict& kw) {
  shardify::ConvertOptions o;
  apply_kwargs(shardify::convert_option_table(), o, kw, "write_dataset");
  return o;
}

}  // namespace

void bind_write_dataset(py::module_& m) {
  m.def(
      "write_dataset",
      [](py::object open_rows, py::object encode_rows, const std::string& out,
         const py::kwargs& kw) {
        shardify::ConvertOptions o = convert_options(kw);
        o.out = out;
        std::atomic<bool> interrupted{false};
        o.cancel = &interrupted;  // a chat template renderer's wait ends on Ctrl-C too
        // Runs on the converter's threads without the GIL; the feed takes it per chunk.
        o.rows = [open_rows, encode_rows, &interrupted]() -> std::unique_ptr<shardify::RowFeed> {
          py::gil_scoped_acquire gil;
          const auto opened = open_rows().cast<py::tuple>();
          return std::make_unique<PythonRowFeed>(opened[0], opened[1], encode_rows, interrupted);
        };
        return convert_watching_signals(std::move(o), interrupted);
      },
      py::arg("open_rows"), py::arg("encode_rows"), py::arg("out"),
      "Converts rows with shardify's converter; open_rows() returns (an iterator of rows, "
      "on_chunk(n) or None) and encode_rows(list, keys read) writes rows as JSON lines (see "
      "shardkit/_rows.py). Returns the summary as JSON.");
  m.def(
      "resolved_convert_options",
      [](const py::kwargs& kw) {
        return shardify::convert_option_table().to_json(
            shardify::resolve_defaults(convert_options(kw)));
      },
      "The converter's options for these keywords, every default applied, as JSON (the option "
      "table's serialization).");

  m.def("_progress_interval_problem", &progress_interval_problem, py::arg("seconds"),
        "Why the text of progress_interval is not one (--progress-interval's rule), or \"\".");

  // The command-line tools' progress reporter, counting the rows pulled (write_dataset passes
  // add as on_chunk). It writes to the process's stderr, as the tools do.
  struct RowProgress {
    ProgressReporter reporter;
    uint64_t total;
  };
  py::class_<RowProgress>(m, "_RowProgress")
      .def(py::init([](const std::string& mode, double interval, uint64_t total) {
             const auto parsed = parse_progress_mode(mode);
             if (!parsed)
               throw py::value_error(
                   "write_dataset: progress is 'auto', 'always' or 'never', not '" + mode + "'");
             return new RowProgress{
                 {"write_dataset", ProgressUnit::items("rows"), {*parsed, interval}}, total};
           }),
           py::arg("mode"), py::arg("interval"), py::arg("total"))
      .def("add", [](RowProgress& p, uint64_t n) { p.reporter.add(n, p.total); })
      .def("close", [](RowProgress& p) { p.reporter.finish(); });
}

}  // namespace shardkit::python
