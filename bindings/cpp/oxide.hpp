/* oxide.hpp -- header-only C++20 API over liboxide's C API (include/oxide.h).
 *
 *  - RAII: every handle that the C API lets you destroy is owned by a move-only object.
 *  - Errors: every failed call throws oxide::Error, carrying the oxide_status, its stable name
 *    and the library's message (oxide_last_error()).
 *  - Launches: kernel.launch(cfg, args...) turns each argument into an oxide_arg (scalars,
 *    DeviceBuffer<T> / DeviceSlice<T>, Bytes, TmaDesc); liboxide checks them against the module's
 *    manifest (count, kind, types, mutability), and scalars are converted to the parameter's
 *    declared type first when that loses nothing. Host memory (std::vector, std::span, pointers)
 *    is refused at compile time: copy it into a DeviceBuffer.
 *
 * docs/cpp.md is the guide. Lifetimes follow the C API: an IR Module, its Functions, Blocks and
 * Values must not outlive their Context; Kernels must not outlive their LoadedModule.
 *
 * One file of over 1,000 lines on purpose: header-only, so that a C++ program needs this file
 * and liboxide, nothing else.
 */
#ifndef OXIDE_HPP
#define OXIDE_HPP

#include <oxide.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <memory>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace oxide {

// ============================================================================================
// errors

class Error : public std::runtime_error {
  public:
    Error(oxide_status status, std::string message)
        : std::runtime_error(std::string(oxide_status_name(status)) + ": " + message), status_(status),
          message_(std::move(message)) {}
    oxide_status status() const noexcept { return status_; }
    const char *status_name() const noexcept { return oxide_status_name(status_); }
    const std::string &message() const noexcept { return message_; }

  private:
    oxide_status status_;
    std::string message_;
};

inline void check(oxide_status st) {
    if (st != OXIDE_OK)
        throw Error(st, oxide_last_error());
}

inline std::string version() { return oxide_version(); }

namespace detail {
template <class T, void (*Destroy)(T *)> struct deleter {
    void operator()(T *p) const noexcept {
        if (p)
            Destroy(p);
    }
};
template <class T, void (*Destroy)(T *)> using owned = std::unique_ptr<T, deleter<T, Destroy>>;
} // namespace detail

// ============================================================================================
// interface scalar types

struct f16 {
    uint16_t bits;
};
struct bf16 {
    uint16_t bits;
};
// fp8 exists only as a tensor element type (Tensor<f8e4m3>), never as a scalar argument.
struct f8e4m3 {
    uint8_t bits;
};
struct f8e5m2 {
    uint8_t bits;
};

template <class T> struct scalar_traits;
#define OXIDE_HPP_SCALAR(T, S)                                                                                         \
    template <> struct scalar_traits<T> { static constexpr oxide_scalar value = S; };
// one line per SCALAR row of lib/scalars.def (generated block; do not edit by hand)
// clang-format off
// BEGIN GENERATED SCALARS
OXIDE_HPP_SCALAR(bool, OXIDE_SCALAR_BOOL)
OXIDE_HPP_SCALAR(int8_t, OXIDE_SCALAR_I8)
OXIDE_HPP_SCALAR(int16_t, OXIDE_SCALAR_I16)
OXIDE_HPP_SCALAR(int32_t, OXIDE_SCALAR_I32)
OXIDE_HPP_SCALAR(int64_t, OXIDE_SCALAR_I64)
OXIDE_HPP_SCALAR(uint8_t, OXIDE_SCALAR_U8)
OXIDE_HPP_SCALAR(uint16_t, OXIDE_SCALAR_U16)
OXIDE_HPP_SCALAR(uint32_t, OXIDE_SCALAR_U32)
OXIDE_HPP_SCALAR(uint64_t, OXIDE_SCALAR_U64)
OXIDE_HPP_SCALAR(f16, OXIDE_SCALAR_F16)
OXIDE_HPP_SCALAR(bf16, OXIDE_SCALAR_BF16)
OXIDE_HPP_SCALAR(float, OXIDE_SCALAR_F32)
OXIDE_HPP_SCALAR(double, OXIDE_SCALAR_F64)
OXIDE_HPP_SCALAR(f8e4m3, OXIDE_SCALAR_F8E4M3)
OXIDE_HPP_SCALAR(f8e5m2, OXIDE_SCALAR_F8E5M2)
// END GENERATED SCALARS
// clang-format on
#undef OXIDE_HPP_SCALAR
// long / unsigned long long etc. map onto the fixed-width types of the same size and sign.
template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, int8_t> &&
         !std::is_same_v<T, int16_t> && !std::is_same_v<T, int32_t> && !std::is_same_v<T, int64_t> &&
         !std::is_same_v<T, uint8_t> && !std::is_same_v<T, uint16_t> && !std::is_same_v<T, uint32_t> &&
         !std::is_same_v<T, uint64_t>) struct scalar_traits<T> {
    static constexpr oxide_scalar value = std::is_signed_v<T> ? (sizeof(T) == 8   ? OXIDE_SCALAR_I64
                                                                 : sizeof(T) == 4 ? OXIDE_SCALAR_I32
                                                                 : sizeof(T) == 2 ? OXIDE_SCALAR_I16
                                                                                  : OXIDE_SCALAR_I8)
                                                              : (sizeof(T) == 8   ? OXIDE_SCALAR_U64
                                                                 : sizeof(T) == 4 ? OXIDE_SCALAR_U32
                                                                 : sizeof(T) == 2 ? OXIDE_SCALAR_U16
                                                                                  : OXIDE_SCALAR_U8);
};
template <class T> inline constexpr oxide_scalar scalar_v = scalar_traits<std::remove_cvref_t<T>>::value;

inline const char *scalar_name(oxide_scalar s) {
    const char *n = oxide_scalar_name(s);
    return n ? n : "?";
}

// ============================================================================================
// manifest

struct Param {
    std::string name;
    oxide_param_kind kind;
    oxide_scalar type; // scalar type (scalar) or element type (slice, ptr, tensor)
    bool is_mutable;
    uint32_t size, align;
    uint32_t rank = 0; // a tensor's
};

struct KernelInfo {
    std::string name, entry;
    std::vector<Param> params;
    std::array<uint32_t, 2> launch_bounds;
    std::array<uint32_t, 3> cluster;
    uint32_t dyn_smem;
    std::array<uint32_t, 3> block{}; // chosen by the compiler (tile kernels); {0,0,0}: the launch gives it
};

