"""What every scripts/bench-* shares about the machine: the line it prints first (which CPU a table was measured on;
speed is quoted per CPU model) and the OpenBLAS kernel its NumPy and PyTorch peers run with."""
import datetime
import functools
import os
import platform
import subprocess

# OpenBLAS's x86-64 kernels from the oldest instruction set up, and what each needs of /proc/cpuinfo's flags.
_OPENBLAS_KERNELS = (
    ("Prescott", set()), ("Nehalem", {"sse4_2"}), ("Sandybridge", {"avx"}), ("Haswell", {"avx2", "fma"}),
    ("SkylakeX", {"avx512f", "avx512bw", "avx512vl", "avx512dq"}),
    ("Cooperlake", {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_bf16"}),
)


def cpu_model_and_flags():
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
    return model, flags


@functools.lru_cache(maxsize=None)
def openblas_kernel_env():
    """{"OPENBLAS_CORETYPE": kernel} where Debian's OpenBLAS reads the CPU as an older one than its flags allow (0.3.21
    takes an Intel Xeon of family 6 model 207 for Prescott, SSE3: 20 GFLOP/s of dgemm on 2 threads against 94 under
    Cooperlake's kernel), so that the peers run at their best; {} where its own choice is at least that."""
    probe = ("import ctypes, numpy; b = ctypes.CDLL('libblas.so.3'); b.openblas_get_corename.restype = ctypes.c_char_p;"
             " print(b.openblas_get_corename().decode())")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    try:
        detected = subprocess.run(["/usr/bin/python3", "-c", probe], capture_output=True, text=True, env=env,
                                  check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {}  # no NumPy on OpenBLAS: nothing to choose
    names = [name for name, _ in _OPENBLAS_KERNELS]
    flags = cpu_model_and_flags()[1]
    best = max(i for i, (_, needs) in enumerate(_OPENBLAS_KERNELS) if needs <= flags)
    if detected in names and names.index(detected) < best:
        return {"OPENBLAS_CORETYPE": names[best]}
    return {}


def cpu_line():
    """'CPU: <lscpu's model name> (avx512f avx512_bf16 amx_tile), 2 cores; 2026-11-29 06:10 UTC; load average 0.12',
    and the OpenBLAS kernel the peers are given where OpenBLAS would pick an older one."""
    model, flags = cpu_model_and_flags()
    simd = [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile") if f in flags]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    blas = openblas_kernel_env()
    forced = (f"; peers' OpenBLAS given OPENBLAS_CORETYPE={blas['OPENBLAS_CORETYPE']} (it reads this CPU as an older "
              "one)" if blas else "")
    return (f"CPU: {model} ({' '.join(simd) or 'no AVX2'}), {os.cpu_count()} cores; {now}; "
            f"load average {os.getloadavg()[0]:.2f}{forced}")
