#include "shardify/input_files.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "core/utf8.h"

namespace shardkit::shardify {
namespace fs = std::filesystem;
namespace {

bool has_glob_characters(const std::string& s) {
  return s.find_first_of("*?[") != std::string::npos;
}

// The regular files a glob matches, in byte order (glob(3) sorts by the locale; we do not).
std::vector<InputFile> expand_glob(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g);
  std::vector<InputFile> found;
  for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) {
    std::error_code ec;
    if (fs::is_regular_file(g.gl_pathv[i], ec))
      found.push_back({g.gl_pathv[i], fs::file_size(g.gl_pathv[i])});
  }
  ::globfree(&g);
  if (rc != 0 && rc != GLOB_NOMATCH)
    throw Error(ErrorCode::kIo, pattern, "cannot expand the pattern");
  std::sort(found.begin(), found.end(),
            [](const InputFile& a, const InputFile& b) { return a.path < b.path; });
  return found;
}

// The dataset records its inputs' names as JSON text: refused before any work, not after it.
void check_names(const std::vector<InputFile>& files) {
  for (const InputFile& f : files)
    if (first_invalid_utf8(f.path))
      throw Error(ErrorCode::kInvalidArgument, escape_invalid_utf8(f.path),
                  "the file's name is not UTF-8, and a dataset records its inputs' names as "
                  "UTF-8 text: rename the file (or its directory)");
}

// A directory walk skips hidden entries, and what lies under them.
bool hidden(const std::string& name) { return name.size() > 1 && name[0] == '.' && name != ".."; }

// The regular files under `dir`, hidden entries skipped, in byte order of their paths. A
// directory that cannot be read is an error naming it (the iterator's own names no path).
std::vector<InputFile> walk_directory(const std::string& dir) {
  std::vector<InputFile> found;
  std::error_code ec;
  fs::path at = dir;  // the directory being read, or the one being entered
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code entry_ec;  // a dangling link is no file, and no error either
    const bool is_dir = it->is_directory(entry_ec);
    at = is_dir ? it->path() : it->path().parent_path();
    if (hidden(name)) {
      if (is_dir) it.disable_recursion_pending();
      at = it->path().parent_path();
      continue;
    }
    if (it->is_regular_file(entry_ec)) found.push_back({it->path().string(), it->file_size()});
  }
  if (ec)
    throw Error(ErrorCode::kIo, at.string(), "cannot read the input directory: " + ec.message());
  std::sort(found.begin(), found.end(),
            [](const InputFile& a, const InputFile& b) { return a.path < b.path; });
  return found;
}

// Why an input could not be looked at. Only a missing file "does not exist": a directory on its
// path that may not be searched, or links in a loop, are named as what they are.
std::string missing_input_reason(const std::error_code& ec) {
  if (!ec || ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory)
    return "input does not exist";
  return "cannot read the input: " + ec.message();
}

}  // namespace

std::vector<InputFile> list_input_files(const std::vector<std::string>& inputs) {
  std::vector<InputFile> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    auto st = fs::status(input, ec);
    if ((ec || !fs::exists(st)) && has_glob_characters(input)) {
      std::vector<InputFile> found = expand_glob(input);
      if (found.empty()) throw Error(ErrorCode::kIo, input, "no regular file matches the pattern");
      files.insert(files.end(), found.begin(), found.end());
      continue;
    }
    if (input == "-" && (ec || !fs::exists(st)))  // a file named "-" is read
      throw Error(ErrorCode::kInvalidArgument, input,
                  "standard input is not read: inputs are files (a compressed one is read as it "
                  "is, .gz or .zst)");
    if (ec || !fs::exists(st)) throw Error(ErrorCode::kIo, input, missing_input_reason(ec));
    if (fs::is_directory(st)) {
      std::vector<InputFile> found = walk_directory(input);
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(st)) {
      files.push_back({input, fs::file_size(input)});
    } else {
      // A compressed file may be read again (convert.cc), cls and pair read every file for its
      // labels before converting, and each file's size is recorded: a stream allows none of it.
      throw Error(ErrorCode::kInvalidArgument, input,
                  "not a regular file (a pipe, socket or device): inputs are files (a compressed "
                  "one is read as it is, .gz or .zst)");
    }
  }
  if (files.empty()) {
    std::string named;
    for (const std::string& input : inputs) named += (named.empty() ? "" : ", ") + input;
    throw Error(ErrorCode::kInvalidArgument, "",
                "no input files found in " + named +
                    " (directories hold no regular file; "
                    "hidden entries are skipped)");
  }
  check_names(files);
  return files;
}