// A copy of a manifest's contents (owning nothing in the C library).
class Manifest {
  public:
    Manifest() = default;
    explicit Manifest(const oxide_manifest *m) {
        if (!m)
            return;
        target_ = oxide_manifest_target(m);
        for (size_t k = 0; k < oxide_manifest_kernel_count(m); k++) {
            KernelInfo ki;
            ki.name = oxide_manifest_kernel_name(m, k);
            ki.entry = oxide_manifest_kernel_entry(m, k);
            for (size_t p = 0; p < oxide_manifest_param_count(m, k); p++) {
                const char *name = nullptr;
                oxide_param_kind kind;
                oxide_scalar scalar;
                int mut = 0;
                uint32_t size = 0, align = 0;
                uint32_t rank = 0;
                check(oxide_manifest_param(m, k, p, &name, &kind, &scalar, &mut, &size, &align));
                check(oxide_manifest_param_rank(m, k, p, &rank));
                ki.params.push_back(Param{name, kind, scalar, mut != 0, size, align, rank});
            }
            uint32_t ds = 0;
            check(oxide_manifest_kernel_attrs(m, k, ki.launch_bounds.data(), ki.cluster.data(), &ds));
            check(oxide_manifest_kernel_block(m, k, ki.block.data()));
            ki.dyn_smem = ds;
            kernels_.push_back(std::move(ki));
        }
    }
    // Parse the manifest that PTX text carries.
    static Manifest from_ptx(std::string_view ptx) {
        oxide_manifest *m = nullptr;
        check(oxide_manifest_parse(ptx.data(), ptx.size(), &m));
        detail::owned<oxide_manifest, oxide_manifest_destroy> guard(m);
        return Manifest(m);
    }
    const std::string &target() const noexcept { return target_; }
    const std::vector<KernelInfo> &kernels() const noexcept { return kernels_; }
    const KernelInfo *find(std::string_view name) const noexcept {
        for (auto &k : kernels_)
            if (k.name == name || k.entry == name)
                return &k;
        return nullptr;
    }
    const KernelInfo &at(std::string_view name) const {
        if (auto *k = find(name))
            return *k;
        std::string list;
        for (auto &k : kernels_)
            list += (list.empty() ? "" : ", ") + k.name;
        throw Error(OXIDE_ERROR_NOT_FOUND, "no kernel '" + std::string(name) + "' in the manifest; it has: " + list);
    }

  private:
    std::string target_;
    std::vector<KernelInfo> kernels_;
};

// ============================================================================================
// compiler: options, types, IR modules, functions, blocks, values

class Options {
  public:
    Options() {
        oxide_options *o = nullptr;
        check(oxide_options_create(&o));
        h_.reset(o);
    }
    Options &target(const char *sm) {
        check(oxide_options_set_target(h_.get(), sm));
        return *this;
    }
    Options &ptx_version(int major, int minor) {
        check(oxide_options_set_ptx_version(h_.get(), major, minor));
        return *this;
    }
    Options &opt_level(int level) {
        check(oxide_options_set_opt_level(h_.get(), level));
        return *this;
    }
    Options &fast_math(bool on = true) {
        check(oxide_options_set_fast_math(h_.get(), on));
        return *this;
    }
    Options &line_info(bool on = true) {
        check(oxide_options_set_line_info(h_.get(), on));
        return *this;
    }
    /* OXIDE_TILE_VARIANTS_PLAIN, _TMA or _ALL (the default): docs/tile.md, "The Hopper path" */
    Options &tile_variants(oxide_tile_variants which) {
        check(oxide_options_set_tile_variants(h_.get(), which));
        return *this;
    }
    std::string get_target() const { return oxide_options_get_target(h_.get()); }
    oxide_options *get() const noexcept { return h_.get(); }

  private:
    detail::owned<oxide_options, oxide_options_destroy> h_;
};

// Types and values are owned by their context / module; these are plain views.
struct Type {
    oxide_type *h = nullptr;
    oxide_type_kind kind() const { return oxide_type_get_kind(h); }
    std::string name() const { return oxide_type_get_name(h); }
    bool operator==(const Type &o) const noexcept { return h == o.h; }
};

struct Value {
    oxide_value *h = nullptr;
    Type type() const { return Type{oxide_value_get_type(h)}; }
    Value &set_name(const char *name) {
        check(oxide_value_set_name(h, name));
        return *this;
    }
};

// Attribute builders for Block::op.
namespace attr {
inline oxide_attr make(oxide_attr_key k) {
    oxide_attr a{};
    a.key = k;
    return a;
}
inline oxide_attr make_int(oxide_attr_key k, int64_t v) {
    auto a = make(k);
    a.i = v;
    return a;
}
inline oxide_attr align(int64_t n) { return make_int(OXIDE_ATTR_ALIGN, n); }
inline oxide_attr is_volatile(bool v) { return make_int(OXIDE_ATTR_VOLATILE, v); }
inline oxide_attr scope(oxide_scope s) { return make_int(OXIDE_ATTR_SCOPE, s); }
inline oxide_attr order(oxide_order o) { return make_int(OXIDE_ATTR_ORDER, o); }
inline oxide_attr pred(oxide_pred p) { return make_int(OXIDE_ATTR_PRED, p); }
inline oxide_attr imm(int64_t v) { return make_int(OXIDE_ATTR_IMM, v); }
inline oxide_attr value_int(int64_t v) { return make_int(OXIDE_ATTR_VALUE, v); }
inline oxide_attr value_float(double v) {
    auto a = make(OXIDE_ATTR_VALUE);
    a.f = v;
    return a;
}
inline oxide_attr str(const char *s) {
    auto a = make(OXIDE_ATTR_STR);
    a.s = s;
    return a;
}
inline oxide_attr sym(const char *s) {
    auto a = make(OXIDE_ATTR_SYM);
    a.s = s;
    return a;
}
inline oxide_attr elem(Type t) {
    auto a = make(OXIDE_ATTR_ELEM);
    a.t = t.h;
    return a;
}
} // namespace attr

class Block {
  public:
    Block() = default;
    explicit Block(oxide_block *h, std::vector<Value> params = {}) : h_(h), params_(std::move(params)) {}
    oxide_block *get() const noexcept { return h_; }
    const std::vector<Value> &params() const noexcept { return params_; }
    Value param(size_t i) const { return params_.at(i); }

