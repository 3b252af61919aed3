/* The attention variants compiled, per head dim: X(kind, body, m, n). Only the tiles the
 * schedulers choose among are instantiated (m in {16,32,64}, n in {32,64,128} at head dim
 * 128, and m128 x n128 on sm_90a; a smaller set at 64), which keeps CI's CUDA build within
 * minutes on 2 cores. */
#ifndef AV_VARIANT_LIST_H
#define AV_VARIANT_LIST_H

/* The warp-specialised m128 x n128 tile (attn_ws.cuh) exists only in builds for sm_90a. */
#if defined(AV_KERN_WS) && AV_KERN_WS
#define AV_KERN_WS_D128(X) X(partial, attn_grid, 128, 128)
#else
#define AV_KERN_WS_D128(X)
#endif

#define AV_KERN_LIST_D128(X)                                                        \
  X(partial, attn_grid, 16, 32) X(partial, attn_grid, 16, 64)                       \
  X(partial, attn_grid, 16, 128) X(partial, attn_grid, 32, 32)                      \
  X(partial, attn_grid, 32, 64) X(partial, attn_grid, 32, 128)                      \
  X(partial, attn_grid, 64, 32) X(partial, attn_grid, 64, 64)                       \
  X(partial, attn_grid, 64, 128) AV_KERN_WS_D128(X)                                \
  X(persistent, attn_persistent, 16, 32) X(persistent, attn_persistent, 16, 64)     \
  X(persistent, attn_persistent, 32, 64) X(persistent, attn_persistent, 64, 64)     \
  X(decode, attn_grid, 16, 64) X(decode, attn_grid, 16, 128)

#define AV_KERN_LIST_D64(X)                                                         \
  X(partial, attn_grid, 16, 64) X(partial, attn_grid, 16, 128)                      \
  X(partial, attn_grid, 32, 64) X(partial, attn_grid, 64, 64)                       \
  X(persistent, attn_persistent, 16, 64) X(persistent, attn_persistent, 64, 64)     \
  X(decode, attn_grid, 16, 64)

#endif
