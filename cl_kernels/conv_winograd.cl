// Winograd F(4×4, 3×3) for a 3×3, stride-1 convolution (Lavin & Gray, 2015): each 4×4 block of
// outputs from a 6×6 tile of x, with 36 multiplications per channel pair where a direct sum takes
// 144 (4 times fewer). Three stages around 36 GEMMs (CLBlast's, src/ops/conv_winograd.cpp), with
// the interpolation points 0, ±1, ±2 and ∞:
//   weights: U[ξ][c][f] = (G·g·Gᵀ)[ξ] for g = W[f][c] (3×3), ξ = 6·row + column of the 6×6 result;
//   input:   V[ξ][c][t] = (Bᵀ·d·B)[ξ] for d the 6×6 tile of x[b][c] at (4·ty − pt, 4·tx − pl), zero
//            outside the image, t = (b·TH + ty)·TW + tx;
//   GEMM:    M[ξ] = U[ξ]ᵀ·V[ξ] (F × T, 36 of them);
//   output:  y[b][f][4·ty + i][4·tx + j] = act((Aᵀ·M[·][f][t]·A)[i][j] + bias[f]), inside (OH, OW).
// V's and M's planes lie `plane` floats apart: at least a cache line more than their size, so that
// the 36 values of one tile do not share a cache set (packed, planes whose size is a multiple of
// 4 KiB ran these stages at half speed on PoCL).
// Row lengths fp ≥ F and tp ≥ T are the GEMM's padded ones: U's padding is written as zeros, V's is
// zeroed once by the launcher; M's padded rows and columns are never read. The input and output
// stages come in two forms, as conv_direct.cl's: over a 3-D range (x over the tile column tx, y over
// the tile row ty, z over the image planes), and one work-item per row of tiles (every CPU driver:
// PoCL's and Intel's), walking its tiles four at a time in float4 lanes. Every sum is in a fixed
// order: reruns are bit-identical.

// The transforms of six values along one axis, for scalars and for float8 lanes alike.
// G·(g0, g1, g2): six values.
#define WINOGRAD_G(g0, g1, g2, t)                                                \
  do {                                                                           \
    t[0] = 0.25f * (g0);                                                         \
    t[1] = (-1.0f / 6.0f) * ((g0) + (g1) + (g2));                                \
    t[2] = (-1.0f / 6.0f) * ((g0) - (g1) + (g2));                                \
    t[3] = (1.0f / 24.0f) * (g0) + (1.0f / 12.0f) * (g1) + (1.0f / 6.0f) * (g2); \
    t[4] = (1.0f / 24.0f) * (g0) - (1.0f / 12.0f) * (g1) + (1.0f / 6.0f) * (g2); \
    t[5] = (g2);                                                                 \
  } while (0)
// Bᵀ·(d0, …, d5): six values.
#define WINOGRAD_BT(d0, d1, d2, d3, d4, d5, r) \
  do {                                         \
    r[0] = 4.0f * (d0)-5.0f * (d2) + (d4);     \
    r[1] = (d3) + (d4)-4.0f * ((d1) + (d2));   \
    r[2] = (d4) - (d3) + 4.0f * ((d1) - (d2)); \
    r[3] = (d4) - (d2) + 2.0f * ((d3) - (d1)); \
    r[4] = (d4) - (d2) + 2.0f * ((d1) - (d3)); \
    r[5] = 4.0f * (d1)-5.0f * (d3) + (d5);     \
  } while (0)
// Aᵀ·(m0, …, m5): four values.
#define WINOGRAD_AT(m0, m1, m2, m3, m4, m5, s)        \
  do {                                                \
    s[0] = (m0) + (m1) + (m2) + (m3) + (m4);          \
    s[1] = (m1) - (m2) + 2.0f * ((m3) - (m4));        \
    s[2] = (m1) + (m2) + 4.0f * ((m3) + (m4));        \
    s[3] = (m1) - (m2) + 8.0f * ((m3) - (m4)) + (m5); \
  } while (0)

// U[ξ][c][f] for item c·fp + f: g at w[f·filter_stride + c·channel_stride], turned by 180° where
// `flip` (the input gradient's convolution: filter c of channel f is W[f][c] turned).
__kernel void winograd_weights(__global const float* restrict w, const uint w_off, __global float* restrict u,
                               const uint channels, const uint filters, const uint fp,
                               const uint filter_stride, const uint channel_stride, const uint flip) {
  const size_t item = get_global_id(0);
  if (item >= (size_t)channels * fp) return;
  const uint f = (uint)(item % fp), c = (uint)(item / fp);
  __global const float* kernel3 = w + w_off + (size_t)f * filter_stride + (size_t)c * channel_stride;
  float g[3][3];
  for (uint i = 0; i < 3; ++i)
    for (uint j = 0; j < 3; ++j) g[i][j] = f < filters ? kernel3[flip ? 8 - (3 * i + j) : 3 * i + j] : 0.0f;
  float t[6][3];  // G·g
  for (uint j = 0; j < 3; ++j) {
    float col[6];
    WINOGRAD_G(g[0][j], g[1][j], g[2][j], col);
    for (uint i = 0; i < 6; ++i) t[i][j] = col[i];
  }
  const size_t plane = (size_t)channels * fp;
  for (uint i = 0; i < 6; ++i) {  // (G·g)·Gᵀ, row i
    float row[6];
    WINOGRAD_G(t[i][0], t[i][1], t[i][2], row);
    for (uint j = 0; j < 6; ++j) u[(size_t)(6 * i + j) * plane + item] = row[j];
  }
}

