// Which address a worker listens on for its peers. Not the hostname's,
// which in most containers resolves to 127.0.0.1.
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

// GLOO_SOCKET_IFNAME's interfaces when set; on one machine the loopback;
// else the local address that reaches MASTER_ADDR. t2t::Error naming the
// variable when there is none.
ListenAddress listen_address(const WorkerEnv& worker);

// This machine's name, for messages that say where a worker runs.
std::string host_name();

}  // namespace t2t
