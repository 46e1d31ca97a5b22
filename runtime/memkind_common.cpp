#include "memkind.h"

namespace weft {

const char* memkind_name(MemKind k) {
  switch (k) {
    case MemKind::host: return "host";
    case MemKind::host_pinned: return "pinned host";
    case MemKind::cuda_device: return "cuda device";
    case MemKind::cuda_managed: return "cuda managed";
    case MemKind::unsupported_device: return "cuda device (this build has no CUDA support)";
  }
  return "?";
}

}  // namespace weft
