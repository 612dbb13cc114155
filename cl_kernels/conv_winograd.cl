// Winograd F(2×2, 3×3) for a 3×3, stride-1 convolution's forward pass (Lavin & Gray, 2015): each 2×2
// block of outputs from a 4×4 tile of x, with 16 multiplications per channel pair where a direct
// sum takes 36. Three stages around one batched GEMM (CLBlast's, src/ops/conv_winograd.cpp):
//   weights: U[ξ][c][f] = (G·g·Gᵀ)[ξ] for g = W[f][c] (3×3), ξ = 4·row + column of the 4×4 result;
//   input:   V[ξ][c][t] = (Bᵀ·d·B)[ξ] for d the 4×4 tile of x[b][c] at (2·ty − pt, 2·tx − pl), zero
//            outside the image, t = (b·TH + ty)·TW + tx;
//   GEMM:    M[ξ] = U[ξ]ᵀ·V[ξ] (F × T, 16 of them);
// V's and M's planes lie `plane` floats apart: at least a cache line more than their size, so that
// the 16 values of one tile do not share a cache set (packed, the reference CNN's planes of 2.25
// and 4.5 MiB are multiples of 4 KiB, and these stages took twice as long on PoCL).
//   output:  y[b][f][2·ty + i][2·tx + j] = act((Aᵀ·M[·][f][t]·A)[i][j] + bias[f]), inside (OH, OW).
// Row lengths fp ≥ F and tp ≥ T are the GEMM's padded ones: U's padding is written as zeros, V's is
// zeroed once by the launcher; M's padded rows and columns are never read. The input and output
// stages come in two forms, as conv_direct.cl's: over a 3-D range (x over the tile column tx, y over
// the tile row ty, z over the image planes), and one work-item per row of tiles (every CPU driver:
// PoCL's and Intel's), walking its tiles in an inner loop. Every sum is in a fixed order: reruns
// are bit-identical.

// U[ξ][c][f] for item c·fp + f.
__kernel void winograd_weights(__global const float* restrict w, const uint w_off, __global float* restrict u,
                               const uint channels, const uint filters, const uint fp) {
  const size_t item = get_global_id(0);
  if (item >= (size_t)channels * fp) return;
  const uint f = (uint)(item % fp), c = (uint)(item / fp);
  float t[4][3];  // G·g
  for (uint j = 0; j < 3; ++j) {
    float g0 = 0.0f, g1 = 0.0f, g2 = 0.0f;
    if (f < filters) {
      __global const float* g = w + w_off + ((size_t)f * channels + c) * 9;
      g0 = g[j];
      g1 = g[3 + j];
      g2 = g[6 + j];
    }
    t[0][j] = g0;
    t[1][j] = 0.5f * (g0 + g1 + g2);
    t[2][j] = 0.5f * (g0 - g1 + g2);
    t[3][j] = g2;
  }
  const size_t plane = (size_t)channels * fp;
  for (uint i = 0; i < 4; ++i) {  // (G·g)·Gᵀ, row i
    __global float* out = u + (size_t)(4 * i) * plane + item;
    out[0] = t[i][0];
    out[plane] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
    out[2 * plane] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
    out[3 * plane] = t[i][2];
  }
}

// V's 16 values for the 4×4 tile d at column t of plane stride `plane`: (Bᵀ·d·B).
static inline void winograd_input_tile(float d[4][4], __global float* restrict v, const size_t plane) {
  float r[4][4];  // Bᵀ·d
  for (int j = 0; j < 4; ++j) {
    r[0][j] = d[0][j] - d[2][j];
    r[1][j] = d[1][j] + d[2][j];
    r[2][j] = d[2][j] - d[1][j];
    r[3][j] = d[1][j] - d[3][j];
  }
  for (int i = 0; i < 4; ++i) {  // (Bᵀ·d)·B, row i
    __global float* out = v + (size_t)(4 * i) * plane;
    out[0] = r[i][0] - r[i][2];
    out[plane] = r[i][1] + r[i][2];
    out[2 * plane] = r[i][2] - r[i][1];
    out[3 * plane] = r[i][1] - r[i][3];
  }
}

