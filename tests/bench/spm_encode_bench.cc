// SentencePiece's own C++ encoder timed on the lines of a file, for bench_tokenizer's .model rows.
// A separate program: Debian's libsentencepiece carries its own protobuf runtime, which cannot
// share a process with the system libprotobuf that shardkit_tokenizer reads .model files with.
// usage: spm_encode_bench MODEL TEXT REPEATS -> "<MB per CPU second> <tokens>"
#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: spm_encode_bench MODEL TEXT REPEATS\n");
    return 2;
  }
  sentencepiece::SentencePieceProcessor sp;
  if (!sp.Load(argv[1]).ok()) {
    std::fprintf(stderr, "spm_encode_bench: cannot load %s\n", argv[1]);
    return 1;
  }
  std::ifstream in(argv[2], std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<std::string_view> lines;
  size_t bytes = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    lines.emplace_back(text.data() + pos, nl - pos);
    bytes += nl - pos;
    pos = nl + 1;
  }
  const int repeats = std::atoi(argv[3]);
  double best = 1e30;
  size_t tokens = 0;
  std::vector<int> ids;
  for (int r = 0; r <= repeats; ++r) {
    timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    size_t n = 0;
    for (std::string_view l : lines) {
      ids.clear();
      sp.Encode(absl::string_view(l.data(), l.size()), &ids).IgnoreError();
      n += ids.size();
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double s = static_cast<double>(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    if (r > 0) best = std::min(best, s);
    tokens = n;
  }
  std::printf("%.3f %zu\n", bytes / 1e6 / best, tokens);
  return 0;
}
