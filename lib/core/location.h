// Where a dataset lives, by the scheme its location starts with: the one place that reads a
// location's scheme.
#pragma once

#include <optional>
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

// Refuses (kInvalidArgument, saying what to give instead) a dataset location that no reader can
// open as given: a URL holding a fragment ('#', never sent to a server; what follows it is not
// shown), or one naming the dataset's manifest.json rather than its directory.
void check_dataset_location(const std::string& location, bool remote);

// Where a URL's fragment begins: its first '#' (RFC 3986, 3.5: user information and queries
// hold '#' only as %23), or npos.
size_t url_fragment_start(std::string_view url);

// The location of the dataset whose manifest `location` names, when its path ends in
// "/manifest.json" (a URL copied from a browser): "http://h/ds/manifest.json?t=1" gives
// "http://h/ds?t=1", "ds/manifest.json" gives "ds", "manifest.json" gives ".". nullopt otherwise.
std::optional<std::string> dataset_of_manifest(std::string_view location);

// `text` with the secrets a URL in it may carry replaced by "***": the user information of its
// authority ("user:password@") and its query ("?X-Amz-Signature=..."). Every Error's file and
// message pass through it, and every location a remote dataset displays.
std::string without_secrets(std::string_view text);

}  // namespace shardkit
