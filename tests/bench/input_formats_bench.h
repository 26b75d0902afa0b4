// bench_shardify's input-format rows: the same documents as JSONL (the baseline), JSONL.zst and
// Parquet (zstd, written by DuckDB) through `shardify::convert --task lm` end to end, and handed
// to the Python module's write_dataset by a generator (write_dataset_bench.py), with the ratio to
// JSONL and a check that all of them give the same shard bytes.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shardify/convert.h"
#include "shardify/example_reader.h"

#ifdef SHARDKIT_HAVE_PARQUET
#include <duckdb.h>
#endif

namespace shardkit::bench {

namespace input_formats_detail {

inline std::string shard_bytes(const std::filesystem::path& dir) {
  std::string all;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename() == "manifest.json") continue;
    std::ifstream in(e.path(), std::ios::binary);
    all += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  return all;
}

#ifdef SHARDKIT_HAVE_PARQUET
// DuckDB reads the JSONL and writes Parquet the way a Hub dataset is stored (zstd).
inline bool write_parquet(const std::string& jsonl, const std::string& parquet) {
  duckdb_database db;
  duckdb_connection conn;
  if (duckdb_open(nullptr, &db) == DuckDBError) return false;
  duckdb_connect(db, &conn);
  const std::string sql = "COPY (SELECT text FROM read_json('" + jsonl +
                          "', columns = {'text': 'VARCHAR'}, format = 'newline_delimited')) TO '" +
                          parquet + "' (FORMAT parquet, COMPRESSION zstd)";
  duckdb_result r;
  const bool ok = duckdb_query(conn, sql.c_str(), &r) == DuckDBSuccess;
  if (!ok) std::fprintf(stderr, "duckdb: %s\n", duckdb_result_error(&r));
  duckdb_destroy_result(&r);
  duckdb_disconnect(&conn);
  duckdb_close(&db);
  return ok;
}
#endif

}  // namespace input_formats_detail