// V's 36 values of the 6×6 tile d, at `v` with plane stride `plane`: (Bᵀ·d·B). TYPE float or float4
// (four tiles in lanes, stored from `v` on). The helpers' `v` is not `restrict` (the kernels' is): inlined
// into a kernel that calls one once, it made LLVM emit a noalias scope declaration Oclgrind cannot run.
#define WINOGRAD_INPUT_TILE(TYPE, STORE)                                                               \
  TYPE e[6][6]; /* d·B, row by row */                                                                 \
  for (int i = 0; i < 6; ++i) WINOGRAD_BT(d[i][0], d[i][1], d[i][2], d[i][3], d[i][4], d[i][5], e[i]); \
  for (int j = 0; j < 6; ++j) { /* Bᵀ·(d·B), column j */                                           \
    TYPE col[6];                                                                                       \
    WINOGRAD_BT(e[0][j], e[1][j], e[2][j], e[3][j], e[4][j], e[5][j], col);                            \
    for (int i = 0; i < 6; ++i) STORE(col[i], v + (size_t)(6 * i + j) * plane);                        \
  }
#define WINOGRAD_STORE1(value, at) (*(at) = (value))
#define WINOGRAD_STORE4(value, at) vstore4((value), 0, (at))
static inline void winograd_input_tile(float d[6][6], __global float* v, const size_t plane) {
  WINOGRAD_INPUT_TILE(float, WINOGRAD_STORE1)
}
static inline void winograd_input_tile4(float4 d[6][6], __global float* v, const size_t plane) {
  WINOGRAD_INPUT_TILE(float4, WINOGRAD_STORE4)
}

// The tile at column x0 of the six rows `rows` (row i inside the image where inside[i]), zero outside.
static inline void winograd_load_tile(float d[6][6], __global const float* rows[6], const bool inside[6],
                                      const int x0, const int width) {
  if (x0 >= 0 && x0 + 6 <= width) {
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) d[i][j] = inside[i] ? rows[i][x0 + j] : 0.0f;
  } else {
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) {
        const int xx = x0 + j;
        d[i][j] = inside[i] && xx >= 0 && xx < width ? rows[i][xx] : 0.0f;
      }
  }
}

// The row of tiles ty of image plane (b, c): its six rows of x, and which are inside the image.
static inline void winograd_tile_rows(__global const float* image, const uint ty, const uint height,
                                      const uint width, const uint pad_top, __global const float* rows[6],
                                      bool inside[6]) {
  for (int i = 0; i < 6; ++i) {
    const int yy = (int)(4 * ty) - (int)pad_top + i;
    inside[i] = yy >= 0 && yy < (int)height;
    rows[i] = image + (size_t)(inside[i] ? yy : 0) * width;
  }
}

#define WINOGRAD_INPUT_PARAMS                                                                            \
  __global const float *restrict x, const uint x_off, __global float *restrict v, const uint batch,      \
      const uint channels, const uint height, const uint width, const uint pad_top, const uint pad_left, \
      const uint tiles_h, const uint tiles_w, const uint tp, const uint plane, const uint batch_stride,  \
      const uint channel_stride, const uint x_end

// V[ξ][c][t] for the tile (tx, ty) = (x, y) of plane z = b·C + c, image (b, c) at
// x[b·batch_stride + c·channel_stride] (NCHW, or the channel-major gradient dz:(C, batch·H·W)); x's
// elements from x_off up to x_end are the input's (x_end is for the row form).
__kernel void winograd_input(WINOGRAD_INPUT_PARAMS) {
  const uint tx = get_global_id(0), ty = get_global_id(1), z = get_global_id(2);
  if (tx >= tiles_w || ty >= tiles_h || z >= batch * channels) return;
  const uint c = z % channels, b = z / channels;
  __global const float* rows[6];
  bool inside[6];
  winograd_tile_rows(x + x_off + (size_t)b * batch_stride + (size_t)c * channel_stride, ty, height, width,
                     pad_top, rows, inside);
  float d[6][6];
  winograd_load_tile(d, rows, inside, (int)(4 * tx) - (int)pad_left, (int)width);
  const size_t t = ((size_t)b * tiles_h + ty) * tiles_w + tx;
  winograd_input_tile(d, v + (size_t)c * tp + t, plane);
}

