#include "core/manifest.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_set>

#include "core/checksum.h"
#include "core/dataset_info_json.h"
#include "core/error.h"
#include "core/json_keys.h"
#include "format/shard_format.h"

namespace shardkit {
namespace {

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw Error(ErrorCode::kCorrupt, path, what);
}

constexpr uint64_t kMaxRecords = uint64_t{1} << 48;

}  // namespace

bool is_plain_shard_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name[0] == '.') return false;
  if (name == format::kManifestName) return false;
  for (unsigned char c : name)
    if (c == '/' || c == '\\' || c < 0x20 || c == 0x7f) return false;
  return true;
}

uint64_t Manifest::record_count() const {
  uint64_t n = 0;
  for (const ShardEntry& s : shards) n += s.records;
  return n;
}

uint64_t Manifest::bytes_on_disk() const {
  uint64_t n = 0;
  for (const ShardEntry& s : shards) n += s.bytes;
  return n;
}

std::string Manifest::serialize() const {
  using nlohmann::ordered_json;
  ordered_json j;
  j["format"] = "shardkit";
  j["format_version"] = format_version;
  j["producer"] = producer;
  ordered_json& fields = j["schema"] = ordered_json::array();
  for (const Field& f : schema.fields())
    fields.push_back(
        ordered_json{{"name", f.name}, {"dtype", dtype_name(f.dtype)}, {"shape", f.shape}});
  j["record_size"] = schema.record_size();
  j["records_per_block"] = records_per_block;
  j["records"] = record_count();
  j["bytes_on_disk"] = bytes_on_disk();
  ordered_json& entries = j["shards"] = ordered_json::array();
  for (const ShardEntry& s : shards)
    entries.push_back(ordered_json{{"name", s.name},
                                   {"records", s.records},
                                   {"bytes", s.bytes},
                                   {"checksum", checksum_hex(s.checksum)}});
  if (format_version >= 2) j["dataset"] = to_json_value(info);
  ordered_json& meta = j["metadata"] = ordered_json::object();
  for (const auto& [key, value] : metadata) meta[key] = ordered_json::parse(value);
  // The checksum line closes the object at a fixed distance from the end (SPEC.md).
  std::string body = j.dump(2);
  body.resize(body.size() - 2);  // the closing "\n}"
  body += ",\n";
  return body + format::kManifestChecksumPrefix + checksum_hex(xxh3_64(body.data(), body.size())) +
         format::kManifestChecksumSuffix;
}

