/* The attention variants compiled, per head dim: X(kind, body, m, n). Only the tiles the
 * schedulers choose among are instantiated (m in {16,32,64}, n in {32,64,128} at
 * head dim 128; a smaller set at 64), which keeps CI's CUDA build within minutes on 2 cores. */
#ifndef AV_VARIANT_LIST_H
#define AV_VARIANT_LIST_H

#define AV_KERN_LIST_D128(X)                                                        \
  X(partial, attn_grid, 16, 32) X(partial, attn_grid, 16, 64)                       \
  X(partial, attn_grid, 16, 128) X(partial, attn_grid, 32, 32)                      \
  X(partial, attn_grid, 32, 64) X(partial, attn_grid, 32, 128)                      \
  X(partial, attn_grid, 64, 32) X(partial, attn_grid, 64, 64)                       \
  X(partial, attn_grid, 64, 128)                                                    \
  X(persistent, attn_persistent, 16, 32) X(persistent, attn_persistent, 16, 64)     \
  X(persistent, attn_persistent, 32, 64) X(persistent, attn_persistent, 64, 64)     \
  X(decode, attn_grid, 16, 64) X(decode, attn_grid, 16, 128)

#define AV_KERN_LIST_D64(X)                                                         \
  X(partial, attn_grid, 16, 64) X(partial, attn_grid, 16, 128)                      \
  X(partial, attn_grid, 32, 64) X(partial, attn_grid, 64, 64)                       \
  X(persistent, attn_persistent, 16, 64) X(persistent, attn_persistent, 64, 64)     \
  X(decode, attn_grid, 16, 64)

#endif