    // Any operation of lib/ops.def. result is required for ops whose result type is explicit.
    Value op(oxide_op op, std::initializer_list<Value> operands = {}, Type result = {},
             std::initializer_list<oxide_attr> attrs = {}) {
        return op_span(op, std::span<const Value>(operands.begin(), operands.size()), result,
                       std::span<const oxide_attr>(attrs.begin(), attrs.size()));
    }
    Value op_span(oxide_op op, std::span<const Value> operands, Type result = {},
                  std::span<const oxide_attr> attrs = {}) {
        std::vector<oxide_value *> ops;
        ops.reserve(operands.size());
        for (auto v : operands)
            ops.push_back(v.h);
        oxide_value *out = nullptr;
        check(oxide_build_op(h_, op, ops.data(), ops.size(), result.h, attrs.data(), attrs.size(), &out));
        return Value{out};
    }
    Value const_int(Type t, int64_t v) {
        oxide_value *out = nullptr;
        check(oxide_build_const_int(h_, t.h, v, &out));
        return Value{out};
    }
    Value const_float(Type t, double v) {
        oxide_value *out = nullptr;
        check(oxide_build_const_float(h_, t.h, v, &out));
        return Value{out};
    }
    // Shorthands for common ops.
    Value add(Value a, Value b) { return op(OXIDE_OP_ADD, {a, b}); }
    Value sub(Value a, Value b) { return op(OXIDE_OP_SUB, {a, b}); }
    Value mul(Value a, Value b) { return op(OXIDE_OP_MUL, {a, b}); }
    Value fma(Value a, Value b, Value c) { return op(OXIDE_OP_FMA, {a, b, c}); }
    Value umin(Value a, Value b) { return op(OXIDE_OP_UMIN, {a, b}); }
    Value icmp(oxide_pred p, Value a, Value b) { return op(OXIDE_OP_ICMP, {a, b}, {}, {attr::pred(p)}); }
    Value fcmp(oxide_pred p, Value a, Value b) { return op(OXIDE_OP_FCMP, {a, b}, {}, {attr::pred(p)}); }
    Value select(Value c, Value a, Value b) { return op(OXIDE_OP_SELECT, {c, a, b}); }
    Value cast(oxide_op cast_op, Value v, Type to) { return op(cast_op, {v}, to); }
    Value offset(Value ptr, Value index, Type elem) {
        return op(OXIDE_OP_OFFSET, {ptr, index}, {}, {attr::elem(elem)});
    }
    Value load(Type t, Value ptr, unsigned align = 0) { return op(OXIDE_OP_LOAD, {ptr}, t, {attr::align(align)}); }
    void store(Value v, Value ptr, unsigned align = 0) { op(OXIDE_OP_STORE, {v, ptr}, {}, {attr::align(align)}); }
    void barrier() { op(OXIDE_OP_BARRIER); }
    // ctaid.x * ntid.x + tid.x as i64 (no 32-bit overflow); i64 is the i64 type of the context.
    Value global_id_x(Type i64) {
        Value c = cast(OXIDE_OP_ZEXT, op(OXIDE_OP_CTAID_X), i64);
        Value n = cast(OXIDE_OP_ZEXT, op(OXIDE_OP_NTID_X), i64);
        Value t = cast(OXIDE_OP_ZEXT, op(OXIDE_OP_TID_X), i64);
        return add(mul(c, n), t);
    }
    // Terminators.
    void br(const Block &dest, std::initializer_list<Value> args = {}) {
        auto a = raw(args);
        check(oxide_build_br(h_, dest.h_, a.data(), a.size()));
    }
    void cond_br(Value cond, const Block &t, const Block &f, std::initializer_list<Value> targs = {},
                 std::initializer_list<Value> fargs = {}) {
        auto ta = raw(targs), fa = raw(fargs);
        check(oxide_build_cond_br(h_, cond.h, t.h_, ta.data(), ta.size(), f.h_, fa.data(), fa.size()));
    }
    void switch_(Value v, const Block &def, std::span<const int64_t> cases, std::span<const Block> dests) {
        if (cases.size() != dests.size())
            throw Error(OXIDE_ERROR_INVALID_ARGUMENT, "switch_: as many cases as destinations");
        std::vector<oxide_block *> d;
        for (auto &b : dests)
            d.push_back(b.h_);
        check(oxide_build_switch(h_, v.h, def.h_, cases.data(), d.data(), d.size()));
    }
    void ret(std::initializer_list<Value> values = {}) {
        op_span(OXIDE_OP_RET, std::span<const Value>(values.begin(), values.size()));
    }

  private:
    static std::vector<oxide_value *> raw(std::initializer_list<Value> vs) {
        std::vector<oxide_value *> out;
        for (auto v : vs)
            out.push_back(v.h);
        return out;
    }
    oxide_block *h_ = nullptr;
    std::vector<Value> params_;
};

struct SliceParam {
    Value ptr, len;
};

class Function {
  public:
    Function() = default;
    explicit Function(oxide_function *h) : h_(h) {}
    oxide_function *get() const noexcept { return h_; }

    Value scalar_param(const char *name, oxide_scalar type) {
        oxide_value *v = nullptr;
        check(oxide_kernel_add_scalar_param(h_, name, type, &v));
        return Value{v};
    }
    SliceParam slice_param(const char *name, oxide_scalar elem, bool is_mutable = false) {
        oxide_value *p = nullptr, *n = nullptr;
        check(oxide_kernel_add_slice_param(h_, name, elem, is_mutable, &p, &n));
        return SliceParam{Value{p}, Value{n}};
    }
    Value ptr_param(const char *name, oxide_scalar elem, bool is_mutable = false) {
        oxide_value *v = nullptr;
        check(oxide_kernel_add_ptr_param(h_, name, elem, is_mutable, &v));
        return Value{v};
    }
    Value bytes_param(const char *name, uint32_t size, uint32_t align) {
        oxide_value *v = nullptr;
        check(oxide_kernel_add_bytes_param(h_, name, size, align, &v));
        return Value{v};
    }
    Value tma_desc_param(const char *name) {
        oxide_value *v = nullptr;
        check(oxide_kernel_add_tma_desc_param(h_, name, &v));
        return Value{v};
    }
    Value param(const char *name, Type t) {
        oxide_value *v = nullptr;
        check(oxide_function_add_param(h_, name, t.h, &v));
        return Value{v};
    }
    Function &launch_bounds(uint32_t max_threads, uint32_t min_blocks = 0) {
        check(oxide_kernel_set_launch_bounds(h_, max_threads, min_blocks));
        return *this;
    }
    Function &cluster(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
        check(oxide_kernel_set_cluster(h_, x, y, z));
        return *this;
    }
    Function &dyn_smem(uint32_t bytes) {
        check(oxide_kernel_set_dyn_smem(h_, bytes));
        return *this;
    }
    // Append a block with parameters of the given types.
    Block block(std::initializer_list<Type> param_types = {}) {
        std::vector<oxide_type *> ts;
        for (auto t : param_types)
            ts.push_back(t.h);
        std::vector<oxide_value *> vals(ts.size());
        oxide_block *b = nullptr;
        check(oxide_function_add_block(h_, ts.data(), ts.size(), &b, vals.data()));
        std::vector<Value> params;
        for (auto v : vals)
            params.push_back(Value{v});
        return Block(b, std::move(params));
    }

  private:
    oxide_function *h_ = nullptr;
};

class Module {
  public:
    explicit Module(oxide_module *h) : h_(h) {}
    oxide_module *get() const noexcept { return h_.get(); }

