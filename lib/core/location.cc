#include "core/location.h"

namespace shardkit {

Scheme location_scheme(std::string_view location) {
  if (location.rfind("http://", 0) == 0) return Scheme::kHttp;
  if (location.rfind("https://", 0) == 0) return Scheme::kHttps;
  if (location.rfind("s3://", 0) == 0) return Scheme::kS3;
  const size_t scheme = location.find("://");
  if (scheme != std::string_view::npos && location.find('/') > scheme) return Scheme::kUnknown;
  return Scheme::kLocal;
}

}  // namespace shardkit
