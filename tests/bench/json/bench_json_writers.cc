// The JSON writer choice (issue: JSON through one well-kept library): a manifest of 10,000 shard
// entries written by nlohmann::ordered_json (the project's writer) and by RapidJSON's
// PrettyWriter, and what each does with invalid UTF-8.
//
//   build/tests/bench/json/bench_json_writers [shards=10000] [runs=20]
//
// Built only where Debian's rapidjson-dev is installed (it is not a project dependency).
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const int shards = argc > 1 ? std::stoi(argv[1]) : 10000;
  const int runs = argc > 2 ? std::stoi(argv[2]) : 20;
  size_t bytes = 0;
  auto t0 = Clock::now();
  for (int r = 0; r < runs; ++r) {
    nlohmann::ordered_json j;
    j["format"] = "shardkit";
    auto& list = j["shards"] = nlohmann::ordered_json::array();
    for (int i = 0; i < shards; ++i)
      list.push_back(nlohmann::ordered_json{{"name", "shard-" + std::to_string(i) + ".shard"},
                                            {"records", i * 1000ull},
                                            {"bytes", i * 77777ull},
                                            {"checksum", "0123456789abcdef"}});
    bytes += j.dump(2).size();
  }
  auto t1 = Clock::now();
  for (int r = 0; r < runs; ++r) {
    rapidjson::StringBuffer sb;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(sb);
    w.SetIndent(' ', 2);
    w.StartObject();
    w.Key("format");
    w.String("shardkit");
    w.Key("shards");
    w.StartArray();
    for (int i = 0; i < shards; ++i) {
      const std::string name = "shard-" + std::to_string(i) + ".shard";
      w.StartObject();
      w.Key("name");
      w.String(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
      w.Key("records");
      w.Uint64(i * 1000ull);
      w.Key("bytes");
      w.Uint64(i * 77777ull);
      w.Key("checksum");
      w.String("0123456789abcdef");
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    bytes += sb.GetSize();
  }
  auto t2 = Clock::now();
  const double a = std::chrono::duration<double>(t1 - t0).count() / runs * 1e3;
  const double b = std::chrono::duration<double>(t2 - t1).count() / runs * 1e3;
  std::printf("%d-shard manifest: nlohmann %.2f ms, rapidjson %.2f ms (%.1fx)  [%zu bytes]\n",
              shards, a, b, a / b, bytes);
  try {
    (void)nlohmann::json(std::string("a\xff")).dump();
    std::printf("invalid UTF-8: nlohmann writes it\n");
  } catch (const std::exception& e) {
    std::printf("invalid UTF-8: nlohmann throws (%s)\n", e.what());
  }
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  std::printf("invalid UTF-8: rapidjson's default Writer %s\n",
              w.String("a\xff") ? "writes it unchecked" : "refuses it");
}
