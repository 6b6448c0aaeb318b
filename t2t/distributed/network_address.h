// Which address a data-parallel worker listens on for its peers. Not the
// hostname's: in most containers and network namespaces it resolves to
// 127.0.0.1, which no other machine reaches.
#pragma once

#include <string>
#include <vector>

#include "t2t/distributed/communicator.h"

namespace t2t {

struct ListenAddress {
  std::vector<std::string> interfaces;  // GLOO_SOCKET_IFNAME's, when set
  std::string host;                     // else this address
  std::string said;                     // for messages
};

// GLOO_SOCKET_IFNAME (interfaces, comma-separated) when set, as PyTorch
// honours it; on one machine the loopback; else the local address through
// which MASTER_ADDR is reached. t2t::Error naming MASTER_ADDR or
// GLOO_SOCKET_IFNAME when there is none.
ListenAddress listen_address(const WorkerEnv& worker);

// This machine's name, for messages that say where a worker runs.
std::string host_name();

}  // namespace t2t
