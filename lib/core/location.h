// Where a dataset lives, by the scheme its location starts with: the one place that reads a
// location's scheme.
#pragma once

#include <string_view>

namespace shardkit {

enum class Scheme {
  kLocal,    // a path: no "scheme://" before its first '/'
  kHttp,     // http://
  kHttps,    // https://
  kS3,       // s3://
  kUnknown,  // another "scheme://"
};

Scheme location_scheme(std::string_view location);
// http://, https:// or s3://.
inline bool is_remote_location(std::string_view location) {
  const Scheme s = location_scheme(location);
  return s == Scheme::kHttp || s == Scheme::kHttps || s == Scheme::kS3;
}

}  // namespace shardkit
