// Real servers on 127.0.0.1 for the remote-dataset tests, started and stopped by PID: nginx
// (Debian nginx-light) and s3rver (npm, tests/servers). A server that cannot start fails the
// test with its log, so CI never passes by skipping.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../reliability/process_util.h"
#include "test_util.h"

namespace shardkit::testing {

// A port the kernel just handed out and released.
inline int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

inline bool port_open(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// A server process started from argv, ready once its port accepts connections.
class ServerProcess {
 public:
  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess() { stop(); }

  void start(const std::vector<std::string>& argv, int port, const std::string& log) {
    log_ = log;
    pid_ = reliability::spawn(argv, log);
    for (int i = 0; i < 400 && !port_open(port); ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("server " + argv[0] + " exited at start: " + read_file(log));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    if (!port_open(port)) throw std::runtime_error("server " + argv[0] + " did not listen");
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    reliability::wait_for(pid_);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string log_;
};

// nginx serving `root` at http://127.0.0.1:PORT/, all state under `work`. Paths under
// /denied/ answer 403, and shard files under /partly-denied/ too (the manifest stays readable).
// `locations` adds nginx directives to the server block (e.g. redirects).
class Nginx {
 public:
  Nginx(const std::filesystem::path& root, const std::filesystem::path& work,
        const std::string& locations = "")
      : root_(root), work_(work), port_(free_port()) {
    std::filesystem::create_directories(work_);
    const std::string w = work_.string();
    write_file(work_ / "nginx.conf",
               "worker_processes 1;\n"
               "user root;\n"
               "pid " +
                   w +
                   "/nginx.pid;\n"
                   "error_log " +
                   w +
                   "/error.log;\n"
                   "events { worker_connections 512; }\n"
                   "http {\n"
                   "  access_log " +
                   w +
                   "/access.log;\n"
                   "  client_body_temp_path " +
                   w +
                   "/client_body;\n"
                   "  proxy_temp_path " +
                   w +
                   "/proxy;\n"
                   "  fastcgi_temp_path " +
                   w +
                   "/fastcgi;\n"
                   "  uwsgi_temp_path " +
                   w +
                   "/uwsgi;\n"
                   "  scgi_temp_path " +
                   w +
                   "/scgi;\n"
                   "  keepalive_requests 1000000;\n"
                   "  sendfile on;\n"
                   "  server {\n"
                   "    listen 127.0.0.1:" +
                   std::to_string(port_) +
                   ";\n"
                   "    root " +
                   root_.string() +
                   ";\n"
                   "    location /denied/ { deny all; }\n"
                   "    location ~ ^/partly-denied/.*\\.shard$ { deny all; }\n" +
                   locations +
                   "  }\n"
                   "}\n");
    start();
  }
  void start() {
    process_.start({"/usr/sbin/nginx", "-c", (work_ / "nginx.conf").string(), "-e",
                    (work_ / "error.log").string(), "-g", "daemon off;"},
                   port_, (work_ / "stdout.log").string());
  }
  void stop() { process_.stop(); }
  int port() const { return port_; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  // Range requests nginx answered so far (from its access log).
  size_t logged_requests() const {
    const std::string log = read_file(work_ / "access.log");
    size_t n = 0;
    for (char c : log) n += c == '\n';
    return n;
  }
  // The access log's lines that contain `text`.
  size_t logged_requests(const std::string& text) const {
    size_t n = 0;
    for (const std::string& line : split_lines(read_file(work_ / "access.log")))
      n += line.find(text) != std::string::npos;
    return n;
  }
  // The same, once there are at least `expected` of them or 2 s have passed: nginx logs a
  // request after its response has gone out, so a client may be done before the line is there.
  size_t logged_requests(const std::string& text, size_t expected) const {
    size_t n = logged_requests(text);
    for (int i = 0; i < 200 && n < expected; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      n = logged_requests(text);
    }
    return n;
  }

 private:
  std::filesystem::path root_, work_;
  int port_;
  ServerProcess process_;
};

// tests/servers/fault_server.py: files from `root` (or a proxy to 127.0.0.1:`upstream`) that
// misbehaves where `rules` say (JSON, see the script), and with `sigv4` keys
// ("ACCESS:SECRET[:TOKEN]") refuses every request not signed by one of them, as S3 does.
class FaultServer {
 public:
  struct Options {
    std::filesystem::path root;
    int upstream = 0;
    std::vector<std::string> rules;
    std::vector<std::string> sigv4;
  };
  // One logged request (the script's log line).
  struct Request {
    double time = 0;  // seconds, the server's monotonic clock
    std::string method, path, range, action, credentials;
  };

  FaultServer(const std::filesystem::path& work, const Options& o)
      : log_(work / "fault_server.log"), port_(free_port()) {
    std::filesystem::create_directories(work);
    std::vector<std::string> argv = {
        "/usr/bin/python3",
        (std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests/servers/fault_server.py").string(),
        "--port",
        std::to_string(port_),
        "--log",
        log_.string()};
    if (o.upstream)
      argv.insert(argv.end(), {"--upstream", std::to_string(o.upstream)});
    else
      argv.insert(argv.end(), {"--root", o.root.string()});
    for (const std::string& r : o.rules) argv.insert(argv.end(), {"--rule", r});
    for (const std::string& k : o.sigv4) argv.insert(argv.end(), {"--sigv4", k});
    process_.start(argv, port_, (work / "fault_server.out").string());
  }
  int port() const { return port_; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  std::vector<Request> requests() const {
    std::vector<Request> out;
    for (const std::string& line : split_lines(read_file(log_))) {
      std::vector<std::string> f;
      for (size_t at = 0;;) {
        const size_t tab = line.find('\t', at);
        f.push_back(line.substr(at, tab - at));
        if (tab == std::string::npos) break;
        at = tab + 1;
      }
      if (f.size() == 6) out.push_back({std::stod(f[0]), f[1], f[2], f[3], f[4], f[5]});
    }
    return out;
  }
  // Requests whose path contains `text`.
  std::vector<Request> requests(const std::string& text) const {
    std::vector<Request> out;
    for (const Request& r : requests())
      if (r.path.find(text) != std::string::npos) out.push_back(r);
    return out;
  }

 private:
  std::filesystem::path log_;
  int port_;
  ServerProcess process_;
};

// The s3rver binary installed by `npm install` in tests/servers.
inline std::filesystem::path s3rver_bin() {
  return std::filesystem::path(SHARDKIT_SOURCE_DIR) / "tests/servers/node_modules/.bin/s3rver";
}

// A curl command line (an S3 client independent of shardkit's requests) signed with s3rver's
// keys; `args` are curl's further arguments (URL, -T FILE, -X PUT, ...).
inline std::string s3rver_curl(const std::string& args) {
  return "curl -sS -f --aws-sigv4 'aws:amz:us-east-1:s3' --user S3RVER:S3RVER "
         "-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' " +
         args;
}

// Keys a SigV4-verifying proxy accepts besides s3rver's S3RVER:S3RVER ("ACCESS:SECRET[:TOKEN]").
struct SigV4Keys {
  std::vector<std::string> extra;
};

// s3rver on 127.0.0.1. s3rver accepts any SigV4 signature; with `verify`, clients reach it
// through fault_server.py as a proxy that refuses every request not signed by one of the keys,
// with S3's 403 error codes (the tests); without, directly (the benchmarks).
class S3rver {
 public:
  explicit S3rver(const std::filesystem::path& dir, std::optional<SigV4Keys> verify = {})
      : dir_(dir), port_(free_port()) {
    std::filesystem::create_directories(dir_);
    process_.start({"/usr/bin/env", "node", s3rver_bin().string(), "-d", dir_.string(), "-a",
                    "127.0.0.1", "-p", std::to_string(port_), "--no-vhost-buckets", "--silent"},
                   port_, (dir_.parent_path() / "s3rver.log").string());
    if (!verify) return;
    verify->extra.push_back("S3RVER:S3RVER");
    proxy_ = std::make_unique<FaultServer>(dir_.parent_path() / "sigv4-proxy",
                                           FaultServer::Options{{}, port_, {}, verify->extra});
  }
  int port() const { return proxy_ ? proxy_->port() : port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port()); }

 private:
  std::filesystem::path dir_;
  int port_;  // s3rver's own
  ServerProcess process_;
  std::unique_ptr<FaultServer> proxy_;
};

}  // namespace shardkit::testing
