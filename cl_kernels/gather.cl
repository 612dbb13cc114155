// Builds a training batch on the device from the resident data set: rows picked through the
// epoch's shuffled index list, pixels converted from bytes to floats v/255 in [0, 1].
// images:(count, features) uchar; order: sample indices; x:(rows, features); y: labels as int.
__kernel void gather_batch(__global const uchar* images, __global const uchar* labels,
                           __global const uint* order, const uint first, const uint rows, const uint features,
                           __global float* x, const uint x_off, __global int* y, const uint y_off) {
  const size_t i = get_global_id(0);  // 64-bit: rows·features and offsets may pass 2^32
  if (i >= (size_t)rows * features) return;
  const size_t r = i / features, f = i % features;
  const uint sample = order[first + r];
  // v·(1/255) alone differs from v/255 in the last bit for about half the byte values; one fma
  // correction (exact residual, then re-scale) gives the correctly rounded v/255 — the value the
  // host's Dataset::normalized computes — without relying on the device's division accuracy.
  const float v = convert_float(images[(ulong)sample * features + f]);
  const float q = v * (1.0f / 255.0f);
  x[x_off + i] = fma(fma(-q, 255.0f, v), 1.0f / 255.0f, q);
  if (f == 0) y[y_off + r] = labels[sample];
}
