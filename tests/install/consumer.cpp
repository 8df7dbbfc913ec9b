/* C++ consumer built against the installed prefix (pkg-config and find_package): oxide.hpp is
 * installed beside oxide.h. Builds a kernel, compiles it and reads its manifest. */
#include <oxide.hpp>

#include <cstdio>

int main() try {
    oxide::Context ctx;
    auto m = ctx.create_module("m");
    auto k = m.add_kernel("k");
    auto a = k.slice_param("a", OXIDE_SCALAR_F32, true);
    auto b = k.block();
    b.store(b.const_float(ctx.f32(), 1.0), a.ptr, 4);
    b.ret();
    auto man = oxide::Manifest::from_ptx(m.compile());
    std::printf("consumer_cpp: liboxide %s, kernel %s(%zu params)\n", oxide::version().c_str(),
                man.at("k").name.c_str(), man.at("k").params.size());
    return oxide::version() == "0.1.0" && man.at("k").params.size() == 1 ? 0 : 1;
} catch (const oxide::Error &e) {
    std::fprintf(stderr, "consumer_cpp: %s\n", e.what());
    return 1;
}
