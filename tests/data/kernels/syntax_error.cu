// Deliberately broken: the tuner must report this as a failed configuration.
__global__ void broken(float* out) {
  out[threadIdx.x] = undeclared_identifier * 2.0f
}
