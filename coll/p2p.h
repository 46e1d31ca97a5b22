// Point-to-point helpers for collective algorithms: they use the communicator's collective
// context id, so they never match user messages.
#pragma once
#include "coll.h"
#include "pt2pt/tag.h"

namespace weft::coll {

enum CollTag : uint32_t { kTagBarrier = 1, kTagBcast, kTagReduce, kTagAllreduce };

inline Status send_to(CollContext& c, const void* buf, size_t bytes, int peer, uint32_t t) {
  return c.transport.send(buf, bytes, c.comm.world_rank(peer),
                          tag::make(c.comm.coll_context(), uint32_t(c.comm.rank), t),
                          SendMode::standard);
}

inline Status recv_from(CollContext& c, void* buf, size_t bytes, int peer, uint32_t t) {
  MatchInfo info;
  WEFT_TRY(c.transport.recv(buf, bytes, c.comm.world_rank(peer),
                            tag::make(c.comm.coll_context(), uint32_t(peer), t), ~0ull, &info));
  return Status::ok;
}

// Send to one peer while receiving from another (or the same) one.
inline Status sendrecv(CollContext& c, const void* sbuf, size_t sbytes, int dst, void* rbuf,
                       size_t rbytes, int src, uint32_t t) {
  Request sreq;
  WEFT_TRY(c.transport.isend(sbuf, sbytes, c.comm.world_rank(dst),
                             tag::make(c.comm.coll_context(), uint32_t(c.comm.rank), t),
                             SendMode::standard, &sreq));
  Status st = recv_from(c, rbuf, rbytes, src, t);
  if (!sreq.complete) c.transport.wait(&sreq);
  WEFT_TRY(st);
  return sreq.status.error;
}

}  // namespace weft::coll