// The tile at column x0 of the four rows `rows` (row i inside the image where inside[i]), zero outside.
static inline void winograd_load_tile(float d[4][4], __global const float* rows[4], const bool inside[4],
                                      const int x0, const int width) {
  if (x0 >= 0 && x0 + 4 <= width) {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) d[i][j] = inside[i] ? rows[i][x0 + j] : 0.0f;
  } else {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const int xx = x0 + j;
        d[i][j] = inside[i] && xx >= 0 && xx < width ? rows[i][xx] : 0.0f;
      }
  }
}

// The row of tiles ty of image plane (b, c): its four rows of x, and which are inside the image.
static inline void winograd_tile_rows(__global const float* image, const uint ty, const uint height,
                                      const uint width, const uint pad_top, __global const float* rows[4],
                                      bool inside[4]) {
  for (int i = 0; i < 4; ++i) {
    const int yy = (int)(2 * ty) - (int)pad_top + i;
    inside[i] = yy >= 0 && yy < (int)height;
    rows[i] = image + (size_t)(inside[i] ? yy : 0) * width;
  }
}

#define WINOGRAD_INPUT_PARAMS                                                                                \
  __global const float *restrict x, const uint x_off, __global float *restrict v, const uint batch,        \
      const uint channels, const uint height, const uint width, const uint pad_top, const uint pad_left,   \
      const uint tiles_h, const uint tiles_w, const uint tp, const uint plane

// V[ξ][c][t] for the tile (tx, ty) = (x, y) of plane z = b·C + c.
__kernel void winograd_input(WINOGRAD_INPUT_PARAMS) {
  const uint tx = get_global_id(0), ty = get_global_id(1), z = get_global_id(2);
  if (tx >= tiles_w || ty >= tiles_h || z >= batch * channels) return;
  const uint c = z % channels, b = z / channels;
  __global const float* rows[4];
  bool inside[4];
  winograd_tile_rows(x + x_off + (size_t)z * height * width, ty, height, width, pad_top, rows, inside);
  float d[4][4];
  winograd_load_tile(d, rows, inside, (int)(2 * tx) - (int)pad_left, (int)width);
  const size_t t = ((size_t)b * tiles_h + ty) * tiles_w + tx;
  winograd_input_tile(d, v + (size_t)c * tp + t, plane);
}

// Eight tiles' V values at once: d[i][j] holds their (i, j) elements, V's columns from `v` on.
static inline void winograd_input_tile8(float8 d[4][4], __global float* restrict v, const size_t plane) {
  float8 r[4][4];  // Bᵀ·d, as winograd_input_tile
  for (int j = 0; j < 4; ++j) {
    r[0][j] = d[0][j] - d[2][j];
    r[1][j] = d[1][j] + d[2][j];
    r[2][j] = d[2][j] - d[1][j];
    r[3][j] = d[1][j] - d[3][j];
  }
  for (int i = 0; i < 4; ++i) {
    __global float* out = v + (size_t)(4 * i) * plane;
    vstore8(r[i][0] - r[i][2], 0, out);
    vstore8(r[i][1] + r[i][2], 0, out + plane);
    vstore8(r[i][2] - r[i][1], 0, out + 2 * plane);
    vstore8(r[i][1] - r[i][3], 0, out + 3 * plane);
  }
}

// The row kernels below walk a row's tiles eight at a time (PoCL's compiler leaves a loop over
// 16-stream tiles scalar): chunks start at lo, lo + 8, …, the last moved back to `last`, overlapping
// the one before (those tiles are computed twice, to the same bits).

