#include "core/remote/curl_library.h"

#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/library_on_demand.h"

namespace shardkit::remote {
namespace {

std::optional<CurlLibrary> open(std::string& failure) {
#define SHARDKIT_CURL_NAME(name) "curl_" #name,
  static constexpr const char* kNames[] = {SHARDKIT_CURL_FUNCTIONS(SHARDKIT_CURL_NAME)};
#undef SHARDKIT_CURL_NAME
  std::vector<std::string> candidates = {"libcurl.so.4", "libcurl-gnutls.so.4"};
#ifdef SHARDKIT_CURL_BUILT_WITH
  candidates.push_back(SHARDKIT_CURL_BUILT_WITH);
#endif
  void* found[std::size(kNames)];
  if (!open_first_library(candidates, kNames, found, failure)) return std::nullopt;
  CurlLibrary lib;
  void* const* next = found;  // in the order of kNames
#define SHARDKIT_CURL_RESOLVE(name) lib.name = reinterpret_cast<decltype(lib.name)>(*next++);
  SHARDKIT_CURL_FUNCTIONS(SHARDKIT_CURL_RESOLVE)
#undef SHARDKIT_CURL_RESOLVE
  // Once, before any handle exists; the library is never unloaded, so never cleaned up.
  if (const CURLcode code = lib.global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    failure = "\n  curl_global_init failed: " + std::string(lib.easy_strerror(code));
    return std::nullopt;
  }
  return lib;
}

constinit LibraryOnDemand<CurlLibrary> library(open);

}  // namespace

const CurlLibrary& curl(std::string_view what) {
  std::string failure;
  if (const CurlLibrary* lib = library.get(failure)) return *lib;
  throw Error(
      ErrorCode::kUnsupported, std::string(what),
      "remote datasets need libcurl (Debian's libcurl4), and it could not be loaded:" + failure);
}

}  // namespace shardkit::remote