// The 6 × 18 values of x under four tiles side by side whose first column is x0 (row i of `rows` inside the
// image where inside[i], zero outside), as d[i][j] lane k = column x0 + 4·k + j of row i: two loads a row
// where its 18 columns lie inside the row, or inside x (the columns outside the row then replaced by zeros:
// the row before's or after's values), else gathered one by one — only where they would read before x's first
// element or past its last (x_off, x_end).
static inline void winograd_load_chunk4(float4 d[6][6], __global const float* x,
                                        __global const float* rows[6], const bool inside[6], const int x0,
                                        const int width, const uint x_off, const uint x_end) {
  const bool whole = x0 >= 0 && x0 + 18 <= width;
  const int16 column = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) + x0;
  const int2 tail_column = (int2)(16, 17) + x0;
  const int16 keep = column >= 0 && column < width;
  const int2 tail_keep = tail_column >= 0 && tail_column < width;
  for (int i = 0; i < 6; ++i) {
    float16 a = (float16)(0.0f);
    float2 tail = (float2)(0.0f);
    const long from = (rows[i] - x) + x0;  // in x's elements
    if (inside[i] && whole) {
      a = vload16(0, rows[i] + x0);
      tail = vload2(0, rows[i] + x0 + 16);
    } else if (inside[i] && from >= (long)x_off && from + 18 <= (long)x_end) {
      a = select((float16)(0.0f), vload16(0, rows[i] + x0), keep);
      tail = select((float2)(0.0f), vload2(0, rows[i] + x0 + 16), tail_keep);
    } else if (inside[i]) {
      float e[18];
      for (int j = 0; j < 18; ++j) e[j] = x0 + j >= 0 && x0 + j < width ? rows[i][x0 + j] : 0.0f;
      a = vload16(0, e);
      tail = vload2(0, e + 16);
    }
    d[i][0] = a.s048c;
    d[i][1] = a.s159d;
    d[i][2] = a.s26ae;
    d[i][3] = a.s37bf;
    d[i][4] = (float4)(a.s48c, tail.s0);
    d[i][5] = (float4)(a.s59d, tail.s1);
  }
}

// The first `lanes` (1 to 3) of a float4 at `at`: a row of fewer than four tiles, whose next float is the
// next row's.
static inline void winograd_store_lanes(const float4 value, __global float* at, const uint lanes) {
  if (lanes >= 2)
    vstore2(value.s01, 0, at);
  else
    at[0] = value.s0;
  if (lanes == 3) at[2] = value.s2;
}
#define WINOGRAD_STORE_LANES(value, at) winograd_store_lanes((value), (at), lanes)
static inline void winograd_input_tile_lanes(float4 d[6][6], __global float* v, const size_t plane,
                                             const uint lanes){
    WINOGRAD_INPUT_TILE(float4, WINOGRAD_STORE_LANES)}

// The same, one work-item per row of tiles ((c·batch + b)·TH + ty: neighbouring items write on along
// each of V's rows; b·C + c had them jump between rows: 14 % slower on PoCL, 38 % on Intel's runtime), four
// tiles at a time in float4 lanes (PoCL's compiler leaves a loop over 36-stream tiles scalar, and the
// reference CNN's rows are six or seven tiles long): chunks start at 0, 4, …, the last moved back to TW − 4,
// overlapping the one before (those tiles are computed twice, to the same bits). A row of fewer than four
// tiles is one chunk whose lanes past the row are computed and not stored (the BatchNorm CNN's conv 3, rows
// of three: tile by tile, its forward stage took 3.0 ms on PoCL's AVX-512 class).
__kernel __attribute__((vec_type_hint(float4))) void winograd_input_rows(WINOGRAD_INPUT_PARAMS) {
  const size_t item = get_global_id(0);
  if (item >= (size_t)batch * channels * tiles_h) return;
  const uint ty = (uint)(item % tiles_h), z = (uint)(item / tiles_h), b = z % batch, c = z / batch;
  __global const float* rows[6];
  bool inside[6];
  winograd_tile_rows(x + x_off + (size_t)b * batch_stride + (size_t)c * channel_stride, ty, height, width,
                     pad_top, rows, inside);
  __global float* out = v + (size_t)c * tp + ((size_t)b * tiles_h + ty) * tiles_w;
  float4 d[6][6];  // d[i][j]: column x0 + 4·k + j of row i for tile k of the four
  if (tiles_w < 4) {
    winograd_load_chunk4(d, x, rows, inside, -(int)pad_left, (int)width, x_off, x_end);
    winograd_input_tile_lanes(d, out, plane, tiles_w);
    return;
  }
  for (uint chunk = 0;; chunk += 4) {
    const uint s = min(chunk, tiles_w - 4);
    winograd_load_chunk4(d, x, rows, inside, (int)(4 * s) - (int)pad_left, (int)width, x_off, x_end);
    winograd_input_tile4(d, out + s, plane);
    if (s == tiles_w - 4) break;
  }
}

// o = Aᵀ·M·A for the tile(s) at `in` (plane stride `plane`, M[6k + l] at plane 6k + l): M·A row by
// row as the planes are read, then Aᵀ· column by column. TYPE float or float4, LOAD reads one plane's
// value(s).
#define WINOGRAD_OUTPUT_AMA(TYPE, LOAD)                                                             \
  TYPE ma[6][4]; /* M·A */                                                                         \
  for (int k = 0; k < 6; ++k) {                                                                     \
    __global const float* row_k = in + (size_t)(6 * k) * plane;                                     \
    WINOGRAD_AT(LOAD(row_k), LOAD(row_k + plane), LOAD(row_k + 2 * plane), LOAD(row_k + 3 * plane), \
                LOAD(row_k + 4 * plane), LOAD(row_k + 5 * plane), ma[k]);                           \
  }                                                                                                 \
  TYPE o[4][4];                                                                                     \
  for (int j = 0; j < 4; ++j) {                                                                     \
    TYPE col[4];                                                                                    \
    WINOGRAD_AT(ma[0][j], ma[1][j], ma[2][j], ma[3][j], ma[4][j], ma[5][j], col);                   \
    for (int i = 0; i < 4; ++i) o[i][j] = col[i];                                                   \
  }
#define WINOGRAD_LOAD1(at) (*(at))
#define WINOGRAD_LOAD4(at) vload4(0, (at))

