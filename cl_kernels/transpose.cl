// out = aᵀ for a row-major rows × cols matrix a (leading dimension lda) into out (cols × rows,
// leading dimension ldo). Each work-item moves one 8 × 8 block through registers: eight loads of
// eight floats along a's rows, eight stores of eight floats along out's rows. Blocks cut by the
// matrix's edge go element by element; the padding past either leading dimension is not touched.
// Indices are size_t: rows · ld may pass 32 bits where each factor does not.
#define BLOCK 8

__kernel void transpose_blocks(__global const float* a, const uint a_offset, const uint lda, const uint rows,
                               const uint cols, __global float* out, const uint out_offset, const uint ldo) {
  const size_t c0 = BLOCK * (size_t)get_global_id(0), r0 = BLOCK * (size_t)get_global_id(1);
  if (c0 >= cols || r0 >= rows) return;
  __global const float* src = a + a_offset + r0 * lda + c0;
  __global float* dst = out + out_offset + c0 * ldo + r0;
  if (r0 + BLOCK > rows || c0 + BLOCK > cols) {
    const size_t nr = min((size_t)BLOCK, rows - r0), nc = min((size_t)BLOCK, cols - c0);
    for (size_t r = 0; r < nr; ++r)
      for (size_t c = 0; c < nc; ++c) dst[c * ldo + r] = src[r * lda + c];
    return;
  }
  const float8 r0v = vload8(0, src), r1 = vload8(0, src + lda), r2 = vload8(0, src + 2 * lda),
               r3 = vload8(0, src + 3 * lda), r4 = vload8(0, src + 4 * lda), r5 = vload8(0, src + 5 * lda),
               r6 = vload8(0, src + 6 * lda), r7 = vload8(0, src + 7 * lda);
  vstore8((float8)(r0v.s0, r1.s0, r2.s0, r3.s0, r4.s0, r5.s0, r6.s0, r7.s0), 0, dst);
  vstore8((float8)(r0v.s1, r1.s1, r2.s1, r3.s1, r4.s1, r5.s1, r6.s1, r7.s1), 0, dst + ldo);
  vstore8((float8)(r0v.s2, r1.s2, r2.s2, r3.s2, r4.s2, r5.s2, r6.s2, r7.s2), 0, dst + 2 * ldo);
  vstore8((float8)(r0v.s3, r1.s3, r2.s3, r3.s3, r4.s3, r5.s3, r6.s3, r7.s3), 0, dst + 3 * ldo);
  vstore8((float8)(r0v.s4, r1.s4, r2.s4, r3.s4, r4.s4, r5.s4, r6.s4, r7.s4), 0, dst + 4 * ldo);
  vstore8((float8)(r0v.s5, r1.s5, r2.s5, r3.s5, r4.s5, r5.s5, r6.s5, r7.s5), 0, dst + 5 * ldo);
  vstore8((float8)(r0v.s6, r1.s6, r2.s6, r3.s6, r4.s6, r5.s6, r6.s6, r7.s6), 0, dst + 6 * ldo);
  vstore8((float8)(r0v.s7, r1.s7, r2.s7, r3.s7, r4.s7, r5.s7, r6.s7, r7.s7), 0, dst + 7 * ldo);
}

// out[c][r] = Σ_s parts[s·stride + r·ld + c] for r < rows, c < cols, the slices added in order (reruns
// are bit-identical): a split product's slices, computed transposed, summed back (Dense's forward
// split over k turned round, gemm_plan.hpp's split_k_transposed). x over r (out's rows, stored
// contiguously), y over c.
__kernel void transpose_sum_slices(__global const float* parts, const uint slices, const uint stride,
                                   const uint ld, const uint rows, const uint cols, __global float* out,
                                   const uint out_offset) {
  const size_t r = get_global_id(0), c = get_global_id(1);
  if (r >= rows || c >= cols) return;
  float sum = 0.0f;
  for (uint s = 0; s < slices; ++s) sum += parts[(size_t)s * stride + r * ld + c];
  out[out_offset + c * rows + r] = sum;
}
