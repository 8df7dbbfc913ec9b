//! `#[tile_kernel]`: a tile kernel's entry, its descriptor and its launch methods.
//!
//! The entry is never run: liboxide (lib/import_tile.c) finds it by its `__oxide_tile_kernel_tag`
//! call, reads the descriptor (layout: cuda_tile::__private) and lifts the body, with everything
//! it calls inlined, into tile IR. Tensor parameters reach the body as the constant index of
//! their parameter, so every tensor operation names its tensor; scalars are the entry's own
//! parameters.
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, GenericParam, Ident, ItemFn, Pat, Type};

const SCALARS: &[&str] = &["i32", "i64", "u32", "u64", "f32"];
const WARPS: &[u32] = &[1, 2, 4, 8, 16];

enum Kind {
    Scalar,
    Tensor { elem: Box<Type>, rank: Box<syn::Expr>, mutable: bool },
}

struct Param {
    name: Ident,
    ty: Type,
    kind: Kind,
}

fn err(span: Span, msg: &str) -> TokenStream {
    quote_spanned!(span => compile_error!(#msg);)
}

fn classify(ty: &Type) -> Option<Kind> {
    let Type::Path(p) = ty else { return None };
    let seg = p.path.segments.last()?;
    let n = seg.ident.to_string();
    if SCALARS.contains(&n.as_str()) && seg.arguments.is_empty() {
        return Some(Kind::Scalar);
    }
    if n != "Tensor" && n != "TensorMut" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(a) = &seg.arguments else { return None };
    let mut it = a.args.iter();
    let elem = match it.next()? {
        syn::GenericArgument::Type(t) => t.clone(),
        _ => return None,
    };
    let rank = match it.next()? {
        syn::GenericArgument::Const(e) => e.clone(),
        syn::GenericArgument::Type(Type::Path(tp)) => syn::parse_quote!(#tp),
        _ => return None,
    };
    Some(Kind::Tensor { elem: Box::new(elem), rank: Box::new(rank), mutable: n == "TensorMut" })
}

/// `warps = N` (the only argument so far).
fn parse_warps(attr: TokenStream) -> Result<u32, TokenStream> {
    if attr.is_empty() {
        return Ok(4);
    }
    let span = attr.span();
    let bad = || err(span, "#[tile_kernel] takes `warps = 1, 2, 4, 8 or 16` (default 4)");
    let nv: syn::MetaNameValue = syn::parse2(attr).map_err(|_| bad())?;
    match (&nv.path, &nv.lit) {
        (p, syn::Lit::Int(i)) if p.is_ident("warps") => match i.base10_parse::<u32>() {
            Ok(w) if WARPS.contains(&w) => Ok(w),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

fn params(func: &ItemFn) -> Result<Vec<Param>, TokenStream> {
    if func.sig.output != syn::ReturnType::Default {
        return Err(err(func.sig.output.span(), "a #[tile_kernel] returns nothing: store results to a TensorMut"));
    }
    for g in &func.sig.generics.params {
        if let GenericParam::Const(c) = g {
            if !matches!(&c.ty, Type::Path(p) if p.path.is_ident("usize") || p.path.is_ident("bool")) {
                return Err(err(
                    c.ty.span(),
                    "a #[tile_kernel]'s const generics are usize (tile sizes) or bool (flags)",
                ));
            }
        }
    }
    let mut out = Vec::new();
    for (i, a) in func.sig.inputs.iter().enumerate() {
        let FnArg::Typed(pt) = a else {
            return Err(err(a.span(), "a #[tile_kernel] cannot take self"));
        };
        let name = match &*pt.pat {
            Pat::Ident(pi) => pi.ident.clone(),
            _ => format_ident!("arg{}", i),
        };
        let Some(kind) = classify(&pt.ty) else {
            let msg = format!(
                "#[tile_kernel] parameter `{name}`: a tile kernel takes tensors (`Tensor<T, R>`, `TensorMut<T, R>`) \
                 and scalars (i32, i64, u32, u64, f32); slices, pointers and other values are for #[kernel]s"
            );
            return Err(syn::Error::new_spanned(pt, msg).to_compile_error());
        };
        out.push(Param { name, ty: (*pt.ty).clone(), kind });
    }
    Ok(out)
}

/// The generic arguments that identify an instance: types, each usize const as `[(); N]` and
/// each bool const as `Flag<B>` (a TypeId needs a type, and stable Rust has no `[(); B as usize]`).
fn instance_types(func: &ItemFn) -> Vec<TokenStream> {
    let consts: Vec<(String, bool)> = func
        .sig
        .generics
        .const_params()
        .map(|c| (c.ident.to_string(), matches!(&c.ty, Type::Path(p) if p.path.is_ident("bool"))))
        .collect();
    crate::kernel::type_args(&func.sig.generics)
        .into_iter()
        .map(|t| match consts.iter().find(|(n, _)| *n == t.to_string()) {
            Some((_, true)) => quote!(::cuda_tile::__private::Flag<#t>),
            Some((_, false)) => quote!([(); #t]),
            None => t,
        })
        .collect()
}

/// The function as written, its entry, and the launch methods for the module's `impl Module`.
pub fn expand(func: ItemFn, attr: TokenStream) -> (TokenStream, TokenStream) {
    let warps = match parse_warps(attr) {
        Ok(w) => w,
        Err(e) => return (quote!(#func #e), quote!()),
    };
    let ps = match params(&func) {
        Ok(p) => p,
        Err(e) => return (quote!(#func #e), quote!()),
    };
    let name = &func.sig.ident;
    let entry_name = format_ident!("__oxide_tile_entry_{}", name);
    let g = crate::kernel::static_generics(&func.sig.generics);
    let (impl_g, _, where_c) = g.split_for_impl();
    let targs = crate::kernel::type_args(&func.sig.generics);
    let inst = instance_types(&func);
    let generic = !inst.is_empty();
    let (mut eargs, mut conv, mut pdesc, mut etys) = (vec![], vec![], vec![], vec![]);
    let (mut hargs, mut pushes, mut pnames) = (vec![], vec![], vec![]);
    for (i, p) in ps.iter().enumerate() {
        let (pn, ty, pname, idx) = (&p.name, &p.ty, p.name.to_string(), i as u32);
        pnames.push(pn.clone());
        match &p.kind {
            Kind::Scalar => {
                eargs.push(quote!(#pn: #ty));
                etys.push(quote!(#ty));
                conv.push(quote!(#pn));
                hargs.push(quote!(#pn: #ty));
                pushes.push(quote!(__p.push_scalar(<#ty as ::cuda_tile::__private::ScalarParam>::CODE, &#pn);));
                pdesc.push(quote!(TileParamDesc { name_ptr: #pname.as_ptr(),
                    name_len: #pname.len(), kind: 0, rank: 0, mutable: 0,
                    elem: <#ty as ::cuda_tile::__private::ScalarParam>::CODE }));
            }
            Kind::Tensor { elem, rank, mutable } => {
                let m = *mutable as u32;
                conv.push(if *mutable {
                    quote!(::cuda_tile::TensorMut::<#elem, { #rank }>::__param(#idx))
                } else {
                    quote!(::cuda_tile::Tensor::<#elem, { #rank }>::__param(#idx))
                });
                hargs.push(if *mutable {
                    quote!(#pn: &'__a mut ::cuda_core::DeviceTensorMut<'_, #elem, { #rank }>)
                } else {
                    quote!(#pn: &'__a ::cuda_core::DeviceTensor<'_, #elem, { #rank }>)
                });
                pushes.push(quote!(#pn.push_arg(&mut __p, <#elem as ::cuda_tile::Element>::CODE);));
                pdesc.push(quote!(TileParamDesc { name_ptr: #pname.as_ptr(),
                    name_len: #pname.len(), kind: 5, rank: (#rank) as u32, mutable: #m,
                    elem: <#elem as ::cuda_tile::Element>::CODE }));
            }
        }
    }
    let kname = name.to_string();
    let np = ps.len() as u32;
    let call = if targs.is_empty() { quote!(#name) } else { quote!(#name::<#(#targs),*>) };
    let entry_ref = if targs.is_empty() { quote!(#entry_name) } else { quote!(#entry_name::<#(#targs),*>) };
    let gen = generic as u32;
    // the tile descriptor is a constant the importer reads (lib/import_tile.c, TD_* offsets)
    let desc = quote! {
        TileKernelDesc {
            tid: ::core::any::TypeId::of::<(#(#inst,)*)>(),
            name_ptr: #kname.as_ptr(), name_len: #kname.len(), generic: #gen, nparams: #np,
            params: &[#(#pdesc),*], warps: #warps, reserved: 0,
        }
    };
    let entry = quote! {
        #[inline(never)]
        #[doc(hidden)]
        #[allow(non_snake_case, clippy::all, unused_mut)]
        pub extern "C" fn #entry_name #impl_g (#(#eargs),*) #where_c {
            use ::cuda_tile::__private::{TileKernelDesc, TileParamDesc};
            let desc: &'static TileKernelDesc = const { &#desc };
            ::cuda_tile::intrinsics::__oxide_tile_kernel_tag(desc as *const TileKernelDesc as *const u8);
            #call(#(#conv),*)
        }
    };
    let entry_str = crate::kernel::entry_name_expr(&kname, &inst);
    let name_async = format_ident!("{}_async", name);
    // const generics cannot be inferred from the arguments: pass them on
    let turbofish = if targs.is_empty() { quote!() } else { quote!(::<#(#targs),*>) };
    let impl_params = &g.params;
    let launch = quote! {
        /// Launch this tile kernel over `grid` on `stream` (the block is the compiler's:
        /// 32 x warps threads) and return once it is queued.
        #[allow(clippy::too_many_arguments)]
        pub fn #name<'__a, #impl_params>(&'__a self, stream: &::cuda_core::CudaStream, grid: (u32, u32, u32), #(#hargs),*)
            -> ::cuda_core::Result<()> #where_c
        {
            ::cuda_core::DeviceOperation::launch_on(self.#name_async #turbofish (grid, #(#pnames),*), stream)
        }

        /// A lazy launch of this tile kernel (cuda_async).
        #[allow(clippy::too_many_arguments)]
        pub fn #name_async<'__a, #impl_params>(&'__a self, grid: (u32, u32, u32), #(#hargs),*)
            -> ::cuda_core::LaunchOp<'__a> #where_c
        {
            let __entry: extern "C" fn(#(#etys),*) = #entry_ref;
            ::core::hint::black_box(__entry as usize);
            // checked by liboxide, which lays out the PTX parameters (a tensor read through TMA has more)
            let mut __p = ::cuda_core::TileArgs::new();
            #(#pushes)*
            ::cuda_core::LaunchOp::new_tile(&self.inner, #entry_str, ::cuda_core::LaunchConfig::new(grid, (0, 0, 0), 0), __p)
        }
    };
    (quote!(#func #entry), launch)
}

/// The `tile_kernel` attribute of a function in a `#[cuda_module]`, removed from it (its
/// arguments), or None when the function is not a tile kernel.
pub fn take_attr(f: &mut ItemFn) -> Option<TokenStream> {
    let at = f.attrs.iter().position(|a| a.path.segments.last().is_some_and(|s| s.ident == "tile_kernel"))?;
    let a = f.attrs.remove(at);
    let args = match a.parse_meta() {
        Ok(syn::Meta::List(l)) => l.nested.iter().map(|n| quote!(#n)).collect(),
        _ => TokenStream::new(),
    };
    // left as a marker, so that the user's `use cuda_tile::tile_kernel` counts as used
    let p = &a.path;
    f.attrs.push(syn::parse_quote!(#[#p(__oxide_in_module)]));
    Some(args)
}

/// `#[tile_kernel]` outside a `#[cuda_module]`: only there does it get launch methods.
pub fn tile_kernel_attr(attr: TokenStream, item: TokenStream) -> TokenStream {
    if attr.to_string() == "__oxide_in_module" {
        return item;
    }
    let span = item.span();
    let e = err(span, "#[tile_kernel] belongs inside a #[cuda_module] mod, which gives it its launch methods");
    quote!(#item #e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(attr: &str, f: &str) -> String {
        let (code, launch) = expand(syn::parse_str(f).unwrap(), attr.parse().unwrap());
        format!("{code} {launch}")
    }

    #[test]
    fn warps_are_checked() {
        assert_eq!(parse_warps(TokenStream::new()).ok(), Some(4));
        assert_eq!(parse_warps("warps = 8".parse().unwrap()).ok(), Some(8));
        for bad in ["warps = 3", "warps = 32", "threads = 4", "4"] {
            let e = parse_warps(bad.parse().unwrap()).unwrap_err().to_string();
            assert!(e.contains("warps = 1, 2, 4, 8 or 16"), "{bad}: {e}");
        }
    }

    #[test]
    fn parameters_are_tensors_and_scalars() {
        let ok = expanded("", "fn k(a: Tensor<bf16, 2>, mut c: TensorMut<f32, 1>, eps: f32) {}");
        assert!(ok.contains("__oxide_tile_entry_k") && !ok.contains("compile_error"), "{ok}");
        assert!(ok.contains("kind : 5") && ok.contains("DeviceTensorMut"), "{ok}");
        let bad = expanded("", "fn k(a: &[f32]) {}");
        assert!(bad.contains("compile_error") && bad.contains("a tile kernel takes tensors"), "{bad}");
        let ret = expanded("", "fn k(a: Tensor<f32, 1>) -> f32 { 0.0 }");
        assert!(ret.contains("returns nothing"), "{ret}");
        let cg = expanded("", "fn k<const B: u32>(a: Tensor<f32, 1>) {}");
        assert!(cg.contains("const generics are usize"), "{cg}");
    }

    #[test]
    fn const_generics_name_the_instance() {
        let g = expanded("", "fn k<const R: usize>(a: Tensor<f32, 1>) {}");
        assert!(g.contains("[() ; R]") && g.contains("generic : 1u32"), "{g}");
        let b = expanded("", "fn k<const R: usize, const C: bool>(a: Tensor<f32, 1>) {}");
        assert!(b.contains("[() ; R]") && b.contains("Flag < C >") && !b.contains("compile_error"), "{b}");
    }
}
