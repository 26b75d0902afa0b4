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
class Nginx {
 public:
  Nginx(const std::filesystem::path& root, const std::filesystem::path& work)
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
                   "    location ~ ^/partly-denied/.*\\.shard$ { deny all; }\n"
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

 private:
  std::filesystem::path root_, work_;
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

class S3rver {
 public:
  explicit S3rver(const std::filesystem::path& dir) : dir_(dir), port_(free_port()) {
    std::filesystem::create_directories(dir_);
    process_.start({"/usr/bin/env", "node", s3rver_bin().string(), "-d", dir_.string(), "-a",
                    "127.0.0.1", "-p", std::to_string(port_), "--no-vhost-buckets", "--silent"},
                   port_, (dir_.parent_path() / "s3rver.log").string());
  }
  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::filesystem::path dir_;
  int port_;
  ServerProcess process_;
};

}  // namespace shardkit::testing
