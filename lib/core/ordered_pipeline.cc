#include "core/ordered_pipeline.h"

#include <oneapi/tbb/info.h>

#include <algorithm>

namespace shardkit {

tbb::task_arena pipeline_arena(unsigned threads) {
  // Asking for more would only make TBB print a warning that it gives the cores it has.
  const int cores = std::max(1, tbb::info::default_concurrency());
  return tbb::task_arena(std::clamp(static_cast<int>(threads), 1, cores));
}

size_t pipeline_tokens(unsigned threads) { return 2 * size_t{std::max(1u, threads)} + 2; }

void run_ordered_pipeline(tbb::task_arena& arena, const tbb::filter<void, void>& stages) {
  const auto threads = static_cast<unsigned>(std::max(1, arena.max_concurrency()));
  arena.execute([&] { tbb::parallel_pipeline(pipeline_tokens(threads), stages); });
}

tbb::filter<WriterBlocks, void> encode_and_store(DatasetWriter& writer,
                                                 PipelineItems<RawBlocks>& blocks) {
  return tbb::make_filter<WriterBlocks, WriterBlocks>(tbb::filter_mode::parallel,
                                                      [&writer](WriterBlocks item) {
                                                        for (RawBlock& b : *item) writer.encode(b);
                                                        return item;
                                                      }) &
         tbb::make_filter<WriterBlocks, void>(tbb::filter_mode::serial_in_order,
                                              [&writer, &blocks](WriterBlocks item) {
                                                for (RawBlock& b : *item) writer.store(b);
                                                blocks.done(item);
                                              });
}

}  // namespace shardkit
