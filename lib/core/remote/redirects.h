// Which redirects a transport follows and where credentials may go. A redirect is followed only
// to http:// or https://, at most kMaxRedirects times per request; the Authorization header and
// every SigV4 header go only to the origin (scheme, host and port) the request was made for, so
// a redirect to a CDN or another bucket carries no credential. URLs in messages lose their user
// info and query (a presigned URL's query is a credential too).
#pragma once

#include <string>

namespace shardkit::remote {

constexpr int kMaxRedirects = 5;

bool is_redirect(long status);
// Whether a redirect of `status` keeps the method and body (307, 308): the only ones an upload
// follows.
bool keeps_method(long status);
bool is_http_url(const std::string& url);
// Same scheme, host and port (default ports made explicit).
bool same_origin(const std::string& a, const std::string& b);
// scheme://host[:port]/path of `url`, without user info, query or fragment.
std::string url_for_message(const std::string& url);

}  // namespace shardkit::remote
