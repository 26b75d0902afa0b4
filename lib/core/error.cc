#include "core/error.h"

#include "core/location.h"

namespace shardkit {
namespace {

std::string compose(const std::string& file, const std::string& what,
                    std::optional<uint64_t> block) {
  std::string s;
  if (!file.empty()) s += file;
  if (block) s += (s.empty() ? "block " : ": block ") + std::to_string(*block);
  if (!s.empty()) s += ": ";
  return s + what;
}

}  // namespace

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kCorrupt:
      return "corrupt";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kExists:
      return "exists";
    case ErrorCode::kInput:
      return "input";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

// A URL's password or signed query never reaches a message, whoever built its text. Each part is
// redacted once, and the message made from the results.
Error::Error(ErrorCode code, std::string file, std::string what, std::optional<uint64_t> block)
    : Error(code, Redacted{without_secrets(file), without_secrets(what)}, block) {}

Error::Error(ErrorCode code, Redacted r, std::optional<uint64_t> block)
    : std::runtime_error(compose(r.file, r.what, block)),
      code_(code),
      file_(std::move(r.file)),
      reason_(std::move(r.what)),
      block_(block) {}

}  // namespace shardkit
