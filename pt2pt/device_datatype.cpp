#include "device_datatype.h"

#include "runtime/device_staging.h"

namespace weft {

namespace {

void* start_pack(void*, const void* buffer, size_t) {
  auto* s = static_cast<DeviceStaging*>(const_cast<void*>(buffer));
  device_staging_start(s);
  return s;
}

void* start_unpack(void*, void* buffer, size_t) {
  auto* s = static_cast<DeviceStaging*>(buffer);
  device_staging_start(s);
  return s;
}

size_t packed_size(void* state) { return device_staging_size(static_cast<DeviceStaging*>(state)); }

size_t pack(void* state, size_t offset, void* dest, size_t max_length) {
  return device_staging_pack(static_cast<DeviceStaging*>(state), offset, dest, max_length);
}

ucs_status_t unpack(void* state, size_t offset, const void* src, size_t length) {
  device_staging_unpack(static_cast<DeviceStaging*>(state), offset, src, length);
  return UCS_OK;  // a failed copy is reported when the request completes (end_device_staging)
}

void finish(void* state) { device_staging_finish(static_cast<DeviceStaging*>(state)); }

ucp_generic_dt_ops_t ops = {start_pack, start_unpack, packed_size, pack, unpack, finish};

}  // namespace

ucs_status_t device_datatype_create(ucp_datatype_t* out) { return ucp_dt_create_generic(&ops, nullptr, out); }

void end_device_staging(Request* r) {
  if (!r->device_staging) [[likely]] return;
  const Status s = device_staging_end(static_cast<DeviceStaging*>(r->device_staging));
  r->device_staging = nullptr;
  if (s != Status::ok && !r->status.cancelled && r->status.error == Status::ok) r->status.error = s;
}

}  // namespace weft
