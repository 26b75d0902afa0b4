#include "core/remote/curl_library.h"

#include <optional>
#include <string>
#include <vector>

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
  CurlLibrary lib;
  if (!open_functions(candidates, kNames, lib, failure)) return std::nullopt;
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
  return library.get_or_throw(
      what, "remote datasets need libcurl (Debian's libcurl4), and it could not be loaded:");
}

}  // namespace shardkit::remote
