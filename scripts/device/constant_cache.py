# Constant-cache reads (measurements/constant-cache): every lane on one address (broadcast), 4 addresses a warp, 32 a warp.
# Times a loop of `iters` dependent-free constant reads per thread; medians of 21 launches.
import cupy as cp, json, os, sys
src = r'''
__constant__ float w[1024];
extern "C" __global__ void reads(float* out, int iters, int mode) {
  float acc = 0.f; const unsigned t = threadIdx.x;
  const unsigned lane_part = mode == 0 ? 0u : mode == 1 ? (t >> 3) : t;
  #pragma unroll 8
  for (int i = 0; i < iters; ++i) acc += w[(lane_part + 8u * i) & 1023u];
  out[blockIdx.x * blockDim.x + t] = acc;
}
'''
mod = cp.RawModule(code=src, options=('-arch=sm_90',))
k = mod.get_function('reads')
wptr = mod.get_global('w'); cp.ndarray((1024,), cp.float32, wptr)[:] = cp.random.rand(1024, dtype=cp.float32)
blocks, threads, iters = 132 * 16, 256, 4096
out = cp.empty(blocks * threads, cp.float32)
res = {}
quick = os.environ.get('QUICK') == '1'
for mode, name in [(0, 'broadcast'), (1, '4 addresses a warp'), (2, '32 addresses a warp')]:
    if quick:
        k((blocks,), (threads,), (out, cp.int32(iters), cp.int32(mode))); cp.cuda.Device().synchronize(); continue
    for _ in range(3): k((blocks,), (threads,), (out, cp.int32(iters), cp.int32(mode)))
    times = []
    for _ in range(21):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(); k((blocks,), (threads,), (out, cp.int32(iters), cp.int32(mode))); b.record(); b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    times.sort()
    warp_reads = blocks * threads // 32 * iters
    res[name] = {'median_us': times[10], 'min_us': times[0], 'max_us': times[-1], 'warp_reads': warp_reads}
if quick: sys.exit(0)
base = res['broadcast']['median_us']
for name, r in res.items():
    r['ratio_to_broadcast'] = r['median_us'] / base
    print(f"{name:22s} {r['median_us']:9.1f} us (min {r['min_us']:.1f}, max {r['max_us']:.1f})  x{r['ratio_to_broadcast']:.2f}")
json.dump(res, open(os.path.join(os.environ['OUT'], 'constant_replays.json'), 'w'), indent=1)
