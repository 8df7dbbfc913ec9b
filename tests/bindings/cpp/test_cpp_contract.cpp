// A kernel with a launch contract launched from C++ (tests/gpu/data/contract.ptx: out[i] = 3 i + 1,
// domain 1, exactly 128 threads a block, 256 bytes of dynamic shared memory): the kept launch's
// values, and the broken ones thrown as OXIDE_ERROR_LAUNCH naming the contract field, by launch
// and by check_launch. Exits 77 (ctest: skipped) where there is no GPU; runs on the fake driver too.
#include "check.hpp"
#include "oxide.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef OXIDE_GPU_DATA
#define OXIDE_GPU_DATA "tests/gpu/data"
#endif

// The expression must throw OXIDE_ERROR_LAUNCH with `field` in its message.
#define CHECK_REFUSED(field, expr)                                                                                     \
    do {                                                                                                               \
        bool named_ = false;                                                                                           \
        try {                                                                                                          \
            expr;                                                                                                      \
        } catch (const oxide::Error &e_) {                                                                             \
            named_ = e_.status() == OXIDE_ERROR_LAUNCH && std::strstr(e_.what(), field);                               \
            if (!named_)                                                                                               \
                std::fprintf(stderr, "%s:%d: %s threw %s\n", __FILE__, __LINE__, #expr, e_.what());                    \
        }                                                                                                              \
        CHECK(named_);                                                                                                 \
    } while (0)

int main(int argc, char **argv) {
    const std::string data = argc > 1 ? argv[1] : OXIDE_GPU_DATA;
    if (oxide::Device::count() == 0) {
        std::printf("SKIP: no GPU\n");
        return 77;
    }
    std::ifstream f(data + "/contract.ptx");
    std::stringstream ptx;
    ptx << f.rdbuf();
    CHECK(!ptx.str().empty());
    oxide::Device dev(0);
    auto mod = oxide::LoadedModule::from_ptx(dev, ptx.str());
    auto k = mod.kernel("contract_fill");
    const size_t n = 128 * 13 + 7;
    oxide::DeviceBuffer<uint32_t> out(dev, n);
    auto cfg = oxide::LaunchConfig::for_num_elems(n, 128);
    k.check_launch(cfg);
    k.launch(cfg, out);
    auto got = out.to_host();
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += got[i] != 3 * i + 1;
    CHECK(wrong == 0);

    auto small = oxide::LaunchConfig::for_num_elems(n, 64);
    CHECK_REFUSED("block 64x1x1 breaks the launch contract's block = (128, 1, 1)", k.launch(small, out));
    CHECK_REFUSED("block = (128, 1, 1)", k.check_launch(small));
    auto two_d = cfg;
    two_d.grid = oxide::Dim3(4, 2, 1);
    CHECK_REFUSED("domain = 1", k.launch(two_d, out));
    auto smem = cfg;
    smem.smem = 1024;
    CHECK_REFUSED("1024 bytes of dynamic shared memory break the launch contract's dynamic_shared = 256",
                  k.launch(smem, out));
    if (g_failures) {
        std::printf("FAILED: C++ launch contracts: %d checks failed\n", g_failures);
        return 1;
    }
    std::printf("PASSED: C++ launch contracts: the kept launch's %zu values, 4 refusals naming the field\n", n);
    return 0;
}
