use crate::contract::{self, Contract};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{parse2, Attribute, FnArg, GenericParam, Generics, Ident, Item, ItemFn, ItemMod, Pat, Type};

const SCALARS: &[&str] =
    &["bool", "i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize", "f32", "f64"];

enum Kind {
    Scalar,
    Slice {
        elem: Type,
        mutable: bool,
        disjoint: bool,
    },
    Ptr {
        elem: Type,
        mutable: bool,
    },
    Bytes,
    /// `&TensorMap`: a TMA descriptor by value in parameter space (elem: the TensorMap type)
    TmaDesc {
        elem: Type,
    },
}

struct Param {
    name: Ident,
    ty: Type,
    kind: Kind,
}

struct Kernel {
    func: ItemFn,
    params: Vec<Param>,
    launch_bounds: (u32, u32),
    cluster: (u32, u32, u32),
    contract: Option<Contract>,
}

/// What the attributes beside `#[kernel]` say.
#[derive(Default)]
struct Attrs {
    launch_bounds: (u32, u32),
    cluster: Option<(u32, u32, u32)>,
    contract: Option<Contract>,
}

fn err(span: Span, msg: &str) -> TokenStream {
    quote_spanned!(span => compile_error!(#msg);)
}

fn last_ident(ty: &Type) -> Option<(String, &syn::PathSegment)> {
    if let Type::Path(p) = ty {
        if p.qself.is_none() {
            let seg = p.path.segments.last()?;
            return Some((seg.ident.to_string(), seg));
        }
    }
    None
}

fn first_type_arg(seg: &syn::PathSegment) -> Option<Type> {
    if let syn::PathArguments::AngleBracketed(a) = &seg.arguments {
        for g in &a.args {
            if let syn::GenericArgument::Type(t) = g {
                return Some(t.clone());
            }
        }
    }
    None
}

fn is_tensor_map(ty: &Type) -> bool {
    matches!(last_ident(ty), Some((n, _)) if n == "TensorMap")
}

fn classify(ty: &Type) -> Kind {
    match ty {
        Type::Reference(r) => {
            if let Type::Slice(s) = &*r.elem {
                return Kind::Slice { elem: (*s.elem).clone(), mutable: r.mutability.is_some(), disjoint: false };
            }
            if r.mutability.is_none() && is_tensor_map(&r.elem) {
                return Kind::TmaDesc { elem: (*r.elem).clone() };
            }
            Kind::Bytes
        }
        Type::Ptr(p) => Kind::Ptr { elem: (*p.elem).clone(), mutable: p.mutability.is_some() },
        _ => match last_ident(ty) {
            Some((n, seg)) if n == "DisjointSlice" => match first_type_arg(seg) {
                Some(elem) => Kind::Slice { elem, mutable: true, disjoint: true },
                None => Kind::Bytes,
            },
            Some((n, seg)) if SCALARS.contains(&n.as_str()) && seg.arguments.is_empty() => Kind::Scalar,
            _ => Kind::Bytes,
        },
    }
}

/// A type as the user wrote it, spaced as rustfmt would (`&f32`, `fn(f32) -> f32`), not as the
/// token printer does (`& f32`).
fn shown(ty: &Type) -> String {
    fn put(ts: TokenStream, out: &mut String) {
        for tt in ts {
            match tt {
                proc_macro2::TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        proc_macro2::Delimiter::Parenthesis => ("(", ")"),
                        proc_macro2::Delimiter::Bracket => ("[", "]"),
                        proc_macro2::Delimiter::Brace => ("{", "}"),
                        proc_macro2::Delimiter::None => ("", ""),
                    };
                    out.push_str(open);
                    put(g.stream(), out);
                    out.push_str(close);
                }
                proc_macro2::TokenTree::Punct(p) => match p.as_char() {
                    ',' => out.push_str(", "),
                    ';' => out.push_str("; "),
                    '+' => out.push_str(" + "),
                    '-' => out.push_str(" -"),
                    '>' if out.ends_with('-') => out.push_str("> "),
                    c => out.push(c),
                },
                word => {
                    if out.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                        out.push(' ');
                    }
                    out.push_str(&word.to_string());
                }
            }
        }
    }
    let mut out = String::new();
    put(quote!(#ty), &mut out);
    out.trim_end().to_string()
}

/// Why a value of this parameter type would be a host address on the GPU (a reference, function
/// pointer or host heap memory, also inside tuples, arrays and generic arguments), with what to
/// write instead; `None` for the types a launch can give a kernel.
fn host_address(ty: &Type) -> Option<String> {
    let t = shown(ty);
    match ty {
        Type::BareFn(_) => Some(format!(
            "`{t}` is a function pointer, a host address the GPU cannot call; take a generic \
             `F: Fn(..) -> .. + Copy` parameter instead (a closure or function, passed by value)"
        )),
        Type::Reference(r) => {
            if let Type::Slice(s) = &*r.elem {
                return host_address(&s.elem);
            }
            if is_tensor_map(&r.elem) {
                return None;
            }
            let e = shown(&r.elem);
            Some(match &*r.elem {
                Type::Path(p) if p.path.is_ident("str") => format!(
                    "`{t}` is a host address the GPU cannot read; pass the bytes as a slice `&[u8]` \
                     (launched with a `&DeviceBuffer<u8>`)"
                ),
                Type::TraitObject(_) => format!(
                    "`{t}` is a host address (and a host vtable) the GPU cannot use; take a generic \
                     parameter bounded by the trait instead, passed by value"
                ),
                _ if r.mutability.is_some() => format!(
                    "`{t}` is a host address the GPU cannot write; write through a `DisjointSlice<{e}>` \
                     or `*mut {e}` (launched with a `&mut DeviceBuffer<{e}>`)"
                ),
                _ => format!(
                    "`{t}` is a host address the GPU cannot read; pass the value (`{e}`) or device memory \
                     as a slice `&[{e}]` (launched with a `&DeviceBuffer<{e}>`)"
                ),
            })
        }
        Type::Ptr(p) => host_address(&p.elem),
        Type::Slice(s) => host_address(&s.elem),
        Type::Array(a) => host_address(&a.elem),
        Type::Paren(p) => host_address(&p.elem),
        Type::Group(g) => host_address(&g.elem),
        Type::Tuple(tu) => tu.elems.iter().find_map(host_address),
        Type::Path(p) => {
            let seg = p.path.segments.last()?;
            let n = seg.ident.to_string();
            if ["Box", "Vec", "String", "Rc", "Arc", "HashMap", "BTreeMap", "VecDeque"].contains(&n.as_str()) {
                return Some(format!(
                    "`{t}` holds a host address (the host's heap memory) the GPU cannot read; pass device \
                     memory as a slice `&[T]` (launched with a `&DeviceBuffer<T>`)"
                ));
            }
            if n == "PhantomData" {
                return None;
            }
            match &seg.arguments {
                syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
                    syn::GenericArgument::Type(t) => host_address(t),
                    _ => None,
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Parse "(a, b, c)"-style integer lists of attributes.
fn ints(tokens: TokenStream) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for t in tokens.into_iter() {
        match t {
            proc_macro2::TokenTree::Literal(l) => {
                let s = l.to_string().replace('_', "");
                let s = s.trim_end_matches(|c: char| c.is_alphabetic());
                out.push(s.parse::<u32>().map_err(|_| format!("expected an integer, found {}", l))?);
            }
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ',' => {}
            other => return Err(format!("expected integers, found {}", other)),
        }
    }
    Ok(out)
}

/// `#[launch_bounds]` / `#[cluster_launch]` met before `#[kernel]` ran: keep them as inert doc
/// markers that `#[kernel]` reads.
pub fn marker(which: &str, attr: TokenStream, item: TokenStream) -> TokenStream {
    let s = format!("oxide:{}({})", which, attr);
    let item: TokenStream = item;
    quote!(#[doc = #s] #item)
}

fn take_kernel_attrs(attrs: &mut Vec<Attribute>, ka: &mut Attrs) -> Result<bool, TokenStream> {
    let mut is_kernel = false;
    let mut kernel_path: Option<syn::Path> = None;
    let mut keep = Vec::new();
    for a in attrs.drain(..) {
        let name = a.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let mut marker_args: Option<(String, TokenStream)> = None;
        if name == "doc" {
            if let Ok(syn::Meta::NameValue(nv)) = a.parse_meta() {
                if let syn::Lit::Str(s) = nv.lit {
                    let v = s.value();
                    if let Some(rest) = v.strip_prefix("oxide:") {
                        let open = rest.find('(').unwrap_or(rest.len());
                        // exactly one pair: a contract's value may end in `)` too
                        let body = rest[open..].strip_prefix('(').and_then(|b| b.strip_suffix(')')).unwrap_or("");
                        marker_args = Some((rest[..open].to_string(), body.parse().unwrap_or_default()));
                    }
                }
            }
        }
        let (what, args) = match (name.as_str(), marker_args) {
            (_, Some((w, t))) => (w, t),
            ("kernel", None) => {
                is_kernel = true;
                kernel_path = Some(a.path.clone());
                continue;
            }
            ("launch_contract", None) => {
                let inner = a.tokens.clone().into_iter().next();
                let t = match inner {
                    Some(proc_macro2::TokenTree::Group(g)) => g.stream(),
                    _ => TokenStream::new(),
                };
                (name.clone(), t)
            }
            ("launch_bounds", None) | ("cluster_launch", None) => {
                let t = match a.parse_meta() {
                    Ok(syn::Meta::List(l)) => l.nested.iter().map(|n| quote!(#n,)).collect(),
                    _ => return Err(err(a.span(), "expected a list of integers")),
                };
                (name.clone(), t)
            }
            _ => {
                keep.push(a);
                continue;
            }
        };
        if what == "launch_contract" {
            ka.contract = Some(contract::parse(args).map_err(|e| err(a.span(), &e))?);
            continue;
        }
        let v = ints(args).map_err(|e| err(a.span(), &e))?;
        if what == "launch_bounds" {
            if v.is_empty() || v.len() > 2 {
                return Err(err(a.span(), "launch_bounds takes (max_threads) or (max_threads, min_blocks)"));
            }
            ka.launch_bounds = (v[0], *v.get(1).unwrap_or(&0));
        } else {
            if v.is_empty() || v.len() > 3 {
                return Err(err(a.span(), "cluster_launch takes (x), (x, y) or (x, y, z)"));
            }
            ka.cluster = Some((v[0], *v.get(1).unwrap_or(&1), *v.get(2).unwrap_or(&1)));
        }
    }
    if let Some(p) = kernel_path {
        // left as a marker (makes the user's `use cuda_device::kernel` count as used)
        keep.push(syn::parse_quote!(#[#p(__oxide_in_module)]));
    }
    *attrs = keep;
    Ok(is_kernel)
}

/// Gives `static` items in the kernel body whose type is a SharedArray the section that tells
/// the importer to place them in shared memory.
struct MarkShared;
impl VisitMut for MarkShared {
    fn visit_item_static_mut(&mut self, s: &mut syn::ItemStatic) {
        let shared = matches!(last_ident(&s.ty), Some((n, _)) if n == "SharedArray");
        let constant = matches!(last_ident(&s.ty), Some((n, _)) if n == "ConstantArray");
        if shared {
            s.attrs.push(syn::parse_quote!(#[link_section = ".oxide.shared"]));
        } else if constant {
            s.attrs.push(syn::parse_quote!(#[link_section = ".oxide.const"]));
        }
    }
    fn visit_item_fn_mut(&mut self, _f: &mut ItemFn) {}
}

/// Finds `process::exit` in a kernel body. On the GPU it could only become a trap, which would
/// end the whole launch with an error instead of the process with the status the code asked for.
/// (Calls through other functions are refused by liboxide when it links the kernel.)
struct FindExit(Option<syn::ExprPath>);
impl VisitMut for FindExit {
    fn visit_expr_path_mut(&mut self, e: &mut syn::ExprPath) {
        let names: Vec<String> = e.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if self.0.is_none() && names.ends_with(&["process".to_string(), "exit".to_string()]) {
            self.0 = Some(e.clone());
        }
    }
    fn visit_item_fn_mut(&mut self, _f: &mut ItemFn) {}
}

fn analyse(mut func: ItemFn, ka: Attrs) -> Result<Kernel, TokenStream> {
    if func.sig.output != syn::ReturnType::Default {
        return Err(err(
            func.sig.output.span(),
            "a #[kernel] returns nothing: write results through a DisjointSlice or pointer",
        ));
    }
    if func.sig.asyncness.is_some() {
        return Err(err(func.sig.span(), "a #[kernel] cannot be async"));
    }
    let mut params = Vec::new();
    for (i, a) in func.sig.inputs.iter().enumerate() {
        match a {
            FnArg::Receiver(r) => return Err(err(r.span(), "a #[kernel] cannot take self")),
            FnArg::Typed(pt) => {
                let name = match &*pt.pat {
                    Pat::Ident(pi) => pi.ident.clone(),
                    _ => format_ident!("arg{}", i),
                };
                // a TensorMap is read in place by TMA: a by-value copy (the kernel's own, in local
                // memory) or a mutable one cannot be used by the copy engine
                let tm_mut = matches!(&*pt.ty, Type::Reference(r) if r.mutability.is_some() && is_tensor_map(&r.elem));
                if is_tensor_map(&pt.ty) || tm_mut {
                    return Err(err(pt.ty.span(), "take a TMA descriptor as `&TensorMap` (by value in parameter space, \
                                                  launched with `&TmaDescriptor`) or `*const TensorMap` (in device memory)"));
                }
                if let Some(why) = host_address(&pt.ty) {
                    let msg = format!("#[kernel] parameter `{}: {}`: {}", name, shown(&pt.ty), why);
                    return Err(syn::Error::new_spanned(pt, msg).to_compile_error());
                }
                params.push(Param { name, ty: (*pt.ty).clone(), kind: classify(&pt.ty) });
            }
        }
    }
    let mut exit = FindExit(None);
    exit.visit_block_mut(&mut func.block);
    if let Some(path) = exit.0 {
        return Err(syn::Error::new_spanned(
            path,
            "`std::process::exit` in a #[kernel]: a GPU thread cannot end the host process; return from \
             the kernel, or panic! (which stops the launch and reports the thread and the place)",
        )
        .to_compile_error());
    }
    if let Some(c) = &ka.contract {
        contract::check_bounds(c, ka.launch_bounds.0).map_err(|e| err(func.sig.ident.span(), &e))?;
        let disjoint = params.iter().any(|p| matches!(p.kind, Kind::Slice { disjoint: true, .. }));
        contract::check_indexing(c, &mut func.block, disjoint).map_err(|(span, e)| err(span, &e))?;
    }
    MarkShared.visit_block_mut(&mut func.block);
    let cluster = ka.cluster.unwrap_or((1, 1, 1));
    Ok(Kernel { func, params, launch_bounds: ka.launch_bounds, cluster, contract: ka.contract })
}

pub(crate) fn static_generics(g: &Generics) -> Generics {
    let mut g = g.clone();
    for p in g.params.iter_mut() {
        if let GenericParam::Type(t) = p {
            t.bounds.push(syn::parse_quote!('static));
        }
    }
    // lifetimes cannot appear in the entry (its parameters are raw pointers)
    g.params = g.params.into_iter().filter(|p| !matches!(p, GenericParam::Lifetime(_))).collect();
    g
}

/// The names of g's type parameters, and of its const parameters where with_consts, in order.
fn generic_args(g: &Generics, with_consts: bool) -> Vec<TokenStream> {
    g.params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => {
                let i = &t.ident;
                Some(quote!(#i))
            }
            GenericParam::Const(c) if with_consts => {
                let i = &c.ident;
                Some(quote!(#i))
            }
            _ => None,
        })
        .collect()
}

pub(crate) fn type_args(g: &Generics) -> Vec<TokenStream> {
    generic_args(g, true)
}

fn type_only_args(g: &Generics) -> Vec<TokenStream> {
    generic_args(g, false)
}

/// The entry point and its descriptor.
fn entry(k: &Kernel) -> TokenStream {
    let name = &k.func.sig.ident;
    let entry_name = format_ident!("__oxide_kernel_entry_{}", name);
    let g = static_generics(&k.func.sig.generics);
    let (impl_g, _, where_c) = g.split_for_impl();
    let targs = type_args(&k.func.sig.generics);
    let tonly = type_only_args(&k.func.sig.generics);
    let generic = !tonly.is_empty();
    let mut eargs = Vec::new();
    let mut conv = Vec::new();
    let mut pdesc = Vec::new();
    for p in &k.params {
        let pn = &p.name;
        let ty = &p.ty;
        let pname = pn.to_string();
        match &p.kind {
            Kind::Scalar => {
                eargs.push(quote!(#pn: #ty));
                conv.push(quote!(#pn));
                pdesc.push(
                    quote!(::cuda_device::__private::ParamDesc { name_ptr: #pname.as_ptr(), name_len: #pname.len(),
                    kind: ::cuda_device::__private::KIND_SCALAR, mutable: 0, size: ::core::mem::size_of::<#ty>() as u32,
                    align: ::core::mem::align_of::<#ty>() as u32, elem: ::core::any::TypeId::of::<#ty>() }),
                );
            }
            Kind::Slice { elem, mutable, disjoint } => {
                let pp = format_ident!("{}_ptr", pn);
                let pl = format_ident!("{}_len", pn);
                if *mutable {
                    eargs.push(quote!(#pp: *mut #elem, #pl: u64));
                } else {
                    eargs.push(quote!(#pp: *const #elem, #pl: u64));
                }
                conv.push(if *disjoint {
                    quote!(unsafe { ::cuda_device::DisjointSlice::from_raw_parts(#pp, #pl as usize) })
                } else if *mutable {
                    quote!(unsafe { ::core::slice::from_raw_parts_mut(#pp, #pl as usize) })
                } else {
                    quote!(unsafe { ::core::slice::from_raw_parts(#pp, #pl as usize) })
                });
                let m = *mutable as u32;
                pdesc.push(
                    quote!(::cuda_device::__private::ParamDesc { name_ptr: #pname.as_ptr(), name_len: #pname.len(),
                    kind: ::cuda_device::__private::KIND_SLICE, mutable: #m, size: 16, align: 8,
                    elem: ::core::any::TypeId::of::<#elem>() }),
                );
            }
            Kind::Ptr { elem, mutable } => {
                eargs.push(quote!(#pn: #ty));
                conv.push(quote!(#pn));
                let m = *mutable as u32;
                pdesc.push(
                    quote!(::cuda_device::__private::ParamDesc { name_ptr: #pname.as_ptr(), name_len: #pname.len(),
                    kind: ::cuda_device::__private::KIND_PTR, mutable: #m, size: 8, align: 8,
                    elem: ::core::any::TypeId::of::<#elem>() }),
                );
            }
            Kind::TmaDesc { elem } => {
                // the wrapper passes the parameter's address (grid_constant: param space, never
                // copied); the kernel gets a reference to it
                eargs.push(quote!(#pn: *const #elem));
                conv.push(quote!(unsafe { &*#pn }));
                pdesc.push(
                    quote!(::cuda_device::__private::ParamDesc { name_ptr: #pname.as_ptr(), name_len: #pname.len(),
                    kind: ::cuda_device::__private::KIND_TMA_DESC, mutable: 0, size: 128, align: 64,
                    elem: ::core::any::TypeId::of::<u8>() }),
                );
            }
            Kind::Bytes => {
                eargs.push(quote!(#pn: *const #ty));
                conv.push(quote!(unsafe { ::core::ptr::read(#pn) }));
                pdesc.push(
                    quote!(::cuda_device::__private::ParamDesc { name_ptr: #pname.as_ptr(), name_len: #pname.len(),
                    kind: ::cuda_device::__private::KIND_BYTES, mutable: 0,
                    size: ::cuda_device::__private::bytes_size(::core::mem::size_of::<#ty>()),
                    align: ::core::mem::align_of::<#ty>() as u32, elem: ::core::any::TypeId::of::<#ty>() }),
                );
            }
        }
    }
    let kname = name.to_string();
    let np = k.params.len() as u32;
    let (lb0, lb1) = k.launch_bounds;
    let (c0, c1, c2) = k.cluster;
    let cw = contract::desc(k.contract.as_ref());
    // an exact size is also the default a C launch giving 0 bytes gets
    let dyn_smem = match k.contract.as_ref().and_then(|c| c.smem) {
        Some((lo, hi)) if lo == hi => lo,
        _ => 0,
    };
    let gen = generic as u32;
    let call = if targs.is_empty() { quote!(#name) } else { quote!(#name::<#(#targs),*>) };
    quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, clippy::all)]
        #[inline(never)]
        pub extern "C" fn #entry_name #impl_g (#(#eargs),*) #where_c {
            ::cuda_device::intrinsics::__oxide_kernel_tag(const {
                &::cuda_device::__private::KernelDesc {
                    tid: ::core::any::TypeId::of::<(#(#tonly,)*)>(),
                    name_ptr: #kname.as_ptr(),
                    name_len: #kname.len(),
                    generic: #gen,
                    nparams: #np,
                    params: &[#(#pdesc),*],
                    launch_bounds: [#lb0, #lb1],
                    cluster: [#c0, #c1, #c2],
                    dyn_smem: #dyn_smem,
                    contract: #cw,
                }
            } as *const ::cuda_device::__private::KernelDesc as *const u8);
            #call(#(#conv),*)
        }
    }
}

/// The PTX entry name of an instance, computed at run time: the kernel's name, and for a generic
/// instance its instance tag (lib/import_kernels.c and lib/import_tile.c name them the same way).
pub(crate) fn entry_name_expr(kname: &str, inst: &[TokenStream]) -> TokenStream {
    if inst.is_empty() {
        quote!(::std::borrow::Cow::Borrowed(#kname))
    } else {
        quote!(::std::borrow::Cow::Owned(::std::format!("{}_{:016x}", #kname,
            ::cuda_device::__private::instance_tag::<(#(#inst,)*)>())))
    }
}

/// Launch methods on the generated `Module`.
fn launcher(k: &Kernel) -> TokenStream {
    let name = &k.func.sig.ident;
    let name_async = format_ident!("{}_async", name);
    let entry_name = format_ident!("__oxide_kernel_entry_{}", name);
    let g = static_generics(&k.func.sig.generics);
    let (_, _, where_c) = g.split_for_impl();
    let impl_params = &g.params;
    let tonly = type_only_args(&k.func.sig.generics);
    let targs = type_args(&k.func.sig.generics);
    let kname = name.to_string();
    let pnames: Vec<&Ident> = k.params.iter().map(|p| &p.name).collect();
    let mut hargs = Vec::new();
    let mut pushes = Vec::new();
    let mut etys = Vec::new();
    for p in &k.params {
        let pn = &p.name;
        let ty = &p.ty;
        match &p.kind {
            Kind::Scalar => {
                hargs.push(quote!(#pn: #ty));
                pushes.push(quote!(__p.push_value(&#pn);));
                etys.push(quote!(#ty));
            }
            Kind::Slice { elem, mutable, .. } => {
                if *mutable {
                    hargs.push(quote!(#pn: &'__a mut ::cuda_core::DeviceBuffer<#elem>));
                    etys.push(quote!(*mut #elem, u64));
                } else {
                    hargs.push(quote!(#pn: &'__a ::cuda_core::DeviceBuffer<#elem>));
                    etys.push(quote!(*const #elem, u64));
                }
                pushes.push(quote!(__p.push_value(&#pn.device_ptr()); __p.push_value(&(#pn.len() as u64));));
            }
            Kind::Ptr { elem, mutable } => {
                // a TMA descriptor lives in device memory (cuda_core::TmaDescriptor owns it)
                if !*mutable && matches!(last_ident(elem), Some((n, _)) if n == "TensorMap") {
                    hargs.push(quote!(#pn: &'__a ::cuda_core::TmaDescriptor));
                } else if *mutable {
                    hargs.push(quote!(#pn: &'__a mut ::cuda_core::DeviceBuffer<#elem>));
                } else {
                    hargs.push(quote!(#pn: &'__a ::cuda_core::DeviceBuffer<#elem>));
                }
                pushes.push(quote!(__p.push_value(&#pn.device_ptr());));
                etys.push(quote!(#ty));
            }
            Kind::TmaDesc { elem } => {
                // the descriptor's 128 bytes themselves (the manifest's tma_desc kind)
                hargs.push(quote!(#pn: &'__a ::cuda_core::TmaDescriptor));
                pushes.push(quote!(__p.push_value(&#pn.bytes());));
                etys.push(quote!(*const #elem));
            }
            Kind::Bytes => {
                hargs.push(quote!(#pn: #ty));
                pushes.push(quote!(__p.push_bytes_of(&#pn);));
                etys.push(quote!(*const #ty));
            }
        }
    }
    let entry_ref = if targs.is_empty() { quote!(#entry_name) } else { quote!(#entry_name::<#(#targs),*>) };
    let entry_str = entry_name_expr(&kname, &tonly);
    let op_body = quote! {
        let __entry: extern "C" fn(#(#etys),*) = #entry_ref;
        ::core::hint::black_box(__entry as usize);
        let mut __p = ::cuda_core::ParamBuffer::new();
        #(#pushes)*
        ::cuda_core::LaunchOp::new(&self.inner, #entry_str, cfg, __p)
    };
    if k.contract.is_some() {
        let prepare = format_ident!("prepare_{}", name);
        let unchecked = format_ident!("{}_unchecked", name);
        let op = format_ident!("__oxide_op_{}", name);
        let brand = quote!(contract::#name);
        let config = format_ident!("LaunchConfig{}D", k.contract.as_ref().map_or(1, |c| c.domain));
        return quote! {
            /// Check `cfg` against this kernel's launch contract and the device's limits, once;
            /// the launch methods take the result.
            pub fn #prepare(&self, cfg: ::cuda_core::#config) -> ::cuda_core::Result<::cuda_core::PreparedLaunch<#brand>> {
                ::cuda_core::PreparedLaunch::<#brand>::prepare(&self.inner, cfg)
            }

            /// Launch this kernel on `stream` with a prepared launch and return once it is queued.
            #[allow(clippy::too_many_arguments)]
            pub fn #name<'__a, #impl_params>(&'__a self, stream: &::cuda_core::CudaStream,
                launch: &::cuda_core::PreparedLaunch<#brand>, #(#hargs),*) -> ::cuda_core::Result<()> #where_c
            {
                ::cuda_core::DeviceOperation::launch_on(self.#name_async(launch, #(#pnames),*), stream)
            }

            /// A lazy launch with a prepared launch: runs at `.sync()`, `.await` or when composed.
            #[allow(clippy::too_many_arguments)]
            pub fn #name_async<'__a, #impl_params>(&'__a self, launch: &::cuda_core::PreparedLaunch<#brand>, #(#hargs),*)
                -> ::cuda_core::LaunchOp<'__a> #where_c
            {
                self.#op(launch.config(), #(#pnames),*)
            }

            /// Launch with a raw configuration, without `prepare`'s checks.
            ///
            /// # Safety
            /// `cfg` must keep the kernel's launch contract and fit the device (the runtime
            /// still refuses a launch that breaks the contract's fields).
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn #unchecked<'__a, #impl_params>(&'__a self, stream: &::cuda_core::CudaStream,
                cfg: ::cuda_core::LaunchConfig, #(#hargs),*) -> ::cuda_core::Result<()> #where_c
            {
                ::cuda_core::DeviceOperation::launch_on(self.#op(cfg, #(#pnames),*), stream)
            }

            #[allow(clippy::too_many_arguments, non_snake_case)]
            fn #op<'__a, #impl_params>(&'__a self, cfg: ::cuda_core::LaunchConfig, #(#hargs),*)
                -> ::cuda_core::LaunchOp<'__a> #where_c
            {
                #op_body
            }
        };
    }
    quote! {
        /// Launch this kernel on `stream` and return once it is queued.
        #[allow(clippy::too_many_arguments)]
        pub fn #name<'__a, #impl_params>(&'__a self, stream: &::cuda_core::CudaStream, cfg: ::cuda_core::LaunchConfig, #(#hargs),*)
            -> ::cuda_core::Result<()> #where_c
        {
            ::cuda_core::DeviceOperation::launch_on(self.#name_async(cfg, #(#pnames),*), stream)
        }

        /// A lazy launch: runs at `.sync()`, `.await` or when composed (cuda_async).
        #[allow(clippy::too_many_arguments)]
        pub fn #name_async<'__a, #impl_params>(&'__a self, cfg: ::cuda_core::LaunchConfig, #(#hargs),*)
            -> ::cuda_core::LaunchOp<'__a> #where_c
        {
            #op_body
        }
    }
}

pub fn kernel_attr(attr: TokenStream, item: TokenStream) -> TokenStream {
    if attr.to_string() == "__oxide_in_module" {
        return item; // already expanded by #[cuda_module]
    }
    if !attr.is_empty() {
        return err(attr.span(), "#[kernel] takes no arguments; use #[launch_bounds(..)] and #[cluster_launch(..)]");
    }
    let mut func: ItemFn = match parse2(item) {
        Ok(f) => f,
        Err(e) => return e.to_compile_error(),
    };
    let mut ka = Attrs::default();
    if let Err(e) = take_kernel_attrs(&mut func.attrs, &mut ka) {
        return e;
    }
    match analyse(func, ka) {
        Ok(k) => {
            let f = &k.func;
            let e = entry(&k);
            quote!(#f #e)
        }
        Err(e) => e,
    }
}

pub fn module_attr(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        return err(attr.span(), "#[cuda_module] takes no arguments");
    }
    let mut m: ItemMod = match parse2(item) {
        Ok(m) => m,
        Err(e) => return e.to_compile_error(),
    };
    let Some((brace, items)) = m.content.take() else {
        return err(m.span(), "#[cuda_module] needs an inline module: mod kernels { ... }");
    };
    let mut out: Vec<TokenStream> = Vec::new();
    let mut launchers = Vec::new();
    let mut brands = Vec::new();
    for it in items {
        match it {
            Item::Fn(mut f) => {
                if let Some(args) = crate::tile::take_attr(&mut f) {
                    let (code, launch) = crate::tile::expand(f, args);
                    out.push(code);
                    launchers.push(launch);
                    continue;
                }
                let mut ka = Attrs::default();
                match take_kernel_attrs(&mut f.attrs, &mut ka) {
                    Err(e) => out.push(e),
                    Ok(false) => out.push(quote!(#f)),
                    Ok(true) => match analyse(f, ka) {
                        Ok(k) => {
                            let f = &k.func;
                            let e = entry(&k);
                            out.push(quote!(#f #e));
                            launchers.push(launcher(&k));
                            if let Some(c) = &k.contract {
                                brands.push(contract::brand(&k.func.sig.ident, c));
                            }
                        }
                        Err(e) => out.push(e),
                    },
                }
            }
            other => out.push(quote!(#other)),
        }
    }
    let _ = brace;
    let attrs = &m.attrs;
    let vis = &m.vis;
    let ident = &m.ident;
    quote! {
        #(#attrs)*
        #vis mod #ident {
            #(#out)*

            /// The kernels of this module, loaded on a context (the PTX is inside the binary).
            pub struct Module {
                inner: ::cuda_core::Module,
            }

            /// Load this binary's PTX on `ctx`.
            pub fn load(ctx: &::cuda_core::CudaContext) -> ::cuda_core::Result<Module> {
                Ok(Module { inner: ::cuda_core::Module::load_embedded(ctx)? })
            }

            /// These kernels from other PTX holding the same entries (e.g. this binary's PTX,
            /// edited); launches are checked against that PTX's manifest.
            pub fn load_ptx(ctx: &::cuda_core::CudaContext, ptx: &[u8]) -> ::cuda_core::Result<Module> {
                Ok(Module { inner: ::cuda_core::Module::load_ptx(ctx, ptx)? })
            }

            /// The brands of the prepared launches of the kernels with a `#[launch_contract]`.
            pub mod contract {
                #(#brands)*
            }

            impl Module {
                /// The underlying module (raw launches by entry name, resource queries).
                pub fn raw(&self) -> &::cuda_core::Module { &self.inner }
                #(#launchers)*
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(ty: &str) -> Option<String> {
        host_address(&syn::parse_str::<Type>(ty).unwrap())
    }

    #[test]
    fn host_addresses_are_refused_with_what_to_use() {
        let f = refusal("fn(f32) -> f32").unwrap();
        assert!(f.starts_with("`fn(f32) -> f32` is a function pointer"), "{f}");
        assert!(f.contains("`F: Fn(..) -> .. + Copy`"), "{f}");
        let r = refusal("&f32").unwrap();
        assert!(r.starts_with("`&f32` is a host address the GPU cannot read"), "{r}");
        assert!(r.contains("pass the value (`f32`)") && r.contains("`&[f32]`"), "{r}");
        let m = refusal("&'a mut u32").unwrap();
        assert!(m.contains("`DisjointSlice<u32>`") && m.contains("`*mut u32`"), "{m}");
        assert!(refusal("&str").unwrap().contains("`&[u8]`"));
        assert!(refusal("&dyn Fn(f32) -> f32").unwrap().contains("host vtable"));
        assert!(refusal("Vec<f32>").unwrap().contains("heap memory"));
        assert!(refusal("(u32, &f32)").unwrap().starts_with("`&f32`"));
        assert!(refusal("[fn(); 2]").unwrap().starts_with("`fn()`"));
        assert!(refusal("Option<&u8>").unwrap().starts_with("`&u8`"));
        assert!(refusal("&[&f32]").unwrap().starts_with("`&f32`"));
    }

    #[test]
    fn device_values_are_accepted() {
        for ty in [
            "f32",
            "u64",
            "&[f32]",
            "&mut [u32]",
            "DisjointSlice<f32>",
            "*const f32",
            "*mut T",
            "&TensorMap",
            "*const cuda_device::tma::TensorMap",
            "F",
            "[f32; 4]",
            "(u32, f32)",
            "PhantomData<&'static u8>",
        ] {
            assert_eq!(refusal(ty), None, "{ty}");
        }
    }
}
