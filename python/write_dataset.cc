// The C++ half of shardkit.write_dataset: the same converter as the shardify CLI, fed by Python
// rows. Python (shardkit/_rows.py) turns rows into chunks of JSON lines; the converter pulls a
// chunk on whichever of its pipeline's threads reads, taking the GIL only for that, and tokenizes
// and writes with the GIL released.
#include "write_dataset.h"

#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "core/block_codec.h"
#include "core/error.h"
#include "shardify/convert.h"

namespace py = pybind11;

namespace shardkit::python {
namespace {

using shardify::RowChunk;

// Thrown by the feed once Python's thread has seen a signal; write_dataset raises that instead.
struct Interrupted {};

// Pulls chunks from a Python callable returning (bytes of JSON lines, [(row in chunk, reason)])
// or None at the end. Called on the converter's threads, which hold no GIL.
class PythonRowFeed : public shardify::RowFeed {
 public:
  PythonRowFeed(py::object next_chunk, const std::atomic<bool>& interrupted)
      : next_chunk_(std::move(next_chunk)), interrupted_(interrupted) {}
  ~PythonRowFeed() override {
    py::gil_scoped_acquire gil;
    next_chunk_ = py::object();
  }

  bool next(RowChunk& chunk) override {
    // Ctrl-C arrives here, between chunks: the conversion unwinds, then write_dataset raises
    // the KeyboardInterrupt that Python's thread took (below).
    if (interrupted_) throw Interrupted{};
    py::gil_scoped_acquire gil;
    py::object got = next_chunk_();
    if (got.is_none()) return false;
    const auto parts = got.cast<py::tuple>();
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(parts[0].ptr(), &data, &size) != 0) throw py::error_already_set();
    chunk.json.assign(data, static_cast<size_t>(size));
    for (py::handle p : parts[1].cast<py::list>()) {
      const auto problem = p.cast<py::tuple>();
      chunk.problems.emplace_back(problem[0].cast<size_t>(), problem[1].cast<std::string>());
    }
    return true;
  }

 private:
  py::object next_chunk_;
  const std::atomic<bool>& interrupted_;
};

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
        summary = shardify::convert(o).to_json();
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
  if (failure) std::rethrow_exception(failure);
  return summary;
}

[[noreturn]] void refuse(const std::string& key, const std::string& why) {
  throw py::type_error("write_dataset: '" + key + "' " + why);
}

// shardify's flags as keywords ('-' -> '_'), with the CLI's defaults.
shardify::ConvertOptions convert_options(const py::dict& kw) {
  using namespace shardify;
  ConvertOptions o;
  o.threads = std::max(1u, std::thread::hardware_concurrency());
  std::optional<uint32_t> max_len;
  std::optional<bool> pack;  // sft packs when asked (--pack); lm unless told not to (--no-pack)
  for (auto [key_obj, value] : kw) {
    const std::string key = py::str(key_obj);
    if (value.is_none()) continue;
    if (key == "task")
      o.task.task = parse_task(value.cast<std::string>());
    else if (key == "tokenizer")
      o.tokenizer_path = py::str(value).cast<std::string>();
    else if (key == "text_field")
      o.text_field = value.cast<std::string>();
    else if (key == "pair_field")
      o.pair_field = value.cast<std::string>();
    else if (key == "label_field")
      o.label_field = value.cast<std::string>();
    else if (key == "context_field")
      o.context_field = value.cast<std::string>();
    else if (key == "question_field")
      o.question_field = value.cast<std::string>();
    else if (key == "answers_field")
      o.answers_field = value.cast<std::string>();
    else if (key == "prompt_field")
      o.prompt_field = value.cast<std::string>();
    else if (key == "response_field")
      o.response_field = value.cast<std::string>();
    else if (key == "messages_field") {
      o.messages_field = value.cast<std::string>();
      o.task.messages = true;
    } else if (key == "chat_template")
      o.task.chat_template = py::str(value).cast<std::string>();
    else if (key == "train_on")
      o.task.train_on = parse_train_on(value.cast<std::string>());
    else if (key == "truncation")
      o.task.sft_truncation = parse_sft_truncation(value.cast<std::string>());
    else if (key == "pack")
      pack = value.cast<bool>();
    else if (key == "labels") {
      if (py::isinstance<py::str>(value)) {
        o.labels = value.cast<std::string>();
      } else {
        std::string joined;
        for (py::handle name : value)
          joined += (joined.empty() ? "" : ",") + py::str(name).cast<std::string>();
        o.labels = joined;
      }
    } else if (key == "max_len")
      max_len = value.cast<uint32_t>();
    else if (key == "no_pack")
      pack = !value.cast<bool>();
    else if (key == "position_ids")
      o.task.position_ids = value.cast<bool>();
    else if (key == "doc_stride")
      o.task.doc_stride = value.cast<uint32_t>();
    else if (key == "max_query_len")
      o.task.max_query_len = value.cast<uint32_t>();
    else if (key == "threads")
      o.threads = std::max(1u, value.cast<unsigned>());
    else if (key == "on_error") {
      const std::string v = value.cast<std::string>();
      if (v != "fail" && v != "skip") refuse(key, "is 'fail' or 'skip', not '" + v + "'");
      o.on_error = v == "skip" ? OnError::kSkip : OnError::kFail;
    } else if (key == "force")
      o.force = value.cast<bool>();
    else if (key == "allow_empty")
      o.allow_empty = value.cast<bool>();
    else if (key == "zstd_level")
      o.zstd_level = value.cast<int>();
    else if (key == "block_size")
      o.block_bytes = value.cast<uint32_t>();
    else if (key == "shard_size")
      o.shard_bytes = value.cast<uint64_t>();
    else if (key == "filter") {
      const std::string v = value.cast<std::string>();
      const auto filter = parse_block_filter(v);
      if (!filter) refuse(key, "is 'none' or 'byteplanes', not '" + v + "'");
      o.filter = *filter;
    } else if (key == "input" || key == "format" || key == "where" || key == "no_quoting" ||
               key == "doc_sep" || key == "part")
      refuse(key, "is about input files; write_dataset reads the rows it is given");
    else if (key == "json")
      refuse(key, "is not needed: write_dataset returns the summary as a dict");
    else
      refuse(key, "is not a shardify option");
  }
  o.task.max_len = max_len.value_or(o.task.task == Task::kQa ? 384 : 512);
  o.task.pack = pack.value_or(o.task.task != Task::kSft);
  return o;
}

}  // namespace

void bind_write_dataset(py::module_& m) {
  m.def(
      "write_dataset",
      [](py::object open_rows, const std::string& out, const py::kwargs& kw) {
        shardify::ConvertOptions o = convert_options(kw);
        o.out = out;
        std::atomic<bool> interrupted{false};
        // Runs on the converter's threads without the GIL; the feed takes it per chunk.
        o.rows = [open_rows, &interrupted]() -> std::unique_ptr<shardify::RowFeed> {
          py::gil_scoped_acquire gil;
          return std::make_unique<PythonRowFeed>(open_rows(), interrupted);
        };
        return convert_watching_signals(std::move(o), interrupted);
      },
      py::arg("open_rows"), py::arg("out"),
      "Converts rows with shardify's converter; open_rows() returns a chunk function (see "
      "shardkit/_rows.py). Returns the summary as JSON.");
}

}  // namespace shardkit::python
