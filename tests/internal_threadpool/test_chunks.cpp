// lm_cpu_chunks_*: every chunk of a node goes to exactly one thread, runs
// respect max_take, a thread that starts late is stolen from, and a thread
// that runs ahead into the next node never takes chunks of the node before.

#include "cpu/chunks.h"
#include "cpu/kernels/kernel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

// Runs every thread's chunk loop of one node; counts who took each chunk.
struct Node {
    int64_t n;
    int64_t max_take;
    std::vector<std::atomic<int>> taken; // times chunk c was handed out
    std::vector<std::atomic<int>> by;    // thread that took chunk c
    std::vector<int64_t> counts;         // chunks per thread
    Node(int64_t n_, int64_t max_take_, int nth)
        : n(n_), max_take(max_take_), taken((size_t) n_), by((size_t) n_), counts((size_t) nth, 0) {}

    void run(const lm_cpu_params & p) {
        lm_cpu_chunk_iter it;
        lm_cpu_chunks_begin(&p, n, max_take, &it);
        for (int64_t b, e; lm_cpu_chunks_next(&p, &it, &b, &e);) {
            EXPECT_LT(b, e);
            EXPECT_LE(e - b, max_take);
            for (int64_t c = b; c < e; ++c) {
                taken[(size_t) c].fetch_add(1);
                by[(size_t) c].store(p.ith);
                counts[(size_t) p.ith]++;
            }
        }
    }
    void expect_each_once() const {
        for (int64_t c = 0; c < n; ++c) ASSERT_EQ(taken[(size_t) c].load(), 1) << "chunk " << c << " of " << n;
    }
};

lm_cpu_params params_for(int ith, int nth, lm_cpu_chunk_slot * slots, uint32_t seq) {
    return {ith, nth, 0, nullptr, nullptr, slots, seq};
}

} // namespace

TEST(Chunks, EveryChunkOnceForAnySizeAndThreadCount) {
    for (int nth : {1, 2, 3, 5}) {
        for (int64_t n : {0, 1, 2, 7, 64, 1000}) {
            for (int64_t take : {1, 4, 8}) {
                std::vector<lm_cpu_chunk_slot> slots((size_t) nth);
                Node node(n, take, nth);
                std::vector<std::thread> threads;
                for (int t = 1; t < nth; ++t)
                    threads.emplace_back([&, t] { node.run(params_for(t, nth, slots.data(), 1)); });
                node.run(params_for(0, nth, slots.data(), 1));
                for (auto & th : threads) th.join();
                node.expect_each_once();
            }
        }
    }
}

TEST(Chunks, StaticWithoutSlotsKeepsTheShares) {
    const int nth = 3;
    Node node(10, 2, nth);
    for (int t = 0; t < nth; ++t) node.run(params_for(t, nth, nullptr, 1)); // one after another: no stealing
    node.expect_each_once();
    EXPECT_EQ(node.counts[0], 4); // split: 4, 4, 2
    EXPECT_EQ(node.counts[1], 4);
    EXPECT_EQ(node.counts[2], 2);
}

// Thread 1 starts only after thread 0 has taken everything it could: with
// dynamic chunks thread 0 must not steal a share whose owner has not begun
// (its slot still holds an older epoch), and thread 1 then does its own.
TEST(Chunks, NoStealFromAnOwnerThatHasNotStarted) {
    std::vector<lm_cpu_chunk_slot> slots(2);
    Node node(100, 8, 2);
    node.run(params_for(0, 2, slots.data(), 1));
    EXPECT_EQ(node.counts[0], 50);
    node.run(params_for(1, 2, slots.data(), 1));
    node.expect_each_once();
    EXPECT_EQ(node.counts[1], 50);
}

// Thread 1 begins, takes one run and stalls; thread 0 finishes its share and
// steals the rest of thread 1's from the back.
TEST(Chunks, ALateOwnerIsStolenFrom) {
    std::vector<lm_cpu_chunk_slot> slots(2);
    Node node(100, 4, 2);
    const lm_cpu_params p1 = params_for(1, 2, slots.data(), 1);
    lm_cpu_chunk_iter it1;
    lm_cpu_chunks_begin(&p1, node.n, node.max_take, &it1);
    int64_t b, e;
    ASSERT_TRUE(lm_cpu_chunks_next(&p1, &it1, &b, &e));
    EXPECT_EQ(b, 50); // the front of its own share
    EXPECT_EQ(e, 54);
    for (int64_t c = b; c < e; ++c) node.taken[(size_t) c]++;

    node.run(params_for(0, 2, slots.data(), 1)); // its 50 and everything thread 1 left
    EXPECT_EQ(node.counts[0], 96);
    EXPECT_FALSE(lm_cpu_chunks_next(&p1, &it1, &b, &e));
    node.expect_each_once();
}

// No barrier between two chunked nodes: thread 0 is already in node 2 while
// thread 1 is still in node 1. Thread 0 must not take node 1's chunks from
// thread 1's slot (another epoch), and node 1 still gets every chunk once.
TEST(Chunks, ThreadAheadInTheNextNodeLeavesTheOldNodeAlone) {
    std::vector<lm_cpu_chunk_slot> slots(2);
    Node node1(40, 4, 2), node2(40, 4, 2);
    node1.run(params_for(0, 2, slots.data(), 1));
    const lm_cpu_params p1 = params_for(1, 2, slots.data(), 1);
    lm_cpu_chunk_iter it1;
    lm_cpu_chunks_begin(&p1, node1.n, node1.max_take, &it1); // thread 1 starts node 1 late
    node2.run(params_for(0, 2, slots.data(), 2));            // thread 0 runs node 2 meanwhile
    for (int64_t b, e; lm_cpu_chunks_next(&p1, &it1, &b, &e);) {
        for (int64_t c = b; c < e; ++c) node1.taken[(size_t) c]++;
    }
    node1.expect_each_once();
    EXPECT_EQ(node2.counts[0], 20); // thread 1's share of node 2 is untouched: it has not begun node 2
    node2.run(params_for(1, 2, slots.data(), 2));
    node2.expect_each_once();
}

// Many threads hammering one node repeatedly (TSan runs this too).
TEST(Chunks, RepeatedNodesUnderContention) {
    const int nth = 4;
    std::vector<lm_cpu_chunk_slot> slots(nth);
    for (uint32_t seq = 1; seq <= 50; ++seq) {
        Node node(257, 3, nth);
        std::vector<std::thread> threads;
        for (int t = 1; t < nth; ++t) threads.emplace_back([&, t] { node.run(params_for(t, nth, slots.data(), seq)); });
        node.run(params_for(0, nth, slots.data(), seq));
        for (auto & th : threads) th.join();
        node.expect_each_once();
    }
}
