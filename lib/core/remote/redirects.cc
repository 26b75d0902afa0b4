#include "core/remote/redirects.h"

#include <strings.h>

#include <memory>

#include "core/location.h"
#include "core/remote/curl_library.h"

namespace shardkit::remote {
namespace {

struct UrlFree {
  void operator()(CURLU* u) const { curl().url_cleanup(u); }
};

// One part of a parsed URL; empty when absent or unparsable.
std::string part(CURLU* u, CURLUPart which, unsigned flags = 0) {
  char* text = nullptr;
  if (curl().url_get(u, which, &text, flags) != CURLUE_OK || !text) return "";
  std::string s(text);
  curl().free(text);
  return s;
}

std::unique_ptr<CURLU, UrlFree> parse(const std::string& url) {
  std::unique_ptr<CURLU, UrlFree> u(curl().url());
  if (!u ||
      curl().url_set(u.get(), CURLUPART_URL, url.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK)
    return nullptr;
  return u;
}

}  // namespace

bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

bool keeps_method(long status) { return status == 307 || status == 308; }

bool is_http_url(const std::string& url) {
  const Scheme s = location_scheme(url);
  return s == Scheme::kHttp || s == Scheme::kHttps;
}

bool same_origin(const std::string& a, const std::string& b) {
  const auto ua = parse(a), ub = parse(b);
  if (!ua || !ub) return false;
  for (CURLUPart p : {CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT}) {
    const std::string x = part(ua.get(), p, CURLU_DEFAULT_PORT);
    if (x.empty() || strcasecmp(x.c_str(), part(ub.get(), p, CURLU_DEFAULT_PORT).c_str()) != 0)
      return false;
  }
  return true;
}

std::string url_for_message(const std::string& url) {
  const auto u = parse(url);
  if (!u) return "(an unparsable URL)";
  std::string s = part(u.get(), CURLUPART_SCHEME) + "://" + part(u.get(), CURLUPART_HOST);
  const std::string port = part(u.get(), CURLUPART_PORT);
  if (!port.empty()) s += ":" + port;
  return s + part(u.get(), CURLUPART_PATH);
}

}  // namespace shardkit::remote
