// Calls on a user's stream (stream.h) in a build without CUDA: there are no GPU streams.
#include "runtime/log.h"
#include "stream.h"

namespace weft {

namespace {
Status no_cuda() {
  set_error_detail("not supported: weft was built without CUDA");
  return Status::not_supported;
}
}  // namespace

bool stream_valid(void*, std::string* why) {
  *why = "weft was built without CUDA";
  return false;
}
Status stream_host_fallback(void*, const char*, const char*, const std::string&, bool) { return no_cuda(); }
bool stream_capturing(void*) { return false; }
Status stream_copy(void*, void*, const void*, size_t) { return no_cuda(); }
void stream_drain(const UserStream&) {}

}  // namespace weft
