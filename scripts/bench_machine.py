"""The line every scripts/bench-* prints first: which CPU a table was measured on (speed is quoted per CPU model)."""
import datetime
import os
import platform


def cpu_line():
    """'CPU: <lscpu's model name> (x86-64 level: avx512f avx512_bf16 amx_tile), 2 cores; 2026-11-29 06:10 UTC; load 0.12'."""
    model, flags = platform.processor() or "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    simd = [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile") if f in flags]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"CPU: {model} ({' '.join(simd) or 'no AVX2'}), {os.cpu_count()} cores; {now}; "
            f"load average {os.getloadavg()[0]:.2f}")