// y's 4×4 block at (4·ty, 4·tx), from row `at` of y (its row 4·ty), from M's 36 values at `in`
// (plane stride `plane`), with the bias and activation, `rows` × `columns` of it inside y; for gelu,
// z gets the values before the activation.
static inline void winograd_output_tile(__global const float* restrict in, const size_t plane,
                                        const float bias, __global float* restrict y, __global float* z,
                                        const size_t at, const uint out_w, const uint rows,
                                        const uint columns, const int act) {
  WINOGRAD_OUTPUT_AMA(float, WINOGRAD_LOAD1)
  for (uint i = 0; i < rows; ++i) {
    const size_t row = at + i * out_w;
    for (uint j = 0; j < columns; ++j) {
      const float pre = o[i][j] + bias;
      if (act == ACT_GELU) z[row + j] = pre;  // a constant per kernel
      y[row + j] = activate(pre, act);
    }
  }
}

#define WINOGRAD_OUTPUT_PARAMS                                                                             \
  __global const float *restrict m, __global const float *restrict bias, const uint bias_off,              \
      __global float *restrict y, const uint y_off, __global float *z, const uint z_off, const uint batch, \
      const uint filters, const uint fp, const uint tp, const uint out_h, const uint out_w,                \
      const uint tiles_h, const uint tiles_w, const uint plane

// y's block (tx, ty) = (x, y) of plane z = b·F + f.
static inline void winograd_output(WINOGRAD_OUTPUT_PARAMS, const int act) {
  const uint tx = get_global_id(0), ty = get_global_id(1), line = get_global_id(2);
  if (tx >= tiles_w || ty >= tiles_h || line >= batch * filters) return;
  const uint f = line % filters, b = line / filters;
  const size_t t = ((size_t)b * tiles_h + ty) * tiles_w + tx;
  const size_t at = ((size_t)line * out_h + 4 * ty) * out_w + 4 * tx;
  winograd_output_tile(m + (size_t)f * tp + t, plane, bias[bias_off + f], y + y_off, z + z_off, at, out_w,
                       min(4u, out_h - 4 * ty), min(4u, out_w - 4 * tx), act);
}

// The same, one work-item per row of blocks ((f·batch + b)·TH + ty, so that neighbouring items read on
// along M's rows): four blocks at a time where all four of their columns lie inside y, block by block
// otherwise. A row narrower than 16 columns (at most four blocks) is one chunk, its lanes past the row read
// (the next row's blocks, or M's padding) and not stored (the BatchNorm CNN's conv 3, rows of 10 columns:
// block by block, its forward stage took 2.0 ms on PoCL's AVX-512 class).
static inline void winograd_output_row(WINOGRAD_OUTPUT_PARAMS, const int act) {
  const size_t item = get_global_id(0);
  if (item >= (size_t)batch * filters * tiles_h) return;
  const uint ty = (uint)(item % tiles_h), run = (uint)(item / tiles_h), b = run % batch, f = run / batch;
  __global const float* first = m + (size_t)f * tp + ((size_t)b * tiles_h + ty) * tiles_w;
  const size_t at = (((size_t)b * filters + f) * out_h + 4 * ty) * out_w;
  const float bf = bias[bias_off + f];
  const uint rows = min(4u, out_h - 4 * ty);
  const uint whole = out_w / 4;  // blocks with all four columns inside
  // o[j] lane k is column 4·k + j: pairs (o0, o1) and (o2, o3) interleaved, then the pairs by twos.
  const uint8 pairs = (uint8)(0, 4, 1, 5, 2, 6, 3, 7);
  const uint16 quads = (uint16)(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
  if (whole < 4) {  // out_w < 16
    __global const float* in = first;
    WINOGRAD_OUTPUT_AMA(float4, WINOGRAD_LOAD4)
    for (uint i = 0; i < rows; ++i) {
      const float8 p01 = shuffle2(o[i][0] + bf, o[i][1] + bf, pairs),
                   p23 = shuffle2(o[i][2] + bf, o[i][3] + bf, pairs);
      const float16 pre = shuffle2(p01, p23, quads);
      float kept[16], activated[16];
      vstore16(pre, 0, kept);
      vstore16(activate16(pre, act), 0, activated);
      const size_t row = at + i * out_w;
      for (uint j = 0; j < out_w; ++j) {
        if (act == ACT_GELU) z[z_off + row + j] = kept[j];  // a constant per kernel
        y[y_off + row + j] = activated[j];
      }
    }
    return;
  }
  for (uint tx = whole; tx < tiles_w; ++tx)
    winograd_output_tile(first + tx, plane, bf, y + y_off, z + z_off, at + 4 * tx, out_w, rows,
                         min(4u, out_w - 4 * tx), act);
  for (uint chunk = 0;; chunk += 4) {
    const uint start = min(chunk, whole - 4);
    __global const float* in = first + start;
    WINOGRAD_OUTPUT_AMA(float4, WINOGRAD_LOAD4)
    for (uint i = 0; i < rows; ++i) {
      const float8 p01 = shuffle2(o[i][0] + bf, o[i][1] + bf, pairs),
                   p23 = shuffle2(o[i][2] + bf, o[i][3] + bf, pairs);
      const float16 pre = shuffle2(p01, p23, quads);
      const size_t row = at + i * out_w + 4 * start;
      if (act == ACT_GELU) vstore16(pre, 0, z + z_off + row);  // a constant per kernel
      vstore16(activate16(pre, act), 0, y + y_off + row);
    }
    if (start == whole - 4) break;
  }
}

#define WINOGRAD_OUTPUT_ARGS \
  m, bias, bias_off, y, y_off, z, z_off, batch, filters, fp, tp, out_h, out_w, tiles_h, tiles_w, plane
#define WINOGRAD_OUTPUT_KERNELS(NAME, ACT)                                                                   \
  __kernel void winograd_output_##NAME(WINOGRAD_OUTPUT_PARAMS) {                                             \
    winograd_output(WINOGRAD_OUTPUT_ARGS, ACT);                                                              \
  }                                                                                                          \
  __kernel __attribute__((vec_type_hint(float4))) void winograd_output_rows_##NAME(WINOGRAD_OUTPUT_PARAMS) { \
    winograd_output_row(WINOGRAD_OUTPUT_ARGS, ACT);                                                          \
  }
