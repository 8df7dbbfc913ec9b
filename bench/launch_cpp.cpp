// Host cost of a launch through oxide.hpp against the same launch through the C API
// (oxide_kernel_launch), on an empty kernel: prints `launch_cpp oxide_us c_us ratio` (medians of
// repeated rounds, interleaved). Exits 77 where there is no GPU.
#include "oxide.hpp"
#include "vecadd_kernel.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 21, iters = argc > 2 ? std::atoi(argv[2]) : 2000;
    if (oxide::Device::count() == 0) {
        std::printf("SKIP: no GPU\n");
        return 77;
    }
    oxide::Device dev(0);
    oxide::Context ctx;
    auto mod = oxide::LoadedModule::from_ptx(dev, build_vecadd(ctx, dev.target().c_str()));
    auto k = mod.kernel("vecadd");
    const auto a = oxide::DeviceBuffer<float>::zeros(dev, 256);
    oxide::DeviceBuffer<float> out(dev, 256);
    oxide::Stream s(dev, OXIDE_STREAM_NON_BLOCKING);
    auto cfg = oxide::LaunchConfig::for_num_elems(256).on(s);
    const uint32_t grid[3] = {1, 1, 1}, block[3] = {256, 1, 1};
    oxide_kernel *ck = k.get();
    oxide_stream *cs = s.get();
    using clk = std::chrono::steady_clock;
    auto time_cpp = [&] {
        auto t0 = clk::now();
        for (int i = 0; i < iters; i++)
            k.launch(cfg, a, a, out);
        auto t1 = clk::now();
        s.synchronize();
        return std::chrono::duration<double, std::micro>(t1 - t0).count() / iters;
    };
    auto time_c = [&] {
        auto t0 = clk::now();
        for (int i = 0; i < iters; i++) {
            oxide_arg args[3] = {oxide_arg_from_buffer(a.get(), OXIDE_SCALAR_F32, 0),
                                 oxide_arg_from_buffer(a.get(), OXIDE_SCALAR_F32, 0),
                                 oxide_arg_from_buffer(out.get(), OXIDE_SCALAR_F32, 1)};
            if (oxide_kernel_launch(ck, cs, grid, block, 0, args, 3))
                std::abort();
        }
        auto t1 = clk::now();
        s.synchronize();
        return std::chrono::duration<double, std::micro>(t1 - t0).count() / iters;
    };
    time_cpp(), time_c(); // warm up
    std::vector<double> cpp, c;
    for (int r = 0; r < rounds; r++) {
        cpp.push_back(time_cpp());
        c.push_back(time_c());
    }
    double mc = median(cpp), mcc = median(c);
    std::printf("launch_cpp %.3f %.3f %.3f\n", mc, mcc, mc / mcc);
    return 0;
}