// `docs`: one document each; `text_bytes`: their size as text (the MB/s denominator).
inline void bench_input_formats(const std::string& tokenizer, const std::vector<std::string>& docs,
                                uint64_t text_bytes, uint32_t max_len, int runs,
                                const std::filesystem::path& tmp,
                                const std::function<double()>& cpu_now) {
  namespace d = input_formats_detail;
  const std::string jsonl = (tmp / "corpus.jsonl").string();
  {
    std::ofstream out(jsonl, std::ios::binary);
    for (const auto& doc : docs) out << nlohmann::ordered_json{{"text", doc}}.dump() << '\n';
  }
  struct Input {
    std::string name, path;
  };
  std::vector<Input> inputs = {{"JSONL (baseline)", jsonl}};
  if (std::system(("zstd -q -3 -f '" + jsonl + "' -o '" + jsonl + ".zst'").c_str()) == 0)
    inputs.push_back({"JSONL.zst (zstd -3)", jsonl + ".zst"});
#ifdef SHARDKIT_HAVE_PARQUET
  const std::string parquet = (tmp / "corpus.parquet").string();
  if (d::write_parquet(jsonl, parquet)) inputs.push_back({"Parquet (zstd, DuckDB)", parquet});
#else
  std::printf("(Parquet rows skipped: built without DuckDB)\n");
#endif

  std::printf("\n%-28s %10s %9s %9s %9s %9s %8s\n", "input format (lm, packed)", "file MB",
              "1 thr s", "MB/s", "2 thr s", "MB/s", "CPU s");
  const double mb = text_bytes / 1e6;
  double base[3] = {0, 0, 0};
  std::string base_shards;
  // One table row and its ratios to the first (JSONL); `dir` holds the dataset it wrote.
  auto row = [&](const std::string& name, double file_mb, const double* best, double cpu_best,
                 const std::filesystem::path& dir) {
    const std::string shards = d::shard_bytes(dir);
    if (base[1] == 0) {
      base[1] = best[1];
      base[2] = best[2];
      base[0] = cpu_best;
      base_shards = shards;
    }
    std::printf("%-28s %10.2f %9.3f %9.2f %9.3f %9.2f %8.3f\n", name.c_str(), file_mb, best[1],
                mb / best[1], best[2], mb / best[2], cpu_best);
    std::printf("%-28s %10s %8.1f%% %9s %8.1f%% %9s %7.1f%%   shards %s\n", "  time vs JSONL", "",
                100 * best[1] / base[1], "", 100 * best[2] / base[2], "", 100 * cpu_best / base[0],
                shards == base_shards ? "identical" : "DIFFER");
  };
  for (const Input& in : inputs) {
    double best[3] = {1e30, 1e30, 1e30}, cpu_best = 1e30;
    for (int r = 0; r < runs; ++r)
      for (unsigned th : {1u, 2u}) {
        shardify::ConvertOptions o;
        o.inputs = {in.path};
        o.task.task = shardify::Task::kLm;
        o.task.max_len = max_len;
        o.tokenizer_path = tokenizer;
        o.out = (tmp / "fmt").string();
        o.force = true;
        o.threads = th;
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_now();
        shardify::convert(o);
        best[th] = std::min(
            best[th], std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (th == 1) cpu_best = std::min(cpu_best, cpu_now() - c0);
      }
    row(in.name, std::filesystem::file_size(in.path) / 1e6, best, cpu_best, tmp / "fmt");
  }
  // The same documents handed to shardkit.write_dataset by a Python generator.
  const std::string module_dir = std::string(SHARDKIT_BINARY_DIR) + "/python/shardkit";
  bool have_module = false;
  if (std::filesystem::exists(module_dir))
    for (const auto& e : std::filesystem::directory_iterator(module_dir))
      have_module |= e.path().filename().string().starts_with("_shardkit");
  if (have_module) {
    const std::filesystem::path script =
        std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests/bench/write_dataset_bench.py";
    const std::string cmd = "PYTHONPATH='" + std::string(SHARDKIT_BINARY_DIR) +
                            "/python' OMP_NUM_THREADS=1 /usr/bin/python3 '" + script.string() +
                            "' '" + tokenizer + "' '" + jsonl + "' " + std::to_string(max_len) +
                            " " + std::to_string(runs) + " '" + (tmp / "py").string() + "'";
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[256];
      while (std::fgets(buf, sizeof buf, p)) out += buf;
      ::pclose(p);
    }
    double best[3] = {0, 0, 0}, cpu = 0;
    if (std::sscanf(out.c_str(), "%lf %lf %lf", &best[1], &best[2], &cpu) == 3)
      row("Python write_dataset (gen.)", 0, best, cpu, tmp / "py");
    else
      std::printf("(Python row failed: %s)\n", out.c_str());
  } else {
    std::printf("(Python row skipped: no _shardkit module in %s)\n", module_dir.c_str());
  }
  // The reader alone: the one serial stage of a conversion, so the ceiling of its speed however
  // many threads tokenize.
  std::printf("\n%-28s %9s %9s %12s\n", "reader only (serial stage)", "best s", "MB/s", "vs JSONL");
  double reader_base = 0;
  std::vector<std::pair<Input, unsigned>> readers;
  for (const Input& in : inputs) readers.push_back({in, 1});
  if (inputs.back().path.ends_with(".parquet")) {
    readers.push_back({{"  ... 2 decoding threads", inputs.back().path}, 2});
    readers.push_back({{"  ... 4 decoding threads", inputs.back().path}, 4});
  }
  for (const auto& [in, threads] : readers) {
    double best = 1e30;
    for (int r = 0; r < runs; ++r) {
      shardify::ReaderOptions ro;
      ro.format = *shardify::infer_input_format(in.path);
      ro.decode_threads = threads;
      const auto t0 = std::chrono::steady_clock::now();
      auto reader = shardify::ExampleReader::open(in.path, 0, ro);
      shardify::Example ex;
      size_t n = 0;
      while (reader->next(ex)) n += ex.text.size();
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (n == 0) std::printf("(no text read from %s)\n", in.path.c_str());
    }
    if (reader_base == 0) reader_base = best;
    std::printf("%-28s %9.3f %9.1f %11.1f%%\n", in.name.c_str(), best, mb / best,
                100 * best / reader_base);
  }
}

}  // namespace shardkit::bench
