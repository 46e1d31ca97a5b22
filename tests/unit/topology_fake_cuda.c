/* A stand-in for libcuda.so.1 for the Topology tests: four GPUs at the bus ids of
 * tests/data/topo_pcie_switches.json, numbered in another order than the bus order (as
 * CUDA_DEVICE_ORDER=FASTEST_FIRST may), with peer access inside each PCIe switch and across
 * the pairs (0,2) and (1,3) of bus order, and one pair whose access goes one way only. */
#include <stdio.h>
#include <string.h>

enum { kDevices = 4, kSuccess = 0, kInvalidDevice = 101, kInvalidValue = 1 };
/* ordinal -> bus: bus order 18, 2a, 9a, ab is ordinal 2, 3, 0, 1. */
static const char* const kBus[kDevices] = {"0000:9A:00.0", "0000:AB:00.0", "0000:18:00.0", "0000:2A:00.0"};

static int access_between(int a, int b) {
  if ((a == 0 && b == 1) || (a == 1 && b == 0) || (a == 2 && b == 3) || (a == 3 && b == 2)) return 1; /* a switch */
  if ((a == 2 && b == 0) || (a == 0 && b == 2) || (a == 3 && b == 1) || (a == 1 && b == 3)) return 1; /* across */
  return a == 0 && b == 3; /* one way only */
}

static int same_switch(int a, int b) { return a / 2 == b / 2; }

int cuInit(unsigned flags) { return flags == 0 ? kSuccess : kInvalidValue; }
int cuDeviceGetCount(int* count) {
  *count = kDevices;
  return kSuccess;
}
int cuDeviceGet(int* device, int ordinal) {
  if (ordinal < 0 || ordinal >= kDevices) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}
int cuDeviceGetPCIBusId(char* bus, int len, int device) {
  if (device < 0 || device >= kDevices) return kInvalidDevice;
  snprintf(bus, (size_t)len, "%s", kBus[device]);
  return kSuccess;
}
int cuDeviceCanAccessPeer(int* can, int device, int peer) {
  *can = access_between(device, peer);
  return kSuccess;
}
int cuDeviceGetP2PAttribute(int* value, int attribute, int src, int dst) {
  if (src < 0 || src >= kDevices || dst < 0 || dst >= kDevices || src == dst) return kInvalidDevice;
  switch (attribute) {
    case 0x01: *value = same_switch(src, dst) ? 0 : 1; return kSuccess; /* performance rank */
    case 0x02: *value = access_between(src, dst); return kSuccess;      /* access supported */
    default: return kInvalidValue;
  }
}
int cuGetErrorString(int error, const char** text) {
  *text = error == kSuccess ? "no error" : "fake error";
  return kSuccess;
}
