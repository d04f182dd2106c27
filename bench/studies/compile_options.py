#!/usr/bin/env python3
# Whether an NVRTC option makes a heavy kernel's compile cheaper without
# changing the code that runs: N configurations of a T1 file compiled with
# ktune's NVRTC options (-arch, -std, the values as -D defines,
# --ptxas-options=-v, --no-cache, the CUDA include folders; what
# Compiler::nvrtc_arguments passes) and again with each extra option. Per
# compile: wall and CPU seconds (getrusage of this process, NVRTC's threads
# included) and the cubin's SHA-256, compared byte for byte (nothing
# stripped) with the baseline's of the same configuration.
#
#   bench/studies/compile_options.py T1.json N SEED [ARCH] [--extra OPT]...
#
# e.g. python3 bench/studies/compile_options.py HUB/convolution_milo.json 6 22 sm_90 \
#        --extra=-Ofast-compile=min --extra=-Ofast-compile=mid --extra=-Ofast-compile=max --extra=-split-compile=0
import ctypes, hashlib, itertools, json, os, random, resource, sys, time

args = [a for a in sys.argv[1:] if not a.startswith("--extra=")]
extras = [a[len("--extra="):] for a in sys.argv[1:] if a.startswith("--extra=")]
t1, n, seed = args[0], int(args[1]), int(args[2])
arch = args[3] if len(args) > 3 else "sm_90"
cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
nvrtc = ctypes.CDLL(os.path.join(cuda, "lib64", "libnvrtc.so"))

spec = json.load(open(t1))
params = spec["ConfigurationSpace"]["TuningParameters"]
names = [p["Name"] for p in params]
conds = [c["Expression"] for c in spec["ConfigurationSpace"].get("Conditions", [])]
configs = []
for values in itertools.product(*[eval(p["Values"]) for p in params]):
    env = dict(zip(names, values))
    if all(eval(c, {}, env) for c in conds):
        configs.append(env)
random.seed(seed)
configs = random.sample(configs, n)
ks = spec["KernelSpecification"]
source = open(os.path.join(os.path.dirname(t1), ks["KernelFile"]), "rb").read()
std = [o for o in ks.get("CompilerOptions", []) if o.startswith("-std=")] or ["-std=c++17"]
base = [f"-arch={arch}", std[0], "--ptxas-options=-v", f"-I{os.path.dirname(os.path.abspath(t1))}",
        f"-I{cuda}/include", f"-I{cuda}/include/cccl", "--no-cache"]


def compile_once(defines, extra):
    prog = ctypes.c_void_p()
    rc = nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source, ks["KernelFile"].encode(), 0, None, None)
    assert rc == 0, rc
    opts = base + [f"-D{k}={v}" for k, v in defines.items()] + ([extra] if extra else [])
    argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    rc = nvrtc.nvrtcCompileProgram(prog, len(opts), argv)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    digest = None
    if rc == 0:
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetCUBIN(prog, buf)
        digest = hashlib.sha256(buf.raw[: size.value]).hexdigest()
    else:
        log_size = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(log_size))
        log = ctypes.create_string_buffer(log_size.value)
        nvrtc.nvrtcGetProgramLog(prog, log)
        print(f"# {extra or 'baseline'} failed: {log.value.decode(errors='replace')[:300]}", file=sys.stderr)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return wall, cpu, digest


variants = [""] + extras
rows = {v: [] for v in variants}
print("config\tvariant\twall_s\tcpu_s\tsame_cubin")
for cfg in configs:
    key = ",".join(f"{k}={v}" for k, v in cfg.items() if len(eval(next(p["Values"] for p in params if p["Name"] == k))) > 1)
    base_digest = None
    for v in variants:  # interleaved, so drift of a shared machine hits every variant alike
        wall, cpu, digest = compile_once(cfg, v)
        if v == "":
            base_digest = digest
        same = digest is not None and digest == base_digest
        rows[v].append((wall, cpu, same, digest is not None))
        print(f"{key}\t{v or 'baseline'}\t{wall:.2f}\t{cpu:.2f}\t{'yes' if same else 'no'}", flush=True)

print("\nvariant\tmean_wall_s\tmean_cpu_s\twall_vs_baseline\tidentical_cubins")
bw = sum(r[0] for r in rows[""]) / len(rows[""])
for v in variants:
    rs = rows[v]
    w = sum(r[0] for r in rs) / len(rs)
    c = sum(r[1] for r in rs) / len(rs)
    print(f"{v or 'baseline'}\t{w:.2f}\t{c:.2f}\t{w / bw:.2f}\t{sum(r[2] for r in rs)}/{len(rs)}")