    Function add_kernel(const char *name) {
        oxide_function *f = nullptr;
        check(oxide_module_add_kernel(h_.get(), name, &f));
        return Function(f);
    }
    Function add_function(const char *name, Type ret) {
        oxide_function *f = nullptr;
        check(oxide_module_add_function(h_.get(), name, ret.h, &f));
        return Function(f);
    }
    Function get_function(const char *name) {
        oxide_function *f = nullptr;
        check(oxide_module_get_function(h_.get(), name, &f));
        return Function(f);
    }
    void add_global(const char *name, Type t, oxide_addrspace as, uint32_t align = 0,
                    std::span<const std::byte> init = {}) {
        check(oxide_module_add_global(h_.get(), name, t.h, as, align, init.empty() ? nullptr : init.data(), init.size(),
                                      nullptr));
    }
    void verify(const Options *opts = nullptr) { check(oxide_module_verify(h_.get(), opts ? opts->get() : nullptr)); }
    std::string print() {
        const char *s = nullptr;
        check(oxide_module_print(h_.get(), &s));
        return s;
    }
    std::string compile(const Options &opts = Options()) {
        const char *ptx = nullptr;
        size_t n = 0;
        check(oxide_module_compile(h_.get(), opts.get(), &ptx, &n));
        return std::string(ptx, n);
    }
    std::string llvm_ir() {
        const char *s = nullptr;
        check(oxide_module_get_llvm_ir(h_.get(), &s));
        return s;
    }
    void import_bitcode(std::span<const std::byte> bc, const char *unit_name) {
        check(oxide_module_import_bitcode(h_.get(), bc.data(), bc.size(), unit_name));
    }

  private:
    detail::owned<oxide_module, oxide_module_destroy> h_;
};

class Context {
  public:
    Context() {
        oxide_context *c = nullptr;
        check(oxide_context_create(&c));
        h_.reset(c);
    }
    oxide_context *get() const noexcept { return h_.get(); }

    Type scalar(oxide_type_kind k) const {
        oxide_type *t = nullptr;
        check(oxide_type_scalar(h_.get(), k, &t));
        return Type{t};
    }
    Type i1() const { return scalar(OXIDE_TYPE_I1); }
    Type i32() const { return scalar(OXIDE_TYPE_I32); }
    Type i64() const { return scalar(OXIDE_TYPE_I64); }
    Type f32() const { return scalar(OXIDE_TYPE_F32); }
    Type f64() const { return scalar(OXIDE_TYPE_F64); }
    Type void_() const { return scalar(OXIDE_TYPE_VOID); }
    Type pointer(oxide_addrspace as = OXIDE_AS_GENERIC) const {
        oxide_type *t = nullptr;
        check(oxide_type_pointer(h_.get(), as, &t));
        return Type{t};
    }
    Type vector(Type elem, uint32_t n) const {
        oxide_type *t = nullptr;
        check(oxide_type_vector(h_.get(), elem.h, n, &t));
        return Type{t};
    }
    Type array(Type elem, uint64_t n) const {
        oxide_type *t = nullptr;
        check(oxide_type_array(h_.get(), elem.h, n, &t));
        return Type{t};
    }
    Type struct_(std::initializer_list<Type> fields) const {
        std::vector<oxide_type *> fs;
        for (auto f : fields)
            fs.push_back(f.h);
        oxide_type *t = nullptr;
        check(oxide_type_struct(h_.get(), fs.data(), fs.size(), &t));
        return Type{t};
    }
    Module create_module(const char *name) {
        oxide_module *m = nullptr;
        check(oxide_module_create(h_.get(), name, &m));
        return Module(m);
    }
    Module parse(std::string_view text) {
        oxide_module *m = nullptr;
        check(oxide_module_parse(h_.get(), text.data(), text.size(), &m));
        return Module(m);
    }

  private:
    detail::owned<oxide_context, oxide_context_destroy> h_;
};

// ============================================================================================
// runtime: devices, streams, events

class Device {
  public:
    // Device index (0-based). Throws Error (NO_DRIVER, NO_DEVICE) when there is none.
    explicit Device(int index = 0) { check(oxide_device_get(index, &h_)); }
    explicit Device(oxide_device *h) : h_(h) {}
    // Number of GPUs; 0 without a driver or GPU.
    static int count() noexcept {
        int n = 0;
        return oxide_device_count(&n) == OXIDE_OK ? n : 0;
    }
    oxide_device *get() const noexcept { return h_; }
    std::string name() const {
        const char *n = nullptr;
        check(oxide_device_name(h_, &n));
        return n;
    }
    std::pair<int, int> compute_capability() const {
        int a = 0, b = 0;
        check(oxide_device_compute_capability(h_, &a, &b));
        return {a, b};
    }
    // The oxide target for this GPU ("sm_90a" on an H200).
    std::string target() const {
        auto [a, b] = compute_capability();
        std::string t = "sm_" + std::to_string(a) + std::to_string(b);
        return (a == 9 || a == 10) && b == 0 ? t + "a" : t;
    }
    int sm_count() const {
        int n = 0;
        check(oxide_device_sm_count(h_, &n));
        return n;
    }
    size_t total_memory() const {
        size_t n = 0;
        check(oxide_device_total_memory(h_, &n));
        return n;
    }
    void synchronize() const { check(oxide_device_synchronize(h_)); }
    void check_ok() const { check(oxide_device_check(h_)); }
    void reset() const { check(oxide_device_reset(h_)); }
    int index() const {
        int i = 0;
        check(oxide_device_index(h_, &i));
        return i;
    }
    // Several GPUs (docs/cpp.md): whether kernels here can use peer's memory once enabled, and
    // enabling it (one direction; throws UNSUPPORTED naming both devices when impossible).
    bool can_access_peer(const Device &peer) const {
        int c = 0;
        check(oxide_device_can_access_peer(h_, peer.h_, &c));
        return c != 0;
    }
    void enable_peer_access(const Device &peer) const { check(oxide_device_enable_peer_access(h_, peer.h_)); }
    bool peer_access_enabled(const Device &peer) const {
        int e = 0;
        check(oxide_device_peer_access_enabled(h_, peer.h_, &e));
        return e != 0;
    }
    bool operator==(const Device &o) const noexcept { return h_ == o.h_; }

  private:
    oxide_device *h_ = nullptr;
};

class Stream {
  public:
    // A new stream (flags: OXIDE_STREAM_NON_BLOCKING).
    explicit Stream(const Device &dev, unsigned flags = 0) {
        oxide_stream *s = nullptr;
        check(oxide_stream_create(dev.get(), flags, &s));
        h_.reset(s);
    }
    // The device's default stream (destroying it does nothing).
    static Stream default_stream(const Device &dev) {
        oxide_stream *s = nullptr;
        check(oxide_stream_default(dev.get(), &s));
        return Stream(s);
    }
    // Wrap a CUstream made elsewhere (not owned).
    static Stream wrap(const Device &dev, void *cu_stream) {
        oxide_stream *s = nullptr;
        check(oxide_stream_wrap(dev.get(), cu_stream, &s));
        return Stream(s);
    }
    oxide_stream *get() const noexcept { return h_.get(); }
    void synchronize() const { check(oxide_stream_synchronize(h_.get())); }
    bool query() const {
        int d = 0;
        check(oxide_stream_query(h_.get(), &d));
        return d != 0;
    }
    void *native() const {
        void *p = nullptr;
        check(oxide_stream_native(h_.get(), &p));
        return p;
    }

  private:
    explicit Stream(oxide_stream *s) : h_(s) {}
    detail::owned<oxide_stream, oxide_stream_destroy> h_;
};

