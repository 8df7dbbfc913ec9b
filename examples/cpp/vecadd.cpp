// vecadd in C++ with oxide.hpp: build the kernel with the IR builder (vecadd_kernel.hpp), compile
// it to PTX, load it, launch it on 1,024 floats and check the result. Without a GPU it stops after
// the compile.
#include "vecadd_kernel.hpp"

#include <cstdio>
#include <vector>

int main() try {
    oxide::Context ctx;
    std::string ptx = build_vecadd(ctx, "sm_90a");
    std::printf("compiled vecadd: %zu bytes of PTX\n", ptx.size());

    if (oxide::Device::count() == 0) {
        std::printf("no GPU found: the PTX was compiled, but not run\n");
        return 77;
    }
    oxide::Device dev(0);
    auto mod = oxide::LoadedModule::from_ptx(dev, ptx);
    const size_t n = 1024;
    std::vector<float> ha(n), hb(n);
    for (size_t j = 0; j < n; j++)
        ha[j] = float(j), hb[j] = 2.0f * float(j);
    const auto da = oxide::DeviceBuffer<float>::from_host(dev, ha);
    const auto db = oxide::DeviceBuffer<float>::from_host(dev, hb);
    oxide::DeviceBuffer<float> dc(dev, n);
    mod.kernel("vecadd").launch(oxide::LaunchConfig::for_num_elems(n), da, db, dc);
    auto hc = dc.to_host();
    size_t bad = 0;
    for (size_t j = 0; j < n; j++)
        bad += hc[j] != ha[j] + hb[j];
    if (bad) {
        std::printf("FAILED: %zu of %zu elements wrong\n", bad, n);
        return 1;
    }
    std::printf("PASSED: all %zu elements correct\n", n);
    return 0;
} catch (const oxide::Error &e) {
    std::fprintf(stderr, "oxide error: %s\n", e.what());
    return 1;
}