WINOGRAD_OUTPUT_KERNELS(linear, 0)
WINOGRAD_OUTPUT_KERNELS(relu, 1)
WINOGRAD_OUTPUT_KERNELS(tanh, 2)
WINOGRAD_OUTPUT_KERNELS(sigmoid, 3)
WINOGRAD_OUTPUT_KERNELS(leaky_relu, 4)
WINOGRAD_OUTPUT_KERNELS(elu, 5)
WINOGRAD_OUTPUT_KERNELS(gelu, 6)

// The row form with a MaxPool2D of 2×2 windows moved by 2 after the layer (Conv2D::forward_pooled, linked
// by Sequential on a CPU driver; not for gelu): each block's four windows are pooled from the activated
// values in registers, with maxpool_forward's comparisons in its order (so its bits and argmax, the first
// maximum on ties), and only the pool's output and argmax are written: the layer's output y is neither
// written nor read back (the reference CNN's conv 2: 19 MB each way, 1.1 ms for maxpool_forward alone on
// PoCL). pooled and arg:(batch, F, OH / 2, OW / 2); arg as maxpool_forward's (the index in y's plane).
#define WINOGRAD_POOLED_PARAMS                                                                           \
  __global const float *restrict m, __global const float *restrict bias, const uint bias_off,            \
      __global float *restrict pooled, __global int *restrict arg, const uint batch, const uint filters, \
      const uint tp, const uint out_h, const uint out_w, const uint tiles_h, const uint tiles_w,         \
      const uint plane

// One window from its four activated values (top left at y's index `at`, rows `width` apart).
static inline void winograd_pool2(const float a, const float right, const float below, const float diagonal,
                                  const int at, const int width, __global float* best_out,
                                  __global int* at_out) {
  int best_at = at;
  float best = a;
  best_at = right > best ? at + 1 : best_at;
  best = right > best ? right : best;
  best_at = below > best ? at + width : best_at;
  best = below > best ? below : best;
  best_at = diagonal > best ? at + width + 1 : best_at;
  best = diagonal > best ? diagonal : best;
  *best_out = best;
  *at_out = best_at;
}