class Event {
  public:
    explicit Event(const Device &dev, unsigned flags = 0) {
        oxide_event *e = nullptr;
        check(oxide_event_create(dev.get(), flags, &e));
        h_.reset(e);
    }
    oxide_event *get() const noexcept { return h_.get(); }
    void record(const Stream *s = nullptr) { check(oxide_event_record(h_.get(), s ? s->get() : nullptr)); }
    void record(const Stream &s) { record(&s); }
    void synchronize() const { check(oxide_event_synchronize(h_.get())); }
    // Milliseconds from this event to end (both recorded and completed).
    float elapsed_ms(const Event &end) const {
        float ms = 0;
        check(oxide_event_elapsed_ms(h_.get(), end.h_.get(), &ms));
        return ms;
    }

  private:
    detail::owned<oxide_event, oxide_event_destroy> h_;
};

// Later work on s waits for e's recorded work; e may belong to another device.
inline void stream_wait(const Stream &s, const Event &e) { check(oxide_stream_wait_event(s.get(), e.get())); }

// ============================================================================================
// device memory

// A view of device memory as len elements of T, mutable or not (what slice and ptr parameters take).
template <class T> struct DeviceSlice {
    using element_type = T;
    uint64_t ptr = 0;
    uint64_t len = 0;
    bool is_mutable = false;
};

template <class T> class DeviceBuffer {
  public:
    using element_type = T;
    DeviceBuffer(const Device &dev, size_t count) : dev_(dev), n_(count) {
        oxide_buffer *b = nullptr;
        check(oxide_buffer_alloc(dev.get(), count ? count * sizeof(T) : 1, &b));
        h_.reset(b);
    }
    static DeviceBuffer zeros(const Device &dev, size_t count) {
        DeviceBuffer b(dev, count);
        b.zero();
        return b;
    }
    static DeviceBuffer from_host(const Device &dev, std::span<const T> host) {
        DeviceBuffer b(dev, host.size());
        b.copy_from(host);
        return b;
    }
    static DeviceBuffer from_host(const Device &dev, const std::vector<T> &host) {
        return from_host(dev, std::span<const T>(host));
    }
    size_t size() const noexcept { return n_; }
    size_t bytes() const noexcept { return n_ * sizeof(T); }
    uint64_t ptr() const noexcept { return oxide_buffer_ptr(h_.get()); }
    oxide_buffer *get() const noexcept { return h_.get(); }
    const Device &device() const noexcept { return dev_; }

    void copy_from(std::span<const T> host) {
        if (host.size() != n_)
            throw Error(OXIDE_ERROR_INVALID_ARGUMENT, "copy_from: host span has " + std::to_string(host.size()) +
                                                          " elements, the buffer " + std::to_string(n_));
        if (n_)
            check(oxide_memcpy_htod(dev_.get(), ptr(), host.data(), bytes()));
    }
    void copy_to(std::span<T> host) const {
        if (host.size() != n_)
            throw Error(OXIDE_ERROR_INVALID_ARGUMENT, "copy_to: host span has " + std::to_string(host.size()) +
                                                          " elements, the buffer " + std::to_string(n_));
        if (n_)
            check(oxide_memcpy_dtoh(dev_.get(), host.data(), ptr(), bytes()));
    }
    // Ordered after the work queued on stream; waits for it.
    void copy_to(std::span<T> host, const Stream &s) const {
        if (host.size() != n_)
            throw Error(OXIDE_ERROR_INVALID_ARGUMENT, "copy_to: size mismatch");
        if (n_)
            check(oxide_memcpy_dtoh_async(s.get(), host.data(), ptr(), bytes()));
        s.synchronize();
    }
    std::vector<T> to_host() const {
        std::vector<T> v(n_);
        copy_to(std::span<T>(v));
        return v;
    }
    void zero() {
        if (n_)
            check(oxide_memset(dev_.get(), ptr(), 0, bytes(), 1));
    }
    DeviceSlice<T> view() noexcept { return {ptr(), n_, true}; }
    DeviceSlice<T> view() const noexcept { return {ptr(), n_, false}; }
    DeviceSlice<T> cview() const noexcept { return {ptr(), n_, false}; }

    // Copy all of src, which may live on another device (oxide_memcpy_peer): queued on s (of
    // either device) when given, else synchronous.
    void copy_from_peer(const DeviceBuffer &src, const Stream *s = nullptr) {
        if (src.n_ != n_)
            throw Error(OXIDE_ERROR_INVALID_ARGUMENT, "copy_from_peer: the source has " + std::to_string(src.n_) +
                                                          " elements, the buffer " + std::to_string(n_));
        if (s)
            check(oxide_memcpy_peer_async(s->get(), dev_.get(), ptr(), src.dev_.get(), src.ptr(), bytes()));
        else
            check(oxide_memcpy_peer(dev_.get(), ptr(), src.dev_.get(), src.ptr(), bytes()));
    }

  private:
    Device dev_;
    size_t n_;
    detail::owned<oxide_buffer, oxide_buffer_free> h_;
};

// By-value bytes (a bytes parameter, e.g. a Rust closure's captures).
struct Bytes {
    const void *data;
    size_t size;
};
template <class T> Bytes bytes_of(const T &v) {
    static_assert(std::is_trivially_copyable_v<T>, "bytes_of: T must be trivially copyable");
    return Bytes{&v, sizeof(T)};
}
// A 128-byte TMA descriptor passed by value.
struct TmaDesc {
    const void *data;
};
// A tensor argument (a tile kernel's tensor parameter): a strided view of device memory at ptr,
// shape and strides in elements (any sign; none given: C-contiguous). T may be f8e4m3/f8e5m2.
template <class T> struct Tensor {
    using element_type = T;
    oxide_tensor raw{};
    Tensor(uint64_t ptr, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides = {},
           bool is_mutable = true) {
        if (shape.size() < 1 || shape.size() > 4 || (strides.size() && strides.size() != shape.size()))
            throw Error(OXIDE_ERROR_INVALID_ARGUMENT,
                        "oxide::Tensor: a tensor has 1 to 4 dimensions and, if strides are given, one per dimension");
        raw.struct_size = sizeof raw;
        raw.data = ptr;
        raw.elem = scalar_v<T>;
        raw.rank = static_cast<uint32_t>(shape.size());
        raw.is_mutable = is_mutable;
        std::copy(shape.begin(), shape.end(), raw.shape);
        std::copy(strides.begin(), strides.end(), raw.strides);
        for (int64_t d = static_cast<int64_t>(raw.rank) - 1, step = 1; strides.size() == 0 && d >= 0; d--)
            raw.strides[d] = step, step *= raw.shape[d];
    }
    Tensor(const DeviceBuffer<T> &buf, std::initializer_list<int64_t> shape,
           std::initializer_list<int64_t> strides = {}, bool is_mutable = true)
        : Tensor(buf.ptr(), shape, strides, is_mutable) {}
    // The view starts this many elements into the memory (byte_offset).
    Tensor &offset(uint64_t elems) {
        raw.byte_offset = elems * sizeof(T);
        return *this;
    }
};

// ============================================================================================
// loaded modules, kernels, launches

