// The vecadd kernel written through oxide.hpp's builder: out[i] = a[i] + b[i] for i < min of the
// three lengths. The example (vecadd.cpp) runs it; the C++ tests and bench/launch_cpp reuse it.
#pragma once
#include "oxide.hpp"

inline std::string build_vecadd(oxide::Context &ctx, const char *target = "sm_90a") {
    auto m = ctx.create_module("vecadd");
    auto k = m.add_kernel("vecadd");
    auto a = k.slice_param("a", OXIDE_SCALAR_F32);
    auto b = k.slice_param("b", OXIDE_SCALAR_F32);
    auto out = k.slice_param("out", OXIDE_SCALAR_F32, true);
    auto entry = k.block(), body = k.block(), done = k.block();
    auto n = entry.umin(entry.umin(a.len, b.len), out.len);
    auto i = entry.global_id_x(ctx.i64());
    entry.cond_br(entry.icmp(OXIDE_PRED_ULT, i, n), body, done);
    auto f32 = ctx.f32();
    auto x = body.load(f32, body.offset(a.ptr, i, f32), 4);
    auto y = body.load(f32, body.offset(b.ptr, i, f32), 4);
    body.store(body.add(x, y), body.offset(out.ptr, i, f32), 4);
    body.br(done);
    done.ret();
    return m.compile(oxide::Options().target(target));
}

inline std::string build_empty(oxide::Context &ctx, const char *target = "sm_90a") {
    auto m = ctx.create_module("empty");
    m.add_kernel("empty").block().ret();
    return m.compile(oxide::Options().target(target));
}
