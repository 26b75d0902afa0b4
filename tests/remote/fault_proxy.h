// A TCP proxy on 127.0.0.1 between a reader and a real server that misbehaves on purpose: it
// drops connections in the middle of responses, delays them, and flips bytes in response
// bodies, at chosen rates, counting what it did. Requests pass through unchanged.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace shardkit::testing {

struct Faults {
  double drop = 0;   // per response chunk: close both connections
  double delay = 0;  // per response chunk: wait delay_ms first
  double flip = 0;   // per response chunk: flip one body byte
  int delay_ms = 30;
  uint64_t seed = 1;
};

class FaultProxy {
 public:
  FaultProxy(int upstream_port, Faults faults) : upstream_(upstream_port), faults_(faults) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listener_, 64);
    socklen_t len = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FaultProxy() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    acceptor_.join();
    {
      std::lock_guard lock(mu_);
      for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : workers_) t.join();
    for (int fd : open_) ::close(fd);
  }
  int port() const { return port_; }

  std::atomic<uint64_t> connections{0}, drops{0}, delays{0}, flips{0};

 private:
  void accept_loop() {
    for (uint64_t n = 0;; ++n) {
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) return;
      if (stopping_) {
        ::close(client);
        return;
      }
      ++connections;
      const int server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(upstream_));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(server);
        ::close(client);
        continue;
      }
      std::lock_guard lock(mu_);
      open_.push_back(client);
      open_.push_back(server);
      workers_.emplace_back([client, server] { pump(server, client); });  // requests
      workers_.emplace_back([this, client, server, n] { pump_faulty(client, server, n); });
    }
  }

  static void pump(int to, int from) {
    char buf[16384];
    for (;;) {
      const ssize_t n = ::recv(from, buf, sizeof buf, 0);
      if (n <= 0 || ::send(to, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) break;
    }
    ::shutdown(to, SHUT_RDWR);
    ::shutdown(from, SHUT_RDWR);
  }

  void pump_faulty(int client, int server, uint64_t connection) {
    std::mt19937_64 rng(faults_.seed * 1000003 + connection);
    std::uniform_real_distribution<double> u(0, 1);
    char buf[16384];
    for (;;) {
      const ssize_t n = ::recv(server, buf, sizeof buf, 0);
      if (n <= 0) break;
      if (u(rng) < faults_.drop) {
        ++drops;
        // Part of the chunk goes out first: the reader sees a response cut short.
        ::send(client, buf, static_cast<size_t>(n) / 2, MSG_NOSIGNAL);
        break;
      }
      if (u(rng) < faults_.delay) {
        ++delays;
        std::this_thread::sleep_for(std::chrono::milliseconds(faults_.delay_ms));
      }
      if (u(rng) < faults_.flip) {
        // Only after the headers when the chunk holds them: a body byte changes.
        const std::string_view view(buf, static_cast<size_t>(n));
        const size_t header_end = view.find("\r\n\r\n");
        const size_t from = header_end == std::string_view::npos
                                ? (view.rfind("HTTP/1.1", 0) == 0 ? view.size() : 0)
                                : header_end + 4;
        if (from < view.size()) {
          buf[from + rng() % (view.size() - from)] ^= 0x20;
          ++flips;
        }
      }
      if (::send(client, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) break;
    }
    ::shutdown(client, SHUT_RDWR);
    ::shutdown(server, SHUT_RDWR);
  }

  int upstream_;
  Faults faults_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> open_;
  std::vector<std::thread> workers_;
};

}  // namespace shardkit::testing
