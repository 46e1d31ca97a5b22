/* A stand-in for libnvidia-ml.so.1 for the Topology tests: the GPUs at buses 18 and 2a are
 * joined by four NVLinks, as are those at 9a and ab (tests/data/topo_pcie_switches.json). Far
 * ends are reported as NVML does: an eight-digit domain, upper-case hex. */
#include <stdio.h>
#include <string.h>

enum { kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6 };
enum { kLanes = 4, kMaxLinks = 18 };

typedef struct {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
} PciInfo;

static const unsigned kBuses[] = {0x18, 0x2a, 0x9a, 0xab};
static int handles[4];

static unsigned peer_bus(unsigned bus) {
  switch (bus) {
    case 0x18: return 0x2a;
    case 0x2a: return 0x18;
    case 0x9a: return 0xab;
    default: return 0x9a;
  }
}

int nvmlInit_v2(void) { return kSuccess; }
int nvmlShutdown(void) { return kSuccess; }
const char* nvmlErrorString(int result) { return result == kSuccess ? "Success" : "Fake error"; }
int nvmlDeviceGetHandleByPciBusId_v2(const char* text, void** device) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (sscanf(text, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return kInvalidArgument;
  for (int i = 0; i < 4; ++i)
    if (kBuses[i] == bus && domain == 0 && dev == 0 && fn == 0) {
      *device = &handles[i];
      return kSuccess;
    }
  return kNotFound;
}
int nvmlDeviceGetNvLinkState(void* device, unsigned link, int* active) {
  if (!device) return kInvalidArgument;
  if (link >= kMaxLinks) return kInvalidArgument;
  if (link >= kLanes) return kNotSupported;
  *active = 1;
  return kSuccess;
}
int nvmlDeviceGetNvLinkRemoteDeviceType(void* device, unsigned link, int* type) {
  if (!device || link >= kLanes) return kNotSupported;
  *type = 0; /* a GPU */
  return kSuccess;
}
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* device, unsigned link, PciInfo* pci) {
  if (!device || link >= kLanes) return kNotSupported;
  const unsigned bus = peer_bus(kBuses[(int*)device - handles]);
  memset(pci, 0, sizeof *pci);
  pci->bus = bus;
  snprintf(pci->bus_id, sizeof pci->bus_id, "00000000:%02X:00.0", bus);
  snprintf(pci->bus_id_legacy, sizeof pci->bus_id_legacy, "0000:%02X:00.0", bus);
  return kSuccess;
}
