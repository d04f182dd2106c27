"""The timing of bench/gpu's PyTorch reference points: the median of `reps` calls after
`warmup`, each between a pair of CUDA events, in milliseconds."""
import torch


def median_ms(fn, reps=20, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def median_batched_ms(fn, sample_ms=20.0, reps=10, warmup=5):
    """Per call, the median over `reps` samples of back-to-back calls lasting at least
    `sample_ms` each, one pair of CUDA events per sample: how ktune's hot mode times a
    kernel (tuner/gpu/measure.h), so a GPU that lowers its clock under sustained load
    does so for both sides of a comparison."""
    one = median_ms(fn, reps=3, warmup=warmup)
    calls = max(1, int(sample_ms / max(one, 1e-3)) + 1)
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    times.sort()
    return times[len(times) // 2]
