// consumer CORPUS.jsonl VOCAB.txt OUT: converts the corpus (shardify's converter, task cls),
// encodes a line with the tokenizer, and reads the dataset back with the loader.
#include <cstdio>
#include <vector>

#include "loader/loader.h"
#include "shardify/convert.h"
#include "tokenizer/tokenizer.h"

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  shardkit::shardify::ConvertOptions convert;
  convert.inputs = {argv[1]};
  convert.task.task = shardkit::shardify::Task::kCls;
  convert.task.max_len = 16;
  convert.tokenizer_path = argv[2];
  convert.out = argv[3];
  const shardkit::shardify::ConvertResult converted = shardkit::shardify::convert(convert);

  std::vector<uint32_t> ids;
  shardkit::tok::Tokenizer::from_file(argv[2])->encode_ids("line one", ids);

  shardkit::loader::LoaderOptions options;
  options.batch_size = 8;
  shardkit::loader::Loader loader(argv[3], options);
  unsigned long long rows = 0;
  while (auto batch = loader.next()) rows += batch->size();
  std::printf("converted %llu records, read %llu, \"line one\" is %zu tokens\n",
              static_cast<unsigned long long>(converted.stats.records), rows, ids.size());
  return rows == converted.stats.records && !ids.empty() ? 0 : 1;
}
