#include "core/location.h"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "core/error.h"
#include "format/shard_format.h"

namespace shardkit {
namespace {

// Schemes are case-insensitive (RFC 3986, 3.1): a server may redirect to "HTTPS://...".
bool starts_with(std::string_view location, std::string_view scheme) {
  return location.size() >= scheme.size() &&
         strncasecmp(location.data(), scheme.data(), scheme.size()) == 0;
}

// Where a URL starting at `from` ends in a message: at white space or a quote, less the
// punctuation a sentence puts after it.
size_t url_end(std::string_view text, size_t from) {
  size_t end = from;
  while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end])) &&
         text[end] != '"' && text[end] != '\'' && text[end] != '`')
    ++end;
  while (end > from && std::strchr(":,.;)", text[end - 1])) --end;
  return end;
}

// Where the authority of a URL starting at `from` ends, for finding its user information: at the
// first '/', the end of the line, or the next URL. Not at white space, quotes, '?' or '#': a
// password may hold them (a quote is legal in one, the others come by mistake), and the whole
// password is what must not be shown.
size_t authority_end(std::string_view text, size_t from) {
  return std::min({text.find_first_of("/\n", from), text.find("://", from), text.size()});
}

// Where a query starting at `from` ends: at white space, less the punctuation and quotes a
// sentence puts after it. Not at a quote inside: a token may hold one.
size_t query_end(std::string_view text, size_t from) {
  size_t end = from;
  while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
  while (end > from + 1 && std::strchr(":,.;)\"'`", text[end - 1])) --end;
  return end;
}

// The path of a location: a URL's up to its query or fragment, a local path whole.
std::string_view location_path(std::string_view location) {
  if (location_scheme(location) == Scheme::kLocal) return location;
  return location.substr(0, location.find_first_of("?#", location.find("://") + 3));
}

// A client never sends a URL's fragment: the requests would go to the path before the '#', with
// the rest of the URL dropped or, joined to an object's name, in the wrong place. What follows
// the '#' may be a token, so the message shows the URL only up to it (its secrets hidden first:
// a '#' typed into a password would otherwise leave the start of the password before the cut).
[[noreturn]] void refuse_fragment(const std::string& url) {
  std::string shown = without_secrets(url);
  shown.resize(std::min(shown.size(), url_fragment_start(shown)));
  throw Error(ErrorCode::kInvalidArgument, shown,
              "the URL holds a '#', which begins a fragment that is never sent to a server (what "
              "follows it is not shown); remove it, or write a '#' that belongs to the path, a "
              "password or a token as %23");
}

// A location copied from a browser's address bar names the manifest; the dataset is its
// directory, which the message gives. A local directory named manifest.json is a dataset's name.
void refuse_manifest_location(const std::string& location, bool remote) {
  const std::optional<std::string> dataset = dataset_of_manifest(location);
  if (!dataset) return;
  std::error_code ec;
  if (!remote && std::filesystem::is_directory(location, ec)) return;
  throw Error(ErrorCode::kInvalidArgument, location,
              std::string("names the dataset's manifest.json, not the dataset: give the "
                          "dataset's directory") +
                  (remote ? " URL, " : ", ") + *dataset);
}

}  // namespace

void check_dataset_location(const std::string& location, bool remote) {
  if (remote && url_fragment_start(location) != std::string::npos) refuse_fragment(location);
  refuse_manifest_location(location, remote);
}

size_t url_fragment_start(std::string_view url) {
  const size_t scheme = url.find("://");
  return scheme == std::string_view::npos ? std::string_view::npos : url.find('#', scheme + 3);
}

std::optional<std::string> dataset_of_manifest(std::string_view location) {
  std::string_view path = location_path(location);
  const std::string_view rest = location.substr(path.size());  // the query, kept
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::string_view name = format::kManifestName;
  if (path.size() < name.size() || path.substr(path.size() - name.size()) != name)
    return std::nullopt;
  path.remove_suffix(name.size());
  if (path.empty()) return "." + std::string(rest);  // "manifest.json": the current directory
  if (path.back() != '/') return std::nullopt;       // "my-manifest.json" names a dataset
  // A URL's manifest lies in its path, not its host ("http://manifest.json").
  const size_t scheme = path.find("://");
  if (scheme != std::string_view::npos && path.find('/', scheme + 3) == std::string_view::npos)
    return std::nullopt;
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return std::string(path) + std::string(rest);
}

std::string object_url(std::string_view base, std::string_view name) {
  const size_t query = base.find('?');
  std::string_view path = base.substr(0, query);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  std::string url(path);
  url += '/';
  url += name;
  if (query != std::string_view::npos) url += base.substr(query);
  return url;
}

std::string without_secrets(std::string_view text) {
  std::string out;
  size_t done = 0;
  for (size_t mark = text.find("://"); mark != std::string_view::npos;
       mark = text.find("://", mark + 3)) {
    const size_t start = mark + 3;
    if (start < done) continue;
    const size_t at = text.substr(0, authority_end(text, start)).rfind('@');
    const bool has_user = at != std::string_view::npos && at >= start;
    const size_t host = has_user ? at : start;  // from the '@' on
    const size_t end = url_end(text, host);
    // A query's '?' may come after a quote in the path; it ends where the word does.
    const size_t query = text.substr(0, query_end(text, host)).find('?', host);
    if (!has_user && query == std::string_view::npos) continue;
    out += text.substr(done, start - done);
    if (has_user) out += "***";
    if (query == std::string_view::npos) {
      out += text.substr(host, end - host);  // the rest of the URL, as the message quotes it
      done = end;
    } else {
      out += text.substr(host, query - host);
      out += "?***";
      done = query_end(text, query);
    }
  }
  out += text.substr(done);
  return out;
}

Scheme location_scheme(std::string_view location) {
  if (starts_with(location, "http://")) return Scheme::kHttp;
  if (starts_with(location, "https://")) return Scheme::kHttps;
  if (starts_with(location, "s3://")) return Scheme::kS3;
  const size_t scheme = location.find("://");
  if (scheme != std::string_view::npos && location.find('/') > scheme) return Scheme::kUnknown;
  return Scheme::kLocal;
}

}  // namespace shardkit