// The eight windows of rows 4·ty + 2·wi and the next, columns 4·start … 4·start + 15, from a chunk's four
// blocks o (o[i][j] lane k: row i, column 4·k + j of block k), activated as winograd_output_row does.
static inline void winograd_pool_chunk(float4 o[4][4], const float bf, const int act, const uint wi,
                                       const uint ty, const uint start, const uint out_w, float8* best_out,
                                       int8* at_out) {
  const uint8 pairs = (uint8)(0, 4, 1, 5, 2, 6, 3, 7);  // as winograd_output_row
  const uint16 quads = (uint16)(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
  float16 r[2];  // the two rows, activated
  for (uint h = 0; h < 2; ++h) {
    const uint i = 2 * wi + h;
    const float8 p01 = shuffle2(o[i][0] + bf, o[i][1] + bf, pairs),
                 p23 = shuffle2(o[i][2] + bf, o[i][3] + bf, pairs);
    r[h] = activate16(shuffle2(p01, p23, quads), act);
  }
  const float8 a = r[0].even, right = r[0].odd, below = r[1].even, diagonal = r[1].odd;
  const int8 at = (int8)((int)((4 * ty + 2 * wi) * out_w + 4 * start)) + (int8)(0, 2, 4, 6, 8, 10, 12, 14);
  int8 best_at = at;
  float8 best = a;
  int8 more = right > best;
  best_at = select(best_at, at + 1, more);
  best = select(best, right, more);
  more = below > best;
  best_at = select(best_at, at + (int)out_w, more);
  best = select(best, below, more);
  more = diagonal > best;
  best_at = select(best_at, at + (int)out_w + 1, more);
  best = select(best, diagonal, more);
  *best_out = best;
  *at_out = best_at;
}

static inline void winograd_output_pooled_row(WINOGRAD_POOLED_PARAMS, const int act) {
  const size_t item = get_global_id(0);
  if (item >= (size_t)batch * filters * tiles_h) return;
  const uint ty = (uint)(item % tiles_h), run = (uint)(item / tiles_h), b = run % batch, f = run / batch;
  const uint pool_h = out_h / 2, pool_w = out_w / 2;
  __global const float* first = m + (size_t)f * tp + ((size_t)b * tiles_h + ty) * tiles_w;
  __global float* pooled_plane = pooled + ((size_t)b * filters + f) * pool_h * pool_w;
  __global int* arg_plane = arg + ((size_t)b * filters + f) * pool_h * pool_w;
  const float bf = bias[bias_off + f];
  const uint window_rows = min(4u, out_h - 4 * ty) / 2;  // this row of blocks' windows down (inside y)
  const uint whole = out_w / 4;                          // blocks with all four columns inside
  if (whole < 4) {  // out_w < 16: one chunk, as winograd_output_row; its windows past the row not stored
    __global const float* in = first;
    WINOGRAD_OUTPUT_AMA(float4, WINOGRAD_LOAD4)
    for (uint wi = 0; wi < window_rows; ++wi) {
      float8 best;
      int8 best_at;
      winograd_pool_chunk(o, bf, act, wi, ty, 0, out_w, &best, &best_at);
      float best_lanes[8];
      int at_lanes[8];
      vstore8(best, 0, best_lanes);
      vstore8(best_at, 0, at_lanes);
      const size_t window = (size_t)(2 * ty + wi) * pool_w;
      for (uint k = 0; k < pool_w; ++k) {
        pooled_plane[window + k] = best_lanes[k];
        arg_plane[window + k] = at_lanes[k];
      }
    }
    return;
  }
  for (uint tx = whole; tx < tiles_w; ++tx) {
    __global const float* in = first + tx;
    WINOGRAD_OUTPUT_AMA(float, WINOGRAD_LOAD1)
    for (uint wi = 0; wi < window_rows; ++wi)
      for (uint wj = 0; wj < 2 && 2 * tx + wj < pool_w; ++wj) {
        const uint i = 2 * wi, j = 2 * wj, window = (2 * ty + wi) * pool_w + 2 * tx + wj;
        winograd_pool2(activate(o[i][j] + bf, act), activate(o[i][j + 1] + bf, act),
                       activate(o[i + 1][j] + bf, act), activate(o[i + 1][j + 1] + bf, act),
                       (int)((4 * ty + i) * out_w + 4 * tx + j), (int)out_w, pooled_plane + window,
                       arg_plane + window);
      }
  }
  for (uint chunk = 0;; chunk += 4) {
    const uint start = min(chunk, whole - 4);
    __global const float* in = first + start;
    WINOGRAD_OUTPUT_AMA(float4, WINOGRAD_LOAD4)
    for (uint wi = 0; wi < window_rows; ++wi) {
      float8 best;
      int8 best_at;
      winograd_pool_chunk(o, bf, act, wi, ty, start, out_w, &best, &best_at);
      const size_t window = (size_t)(2 * ty + wi) * pool_w + 2 * start;
      vstore8(best, 0, pooled_plane + window);
      vstore8(best_at, 0, arg_plane + window);
    }
    if (start == whole - 4) break;
  }
}

#define WINOGRAD_POOLED_KERNELS(NAME, ACT)                                                                \
  __kernel __attribute__((vec_type_hint(float4))) void winograd_output_rows_pooled_##NAME(                \
      WINOGRAD_POOLED_PARAMS) {                                                                           \
    winograd_output_pooled_row(m, bias, bias_off, pooled, arg, batch, filters, tp, out_h, out_w, tiles_h, \
                               tiles_w, plane, ACT);                                                      \
  }
WINOGRAD_POOLED_KERNELS(linear, 0)
WINOGRAD_POOLED_KERNELS(relu, 1)
WINOGRAD_POOLED_KERNELS(tanh, 2)
WINOGRAD_POOLED_KERNELS(sigmoid, 3)
WINOGRAD_POOLED_KERNELS(leaky_relu, 4)
WINOGRAD_POOLED_KERNELS(elu, 5)

// The weight gradient, by Winograd along x only: F(4, 3) turned round on each row. The forward pass of one
// kernel row ky over a block of four outputs y[b][f][y][4·tx …] is Aᵀ·((G·w) ⊙ (Bᵀ·d)) in one dimension (w
// the row W[f][c][ky][·], d the six values of x's row y + ky − pt from 4·tx − pl), linear in G·w, so that
// W[f][c][ky][·]'s gradient is Gᵀ·Σ_blocks ((A·e) ⊙ (Bᵀ·d)), e the block's four values of dz. With the blocks
// (b, y, tx) as rows t:
//   dz stage:  D[ξ][t][f] = (A·e)[ξ], zero past OW;
//   input:     X[ξ][t][ky·C + c] = (Bᵀ·d)[ξ], zero outside x;
//   GEMM:      S[ξ] = D[ξ]ᵀ·X[ξ] (F × 3C, over the blocks: 6 of them, each split into slices of blocks);
//   output:    dW[f][c][ky][·] = Gᵀ·(Σ_slices S[·][f][ky·C + c]).
// 6 products of F × blocks by blocks × 3C where im2row's GEMM multiplies F × pixels by pixels × 9C: half the
// multiplications, and each a wide one (the reference CNN's conv 2: 64 × 96, one tile of CLBlast's large
// CPU sets) where the two-dimensional transform's are 64 × 32 (conv 2's, at a third of the speed:
// docs/dev/performance-log.md). Both operands have the blocks as rows, so that CLBlast copies neither; rows
// past the last block are zeros. Eight filters (or columns) an item, in float8 lanes.

