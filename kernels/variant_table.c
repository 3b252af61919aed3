/* Prints the compiled attention variants (kind, tile, threads, dynamic shared memory) as JSON
 * lines for kernels/gen_variants.py, which joins them with the compiler's resource report.
 * Reads the kernels library's static table only: needs no GPU. */
#include <stdio.h>

#include "kernels/kernels.h"

int main(void) {
  int n = 0;
  const av_kern_variant_t *v = av_kern_variants(&n);
  for (int i = 0; i < n; ++i)
    printf("{\"name\": \"%s\", \"kind\": %d, \"m\": %d, \"n\": %d, \"warps\": %d, "
           "\"head_dim\": %d, \"dtype\": %d, \"threads\": %d, \"smem_dynamic\": %d}\n",
           v[i].name, v[i].kind, v[i].m, v[i].n, v[i].warps, v[i].head_dim, v[i].dtype,
           v[i].threads, v[i].smem_dynamic);
  return n > 0 ? 0 : 1;
}
