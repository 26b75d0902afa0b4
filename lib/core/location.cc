#include "core/location.h"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstring>

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

}  // namespace

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
    const size_t end = url_end(text, start);
    const std::string_view url = text.substr(start, end - start);
    const size_t authority_end = std::min(url.find_first_of("/?#"), url.size());
    const size_t at = url.substr(0, authority_end).rfind('@');
    const size_t query = url.find('?');
    if (at == std::string_view::npos && query == std::string_view::npos) continue;
    out += text.substr(done, start - done);
    if (at != std::string_view::npos) out += "***";
    const size_t host = at == std::string_view::npos ? 0 : at;
    out += url.substr(host, query == std::string_view::npos ? url.size() - host : query - host);
    if (query != std::string_view::npos) out += "?***";
    done = end;
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
