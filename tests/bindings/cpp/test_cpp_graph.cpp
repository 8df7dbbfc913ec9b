// oxide.hpp's pinned memory, tasks, CUDA graphs (from tasks and from stream capture) and NVTX
// ranges, checked against sums computed on the CPU. Exits 77 (ctest: skipped) where there is no
// GPU; ctest also runs it on the fake driver (test_cpp_graph_fakedriver).
#include "check.hpp"
#include "oxide.hpp"
#include "vecadd_kernel.hpp"

#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

static int bad_sums(const oxide::PinnedBuffer<float> &out, const oxide::PinnedBuffer<float> &a,
                    const oxide::PinnedBuffer<float> &b) {
    int bad = 0;
    for (size_t i = 0; i < out.size(); i++)
        bad += out[i] != a[i] + b[i];
    return bad;
}

static void fill(oxide::PinnedBuffer<float> &p, std::mt19937 &rng) {
    std::uniform_real_distribution<float> d(-100.0f, 100.0f);
    for (float &x : p)
        x = d(rng);
}

int main() {
    if (skip_without_gpu())
        return 77;
    const size_t n = 3000;
    std::mt19937 rng(20261201);
    oxide::Device dev(0);
    oxide::Context ctx;
    auto vecadd_module = oxide::LoadedModule::from_ptx(dev, build_vecadd(ctx, dev.target().c_str()));
    auto vecadd = vecadd_module.kernel("vecadd");
    oxide::PinnedBuffer<float> ha(dev, n), hb(dev, n), hout(dev, n);
    fill(ha, rng), fill(hb, rng);
    oxide::DeviceBuffer<float> da(dev, n), db(dev, n), dout(dev, n);
    oxide::Stream s(dev, OXIDE_STREAM_NON_BLOCKING);
    const auto cfg = oxide::LaunchConfig::for_num_elems(n, 128);

    // Pinned buffers: asynchronous copies in, a launch, a copy out, on one stream.
    ha.copy_to_async(da, s);
    hb.copy_to_async(db, s);
    vecadd.launch(oxide::LaunchConfig(cfg).on(s), da.cview(), db.cview(), dout);
    hout.copy_from_async(dout, s);
    s.synchronize();
    CHECK(bad_sums(hout, ha, hb) == 0);

    // A task graph: copies and the launch as one graph, replayed on new inputs each time.
    auto in_a = oxide::Task::copy(da, ha), in_b = oxide::Task::copy(db, hb);
    auto run = oxide::Task::launch(vecadd, cfg, da.cview(), db.cview(), dout);
    auto back = oxide::Task::copy(hout, dout);
    auto work = oxide::Task::sequence(oxide::Task::join(in_a, in_b), run, back);
    auto graph = work.graph();
    for (int round = 0; round < 3; round++) {
        fill(ha, rng), fill(hb, rng);
        std::fill(hout.begin(), hout.end(), 0.0f);
        graph.launch(s);
        s.synchronize();
        CHECK(bad_sums(hout, ha, hb) == 0);
    }
    // The task itself runs too, without a graph.
    fill(ha, rng);
    work.sync(s);
    CHECK(bad_sums(hout, ha, hb) == 0);
    auto clear = oxide::Task::memset(dout, 0);
    clear.sync();
    std::vector<float> zeros = dout.to_host();
    CHECK(std::count(zeros.begin(), zeros.end(), 0.0f) == static_cast<long>(n));

    // Stream capture: the launches a block queues become a graph; nothing runs until it is launched.
    oxide::DeviceBuffer<float> twice(dev, n);
    auto captured = oxide::capture(s, [&] {
        vecadd.launch(oxide::LaunchConfig(cfg).on(s), da.cview(), db.cview(), dout);
        vecadd.launch(oxide::LaunchConfig(cfg).on(s), dout.cview(), dout.cview(), twice);
    });
    fill(ha, rng), fill(hb, rng);
    ha.copy_to_async(da, s);
    hb.copy_to_async(db, s);
    captured.launch(s);
    oxide::PinnedBuffer<float> htwice(dev, n);
    htwice.copy_from_async(twice, s);
    s.synchronize();
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += htwice[i] != (ha[i] + hb[i]) + (ha[i] + hb[i]);
    CHECK(bad == 0);
    // A body that throws ends the capture, so the stream captures again afterwards.
    bool rethrown = false;
    try {
        (void)oxide::capture(s, [&] { throw std::runtime_error("in the body"); });
    } catch (const std::runtime_error &) {
        rethrown = true;
    }
    CHECK(rethrown);
    auto again = oxide::capture(s, [&] { oxide::Task::memset(twice, 0).submit(s); });
    again.launch(s);
    s.synchronize();
    CHECK(twice.to_host()[n / 2] == 0.0f);

    // Misuse is an exception naming the problem.
    oxide::PinnedBuffer<float> small(dev, n / 2);
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, oxide::Task::copy(da, small));
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, small.copy_to_async(da, s));
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, small.copy_from_async(da, s));
    CHECK_THROWS(OXIDE_ERROR_LAUNCH, oxide::Task::launch(vecadd, cfg, da.cview(), db.cview()));
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, oxide::Task::sequence());
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, oxide::PinnedBuffer<double>(dev, SIZE_MAX / 4));
    auto dflt = oxide::Stream::default_stream(dev);
    CHECK_THROWS(OXIDE_ERROR_STATE, oxide::capture(dflt, [] {}));

    // NVTX: ranges nest and close with their scope (with or without an NVTX library).
    {
        oxide::NvtxRange outer("test_cpp_graph");
        oxide::NvtxRange inner(std::string("replay"));
        graph.launch(s);
    }
    s.synchronize();
    CHECK(oxide_nvtx_pop() == OXIDE_ERROR_STATE); // both were closed
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, oxide::NvtxRange(static_cast<const char *>(nullptr)));
    oxide::nvtx_launch_ranges(true);
    CHECK(oxide::nvtx_launch_ranges());
    vecadd.launch(cfg, da.cview(), db.cview(), dout);
    oxide::nvtx_launch_ranges(false);
    CHECK(!oxide::nvtx_launch_ranges());
    dev.synchronize();

    std::printf("test_cpp_graph: %s (NVTX %s)\n", g_failures ? "FAILED" : "PASSED",
                oxide::nvtx_available() ? "found" : "absent: ranges were no-ops");
    return g_failures ? 1 : 0;
}
