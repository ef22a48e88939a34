#pragma once
// Fixture shared by the attention-kernel validation tests: the library's attention core
// (detail::attention_core_seconds) for one attention benchmark's shape, one layer of `heads`
// heads over hidden 2048, `batch` sequences of `seq` tokens, every query attending its causal span.

#include <commscale/predict/compute.hpp>
#include <commscale/workload/transformer.hpp>

namespace attention_test {

inline commscale::detail::gemm_pair core_seconds(const commscale::compute_params& c, int heads, int batch, int seq) {
    const commscale::transformer m{.name = "attention-benchmark", .layers = 1, .hidden = 2048, .heads = heads,
                                   .kv_heads = heads, .ffn = 8192, .vocab = 32000, .max_seq = seq,
                                   .source = "an attention-kernel benchmark's shape"};
    commscale::layer_shape shape;
    shape.micro_batch = batch;
    shape.seq = seq;
    return commscale::detail::attention_core_seconds(m, shape, c, seq);
}

}  // namespace attention_test
