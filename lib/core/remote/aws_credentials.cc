#include "core/remote/aws_credentials.h"

#include <cstdlib>
#include <fstream>

#include "core/error.h"

namespace shardkit::remote {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// The keys of one profile of an AWS credentials file (INI).
void read_profile(const std::string& path, const std::string& profile, AwsSigning& out) {
  std::ifstream in(path);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      inside = trim(line.substr(1, line.size() - 2)) == profile;
      continue;
    }
    const auto eq = line.find('=');
    if (!inside || eq == std::string::npos) continue;
    const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    if (key == "aws_access_key_id") out.access_key = value;
    if (key == "aws_secret_access_key") out.secret_key = value;
    if (key == "aws_session_token") out.session_token = value;
    if (key == "region") out.region = value;
  }
}

}  // namespace

S3Location parse_s3_location(const std::string& url) {
  const std::string rest = url.substr(5);  // after "s3://"
  const auto slash = rest.find('/');
  S3Location loc;
  loc.bucket = rest.substr(0, slash);
  if (slash != std::string::npos) loc.prefix = rest.substr(slash + 1);
  while (!loc.prefix.empty() && loc.prefix.back() == '/') loc.prefix.pop_back();
  if (loc.bucket.empty() || loc.bucket.find_first_of(":@?#") != std::string::npos)
    throw Error(ErrorCode::kInvalidArgument, url, "expected s3://bucket/prefix");
  std::string endpoint = env("AWS_ENDPOINT_URL_S3");
  if (endpoint.empty()) endpoint = env("AWS_ENDPOINT_URL");
  if (endpoint.empty()) {
    std::string region = env("AWS_REGION");
    if (region.empty()) region = env("AWS_DEFAULT_REGION");
    if (region.empty()) region = "us-east-1";
    endpoint = "https://s3." + region + ".amazonaws.com";
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  loc.base_url = endpoint + "/" + loc.bucket + (loc.prefix.empty() ? "" : "/" + loc.prefix);
  return loc;
}

AwsSigning load_aws_signing(const std::string& url) {
  AwsSigning s;
  s.access_key = env("AWS_ACCESS_KEY_ID");
  s.secret_key = env("AWS_SECRET_ACCESS_KEY");
  s.session_token = env("AWS_SESSION_TOKEN");
  std::string file = env("AWS_SHARED_CREDENTIALS_FILE");
  if (file.empty() && !env("HOME").empty()) file = env("HOME") + "/.aws/credentials";
  if (s.access_key.empty() || s.secret_key.empty()) {
    AwsSigning from_file;
    std::string profile = env("AWS_PROFILE");
    if (!file.empty()) read_profile(file, profile.empty() ? "default" : profile, from_file);
    s.access_key = from_file.access_key;
    s.secret_key = from_file.secret_key;
    s.session_token = from_file.session_token;
    if (!from_file.region.empty()) s.region = from_file.region;
  }
  if (s.access_key.empty() || s.secret_key.empty())
    throw Error(ErrorCode::kInvalidArgument, url,
                "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add "
                "them to " +
                    (file.empty() ? std::string("~/.aws/credentials") : file));
  std::string region = env("AWS_REGION");
  if (region.empty()) region = env("AWS_DEFAULT_REGION");
  if (!region.empty()) s.region = region;
  return s;
}

}  // namespace shardkit::remote
