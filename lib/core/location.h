// Where a dataset lives, by the scheme its location starts with: the one place that reads a
// location's scheme.
#pragma once

#include <string>
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

// The URL of the object `name` of a remote dataset at `base`: `name` goes at the end of the
// path, before a query the dataset's URL carries (which every object's request then carries
// too, as a server's access token).
std::string object_url(std::string_view base, std::string_view name);

// `text` with the secrets a URL in it may carry replaced by "***": the user information of its
// authority ("user:password@") and its query ("?X-Amz-Signature=..."). Every Error's file and
// message pass through it, and every location a remote dataset displays.
std::string without_secrets(std::string_view text);

}  // namespace shardkit
