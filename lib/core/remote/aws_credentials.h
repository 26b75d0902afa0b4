// S3 locations and credentials: s3://bucket/prefix read path-style from AWS_ENDPOINT_URL (or
// https://s3.REGION.amazonaws.com), keys from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN or else ~/.aws/credentials (profile AWS_PROFILE, default "default").
// The secret is only ever handed to libcurl; nothing here formats it into a message.
#pragma once

#include <string>

namespace shardkit::remote {

struct AwsSigning {
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // may be empty
  std::string region = "us-east-1";
};

struct S3Location {
  std::string bucket;
  std::string prefix;    // without leading or trailing '/'; may be empty
  std::string base_url;  // endpoint/bucket[/prefix], path-style
};

// Throws Error(kInvalidArgument, url) for a malformed s3:// URL.
S3Location parse_s3_location(const std::string& url);
// Throws Error(kInvalidArgument, url) when no credentials are found (saying where it looked).
AwsSigning load_aws_signing(const std::string& url);

}  // namespace shardkit::remote
