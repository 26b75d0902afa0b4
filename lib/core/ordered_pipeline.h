// shardkit's one ordered pipeline primitive: oneTBB's parallel_pipeline (Debian libtbb-dev) run
// in a tbb::task_arena of the caller's thread count. serial_in_order stages see the items one at a
// time in input order, parallel stages run on any of the arena's threads, so what a pipeline
// writes never depends on the thread count. The calling thread is one of the `threads` (the arena
// reserves its slot) and works on the stages while it waits. The converter (shardify/convert.cc),
// merge (shardify/merge.cc) and the dataset writer's own append_many/finish all run on it
// (BENCHMARKS.md, "The ordered pipeline").
//
// Never tbb::global_control: it limits every arena of the process, and the library shares its
// process with Python, several loaders and other converters. Arenas share TBB's workers, one fewer
// than the cores the process may use (its affinity mask), so threads beyond the cores add nothing.
#pragma once

#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/dataset_writer.h"

namespace shardkit {

// An arena for `threads` threads, the caller's included (0 reads as 1), at most one per core.
tbb::task_arena pipeline_arena(unsigned threads);

// Items in flight at once on `threads` threads: two per thread and two more, so that a parallel
// stage has work while a serial one runs, and memory stays bounded.
size_t pipeline_tokens(unsigned threads);

// Runs a complete pipeline (void -> ... -> void) on the arena's threads and returns when every
// item has passed the last stage. An exception thrown in a stage cancels the pipeline (items not
// yet through are dropped) and is rethrown here as it was thrown.
void run_ordered_pipeline(tbb::task_arena& arena, const tbb::filter<void, void>& stages);

// The items of one pipeline run, which its stages pass as pointers. When an exception cancels
// a pipeline, oneTBB may drop an item in flight without destroying it (LeakSanitizer caught a
// conversion's blocks so, when a damaged .gz restarts it); owned here, what a run leaves is
// freed with this, after the run.
template <class T>
class PipelineItems {
 public:
  T* make() {
    auto item = std::make_unique<T>();
    T* p = item.get();
    std::lock_guard lock(mu_);
    items_.emplace(p, std::move(item));
    return p;
  }
  // An item that passed its last stage, or that a stage ended.
  void done(T* item) {
    std::unique_ptr<T> gone;
    std::lock_guard lock(mu_);
    auto node = items_.extract(item);
    if (!node.empty()) gone = std::move(node.mapped());
  }

 private:
  std::mutex mu_;
  std::unordered_map<T*, std::unique_ptr<T>> items_;
};

// The blocks one item carries from a DatasetWriter::cut stage to the writer's last two stages.
using RawBlocks = std::vector<RawBlock>;
using WriterBlocks = RawBlocks*;

// The writer's last two stages, to follow a caller's serial_in_order stage that calls
// writer.cut() into an item of `blocks`: the item's blocks encoded (parallel), then stored in
// order (serial_in_order), and the item done.
tbb::filter<WriterBlocks, void> encode_and_store(DatasetWriter& writer,
                                                 PipelineItems<RawBlocks>& blocks);

}  // namespace shardkit