struct Dim3 {
    uint32_t x = 1, y = 1, z = 1;
    Dim3() = default;
    Dim3(uint32_t x_, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}
};

struct LaunchConfig {
    Dim3 grid, block;
    uint32_t smem = 0;                 // dynamic shared memory; 0: the manifest's dyn_smem
    const Stream *stream = nullptr;    // nullptr: the device's default stream
    std::array<uint32_t, 3> cluster{}; // {0,0,0}: the manifest's cluster shape
    uint32_t flags = 0;                // OXIDE_LAUNCH_*
    // Only a grid: the block is the one the compiler chose (tile kernels).
    static LaunchConfig for_grid(Dim3 grid) {
        LaunchConfig c;
        c.grid = grid;
        c.block = Dim3(0, 0, 0);
        return c;
    }
    // One thread per element, blocks of block_threads.
    static LaunchConfig for_num_elems(uint64_t n, uint32_t block_threads = 256) {
        LaunchConfig c;
        c.grid = Dim3(static_cast<uint32_t>((n + block_threads - 1) / block_threads));
        c.block = Dim3(block_threads);
        return c;
    }
    LaunchConfig &on(const Stream &s) {
        stream = &s;
        return *this;
    }
    // The C API's form of it (the stream aside).
    oxide_launch_config raw() const noexcept {
        oxide_launch_config c{};
        c.grid[0] = grid.x, c.grid[1] = grid.y, c.grid[2] = grid.z;
        c.block[0] = block.x, c.block[1] = block.y, c.block[2] = block.z;
        c.smem = smem;
        c.cluster[0] = cluster[0], c.cluster[1] = cluster[1], c.cluster[2] = cluster[2];
        c.flags = flags;
        return c;
    }
};

namespace detail {
template <class T> struct is_device_buffer : std::false_type {};
template <class T> struct is_device_buffer<DeviceBuffer<T>> : std::true_type {};
template <class T> struct is_device_slice : std::false_type {};
template <class T> struct is_device_slice<DeviceSlice<T>> : std::true_type {};
template <class T> struct is_tensor : std::false_type {};
template <class T> struct is_tensor<Tensor<T>> : std::true_type {};
template <class T> struct is_host_range : std::false_type {};
template <class T, class A> struct is_host_range<std::vector<T, A>> : std::true_type {};
template <class T, size_t N> struct is_host_range<std::span<T, N>> : std::true_type {};
template <class T, size_t N> struct is_host_range<std::array<T, N>> : std::true_type {};
template <class> inline constexpr bool always_false = false;

template <class T> uint64_t bits_of(T v) {
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}

// Convert an arithmetic value to the parameter's declared scalar type when nothing is lost;
// otherwise pass it as it is (and liboxide reports the mismatch).
template <class T> oxide_arg scalar_arg(T v, const Param *p) {
    if (!p || p->kind != OXIDE_PARAM_SCALAR || p->type == scalar_v<T>)
        return oxide_arg_scalar_bits(scalar_v<T>, bits_of(v));
    auto fits = [&](auto lo, auto hi) {
        if constexpr (std::is_integral_v<T>) {
            if constexpr (std::is_signed_v<T>)
                return static_cast<long double>(v) >= static_cast<long double>(lo) &&
                       static_cast<long double>(v) <= static_cast<long double>(hi);
            else
                return static_cast<unsigned long long>(v) <= static_cast<unsigned long long>(hi);
        } else {
            return false;
        }
    };
    switch (p->type) {
    case OXIDE_SCALAR_I8:
        if (fits(INT8_MIN, INT8_MAX))
            return oxide_arg_i8(static_cast<int8_t>(v));
        break;
    case OXIDE_SCALAR_I16:
        if (fits(INT16_MIN, INT16_MAX))
            return oxide_arg_i16(static_cast<int16_t>(v));
        break;
    case OXIDE_SCALAR_I32:
        if (fits(INT32_MIN, INT32_MAX))
            return oxide_arg_i32(static_cast<int32_t>(v));
        break;
    case OXIDE_SCALAR_I64:
        if (fits(INT64_MIN, INT64_MAX))
            return oxide_arg_i64(static_cast<int64_t>(v));
        break;
    case OXIDE_SCALAR_U8:
        if (fits(0, UINT8_MAX))
            return oxide_arg_u8(static_cast<uint8_t>(v));
        break;
    case OXIDE_SCALAR_U16:
        if (fits(0, UINT16_MAX))
            return oxide_arg_u16(static_cast<uint16_t>(v));
        break;
    case OXIDE_SCALAR_U32:
        if (fits(0, UINT32_MAX))
            return oxide_arg_u32(static_cast<uint32_t>(v));
        break;
    case OXIDE_SCALAR_U64:
        if (fits(0, UINT64_MAX))
            return oxide_arg_u64(static_cast<uint64_t>(v));
        break;
    case OXIDE_SCALAR_F32:
        if constexpr (std::is_floating_point_v<T>)
            return oxide_arg_f32(static_cast<float>(v));
        break;
    case OXIDE_SCALAR_F64:
        if constexpr (std::is_floating_point_v<T>)
            return oxide_arg_f64(static_cast<double>(v));
        break;
    default: break;
    }
    return oxide_arg_scalar_bits(scalar_v<T>, bits_of(v));
}

template <class A> oxide_arg to_arg(A &&a, const Param *p) {
    using T = std::remove_cvref_t<A>;
    constexpr bool is_const = std::is_const_v<std::remove_reference_t<A>>;
    if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
        return oxide_arg_scalar_bits(scalar_v<T>, a.bits);
    } else if constexpr (std::is_arithmetic_v<T>) {
        return scalar_arg(static_cast<T>(a), p);
    } else if constexpr (is_device_buffer<T>::value) {
        return oxide_arg_buffer(scalar_v<typename T::element_type>, a.ptr(), a.size(), !is_const);
    } else if constexpr (is_device_slice<T>::value) {
        return oxide_arg_buffer(scalar_v<typename T::element_type>, a.ptr, a.len, a.is_mutable);
    } else if constexpr (std::is_same_v<T, Bytes>) {
        return oxide_arg_bytes(a.data, a.size);
    } else if constexpr (std::is_same_v<T, TmaDesc>) {
        return oxide_arg_tma_desc(a.data);
    } else if constexpr (is_tensor<T>::value) {
        return oxide_arg_tensor(&a.raw); // a lives until the launch's full expression ends
    } else if constexpr (std::is_pointer_v<T> || is_host_range<T>::value) {
        static_assert(always_false<T>, "oxide: a kernel's slice and ptr parameters take device memory; copy host "
                                       "data into an oxide::DeviceBuffer<T> first (DeviceBuffer<T>::from_host)");
        return {};
    } else {
        static_assert(always_false<T>, "oxide: unsupported kernel argument type");
        return {};
    }
}
} // namespace detail

class LoadedModule;

