// libcurl, loaded when a remote dataset is first read or written rather than linked: linked, it
// and the TLS, Kerberos and LDAP libraries it brings cost every process 4-5 ms at start
// (core/library_on_demand.h), though most of them only read local files.
#pragma once

#include <curl/curl.h>

#include <string_view>

namespace shardkit::remote {

// The functions the transport calls: each member is the function curl.h declares as
// curl_<name>, resolved from the loaded library.
// clang-format off
#define SHARDKIT_CURL_FUNCTIONS(X)                                                           \
  X(global_init) X(easy_init) X(easy_cleanup) X(easy_reset) X(easy_setopt) X(easy_getinfo)   \
  X(easy_strerror) X(multi_init) X(multi_cleanup) X(multi_add_handle) X(multi_remove_handle) \
  X(multi_perform) X(multi_poll) X(multi_info_read) X(slist_append) X(slist_free_all)        \
  X(url) X(url_set) X(url_get) X(url_cleanup) X(free)
// clang-format on

struct CurlLibrary {
#define SHARDKIT_CURL_MEMBER(name) decltype(&::curl_##name) name = nullptr;
  SHARDKIT_CURL_FUNCTIONS(SHARDKIT_CURL_MEMBER)
#undef SHARDKIT_CURL_MEMBER
};

// The library, opened (and curl_global_init run) by the first call that succeeds; later calls
// return it at the cost of one load. Looked for as libcurl.so.4 (OpenSSL's build, then GnuTLS's),
// then as the file the build found. Throws Error (kUnsupported) naming `what` (the URL
// being read, for the message) and each place tried when none loads.
const CurlLibrary& curl(std::string_view what = {});

}  // namespace shardkit::remote