// The same, one work-item per row of tiles (z·TH + ty): eight tiles at a time where their 18
// columns of x lie inside the image, tile by tile at the edges.
__kernel void winograd_input_rows(WINOGRAD_INPUT_PARAMS) {
  const size_t item = get_global_id(0);
  if (item >= (size_t)batch * channels * tiles_h) return;
  const uint ty = (uint)(item % tiles_h), z = (uint)(item / tiles_h), c = z % channels, b = z / channels;
  __global const float* rows[4];
  bool inside[4];
  winograd_tile_rows(x + x_off + (size_t)z * height * width, ty, height, width, pad_top, rows, inside);
  __global float* out = v + (size_t)c * tp + ((size_t)b * tiles_h + ty) * tiles_w;
  // Chunks at tx with 2·tx − pl ≥ 0 and 2·tx − pl + 18 ≤ width, and tx + 8 ≤ tiles_w.
  const uint lo = (pad_left + 1) / 2;
  const int last = width + pad_left >= 18 && tiles_w >= 8 ? (int)min((width + pad_left - 18) / 2, tiles_w - 8) : -1;
  const uint vector_end = last >= (int)lo ? (uint)last + 8 : lo;
  for (uint tx = 0; tx < tiles_w; ++tx) {
    if (tx == lo && last >= (int)lo) tx = vector_end;  // the chunks' tiles, below
    if (tx >= tiles_w) break;
    float d[4][4];
    winograd_load_tile(d, rows, inside, (int)(2 * tx) - (int)pad_left, (int)width);
    winograd_input_tile(d, out + tx, plane);
  }
  if (last < (int)lo) return;
  for (uint chunk = lo;; chunk += 8) {
    const uint s = min(chunk, (uint)last);
    const int x0 = (int)(2 * s) - (int)pad_left;
    float8 d[4][4];
    for (int i = 0; i < 4; ++i) {
      const float16 a = inside[i] ? vload16(0, rows[i] + x0) : (float16)(0.0f);
      const float16 e = inside[i] ? vload16(0, rows[i] + x0 + 2) : (float16)(0.0f);
      d[i][0] = a.even;
      d[i][1] = a.odd;
      d[i][2] = e.even;
      d[i][3] = e.odd;
    }
    winograd_input_tile8(d, out + s, plane);
    if (s == (uint)last) break;
  }
}

// y's 2×2 block at (2·ty, 2·tx) of row pointer `y_rows` (its row 2·ty) from M's 16 values at `in`
// (plane stride `plane`), with the bias and activation; for gelu, z gets the values before it.
static inline void winograd_output_tile(__global const float* restrict in, const size_t plane, const float bias,
                                        __global float* restrict y, __global float* z, const size_t at,
                                        const uint out_w, const bool second_row, const bool second_column,
                                        const int act) {
  float s[2][4];  // Aᵀ·M
  for (int j = 0; j < 4; ++j) {
    const float m0 = in[(size_t)j * plane], m1 = in[(size_t)(4 + j) * plane], m2 = in[(size_t)(8 + j) * plane],
                m3 = in[(size_t)(12 + j) * plane];
    s[0][j] = m0 + m1 + m2;
    s[1][j] = m1 - m2 - m3;
  }
  for (uint i = 0; i < 2; ++i) {
    if (i == 1 && !second_row) break;
    const size_t row = at + i * out_w;
    const float v0 = s[i][0] + s[i][1] + s[i][2] + bias, v1 = s[i][1] - s[i][2] - s[i][3] + bias;
    if (act == ACT_GELU) z[row] = v0;  // a constant per kernel
    y[row] = activate(v0, act);
    if (second_column) {
      if (act == ACT_GELU) z[row + 1] = v1;
      y[row + 1] = activate(v1, act);
    }
  }
}

#define WINOGRAD_OUTPUT_PARAMS                                                                                \
  __global const float *restrict m, __global const float *restrict bias, const uint bias_off,               \
      __global float *restrict y, const uint y_off, __global float *z, const uint z_off, const uint batch,  \
      const uint filters, const uint fp, const uint tp, const uint out_h, const uint out_w,                 \
      const uint tiles_h, const uint tiles_w, const uint plane

// y's block (tx, ty) = (x, y) of plane z = b·F + f.
static inline void winograd_output(WINOGRAD_OUTPUT_PARAMS, const int act) {
  const uint tx = get_global_id(0), ty = get_global_id(1), line = get_global_id(2);
  if (tx >= tiles_w || ty >= tiles_h || line >= batch * filters) return;
  const uint f = line % filters, b = line / filters;
  const size_t t = ((size_t)b * tiles_h + ty) * tiles_w + tx;
  const size_t at = ((size_t)line * out_h + 2 * ty) * out_w + 2 * tx;
  winograd_output_tile(m + (size_t)f * tp + t, plane, bias[bias_off + f], y + y_off, z + z_off, at,
                       out_w, 2 * ty + 1 < out_h, 2 * tx + 1 < out_w, act);
}