class Kernel {
  public:
    Kernel(oxide_kernel *h, const KernelInfo *info) : h_(h), info_(info) {}
    oxide_kernel *get() const noexcept { return h_; }
    std::string name() const { return oxide_kernel_name(h_); }
    std::string entry() const { return oxide_kernel_entry(h_); }
    const KernelInfo *info() const noexcept { return info_; }

    // Launch with arguments in manifest order; liboxide checks them against the manifest.
    template <class... Args> void launch(const LaunchConfig &cfg, Args &&...args) const {
        with_args([&](std::span<const oxide_arg> a) { launch_args(cfg, a); }, std::forward<Args>(args)...);
    }
    // f(std::span<const oxide_arg>) with args turned into oxide_args in manifest order (scalars
    // converted to the parameters' types); the span lives for the call (Task::launch uses it).
    template <class F, class... Args> decltype(auto) with_args(F &&f, Args &&...args) const {
        return with_args_impl(std::forward<F>(f), std::index_sequence_for<Args...>{}, std::forward<Args>(args)...);
    }
    // Launch with prepared oxide_args.
    void launch_args(const LaunchConfig &cfg, std::span<const oxide_arg> args) const {
        const oxide_stream *s = cfg.stream ? cfg.stream->get() : nullptr;
        if (cfg.cluster == std::array<uint32_t, 3>{} && cfg.flags == 0) {
            const uint32_t grid[3] = {cfg.grid.x, cfg.grid.y, cfg.grid.z};
            const uint32_t block[3] = {cfg.block.x, cfg.block.y, cfg.block.z};
            check(oxide_kernel_launch(h_, const_cast<oxide_stream *>(s), grid, block, cfg.smem, args.data(),
                                      args.size()));
        } else {
            const oxide_launch_config c = cfg.raw();
            check(oxide_kernel_launch_ex(h_, const_cast<oxide_stream *>(s), &c, args.data(), args.size()));
        }
    }
    // The shape checked without launching: the kernel's launch contract (its manifest's
    // "contract", which every launch also meets), the device's limits and the kernel's own
    // (docs/runtime.md, "Launch contracts"). Throws what a launch would.
    void check_launch(const LaunchConfig &cfg) const {
        const oxide_launch_config c = cfg.raw();
        check(oxide_kernel_check_launch(h_, &c));
    }
    int attribute(oxide_kernel_attr a) const {
        int v = 0;
        check(oxide_kernel_get_attribute(h_, a, &v));
        return v;
    }

  private:
    template <class F, class... Args, size_t... I>
    decltype(auto) with_args_impl(F &&f, std::index_sequence<I...>, Args &&...args) const {
        const Param *ps = info_ && info_->params.size() == sizeof...(Args) ? info_->params.data() : nullptr;
        if constexpr (sizeof...(Args) == 0) {
            (void)ps;
            return f(std::span<const oxide_arg>());
        } else {
            const oxide_arg a[] = {detail::to_arg(std::forward<Args>(args), ps ? &ps[I] : nullptr)...};
            return f(std::span<const oxide_arg>(a, sizeof...(Args)));
        }
    }
    oxide_kernel *h_;
    const KernelInfo *info_;
};

class LoadedModule {
  public:
    static LoadedModule from_ptx(const Device &dev, std::string_view ptx) {
        oxide_loaded_module *m = nullptr;
        check(oxide_loaded_module_load_ptx(dev.get(), ptx.data(), ptx.size(), &m));
        return LoadedModule(m);
    }
    // A cubin/fatbin image with the PTX (or manifest line) it came from.
    static LoadedModule from_cubin(const Device &dev, std::span<const std::byte> image, std::string_view manifest) {
        oxide_loaded_module *m = nullptr;
        check(oxide_loaded_module_load_cubin(dev.get(), image.data(), image.size(),
                                             manifest.empty() ? nullptr : manifest.data(), manifest.size(), &m));
        return LoadedModule(m);
    }
    // Load a .ptx file.
    static LoadedModule load(const Device &dev, const std::string &path) {
        std::ifstream f(path, std::ios::binary);
        if (!f)
            throw Error(OXIDE_ERROR_IO, "cannot open " + path);
        std::stringstream ss;
        ss << f.rdbuf();
        return from_ptx(dev, ss.str());
    }
    oxide_loaded_module *get() const noexcept { return h_.get(); }
    const Manifest &manifest() const noexcept { return *manifest_; }
    Kernel kernel(std::string_view name) const {
        std::string n(name);
        oxide_kernel *k = nullptr;
        check(oxide_loaded_module_get_kernel(h_.get(), n.c_str(), &k));
        return Kernel(k, manifest_->find(oxide_kernel_name(k)));
    }
    std::string jit_log() const { return oxide_loaded_module_jit_log(h_.get()); }

  private:
    explicit LoadedModule(oxide_loaded_module *m)
        : h_(m), manifest_(std::make_unique<Manifest>(oxide_loaded_module_manifest(m))) {}
    detail::owned<oxide_loaded_module, oxide_loaded_module_destroy> h_;
    std::unique_ptr<Manifest> manifest_; // stable address for Kernel::info()
};

// ============================================================================================
// NVTX ranges, pinned host memory, tasks and CUDA graphs

// An NVTX range for the object's lifetime, as Nsight Systems shows it: { oxide::NvtxRange r("step"); ... }.
// Without an NVTX library it does nothing (docs/runtime.md, "NVTX ranges").
class NvtxRange {
  public:
    explicit NvtxRange(const char *name) { check(oxide_nvtx_push(name)); }
    explicit NvtxRange(const std::string &name) : NvtxRange(name.c_str()) {}
    ~NvtxRange() { (void)oxide_nvtx_pop(); }
    NvtxRange(const NvtxRange &) = delete;
    NvtxRange &operator=(const NvtxRange &) = delete;
};
// Whether an NVTX library was found; turning on a range named after its kernel around every launch.
inline bool nvtx_available() noexcept { return oxide_nvtx_available() != 0; }
inline void nvtx_launch_ranges(bool on) noexcept { oxide_nvtx_set_launch_ranges(on ? 1 : 0); }
inline bool nvtx_launch_ranges() noexcept { return oxide_nvtx_launch_ranges() != 0; }

