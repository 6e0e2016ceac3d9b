"""Shared helpers of the PyTorch measurements: provenance and CUDA-event timing."""
import datetime
import os
import platform
import statistics
import subprocess

import torch


def provenance(program):
    """Who/what/where of a run: GPU, driver, CUDA, torch, host, UTC date, git commit."""
    p = torch.cuda.get_device_properties(0)
    driver = None
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,power.limit",
                                 "--format=csv,noheader"], capture_output=True, text=True,
                                timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001 - provenance is best effort
        driver = f"nvidia-smi failed: {e}"
    return {
        "program": program,
        "host": platform.node(),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        # The device machine receives a copy without .git: the commit comes from the caller.
        "git_commit": os.environ.get("CS_GIT_COMMIT", "unknown"),
        "gpu": {"name": p.name, "sm_count": p.multi_processor_count, "memory_bytes": p.total_memory,
                "compute_capability": f"{p.major}.{p.minor}",
                "l2_bytes": getattr(p, "L2_cache_size", None)},
        "nvidia_smi_driver_maxsmclock_powerlimit": driver,
        "torch_version": torch.__version__,
        "cuda_runtime_version": torch.version.cuda,
        "cudnn_version": torch.backends.cudnn.version(),
        "python": platform.python_version(),
    }


def time_cuda(fn, warmup=5, runs=25):
    """Median, p10, p90 and min (ms) of `runs` calls of fn, each between two CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(runs):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    q = statistics.quantiles(ts, n=10)
    return {"median_ms": statistics.median(ts), "p10_ms": q[0], "p90_ms": q[-1], "min_ms": ts[0],
            "runs": runs}
