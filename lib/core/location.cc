#include "core/location.h"

#include <strings.h>

namespace shardkit {
namespace {

// Schemes are case-insensitive (RFC 3986, 3.1): a server may redirect to "HTTPS://...".
bool starts_with(std::string_view location, std::string_view scheme) {
  return location.size() >= scheme.size() &&
         strncasecmp(location.data(), scheme.data(), scheme.size()) == 0;
}

}  // namespace

Scheme location_scheme(std::string_view location) {
  if (starts_with(location, "http://")) return Scheme::kHttp;
  if (starts_with(location, "https://")) return Scheme::kHttps;
  if (starts_with(location, "s3://")) return Scheme::kS3;
  const size_t scheme = location.find("://");
  if (scheme != std::string_view::npos && location.find('/') > scheme) return Scheme::kUnknown;
  return Scheme::kLocal;
}

}  // namespace shardkit