// Page-locked host memory for count elements of T: copies between it and device memory on a
// stream return at once, and tasks and graphs may copy it.
template <class T> class PinnedBuffer {
    static_assert(std::is_trivially_copyable_v<T>, "PinnedBuffer holds trivially copyable elements");

  public:
    using element_type = T;
    PinnedBuffer(const Device &dev, size_t count) : n_(count) {
        if (count > std::numeric_limits<size_t>::max() / sizeof(T))
            throw Error(OXIDE_ERROR_INVALID_ARGUMENT,
                        "PinnedBuffer: " + std::to_string(count) + " elements do not fit in the address space");
        void *p = nullptr;
        check(oxide_host_alloc(dev.get(), count ? count * sizeof(T) : 1, &p));
        p_.reset(p);
    }
    static PinnedBuffer from_host(const Device &dev, std::span<const T> host) {
        PinnedBuffer b(dev, host.size());
        std::copy(host.begin(), host.end(), b.data());
        return b;
    }
    T *data() noexcept { return static_cast<T *>(p_.get()); }
    const T *data() const noexcept { return static_cast<const T *>(p_.get()); }
    size_t size() const noexcept { return n_; }
    size_t bytes() const noexcept { return n_ * sizeof(T); }
    T &operator[](size_t i) noexcept { return data()[i]; }
    const T &operator[](size_t i) const noexcept { return data()[i]; }
    T *begin() noexcept { return data(); }
    T *end() noexcept { return data() + n_; }
    const T *begin() const noexcept { return data(); }
    const T *end() const noexcept { return data() + n_; }
    std::span<T> span() noexcept { return {data(), n_}; }
    std::span<const T> span() const noexcept { return {data(), n_}; }

    // Queue a copy to dst / from src on s and return (synchronize s before reading the result).
    void copy_to_async(DeviceBuffer<T> &dst, const Stream &s) const {
        same_size(dst.size(), "copy_to_async");
        if (n_)
            check(oxide_memcpy_htod_async(s.get(), dst.ptr(), data(), bytes()));
    }
    void copy_from_async(const DeviceBuffer<T> &src, const Stream &s) {
        same_size(src.size(), "copy_from_async");
        if (n_)
            check(oxide_memcpy_dtoh_async(s.get(), data(), src.ptr(), bytes()));
    }

  private:
    struct host_free {
        void operator()(void *p) const noexcept { (void)oxide_host_free(p); }
    };
    void same_size(size_t other, const char *what) const {
        if (other != n_)
            throw Error(OXIDE_ERROR_INVALID_ARGUMENT, std::string(what) + ": the pinned buffer has " +
                                                          std::to_string(n_) + " elements, the device buffer " +
                                                          std::to_string(other));
    }
    size_t n_;
    std::unique_ptr<void, host_free> p_;
};

class Graph;

// Work described once and run when submitted (oxide_task_*): launches, copies, memsets, composed
// one after the other (sequence) or side by side (join). The memory a task uses must outlive it
// and every graph made from it.
class Task {
  public:
    // A checked launch: the arguments are checked now and copied.
    template <class... Args> static Task launch(const Kernel &k, const LaunchConfig &cfg, Args &&...args) {
        const oxide_launch_config c = cfg.raw();
        return k.with_args(
            [&](std::span<const oxide_arg> a) {
                return made([&](oxide_task **t) { return oxide_task_launch(k.get(), &c, a.data(), a.size(), t); });
            },
            std::forward<Args>(args)...);
    }
    template <class T> static Task copy(DeviceBuffer<T> &dst, const PinnedBuffer<T> &src) {
        same_size(dst.size(), src.size());
        return made([&](oxide_task **t) {
            return oxide_task_copy_htod(dst.device().get(), dst.ptr(), src.data(), dst.bytes(), t);
        });
    }
    template <class T> static Task copy(PinnedBuffer<T> &dst, const DeviceBuffer<T> &src) {
        same_size(dst.size(), src.size());
        return made([&](oxide_task **t) {
            return oxide_task_copy_dtoh(src.device().get(), dst.data(), src.ptr(), src.bytes(), t);
        });
    }
    template <class T> static Task copy(DeviceBuffer<T> &dst, const DeviceBuffer<T> &src) {
        same_size(dst.size(), src.size());
        return made([&](oxide_task **t) {
            return oxide_task_copy_dtod(dst.device().get(), dst.ptr(), src.ptr(), dst.bytes(), t);
        });
    }
    // Every byte of buf set to byte.
    template <class T> static Task memset(DeviceBuffer<T> &buf, uint8_t byte) {
        return made(
            [&](oxide_task **t) { return oxide_task_memset(buf.device().get(), buf.ptr(), byte, buf.bytes(), 1, t); });
    }
    // Task::sequence(a, b, c): a, then b, then c. Task::join(a, b): both at once, done when both are.
    template <class... Ts> static Task sequence(const Ts &...tasks) { return compose(oxide_task_sequence, tasks...); }
    template <class... Ts> static Task join(const Ts &...tasks) { return compose(oxide_task_join, tasks...); }
    oxide_task *get() const noexcept { return h_.get(); }
    // Queue the work on s (nullptr: the default stream) and return / and wait for it.
    void submit(const Stream *s = nullptr) const { check(oxide_task_submit(h_.get(), s ? s->get() : nullptr)); }
    void submit(const Stream &s) const { submit(&s); }
    void sync(const Stream *s = nullptr) const { check(oxide_task_sync(h_.get(), s ? s->get() : nullptr)); }
    void sync(const Stream &s) const { sync(&s); }
    // Captured once as an executable CUDA graph.
    Graph graph() const;

  private:
    explicit Task(oxide_task *t) : h_(t) {}
    template <class F> static Task made(F &&f) {
        oxide_task *t = nullptr;
        check(f(&t));
        return Task(t);
    }
    template <class... Ts>
    static Task compose(oxide_status (*fn)(oxide_task *const *, size_t, oxide_task **), const Ts &...tasks) {
        static_assert((std::is_same_v<Ts, Task> && ...), "Task::sequence and Task::join compose Tasks");
        oxide_task *hs[sizeof...(Ts) + 1] = {tasks.get()..., nullptr};
        return made([&](oxide_task **t) { return fn(hs, sizeof...(Ts), t); });
    }
    static void same_size(size_t dst, size_t src) {
        if (dst != src)
            throw Error(OXIDE_ERROR_INVALID_ARGUMENT, "Task::copy: the destination has " + std::to_string(dst) +
                                                          " elements, the source " + std::to_string(src));
    }
    detail::owned<oxide_task, oxide_task_destroy> h_;
};

// An executable CUDA graph: from Task::graph() or a stream capture (capture()). Each launch
// replays its work.
class Graph {
  public:
    explicit Graph(oxide_graph *g) : h_(g) {}
    oxide_graph *get() const noexcept { return h_.get(); }
    void launch(const Stream *s = nullptr) const { check(oxide_graph_launch(h_.get(), s ? s->get() : nullptr)); }
    void launch(const Stream &s) const { launch(&s); }

  private:
    detail::owned<oxide_graph, oxide_graph_destroy> h_;
};

inline Graph Task::graph() const {
    oxide_graph *g = nullptr;
    check(oxide_graph_create(h_.get(), &g));
    return Graph(g);
}

// Record what body() queues on s (oxide launches, and any library's work on the same CUstream)
// into a Graph instead of running it. The capture ends even when body throws (the exception
// goes on; the partial graph is dropped).
template <class F> Graph capture(const Stream &s, F &&body) {
    check(oxide_stream_begin_capture(s.get()));
    try {
        body();
    } catch (...) {
        oxide_graph *g = nullptr;
        if (oxide_stream_end_capture(s.get(), &g) == OXIDE_OK)
            oxide_graph_destroy(g);
        throw;
    }
    oxide_graph *g = nullptr;
    check(oxide_stream_end_capture(s.get(), &g));
    return Graph(g);
}

} // namespace oxide

#endif // OXIDE_HPP
