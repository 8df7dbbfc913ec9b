// oxide.hpp with several GPUs: a module per device, a peer copy ordered by another device's event,
// peer access, and the refusals as exceptions. With one GPU the copy runs from device 0 to itself
// and the program says what needs two. The fake driver runs it as 2 devices (ctest *_fakedriver).
#include "check.hpp"
#include "oxide.hpp"
#include "vecadd_kernel.hpp"

#include <cstdio>
#include <random>
#include <vector>

int main() {
    if (skip_without_gpu())
        return 77;
    const int ndev = oxide::Device::count();
    const size_t n = 4096;
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> u(0.5f, 2.0f);
    std::vector<float> a(n), b(n), c(n);
    for (size_t i = 0; i < n; i++)
        a[i] = u(rng), b[i] = -u(rng), c[i] = u(rng);
    oxide::Context ctx;
    oxide::Device d0(0), dl(ndev - 1); // the last device: device 0 itself with one GPU
    auto ptx = build_vecadd(ctx, d0.target().c_str());
    auto m0 = oxide::LoadedModule::from_ptx(d0, ptx), ml = oxide::LoadedModule::from_ptx(dl, ptx);
    auto k0 = m0.kernel("vecadd"), kl = ml.kernel("vecadd");

    // the last device computes a + b; device 0 waits for it, copies the sum over and adds c
    auto la = oxide::DeviceBuffer<float>::from_host(dl, a), lb = oxide::DeviceBuffer<float>::from_host(dl, b);
    oxide::DeviceBuffer<float> lsum(dl, n), copy(d0, n), out(d0, n);
    auto zc = oxide::DeviceBuffer<float>::from_host(d0, c);
    oxide::Stream sl(dl, OXIDE_STREAM_NON_BLOCKING), s0(d0, OXIDE_STREAM_NON_BLOCKING);
    oxide::Event done(dl, OXIDE_EVENT_DISABLE_TIMING);
    kl.launch(oxide::LaunchConfig::for_num_elems(n).on(sl), la.cview(), lb.cview(), lsum);
    done.record(sl);
    oxide::stream_wait(s0, done);
    copy.copy_from_peer(lsum, &s0);
    k0.launch(oxide::LaunchConfig::for_num_elems(n).on(s0), copy.cview(), zc.cview(), out);
    s0.synchronize();
    auto got = out.to_host();
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += got[i] != (a[i] + b[i]) + c[i];
    CHECK(bad == 0);
    oxide::DeviceBuffer<float> back(dl, n);
    back.copy_from_peer(out);
    CHECK(back.to_host() == got);

    CHECK(!d0.can_access_peer(d0));
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, d0.enable_peer_access(d0));
    oxide::DeviceBuffer<float> small(d0, 3);
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, small.copy_from_peer(lsum));
    if (ndev > 1) {
        CHECK(!d0.peer_access_enabled(dl));
        // a kernel on device 0 given the last device's memory: refused until peer access is on
        CHECK_THROWS(OXIDE_ERROR_LAUNCH,
                     k0.launch(oxide::LaunchConfig::for_num_elems(n), lsum.cview(), zc.cview(), out));
        if (d0.can_access_peer(dl)) {
            d0.enable_peer_access(dl);
            CHECK(d0.peer_access_enabled(dl));
            out.zero();
            k0.launch(oxide::LaunchConfig::for_num_elems(n), lsum.cview(), zc.cview(), out);
            CHECK(out.to_host() == got);
        } else {
            CHECK_THROWS(OXIDE_ERROR_UNSUPPORTED, d0.enable_peer_access(dl));
        }
    } else {
        std::printf("not run (one GPU): a copy and an event between two devices, peer access\n");
    }
    std::printf("%s: cpp multi: %d device(s)\n", g_failures ? "FAILED" : "PASSED", ndev);
    return g_failures ? 1 : 0;
}
