/* Realistic decode batches for the simulator benchmarks (`anvil bench sim`, `anvil bench
 * workload`): long shared documents, conversations under a multi-level system prompt, trees
 * of thought and speculative token trees, the families of analysis/heldout.py, built here in
 * C from fixed seeds so every run and every machine simulates the same forests. */
#ifndef AV_CLI_BENCH_BATCHES_H
#define AV_CLI_BENCH_BATCHES_H

#include <stdint.h>

#include "core/error.h"
#include "core/workload.h"

typedef enum {
  AV_BENCH_DOC,          /* one document of `doc_tokens`, 128 questions of 20-300 tokens */
  AV_BENCH_CONVERSATION, /* base prompt, 4 personas, 32 chats each (128 requests) */
  AV_BENCH_THOUGHTS,     /* a prompt, then a 4-ary tree of reasoning steps, depth 4 */
  AV_BENCH_SPECULATIVE,  /* 16 sequences, each a token tree of up to 16 leaves */
} av_bench_family_t;

typedef struct av_bench_batch {
  const char *name;
  av_bench_family_t family;
  int64_t doc_tokens;    /* AV_BENCH_DOC only */
  uint64_t seed;
} av_bench_batch_t;

/* The realistic set of `anvil bench sim`, in its table's order. */
extern const av_bench_batch_t av_bench_realistic[];
extern const int av_bench_n_realistic;

/* Builds one batch at 32/8 heads, d 128, fp16. Caller owns the result
 * (av_workload_destroy); NULL with *err set on failure. */
av_workload_t *av_bench_batch_build(const av_bench_batch_t *b, av_error_t *err);

#endif
