// oxide.hpp without a GPU: builder, compile, manifest, exceptions, RAII, the no-GPU answers.
#include "check.hpp"
#include "oxide.hpp"
#include "vecadd_kernel.hpp"

#include <cstdio>
#include <string>

static void test_build_and_compile() {
    oxide::Context ctx;
    std::string ptx = build_vecadd(ctx);
    CHECK(ptx.find(".entry vecadd") != std::string::npos);
    CHECK(ptx.find(".target sm_90a") != std::string::npos);
    auto man = oxide::Manifest::from_ptx(ptx);
    CHECK(man.target() == "sm_90a");
    const auto &k = man.at("vecadd");
    CHECK(k.params.size() == 3);
    CHECK(k.params[2].name == "out" && k.params[2].is_mutable && k.params[2].kind == OXIDE_PARAM_SLICE);
    CHECK(k.params[0].type == OXIDE_SCALAR_F32 && !k.params[0].is_mutable);
    CHECK_THROWS(OXIDE_ERROR_NOT_FOUND, man.at("nope"));
}

static void test_print_parse_roundtrip() {
    oxide::Context ctx;
    auto m = ctx.create_module("r");
    auto k = m.add_kernel("k");
    auto p = k.ptr_param("p", OXIDE_SCALAR_I32, true);
    auto e = k.block();
    auto loop = k.block({ctx.i32()});
    auto done = k.block();
    e.br(loop, {e.const_int(ctx.i32(), 0)});
    auto i = loop.param(0);
    auto next = loop.add(i, loop.const_int(ctx.i32(), 1));
    loop.cond_br(loop.icmp(OXIDE_PRED_SLT, next, loop.const_int(ctx.i32(), 8)), loop, done, {next});
    done.store(done.const_int(ctx.i32(), 7), p, 4);
    done.ret();
    m.verify();
    std::string text = m.print();
    auto m2 = ctx.parse(text);
    CHECK(m2.print() == text);
    CHECK(m.compile(oxide::Options().target("sm_80").opt_level(2)).find(".target sm_80") != std::string::npos);
}

static void test_errors_carry_status_and_message() {
    oxide::Context ctx;
    auto m = ctx.create_module("bad");
    auto e = m.add_kernel("k").block();
    try {
        e.add(e.const_int(ctx.i32(), 1), e.const_float(ctx.f32(), 1.0));
        CHECK(false);
    } catch (const oxide::Error &err) {
        CHECK(err.status() == OXIDE_ERROR_TYPE_MISMATCH);
        CHECK(std::string(err.status_name()) == "OXIDE_ERROR_TYPE_MISMATCH");
        CHECK(!err.message().empty());
        CHECK(std::string(err.what()).rfind("OXIDE_ERROR_TYPE_MISMATCH: ", 0) == 0);
    }
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, oxide::Options().target("sm_12"));
    CHECK_THROWS(OXIDE_ERROR_PARSE, ctx.parse("module @x\nkernel @k( {"));
    CHECK_THROWS(OXIDE_ERROR_STATE, m.add_kernel("k"));
    auto m3 = ctx.create_module("noterm");
    m3.add_kernel("k").block();
    CHECK_THROWS(OXIDE_ERROR_VERIFY, m3.verify());
    CHECK_THROWS(OXIDE_ERROR_MANIFEST, oxide::Manifest::from_ptx(".version 8.0\n"));
}

static void test_kernel_attrs_and_kinds() {
    oxide::Context ctx;
    auto m = ctx.create_module("kinds");
    auto k = m.add_kernel("k");
    k.scalar_param("n", OXIDE_SCALAR_U64);
    k.bytes_param("f", 16, 8);
    k.tma_desc_param("d");
    k.launch_bounds(128, 2).cluster(2).dyn_smem(256);
    k.block().ret();
    auto man = oxide::Manifest::from_ptx(m.compile());
    const auto &ki = man.at("k");
    CHECK(ki.params[1].kind == OXIDE_PARAM_BYTES && ki.params[1].size == 16 && ki.params[1].align == 8);
    CHECK(ki.params[2].kind == OXIDE_PARAM_TMA_DESC);
    CHECK(ki.launch_bounds[0] == 128 && ki.launch_bounds[1] == 2);
    CHECK(ki.cluster[0] == 2 && ki.dyn_smem == 256);
}

// Tensor arguments: the oxide_tensor a Tensor<T> holds, the arg a launch makes of it, and the
// manifest's tensor rank and chosen block as Manifest reads them.
static void test_tensor_args() {
    oxide::Tensor<float> t(0x7f0000001000, {3, 5});
    CHECK(t.raw.struct_size == sizeof(oxide_tensor) && t.raw.data == 0x7f0000001000 && t.raw.rank == 2);
    CHECK(t.raw.elem == OXIDE_SCALAR_F32 && t.raw.is_mutable && t.raw.byte_offset == 0);
    CHECK(t.raw.shape[0] == 3 && t.raw.shape[1] == 5 && t.raw.strides[0] == 5 && t.raw.strides[1] == 1);
    oxide_arg a = oxide::detail::to_arg(t, nullptr);
    CHECK(a.kind == OXIDE_ARG_TENSOR && a.bytes == &t.raw && a.type == OXIDE_SCALAR_F32);
    oxide::Tensor<oxide::f8e4m3> t8(0x7f0000002000, {7, 2, 3}, {-6, 3, 1}, false);
    t8.offset(5);
    CHECK(t8.raw.elem == OXIDE_SCALAR_F8E4M3 && !t8.raw.is_mutable && t8.raw.byte_offset == 5);
    CHECK(t8.raw.strides[0] == -6 && t8.raw.strides[2] == 1 && t8.raw.shape[2] == 3);
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, oxide::Tensor<float>(0, {1, 2, 3, 4, 5}));
    CHECK_THROWS(OXIDE_ERROR_INVALID_ARGUMENT, oxide::Tensor<float>(0, {4, 4}, {1}));
    auto man = oxide::Manifest::from_ptx(
        "// oxide.manifest.v1 {\"kernels\":[{\"name\":\"add\",\"params\":[{\"name\":\"x\",\"kind\":\"tensor\","
        "\"elem\":\"bf16\",\"rank\":3,\"mut\":true}],\"block\":[128,1,1]}]}\n");
    const auto &ki = man.at("add");
    CHECK(ki.params[0].kind == OXIDE_PARAM_TENSOR && ki.params[0].rank == 3 && ki.params[0].is_mutable);
    CHECK(ki.params[0].type == OXIDE_SCALAR_BF16 && ki.block[0] == 128 && ki.block[1] == 1);
    auto cfg = oxide::LaunchConfig::for_grid(oxide::Dim3(4, 2));
    CHECK(cfg.grid.x == 4 && cfg.grid.y == 2 && !cfg.block.x && !cfg.block.y && !cfg.block.z);
}

static void test_no_gpu() {
    if (oxide::Device::count() > 0)
        return;
    bool threw = false;
    try {
        oxide::Device d(0);
    } catch (const oxide::Error &e) {
        threw = e.status() == OXIDE_ERROR_NO_DRIVER || e.status() == OXIDE_ERROR_NO_DEVICE;
    }
    CHECK(threw);
}

int main() {
    CHECK(oxide::version() == "0.1.0");
    test_build_and_compile();
    test_print_parse_roundtrip();
    test_errors_carry_status_and_message();
    test_kernel_attrs_and_kinds();
    test_tensor_args();
    test_no_gpu();
    std::printf("test_cpp_builder: %s\n", g_failures ? "FAILED" : "ok");
    return g_failures ? 1 : 0;
}