// A·(e0, …, e3): six values (A is Aᵀ above turned).
#define WINOGRAD_A(e0, e1, e2, e3, r)                      \
  do {                                                     \
    r[0] = (e0);                                           \
    r[1] = (e0) + (e1) + (e2) + (e3);                      \
    r[2] = (e0) - (e1) + (e2) - (e3);                      \
    r[3] = (e0) + 2.0f * (e1) + 4.0f * (e2) + 8.0f * (e3); \
    r[4] = (e0)-2.0f * (e1) + 4.0f * (e2)-8.0f * (e3);     \
    r[5] = (e3);                                           \
  } while (0)
// Gᵀ·(m0, …, m5): three values.
#define WINOGRAD_GT(m0, m1, m2, m3, m4, m5, o)                                            \
  do {                                                                                    \
    o[0] = 0.25f * (m0) - (1.0f / 6.0f) * ((m1) + (m2)) + (1.0f / 24.0f) * ((m3) + (m4)); \
    o[1] = (1.0f / 6.0f) * ((m2) - (m1)) + (1.0f / 12.0f) * ((m3) - (m4));                \
    o[2] = (1.0f / 6.0f) * ((m3) + (m4) - (m1) - (m2)) + (m5);                            \
  } while (0)

// D for item t·(fp / 8) + k: filters 8·k … 8·k + 7 of block t = (b·OH + y)·TW + tx (t < rows; zeros from
// block T and filter F on). dz's image (b, f) lies at dz[dz_off + f·channel_stride + b·OH·OW] (Conv2D's
// channel-major dz). Eight whole filters' blocks load as four-float runs turned into lanes (gathered lane by
// lane, the reference CNN's conv 2 took 3.4 ms on PoCL and 3.5 on Intel's runtime; so, 2.3 and 2.1).
__kernel __attribute__((vec_type_hint(float8))) void winograd_dw_dz(
    __global const float* restrict dz, const uint dz_off, __global float* restrict d, const uint batch,
    const uint filters, const uint fp, const uint out_h, const uint out_w, const uint tiles_w,
    const uint rows, const uint plane, const uint channel_stride) {
  const size_t item = get_global_id(0);
  const uint groups = fp / 8;
  if (item >= (size_t)rows * groups) return;
  const uint k = (uint)(item % groups), t = (uint)(item / groups);
  float8 e[4];
  const bool inside = t < batch * out_h * tiles_w;
  const uint tx = t % tiles_w, line = inside ? t / tiles_w : 0;  // line: b·OH + y
  __global const float* block = dz + dz_off + (size_t)8 * k * channel_stride + (size_t)line * out_w + 4 * tx;
  if (inside && 4 * tx + 4 <= out_w && 8 * k + 8 <= filters) {
    // A whole block of eight filters: four columns of each, loaded together and turned into lanes.
    float4 a[8];
    for (int l = 0; l < 8; ++l) a[l] = vload4(0, block + l * (size_t)channel_stride);
    e[0] = (float8)(a[0].s0, a[1].s0, a[2].s0, a[3].s0, a[4].s0, a[5].s0, a[6].s0, a[7].s0);
    e[1] = (float8)(a[0].s1, a[1].s1, a[2].s1, a[3].s1, a[4].s1, a[5].s1, a[6].s1, a[7].s1);
    e[2] = (float8)(a[0].s2, a[1].s2, a[2].s2, a[3].s2, a[4].s2, a[5].s2, a[6].s2, a[7].s2);
    e[3] = (float8)(a[0].s3, a[1].s3, a[2].s3, a[3].s3, a[4].s3, a[5].s3, a[6].s3, a[7].s3);
  } else {
    float s[4][8];  // s[j][lane]: column j of the block of filter 8·k + lane
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 8; ++l) s[j][l] = 0.0f;
    if (inside) {
      const uint columns = min(4u, out_w - 4 * tx);
      for (uint l = 0; l < 8; ++l) {
        if (8 * k + l >= filters) break;
        for (uint j = 0; j < columns; ++j) s[j][l] = block[l * (size_t)channel_stride + j];
      }
    }
    for (int j = 0; j < 4; ++j) e[j] = vload8(0, s[j]);
  }
  float8 r[6];
  WINOGRAD_A(e[0], e[1], e[2], e[3], r);
  __global float* out = d + (size_t)t * fp + 8 * k;
  for (int i = 0; i < 6; ++i) vstore8(r[i], 0, out + (size_t)i * plane);
}