// The same, one work-item per row of blocks (z·TH + ty): eight blocks at a time where both their
// columns lie inside y, block by block otherwise.
static inline void winograd_output_row(WINOGRAD_OUTPUT_PARAMS, const int act) {
  const size_t item = get_global_id(0);
  if (item >= (size_t)batch * filters * tiles_h) return;
  const uint ty = (uint)(item % tiles_h), line = (uint)(item / tiles_h), f = line % filters, b = line / filters;
  __global const float* in = m + (size_t)f * tp + ((size_t)b * tiles_h + ty) * tiles_w;
  const size_t at = ((size_t)line * out_h + 2 * ty) * out_w;
  const float bf = bias[bias_off + f];
  const bool second_row = 2 * ty + 1 < out_h;
  const uint whole = out_w / 2;  // blocks with both columns inside
  const uint first_scalar = whole >= 8 ? whole : 0;
  for (uint tx = first_scalar; tx < tiles_w; ++tx)
    winograd_output_tile(in + tx, plane, bf, y + y_off, z + z_off, at + 2 * tx, out_w, second_row,
                         2 * tx + 1 < out_w, act);
  if (whole < 8) return;
  const uint16 interleave = (uint16)(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  for (uint chunk = 0;; chunk += 8) {
    const uint s = min(chunk, whole - 8);
    float8 s0[4], s1[4];  // Aᵀ·M, as winograd_output_tile
    for (int j = 0; j < 4; ++j) {
      const float8 m0 = vload8(0, in + s + (size_t)j * plane), m1 = vload8(0, in + s + (size_t)(4 + j) * plane),
                   m2 = vload8(0, in + s + (size_t)(8 + j) * plane), m3 = vload8(0, in + s + (size_t)(12 + j) * plane);
      s0[j] = m0 + m1 + m2;
      s1[j] = m1 - m2 - m3;
    }
    for (uint i = 0; i < 2; ++i) {
      if (i == 1 && !second_row) break;
      const float8* r = i == 0 ? s0 : s1;
      const float16 pre = shuffle2(r[0] + r[1] + r[2] + bf, r[1] - r[2] - r[3] + bf, interleave);
      const size_t row = at + i * out_w + 2 * s;
      if (act == ACT_GELU) vstore16(pre, 0, z + z_off + row);  // a constant per kernel
      vstore16(activate16(pre, act), 0, y + y_off + row);
    }
    if (s == whole - 8) break;
  }
}

#define WINOGRAD_OUTPUT_ARGS \
  m, bias, bias_off, y, y_off, z, z_off, batch, filters, fp, tp, out_h, out_w, tiles_h, tiles_w, plane
#define WINOGRAD_OUTPUT_KERNELS(NAME, ACT)                                                       \
  __kernel void winograd_output_##NAME(WINOGRAD_OUTPUT_PARAMS) {                                 \
    winograd_output(WINOGRAD_OUTPUT_ARGS, ACT);                                                  \
  }                                                                                              \
  __kernel void winograd_output_rows_##NAME(WINOGRAD_OUTPUT_PARAMS) {                            \
    winograd_output_row(WINOGRAD_OUTPUT_ARGS, ACT);                                              \
  }
WINOGRAD_OUTPUT_KERNELS(linear, 0)
WINOGRAD_OUTPUT_KERNELS(relu, 1)
WINOGRAD_OUTPUT_KERNELS(tanh, 2)
WINOGRAD_OUTPUT_KERNELS(sigmoid, 3)
WINOGRAD_OUTPUT_KERNELS(leaky_relu, 4)
WINOGRAD_OUTPUT_KERNELS(elu, 5)
WINOGRAD_OUTPUT_KERNELS(gelu, 6)
