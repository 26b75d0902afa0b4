// main() for fuzz targets in builds without libFuzzer: runs each file named on the command line
// (or each file in a named directory) through LLVMFuzzerTestOneInput once, so that the seed
// corpora and every past finding stay regression tests in the ordinary and sanitizer builds.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int run_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(arg))
        if (e.is_regular_file()) inputs += run_file(e.path());
    } else {
      inputs += run_file(arg);
    }
  }
  std::printf("replayed %d input(s)\n", inputs);
  return inputs > 0 ? 0 : 1;  // an empty corpus is a broken test, not a pass
}