// X straight from x in its own order (image b's channel c at x[x_off + (b·C + c)·H·W]), one work-item per
// line: item (b·(OH + 2) + q)·⌈C / 8⌉ + k transforms row q − pt of channels 8·k … 8·k + 7 (zeros outside x)
// block by block, once, and writes each block to the three rows of X that read it (kernel row ky of output
// row q − ky). Eight whole channels load as eight float4 + float2 runs turned into lanes (scalar loads, one
// lane at a time, ran this kernel 60 % slower on PoCL). Items from batch·(OH + 2)·⌈C / 8⌉ on write X's
// padding rows (T … rows) as zeros; its padding columns (3C on) are never read into a result. (From a
// channels-last copy of x, an item a block and kernel row: 6.2 ms for the reference CNN's conv 2 on PoCL
// with the copy, 3.7 on Intel's runtime; this form 4.4 and 1.5.)
__kernel __attribute__((vec_type_hint(float8))) void winograd_dw_input_rows(
    __global const float* restrict x, const uint x_off, __global float* restrict v, const uint batch,
    const uint channels, const uint np, const uint height, const uint width, const uint pad_top,
    const uint pad_left, const uint out_h, const uint tiles_w, const uint rows, const uint plane) {
  const size_t item = get_global_id(0);
  const uint groups = (channels + 7) / 8, lines_per_image = out_h + 2;
  const size_t lines = (size_t)batch * lines_per_image * groups, blocks = (size_t)batch * out_h * tiles_w;
  if (item >= lines) {
    const size_t z = item - lines;
    const uint zero_groups = np / 8;
    if (z >= (rows - blocks) * zero_groups) return;
    __global float* out = v + (blocks + z / zero_groups) * np + 8 * (z % zero_groups);
    for (int i = 0; i < 6; ++i) vstore8((float8)(0.0f), 0, out + (size_t)i * plane);
    return;
  }
  const uint k = (uint)(item % groups), q = (uint)(item / groups % lines_per_image),
             b = (uint)(item / groups / lines_per_image), lanes = min(8u, channels - 8 * k);
  const int yy = (int)q - (int)pad_top;
  const bool inside = yy >= 0 && yy < (int)height;
  const size_t channel_stride = (size_t)height * width;
  __global const float* row =
      x + x_off + ((size_t)b * channels + 8 * k) * channel_stride + (size_t)(inside ? yy : 0) * width;
  for (uint tx = 0; tx < tiles_w; ++tx) {
    const int x0 = (int)(4 * tx) - (int)pad_left;
    float8 d[6];
    if (inside && lanes == 8 && x0 >= 0 && x0 + 6 <= (int)width) {
      float4 a[8];
      float2 e[8];
      for (int l = 0; l < 8; ++l) {
        a[l] = vload4(0, row + l * channel_stride + x0);
        e[l] = vload2(0, row + l * channel_stride + x0 + 4);
      }
      d[0] = (float8)(a[0].s0, a[1].s0, a[2].s0, a[3].s0, a[4].s0, a[5].s0, a[6].s0, a[7].s0);
      d[1] = (float8)(a[0].s1, a[1].s1, a[2].s1, a[3].s1, a[4].s1, a[5].s1, a[6].s1, a[7].s1);
      d[2] = (float8)(a[0].s2, a[1].s2, a[2].s2, a[3].s2, a[4].s2, a[5].s2, a[6].s2, a[7].s2);
      d[3] = (float8)(a[0].s3, a[1].s3, a[2].s3, a[3].s3, a[4].s3, a[5].s3, a[6].s3, a[7].s3);
      d[4] = (float8)(e[0].s0, e[1].s0, e[2].s0, e[3].s0, e[4].s0, e[5].s0, e[6].s0, e[7].s0);
      d[5] = (float8)(e[0].s1, e[1].s1, e[2].s1, e[3].s1, e[4].s1, e[5].s1, e[6].s1, e[7].s1);
    } else {
      float s[6][8];  // s[j][lane]: column x0 + j of channel 8·k + lane
      for (int j = 0; j < 6; ++j) {
        const bool in_row = inside && x0 + j >= 0 && x0 + j < (int)width;
        for (uint l = 0; l < 8; ++l)
          s[j][l] = in_row && l < lanes ? row[l * channel_stride + (size_t)(x0 + j)] : 0.0f;
      }
      for (int j = 0; j < 6; ++j) d[j] = vload8(0, s[j]);
    }
    float8 r[6];
    WINOGRAD_BT(d[0], d[1], d[2], d[3], d[4], d[5], r);
    for (uint ky = 0; ky < 3; ++ky) {
      if (q < ky || q - ky >= out_h) continue;
      __global float* out = v + (((size_t)b * out_h + (q - ky)) * tiles_w + tx) * np + ky * channels + 8 * k;
      if (lanes == 8) {
        for (int i = 0; i < 6; ++i) vstore8(r[i], 0, out + (size_t)i * plane);
      } else {  // the last channels of a kernel row: the lanes past C would be the next row's
        for (int i = 0; i < 6; ++i) {
          float o[8];
          vstore8(r[i], 0, o);
          for (uint l = 0; l < lanes; ++l) out[(size_t)i * plane + l] = o[l];
        }
      }
    }
  }
}

// dW[f][c·9 + 3·ky + kx] for item f·3C + ky·C + c: the six planes' slices summed in slice order, slice s
// of plane ξ at s_[ξ·plane + s·slice + f·f_stride + (ky·C + c)·c_stride], then Gᵀ· along kx.
__kernel void winograd_dw_output(__global const float* restrict s_, __global float* restrict dw,
                                 const uint dw_off, const uint filters, const uint channels,
                                 const uint slices, const uint slice, const uint plane, const uint f_stride,
                                 const uint c_stride) {
  const size_t item = get_global_id(0);
  const uint columns = 3 * channels;
  if (item >= (size_t)filters * columns) return;
  const uint column = (uint)(item % columns), f = (uint)(item / columns), ky = column / channels,
             c = column % channels;
  __global const float* at = s_ + (size_t)f * f_stride + (size_t)column * c_stride;
  float m[6];
  for (int i = 0; i < 6; ++i) {
    float sum = 0.0f;
    for (uint s = 0; s < slices; ++s) sum += at[(size_t)i * plane + (size_t)s * slice];
    m[i] = sum;
  }
  float o[3];
  WINOGRAD_GT(m[0], m[1], m[2], m[3], m[4], m[5], o);
  __global float* out = dw + dw_off + ((size_t)f * channels + c) * 9 + 3 * ky;  // W[f][c][ky][·]
  for (int kx = 0; kx < 3; ++kx) out[kx] = o[kx];
}
