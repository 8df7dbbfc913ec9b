// oxide.hpp on a GPU: buffers, launches checked against the manifest, streams, events, and
// modules written in Rust (a SIMT kernel, a generic one, a tile kernel). Exits 77 (ctest:
// skipped) where there is no GPU.
#include "check.hpp"
#include "oxide.hpp"
#include "vecadd_kernel.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#ifndef OXIDE_BINDINGS_DATA
#define OXIDE_BINDINGS_DATA "tests/bindings/data"
#endif

static uint16_t to_bf16(float x) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    return static_cast<uint16_t>((b + 0x7fff + ((b >> 16) & 1)) >> 16);
}

static float from_bf16(uint16_t h) {
    uint32_t b = static_cast<uint32_t>(h) << 16;
    float x;
    std::memcpy(&x, &b, 4);
    return x;
}

// A tile kernel written in Rust (examples/rust/tile_matmul's #[tile_kernel], exported with cargo
// oxide build --module): tensors for its tensor parameters, only a grid (the block is the
// compiler's), checked against a CPU matmul of the same bf16 values.
static void check_rust_tile(oxide::Device &dev, const std::string &data) {
    auto mod = oxide::LoadedModule::load(dev, data + "/rust_tile_matmul.ptx");
    const int64_t m = 100, n = 72, k = 40; // ragged: not multiples of the 64x64x32 tiles
    std::vector<oxide::bf16> a(m * k), b(k * n), c(m * n, oxide::bf16{0x7fc1}); // c: NaN until written
    uint32_t seed = 12345;
    auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0f * 4.0f - 2.0f; };
    for (auto &v : a)
        v.bits = to_bf16(rnd());
    for (auto &v : b)
        v.bits = to_bf16(rnd());
    auto da = oxide::DeviceBuffer<oxide::bf16>::from_host(dev, a);
    auto db = oxide::DeviceBuffer<oxide::bf16>::from_host(dev, b);
    auto dc = oxide::DeviceBuffer<oxide::bf16>::from_host(dev, c);
    auto cfg = oxide::LaunchConfig::for_grid(oxide::Dim3((m + 63) / 64, (n + 63) / 64));
    mod.kernel("matmul_bf16")
        .launch(cfg, oxide::Tensor<oxide::bf16>(da, {m, k}, {}, false),
                oxide::Tensor<oxide::bf16>(db, {k, n}, {}, false), oxide::Tensor<oxide::bf16>(dc, {m, n}));
    auto got = dc.to_host();
    int bad = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float want = 0, mag = 0;
            for (int64_t x = 0; x < k; x++) {
                float p = from_bf16(a[i * k + x].bits) * from_bf16(b[x * n + j].bits);
                want += p, mag += std::fabs(p);
            }
            float tol = 8.0f * k * k * mag / 16777216.0f + std::fabs(want) / 128 + 1e-6f;
            bad += !(std::fabs(from_bf16(got[i * n + j].bits) - want) <= tol);
        }
    CHECK(bad == 0);
    // a tensor of the wrong element type is refused by the manifest check
    oxide::DeviceBuffer<float> wrong(dev, m * k);
    CHECK_THROWS(OXIDE_ERROR_LAUNCH, mod.kernel("matmul_bf16")
                                         .launch(cfg, oxide::Tensor<float>(wrong, {m, k}, {}, false),
                                                 oxide::Tensor<oxide::bf16>(db, {k, n}, {}, false),
                                                 oxide::Tensor<oxide::bf16>(dc, {m, n})));
}

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
    check_rust_tile(dev, data);
    std::printf("test_cpp_gpu on %s: %s\n", dev.name().c_str(), g_failures ? "FAILED" : "ok");
    return g_failures ? 1 : 0;
}
