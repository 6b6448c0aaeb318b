#include "t2t/distributed/network_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "t2t/core/error.h"

namespace t2t {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// The local address the kernel routes to `host` from (a UDP socket's
// connect sends nothing). Throws t2t::Error naming MASTER_ADDR when it
// does not resolve or no route leads there.
std::string local_address_towards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found)
    throw Error("MASTER_ADDR=" + host + " does not resolve to an address");
  std::string out;
  for (addrinfo* ai = found; ai && out.empty(); ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, SOCK_DGRAM, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    char text[INET6_ADDRSTRLEN] = {0};
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      const void* where = local.ss_family == AF_INET
                              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
                              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
      if (::inet_ntop(local.ss_family, where, text, sizeof(text))) out = text;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (out.empty())
    throw Error("no network route from this machine to MASTER_ADDR=" + host +
                "; set GLOO_SOCKET_IFNAME to the interface the workers reach each other through");
  return out;
}

}  // namespace

ListenAddress listen_address(const WorkerEnv& worker) {
  ListenAddress a;
  if (auto names = env("GLOO_SOCKET_IFNAME")) {
    std::string item;
    for (size_t i = 0; i <= names->size(); ++i) {
      if (i == names->size() || (*names)[i] == ',') {
        if (!item.empty()) a.interfaces.push_back(item);
        item.clear();
      } else {
        item += (*names)[i];
      }
    }
    a.said = "GLOO_SOCKET_IFNAME=" + *names;
    if (!a.interfaces.empty()) return a;
  }
  if (worker.master_addr == "127.0.0.1" || worker.master_addr == "localhost") {
    a.host = "127.0.0.1";
    a.said = "127.0.0.1 (MASTER_ADDR is this machine's loopback)";
    return a;
  }
  a.host = local_address_towards(worker.master_addr, worker.master_port);
  a.said = a.host + " (the address through which this machine reaches MASTER_ADDR=" +
           worker.master_addr + ")";
  return a;
}

std::string host_name() {
  char name[256] = {0};
  if (::gethostname(name, sizeof(name) - 1) != 0 || !*name) return "?";
  return name;
}

}  // namespace t2t
