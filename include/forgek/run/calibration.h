// Calibrated peaks kept in the store: measured once per (device, arch) by the worker, reused after.
#pragma once

#include <string>

#include "forgek/knowledge/store.h"
#include "forgek/protocol/worker_protocol.h"

namespace forgek {

// Converts between the worker's measured peaks and the store's device record.
DeviceRecord DeviceFromProbe(const ProbeResult& probe, const std::string& arch, const DevicePeaks& peaks);
bool PeaksFromDevice(const DeviceRecord& d, DevicePeaks* out);

// The peaks of `device` for `arch` calibrated earlier and kept in `store`; false when it has none.
bool StoredPeaks(Store& store, const std::string& device, const std::string& arch, DevicePeaks* out);

// Keeps peaks just measured on the probed device in `store`; a store that refuses them is logged,
// not fatal (the next command calibrates again).
void StorePeaks(Store& store, const ProbeResult& probe, const std::string& arch, const DevicePeaks& peaks);

}  // namespace forgek
