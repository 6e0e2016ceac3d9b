"""NVML sampled every few ms on a thread, for one or more GPUs: SM clock, instantaneous and averaged
power, temperature and clock-event reasons, stamped with time.perf_counter (CLOCK_MONOTONIC, so
samples of another process on the same host share the axis). NVML through ctypes: no Python
binding needed.

As a program it logs the GPUs CUDA sees until SIGTERM or SIGINT, then writes its JSON:
  python3 nvml_sampler.py OUT.json [--period-ms 2]
"""
import argparse
import ctypes
import json
import os
import signal
import threading
import time


class FieldValue(ctypes.Structure):
    """nvmlFieldValue_t (nvml.h): the value is a union of 8 bytes read by valueType."""
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                ("value", ctypes.c_ulonglong)]


FI_POWER_AVERAGE, FI_POWER_INSTANT = 185, 186  # NVML_FI_DEV_POWER_AVERAGE / _INSTANT (mW)


def cuda_uuid(index):
    """The NVML UUID of CUDA device `index` (NVML ignores CUDA_VISIBLE_DEVICES)."""
    import torch
    return "GPU-" + str(torch.cuda.get_device_properties(index).uuid)


class Sampler:
    """One thread samples every GPU of `uuids` each `period_s`; rows[i] holds GPU i's samples."""
    COLUMNS = ("t_s", "sm_mhz", "power_instant_w", "power_average_w", "power_usage_w", "temp_c",
               "clock_event_reasons")

    def __init__(self, uuids, period_s=0.002):
        self.period = period_s
        self.nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if self.nvml.nvmlInit_v2() != 0:
            raise RuntimeError("nvmlInit failed")
        self.nvml.nvmlDeviceGetHandleByUUID.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        self.devs = []
        for u in uuids:
            d = ctypes.c_void_p()
            if self.nvml.nvmlDeviceGetHandleByUUID(u.encode(), ctypes.byref(d)) != 0:
                raise RuntimeError(f"no NVML device with UUID {u}")
            self.devs.append(d)
        self.rows = [[] for _ in self.devs]
        self.fields = (FieldValue * 2)()
        # Renamed from ...ClocksThrottleReasons in newer drivers; either answers the same bits.
        self.reasons_fn = getattr(self.nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            getattr(self.nvml, "nvmlDeviceGetCurrentClocksThrottleReasons")
        self.has_fields = self._read_fields(self.devs[0]) != (None, None)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _read_fields(self, dev):
        self.fields[0].fieldId, self.fields[1].fieldId = FI_POWER_INSTANT, FI_POWER_AVERAGE
        if self.nvml.nvmlDeviceGetFieldValues(dev, 2, self.fields) != 0:
            return None, None
        out = []
        for f in self.fields:
            if f.nvmlReturn != 0:
                out.append(None)
            elif f.valueType == 0:  # double
                out.append(ctypes.c_double.from_buffer_copy(ctypes.c_ulonglong(f.value)).value / 1e3)
            else:  # unsigned int / long: milliwatts
                out.append((f.value & 0xFFFFFFFF if f.valueType == 1 else f.value) / 1e3)
        return tuple(out)

    def _sample(self, dev):
        mhz, mw, temp, reasons = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_ulonglong()
        row = [round(time.perf_counter(), 5)]
        row.append(mhz.value if self.nvml.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(mhz)) == 0 else None)
        row += list(self._read_fields(dev) if self.has_fields else (None, None))
        row.append(mw.value / 1e3 if self.nvml.nvmlDeviceGetPowerUsage(dev, ctypes.byref(mw)) == 0 else None)
        row.append(temp.value if self.nvml.nvmlDeviceGetTemperature(dev, 0, ctypes.byref(temp)) == 0 else None)
        row.append(reasons.value if self.reasons_fn(dev, ctypes.byref(reasons)) == 0 else None)
        return row

    def _run(self):
        while not self.stop.is_set():
            t = time.perf_counter()
            for i, d in enumerate(self.devs):
                self.rows[i].append(self._sample(d))
            time.sleep(max(0.0, self.period - (time.perf_counter() - t)))

    def close(self):
        self.stop.set()
        self.thread.join()
        self.nvml.nvmlShutdown()


def write_json_atomic(path, obj, indent=None):
    """Writes obj as JSON to path through a temporary file: a killed run leaves no half file.
    Compact unless an indent is given."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=indent, separators=None if indent else (",", ":"))
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--period-ms", type=float, default=2.0)
    args = ap.parse_args()
    import torch
    uuids = [cuda_uuid(i) for i in range(torch.cuda.device_count())]
    s = Sampler(uuids, args.period_ms / 1e3)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    while not done.wait(0.5):
        pass
    s.close()
    out = {"schema_version": 1, "program": "kernels/torch/nvml_sampler.py", "period_ms": args.period_ms,
           "gpus": [{"cuda_index": i, "uuid": u, "samples": s.rows[i]} for i, u in enumerate(uuids)],
           "columns": list(Sampler.COLUMNS), "time_axis": "time.perf_counter (CLOCK_MONOTONIC) seconds"}
    write_json_atomic(args.out, out)


if __name__ == "__main__":
    main()