Manifest Manifest::parse(const std::string& text, const std::string& path) {
  // The checksum line first: nothing of a manifest is believed before it verifies.
  const size_t tail = format::kManifestTailSize;
  const size_t prefix_len = sizeof(format::kManifestChecksumPrefix) - 1;
  if (text.size() < tail + 2) corrupt(path, "manifest is too short to hold its checksum line");
  const size_t body_len = text.size() - tail;
  if (text.compare(body_len, prefix_len, format::kManifestChecksumPrefix) != 0 ||
      text.compare(text.size() - 4, 4, format::kManifestChecksumSuffix) != 0)
    corrupt(path, "manifest does not end with its \"manifest_xxh3\" checksum line");
  uint64_t stored = 0;
  if (!parse_checksum_hex(text.substr(body_len + prefix_len, 16), &stored))
    corrupt(path, "manifest checksum is not 16 lowercase hex digits");
  uint64_t actual = xxh3_64(text.data(), body_len);
  if (stored != actual)
    corrupt(path, "manifest checksum mismatch (stored " + checksum_hex(stored) + ", computed " +
                      checksum_hex(actual) + ")");

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(text).get(root))
    corrupt(path, std::string("manifest is not valid JSON: ") + simdjson::error_message(err));
  auto need = [&](auto result, const char* what) {
    using T = std::remove_cvref_t<decltype(result.value_unsafe())>;
    T v{};
    if (std::move(result).get(v))
      corrupt(path, std::string("manifest: missing or mistyped ") + what);
    return v;
  };

  Manifest m;
  std::string_view format_name = need(root["format"].get_string(), "\"format\"");
  if (format_name != "shardkit") corrupt(path, "manifest: \"format\" is not \"shardkit\"");
  if (auto key = repeated_key(root))
    corrupt(path, "manifest: key \"" + *key + "\" appears twice in one object");
  uint64_t version = need(root["format_version"].get_uint64(), "\"format_version\"");
  if (version < kOldestReadableVersion || version > kVersion)
    throw Error(ErrorCode::kUnsupported, path,
                "manifest format_version " + std::to_string(version) +
                    " is not supported (this build reads versions " +
                    std::to_string(kOldestReadableVersion) + " to " + std::to_string(kVersion) +
                    ")");
  m.format_version = static_cast<uint16_t>(version);
  m.producer = std::string(need(root["producer"].get_string(), "\"producer\""));

  std::vector<Field> fields;
  for (simdjson::dom::element f : need(root["schema"].get_array(), "\"schema\"")) {
    Field field;
    field.name = std::string(need(f["name"].get_string(), "schema field name"));
    try {
      field.dtype = parse_dtype(need(f["dtype"].get_string(), "schema field dtype"));
    } catch (const Error& e) {
      corrupt(path, "manifest: " + e.reason());
    }
    for (simdjson::dom::element d : need(f["shape"].get_array(), "schema field shape")) {
      uint64_t dim = need(d.get_uint64(), "shape dimension");
      if (dim == 0 || dim > format::kMaxRecordSize) corrupt(path, "manifest: bad shape dimension");
      field.shape.push_back(static_cast<uint32_t>(dim));
    }
    fields.push_back(std::move(field));
  }
  try {
    m.schema = Schema(std::move(fields));
  } catch (const Error& e) {
    corrupt(path, "manifest: " + e.reason());
  }
  if (need(root["record_size"].get_uint64(), "\"record_size\"") != m.schema.record_size())
    corrupt(path, "manifest: record_size disagrees with the schema");
  uint64_t rpb = need(root["records_per_block"].get_uint64(), "\"records_per_block\"");
  // The first test keeps the product below from wrapping around 2^64.
  if (rpb == 0 || rpb > format::kMaxBlockRawSize ||
      rpb * m.schema.record_size() > format::kMaxBlockRawSize)
    corrupt(path, "manifest: records_per_block " + std::to_string(rpb) + " is out of range");
  m.records_per_block = static_cast<uint32_t>(rpb);

  uint64_t total = 0, total_bytes = 0;
  // Names seen so far: a search of the list for each shard made opening 80,000 shards take 9 s.
  std::unordered_set<std::string> names;
  for (simdjson::dom::element s : need(root["shards"].get_array(), "\"shards\"")) {
    ShardEntry e;
    e.name = std::string(need(s["name"].get_string(), "shard name"));
    if (!is_plain_shard_name(e.name))
      corrupt(path, "manifest: shard name '" + e.name +
                        "' is not a plain file name inside the dataset directory");
    e.records = need(s["records"].get_uint64(), "shard records");
    e.bytes = need(s["bytes"].get_uint64(), "shard bytes");
    if (e.records > kMaxRecords || e.bytes > kMaxRecords)
      corrupt(path, "manifest: shard '" + e.name + "' counts are out of range");
    if (!parse_checksum_hex(std::string(need(s["checksum"].get_string(), "shard checksum")),
                            &e.checksum))
      corrupt(path, "manifest: shard '" + e.name + "' checksum is not 16 hex digits");
    total += e.records;
    total_bytes += e.bytes;
    if (total > kMaxRecords) corrupt(path, "manifest: record count overflows");
    if (!names.insert(e.name).second)
      corrupt(path, "manifest: shard '" + e.name + "' listed twice");
    m.shards.push_back(std::move(e));
  }
  if (need(root["records"].get_uint64(), "\"records\"") != total)
    corrupt(path, "manifest: \"records\" is not the sum of the shards' records");
  if (need(root["bytes_on_disk"].get_uint64(), "\"bytes_on_disk\"") != total_bytes)
    corrupt(path, "manifest: \"bytes_on_disk\" is not the sum of the shards' bytes");
  for (auto [key, value] : need(root["metadata"].get_object(), "\"metadata\""))
    m.metadata.emplace(std::string(key), simdjson::minify(value));
  if (m.format_version >= 2) {
    simdjson::dom::element dataset;
    if (root["dataset"].get(dataset)) corrupt(path, "manifest: missing \"dataset\"");
    m.info = dataset_info_from(dataset, path);
    m.info.check_against(m.schema, path);
  } else {
    m.info = DatasetInfo::from_v1_metadata(m.metadata, m.schema, path);
  }
  return m;
}

namespace {

// Only a missing manifest.json says "not a shardkit dataset": any other failure to open it (out
// of descriptors, an I/O error) is named as the system names it.
[[noreturn]] void throw_manifest_open_error(const std::filesystem::path& dataset_dir,
                                            const std::filesystem::path& path, int err) {
  if (err == ELOOP)
    throw Error(ErrorCode::kCorrupt, path.string(),
                "is a symbolic link; the manifest must be a regular file");
  if (err == ENOTDIR)
    throw Error(ErrorCode::kIo, dataset_dir.string(),
                "not a shardkit dataset: a dataset is a directory, this is a file");
  if (err == EACCES) throw Error(ErrorCode::kIo, path.string(), "cannot open: permission denied");
  if (err != ENOENT)
    throw Error(ErrorCode::kIo, path.string(), std::string("cannot open: ") + std::strerror(err));
  std::error_code ec;
  if (!std::filesystem::exists(dataset_dir, ec))
    throw Error(ErrorCode::kIo, dataset_dir.string(), "no such dataset: the path does not exist");
  throw Error(ErrorCode::kIo, path.string(),
              "cannot open: not a shardkit dataset (no manifest.json)");
}

}  // namespace

Manifest Manifest::load(const std::filesystem::path& dataset_dir) {
  const std::filesystem::path path = dataset_dir / format::kManifestName;
  // Like shards, the manifest must be a regular file inside the directory: no symbolic link is
  // followed, and a FIFO is refused instead of blocking the open.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) throw_manifest_open_error(dataset_dir, path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorCode::kCorrupt, path.string(), "is not a regular file");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw Error(ErrorCode::kIo, path.string(), std::string("read: ") + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return parse(text, path.string());
}

}  // namespace shardkit

namespace shardkit {

std::string shard_file_name(size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "shard-%05zu.shard", index);
  return name;
}

void Manifest::write_to(const std::filesystem::path& path) const {
  const std::string text = serialize();
  auto fail = [&](const char* what) {
    const int err = errno;
    throw Error(ErrorCode::kIo, path.string(),
                std::string("cannot write manifest: ") + what + ": " + std::strerror(err));
  };
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open");
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      errno = err;
      fail("write");
    }
    done += static_cast<size_t>(n);
  }
  // The manifest's bytes are durable before the rename that publishes them.
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    fail("fsync");
  }
  if (::close(fd) != 0) fail("close");
}

}  // namespace shardkit
