#include "ucx_service.h"

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <set>

namespace weft {

namespace {

double seconds_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// What a UCX print function writes, as a string ("" when no stream could be opened).
template <typename Print>
bool printed(Print print, std::string* text) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (!f) return false;
  print(f);
  fclose(f);
  text->assign(buf, len);
  free(buf);
  return true;
}

// The distinct names a pattern's first group (joined with its second, when it has one) finds in
// text, in order of appearance, separated by spaces.
std::string distinct_names(const std::string& text, const std::regex& pattern, bool two_groups) {
  std::set<std::string> seen;
  std::string out;
  for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
    std::string name = two_groups ? std::string((*it)[1]) + "/" + std::string((*it)[2]) : std::string((*it)[1]);
    if (seen.insert(name).second) out += (out.empty() ? "" : " ") + name;
  }
  return out;
}

}  // namespace

ucs_status_t UcxService::create(const UcxOptions& options, std::unique_ptr<UcxService>* out, const char** failed) {
  ucp_config_t* config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
  if (st != UCS_OK) {
    *failed = "ucp_config_read";
    return st;
  }
  for (const auto& [name, value] : options.settings) (void)ucp_config_modify(config, name.c_str(), value.c_str());
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = options.features;
  params.mt_workers_shared = 0;
  if (options.estimated_endpoints) {
    params.field_mask |= UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
    params.estimated_num_eps = options.estimated_endpoints;
  }
  if (options.estimated_processes_per_node) {
    params.field_mask |= UCP_PARAM_FIELD_ESTIMATED_NUM_PPN;
    params.estimated_num_ppn = options.estimated_processes_per_node;
  }
  std::unique_ptr<UcxService> s(new UcxService());
  st = ucp_init(&params, config, &s->context_);
  ucp_config_release(config);
  if (st != UCS_OK) {
    *failed = "ucp_init";
    return st;
  }
  ucp_worker_params_t wparams{};
  wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wparams.thread_mode = options.thread_mode;
  st = ucp_worker_create(s->context_, &wparams, &s->worker_);
  if (st != UCS_OK) {
    *failed = "ucp_worker_create";
    return st;
  }
  *out = std::move(s);
  return UCS_OK;
}

UcxService::~UcxService() {
  if (worker_) ucp_worker_destroy(worker_);
  if (context_) ucp_cleanup(context_);
}

ucs_status_t UcxService::address(std::vector<unsigned char>* out) const {
  ucp_address_t* address = nullptr;
  size_t length = 0;
  const ucs_status_t st = ucp_worker_get_address(worker_, &address, &length);
  if (st != UCS_OK) return st;
  const auto* bytes = reinterpret_cast<const unsigned char*>(address);
  out->assign(bytes, bytes + length);
  ucp_worker_release_address(worker_, address);
  return UCS_OK;
}

ucs_status_t UcxService::connect(const void* address, bool peer_errors, ucp_err_handler_cb_t on_error, void* arg,
                                 ucp_ep_h* out) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = static_cast<const ucp_address_t*>(address);
  params.err_mode = peer_errors ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  if (on_error) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_handler.cb = on_error;
    params.err_handler.arg = arg;
  }
  ucp_ep_h ep = nullptr;
  const ucs_status_t st = ucp_ep_create(worker_, &params, &ep);
  if (st == UCS_OK) *out = ep;
  return st;
}

ucs_status_ptr_t UcxService::close(ucp_ep_h ep, bool force) {
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  return ucp_ep_close_nbx(ep, &p);
}

void UcxService::wait(ucs_status_ptr_t request, double limit_s) {
  if (!UCS_PTR_IS_PTR(request)) return;
  const bool limited = limit_s != std::numeric_limits<double>::infinity();
  const double end = limited ? seconds_now() + limit_s : 0;
  while (ucp_request_check_status(request) == UCS_INPROGRESS && (!limited || seconds_now() < end))
    ucp_worker_progress(worker_);
  ucp_request_free(request);
}

ucs_status_t UcxService::map(void* base, size_t bytes, ucp_mem_h* memh, std::vector<unsigned char>* rkey,
                             const char** failed) {
  ucp_mem_map_params_t mp{};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  mp.address = base;
  mp.length = bytes ? bytes : 1;
  ucp_mem_h h = nullptr;
  ucs_status_t st = ucp_mem_map(context_, &mp, &h);
  if (st != UCS_OK) {
    *failed = "ucp_mem_map";
    return st;
  }
  void* packed = nullptr;
  size_t len = 0;
  st = ucp_rkey_pack(context_, h, &packed, &len);
  if (st != UCS_OK) {
    (void)ucp_mem_unmap(context_, h);
    *failed = "ucp_rkey_pack";
    return st;
  }
  rkey->assign(static_cast<unsigned char*>(packed), static_cast<unsigned char*>(packed) + len);
  ucp_rkey_buffer_release(packed);
  *memh = h;
  return UCS_OK;
}

void UcxService::unmap(ucp_mem_h memh) {
  if (memh) (void)ucp_mem_unmap(context_, memh);
}

ucs_status_t UcxService::unpack_rkey(ucp_ep_h ep, const void* packed, ucp_rkey_h* out) {
  ucp_rkey_h k = nullptr;
  const ucs_status_t st = ucp_ep_rkey_unpack(ep, packed, &k);
  if (st == UCS_OK) *out = k;
  return st;
}

void UcxService::destroy_rkey(ucp_rkey_h rkey) {
  if (rkey) ucp_rkey_destroy(rkey);
}

ucs_status_t UcxService::set_am_handler(unsigned id, ucp_am_recv_callback_t handler, void* arg) {
  ucp_am_handler_param_t hp{};
  hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  hp.id = id;
  hp.cb = handler;
  hp.arg = arg;
  return ucp_worker_set_am_recv_handler(worker_, &hp);
}

ucs_status_t UcxService::event_fd(int* fd) { return ucp_worker_get_efd(worker_, fd); }

std::string UcxService::endpoint_transports(ucp_ep_h ep) {
  std::string text;
  if (!printed([&](FILE* f) { ucp_ep_print_info(ep, f); }, &text)) return "?";
  // Lines look like "lane[0]:  8:posix/memory.0 md[4] ...": collect the transport/device names.
  static const std::regex lane(R"(lane\[\d+\]:\s+\d+:([A-Za-z0-9_]+/[A-Za-z0-9_:\-]+))");
  const std::string out = distinct_names(text, lane, false);
  return out.empty() ? "(none reported)" : out;
}

std::string UcxService::context_transports() const {
  std::string text;
  (void)printed([&](FILE* f) { ucp_context_print_info(context_, f); }, &text);
  // "#     md 3  :  component 3  posix" and "#      resource 2  :  md 2  dev 0  flags -- posix/memory"
  static const std::regex resource(R"(flags\s+\S+\s+([A-Za-z0-9_]+)/([A-Za-z0-9_:\-\.]+))");
  const std::string out = distinct_names(text, resource, true);
  return out.empty() ? "(none)" : out;
}

}  // namespace weft
