// UCX helpers shared by the KV agent's files.
#pragma once
#include <ucp/api/ucp.h>

namespace weft::kv {

// Whether a UCX status means the peer is gone.
bool peer_lost(int status);
// Logs what failed and returns WEFT_KV_ERR_PEER or WEFT_KV_ERR_TRANSPORT.
int ucx_error(const char* what, int status);

}  // namespace weft::kv
