"""A Kernel Tuner script, as Kernel Tuner's users write them, run by ktune:
the only ktune-specific line is the import. (Kernel Tuner's own published
examples are run this way by bench/python/kernel_tuner_dropin.py.)

    python3 examples/python/vector_add_kernel_tuner_style.py
"""
import numpy

from ktune import tune_kernel  # Kernel Tuner: from kernel_tuner import tune_kernel

kernel_string = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = 10000000
a = numpy.random.randn(size).astype(numpy.float32)
b = numpy.random.randn(size).astype(numpy.float32)
c = numpy.zeros_like(b)
n = numpy.int32(size)
args = [c, a, b, n]

tune_params = {"block_size_x": [32 * i for i in range(1, 33)]}

results, env = tune_kernel("vector_add", kernel_string, size, args, tune_params, answer=[a + b, None, None, None])
print(f"{len(results)} configurations, best {env['best_config']} on {env['device_name']}")