std::vector<std::string> repeated_input_notes(const std::vector<InputFile>& files) {
  // A file is its device and inode: paths that differ, links and hard links included, meet there.
  std::map<std::pair<dev_t, ino_t>, std::vector<size_t>> listings;
  std::vector<std::pair<dev_t, ino_t>> order;
  for (size_t i = 0; i < files.size(); ++i) {
    struct stat st {};
    if (::stat(files[i].path.c_str(), &st) != 0) continue;  // opening it names what is wrong
    auto& at = listings[{st.st_dev, st.st_ino}];
    if (at.size() == 1) order.push_back({st.st_dev, st.st_ino});
    at.push_back(i);
  }
  std::vector<std::string> notes;
  for (const auto& file : order) {
    const std::vector<size_t>& at = listings[file];
    std::string also;
    for (size_t k = 1; k < at.size(); ++k)
      if (files[at[k]].path != files[at[0]].path)
        also += (also.empty() ? "" : ", ") + files[at[k]].path;
    notes.push_back(files[at[0]].path + " is an input " + std::to_string(at.size()) + " times" +
                    (also.empty() ? "" : " (also as " + also + ")") + ": its rows are converted " +
                    std::to_string(at.size()) + " times");
  }
  return notes;
}

namespace {

// `path` with its links and dot entries resolved, as far as it exists.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::absolute(path, ec).lexically_normal() : p;
}

// The path of `inner` below `outer` (both resolved), or nullopt when it is not inside it.
std::optional<fs::path> below(const fs::path& inner, const fs::path& outer) {
  const fs::path rel = inner.lexically_relative(outer);
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  return rel;
}

// Whether a directory walk reaches `rel` below its root: no part of it is hidden.
bool walked(const fs::path& rel) {
  return std::none_of(rel.begin(), rel.end(),
                      [](const fs::path& part) { return hidden(part.string()); });
}

}  // namespace

void check_out_apart_from_inputs(const std::string& out, const std::vector<std::string>& inputs,
                                 const std::vector<InputFile>& files) {
  const fs::path target = resolved(out);
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!fs::is_directory(input, ec)) continue;
    const std::optional<fs::path> rel = below(target, resolved(input));
    if (rel && walked(*rel))
      throw Error(ErrorCode::kInvalidArgument, out,
                  "the output lies inside the input directory " + input +
                      ", where the next run would read the dataset back as input: write it "
                      "outside " +
                      input);
  }
  std::error_code ec;
  if (!fs::exists(target, ec)) return;
  for (const InputFile& f : files)
    if (below(resolved(f.path), target))
      throw Error(ErrorCode::kInvalidArgument, out,
                  "the output holds the input file " + f.path +
                      ", which the dataset would replace as it is read: write it elsewhere");
}

namespace {

// A decimal number of at most 32 bits, digits only (no sign, space or "0x"): stoul would wrap
// "-1" and the cast would cut 4294967297 to 1.
std::optional<uint32_t> part_number(std::string_view s) {
  uint64_t v = 0;
  if (s.empty() || s.size() > 10) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(v);
}

}  // namespace

PartSpec parse_part(const std::string& text) {
  const size_t slash = text.find('/');
  const std::string_view all(text);
  const auto index = slash == std::string::npos ? std::nullopt : part_number(all.substr(0, slash));
  const auto count = slash == std::string::npos ? std::nullopt : part_number(all.substr(slash + 1));
  if (!index || !count)
    throw Error(ErrorCode::kInvalidArgument, "",
                "--part must look like i/N with whole numbers 0 <= i < N <= 4294967295, e.g. "
                "0/4 (got '" +
                    text + "')");
  if (*count == 0 || *index >= *count)
    throw Error(ErrorCode::kInvalidArgument, "", "--part i/N needs 0 <= i < N (got " + text + ")");
  return {*index, *count};
}

std::pair<size_t, size_t> part_file_range(size_t total, PartSpec part) {
  auto edge = [&](uint64_t i) { return static_cast<size_t>(i * total / part.count); };
  return {edge(part.index), edge(part.index + 1)};
}

}  // namespace shardkit::shardify
