// oxide.hpp on a GPU: buffers, launches checked against the manifest, streams, events, and a
// module written in Rust. Exits 77 (ctest: skipped) where there is no GPU.
#include "check.hpp"
#include "oxide.hpp"
#include "vecadd_kernel.hpp"

#include <cstdio>
#include <string>
#include <vector>

#ifndef OXIDE_BINDINGS_DATA
#define OXIDE_BINDINGS_DATA "tests/bindings/data"
#endif

int main(int argc, char **argv) {
    const std::string data = argc > 1 ? argv[1] : OXIDE_BINDINGS_DATA; // folder of the Rust-built modules
    if (skip_without_gpu())
        return 77;
    oxide::Device dev(0);
    oxide::Context ctx;
    auto mod = oxide::LoadedModule::from_ptx(dev, build_vecadd(ctx, dev.target().c_str()));
    auto vecadd = mod.kernel("vecadd");
    const size_t n = 1000;
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; i++)
        a[i] = float(i) * 0.5f, b[i] = 2.0f - float(i);
    auto da = oxide::DeviceBuffer<float>::from_host(dev, a);
    auto db = oxide::DeviceBuffer<float>::from_host(dev, std::span<const float>(b));
    oxide::DeviceBuffer<float> out(dev, n);
    const auto &cda = da; // const buffers go as read-only slices
    vecadd.launch(oxide::LaunchConfig::for_num_elems(n), cda, db.cview(), out);
    auto got = out.to_host();
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += got[i] != a[i] + b[i];
    CHECK(bad == 0);

    // streams and events
    oxide::Stream s(dev, OXIDE_STREAM_NON_BLOCKING);
    oxide::Event e0(dev), e1(dev);
    e0.record(s);
    out.zero();
    auto cfg = oxide::LaunchConfig::for_num_elems(n, 128).on(s);
    for (int r = 0; r < 10; r++)
        vecadd.launch(cfg, cda, cda, out.view());
    e1.record(s);
    e1.synchronize();
    CHECK(e0.elapsed_ms(e1) >= 0);
    std::vector<float> got2(n);
    out.copy_to(std::span<float>(got2), s);
    CHECK(got2[10] == a[10] * 2);

    // wrong arguments are exceptions, never crashes
    CHECK_THROWS(OXIDE_ERROR_LAUNCH, vecadd.launch(oxide::LaunchConfig::for_num_elems(n), cda, db));
    CHECK_THROWS(OXIDE_ERROR_LAUNCH, vecadd.launch(oxide::LaunchConfig::for_num_elems(n), cda, db, cda));
    oxide::DeviceBuffer<double> wrong(dev, n);
    CHECK_THROWS(OXIDE_ERROR_LAUNCH, vecadd.launch(oxide::LaunchConfig::for_num_elems(n), cda, db, wrong));
    CHECK_THROWS(OXIDE_ERROR_LAUNCH, vecadd.launch(oxide::LaunchConfig::for_num_elems(n), cda, db, 3.0f));
    CHECK_THROWS(OXIDE_ERROR_NOT_FOUND, mod.kernel("nope"));
    dev.check_ok();

    // a module written in Rust (cargo oxide build --module)
    auto rust = oxide::LoadedModule::load(dev, data + "/rust_vecadd.ptx");
    oxide::DeviceBuffer<float> c(dev, n);
    rust.kernel("vecadd").launch(oxide::LaunchConfig::for_num_elems(n), cda, std::as_const(db), c);
    got = c.to_host();
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += got[i] != a[i] + b[i];
    CHECK(bad == 0);
    auto gen = oxide::LoadedModule::load(dev, data + "/rust_generics.ptx");
    float k = 3.0f; // map::<f32>(move |x| x * k + 1.0): the closure's captures are k's 4 bytes
    gen.kernel("map_f32_scale").launch(oxide::LaunchConfig::for_num_elems(n), oxide::bytes_of(k), cda, c);
    got = c.to_host();
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += got[i] != a[i] * k + 1.0f;
    CHECK(bad == 0);
    std::printf("test_cpp_gpu on %s: %s\n", dev.name().c_str(), g_failures ? "FAILED" : "ok");
    return g_failures ? 1 : 0;
}
