// The step predictor's hot path does not allocate (DESIGN.md: "No allocation in the hot path"):
// every operator new in this program is counted, and a batch of predictions must add none.
// Under AddressSanitizer (which owns operator new/delete and reports a replaced pair as an
// alloc-dealloc mismatch) the counter is not installed and the check is skipped; the ordinary
// build runs it.
#include "catch_shim.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

#include <commscale/hardware/accelerators.hpp>
#include <commscale/hardware/clusters.hpp>
#include <commscale/predict/step.hpp>
#include <commscale/workload/models.hpp>

#if defined(__SANITIZE_ADDRESS__)
#define COMMSCALE_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COMMSCALE_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef COMMSCALE_COUNT_ALLOCATIONS
#define COMMSCALE_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<long> allocations{0};
}

#if COMMSCALE_COUNT_ALLOCATIONS
void* operator new(std::size_t n) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif

TEST_CASE("predict_step allocates nothing") {
    using namespace commscale;
    const transformer models[] = {model_by_name("gpt3-175b"), model_by_name("mixtral-8x7b")};
    cluster c = cluster_by_name("dgx-h100");
    c.nodes = 16;
    const accelerator acc = accelerator_by_name(c.node.accelerator);
    plan plans[3];
    plans[0] = plan{.tp = 8, .pp = 8, .dp = 2, .micro_batch = 1, .global_batch = 64};
    plans[1] = plan{.tp = 4, .pp = 4, .dp = 8, .micro_batch = 2, .global_batch = 256, .zero = 3};
    plans[1].sequence_parallel = true;
    plans[1].recompute_mode = recompute::selective;
    plans[2] = plan{.tp = 2, .pp = 1, .dp = 32, .cp = 2, .ep = 8, .micro_batch = 1, .global_batch = 64, .seq = 8192};
    double sink = 0;
    const long before = allocations.load();
    for (int i = 0; i < 300; ++i) {
        const plan& p = plans[i % 3];
        const transformer& m = i % 3 == 2 ? models[1] : models[0];
        sink += in_seconds(predict_step(m, c, acc, p).step);
        step_options ideal;
        ideal.mode = efficiency_mode::ideal;
        sink += in_seconds(predict_step(m, c, acc, p, ideal).step);
    }
    const long during = allocations.load() - before;
    CHECK(sink > 0);
#if COMMSCALE_COUNT_ALLOCATIONS
    CHECK(during == 0);
#else
    (void)during;
    WARN("allocation counting skipped under AddressSanitizer");
#endif
}
