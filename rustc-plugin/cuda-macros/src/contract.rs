//! `#[launch_contract(...)]`: parsed and checked here at compile time, carried to liboxide in the
//! kernel descriptor (PTX `.reqntid`, the manifest's "contract"), and turned into the prepared
//! launch API of `#[cuda_module]` (`prepare_NAME`, `NAME(&stream, &prepared, ..)`,
//! `NAME_unchecked`).
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;

/// One kernel's contract as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contract {
    pub domain: u32,
    pub block: Option<[u32; 3]>,
    /// (min, max) bytes; equal for `dynamic_shared = N`
    pub smem: Option<(u32, u32)>,
    pub align: Option<u32>,
    pub min_cc: Option<(u32, u32)>,
}

const KEYS: &str = "domain, block, dynamic_shared, dynamic_shared_range, dynamic_shared_alignment, \
                    min_compute_capability";

fn int(t: &TokenTree, key: &str) -> Result<u32, String> {
    if let TokenTree::Literal(l) = t {
        let s = l.to_string().replace('_', "");
        let s = s.trim_end_matches(|c: char| c.is_alphabetic());
        if let Ok(v) = s.parse::<u32>() {
            return Ok(v);
        }
    }
    Err(format!("launch_contract: `{key}` takes an integer, found `{t}`"))
}

fn tuple(t: &TokenTree, key: &str, n: usize) -> Result<Vec<u32>, String> {
    let shape = ["", "", "(a, b)", "(x, y, z)"][n];
    match t {
        TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {
            let items: Vec<TokenTree> =
                g.stream().into_iter().filter(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == ',')).collect();
            if items.len() != n {
                return Err(format!("launch_contract: `{key}` takes {shape}, found `{t}`"));
            }
            items.iter().map(|i| int(i, key)).collect()
        }
        _ => Err(format!("launch_contract: `{key}` takes {shape}, found `{t}`")),
    }
}

/// `key = value, ...` into a contract, every rule checked (the messages name the key).
pub fn parse(tokens: TokenStream) -> Result<Contract, String> {
    let toks: Vec<TokenTree> = tokens.into_iter().collect();
    let mut c = Contract { domain: 0, block: None, smem: None, align: None, min_cc: None };
    let mut seen: Vec<String> = Vec::new();
    for item in toks.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
        if item.is_empty() {
            continue;
        }
        let key = match item {
            [TokenTree::Ident(k), TokenTree::Punct(eq), _] if eq.as_char() == '=' => k.to_string(),
            _ => {
                let text: TokenStream = item.iter().cloned().collect();
                return Err(format!("launch_contract: expected `key = value`, found `{text}` (keys: {KEYS})"));
            }
        };
        let v = &item[2];
        let family = if key.starts_with("dynamic_shared") && key != "dynamic_shared_alignment" {
            "dynamic_shared"
        } else {
            &key
        };
        if seen.iter().any(|s| s == family) {
            return Err(if family == "dynamic_shared" {
                "launch_contract: give `dynamic_shared = BYTES` or `dynamic_shared_range = (lo, hi)`, once".into()
            } else {
                format!("launch_contract: `{key}` given twice")
            });
        }
        seen.push(family.to_string());
        match key.as_str() {
            "domain" => c.domain = int(v, &key)?,
            "block" => {
                let b = tuple(v, &key, 3)?;
                c.block = Some([b[0], b[1], b[2]]);
            }
            "dynamic_shared" => {
                let n = int(v, &key)?;
                c.smem = Some((n, n));
            }
            "dynamic_shared_range" => {
                let r = tuple(v, &key, 2)?;
                c.smem = Some((r[0], r[1]));
            }
            "dynamic_shared_alignment" => c.align = Some(int(v, &key)?),
            "min_compute_capability" => {
                let r = tuple(v, &key, 2)?;
                c.min_cc = Some((r[0], r[1]));
            }
            "coordinates" | "requires" => {
                return Err(format!(
                    "launch_contract: oxide has no `{key}` key (its kernels index with usize; check sizes \
                     in the host code before launching)"
                ))
            }
            _ => return Err(format!("launch_contract: unknown key `{key}` (keys: {KEYS})")),
        }
    }
    check(&c)?;
    Ok(c)
}

fn check(c: &Contract) -> Result<(), String> {
    if !(1..=3).contains(&c.domain) {
        return Err(if c.domain == 0 {
            "launch_contract needs `domain = 1`, `2` or `3` (the dimensions of the launch)".into()
        } else {
            format!("launch_contract: domain = {} (a launch has 1, 2 or 3 dimensions)", c.domain)
        });
    }
    if let Some([x, y, z]) = c.block {
        if x == 0 || y == 0 || z == 0 || x > 1024 || y > 1024 || z > 64 || x as u64 * y as u64 * z as u64 > 1024 {
            return Err(format!(
                "launch_contract: block = ({x}, {y}, {z}): a block has 1 to 1024 threads in all, at most 1024, \
                 1024 and 64 in x, y and z"
            ));
        }
        if (c.domain < 3 && z != 1) || (c.domain < 2 && y != 1) {
            return Err(format!(
                "launch_contract: block = ({x}, {y}, {z}) has more dimensions than domain = {}",
                c.domain
            ));
        }
    }
    if let Some((lo, hi)) = c.smem {
        if lo > hi {
            return Err(format!("launch_contract: dynamic_shared_range = ({lo}, {hi}): the smallest size comes first"));
        }
    }
    if let Some(a) = c.align {
        if !a.is_power_of_two() || a > 4096 {
            return Err(format!("launch_contract: dynamic_shared_alignment = {a}: a power of two from 1 to 4096"));
        }
    }
    if let Some((major, minor)) = c.min_cc {
        if !(1..=99).contains(&major) || minor > 9 {
            return Err(format!(
                "launch_contract: min_compute_capability = ({major}, {minor}): (major, minor), e.g. (9, 0)"
            ));
        }
    }
    Ok(())
}

/// With `#[launch_bounds(max)]` too, the exact block must fit under it.
pub fn check_bounds(c: &Contract, max_threads: u32) -> Result<(), String> {
    match c.block {
        Some([x, y, z]) if max_threads != 0 && x * y * z > max_threads => Err(format!(
            "launch_contract: block = ({x}, {y}, {z}) has {} threads, more than #[launch_bounds({max_threads})] allows",
            x * y * z
        )),
        _ => Ok(()),
    }
}

/// Which index helpers the kernel body calls (`thread::index_1d`, `thread::index_2d`).
struct FindIndexing {
    one_d: Option<Span>,
    two_d: Option<Span>,
}
impl VisitMut for FindIndexing {
    fn visit_expr_path_mut(&mut self, e: &mut syn::ExprPath) {
        if let Some(last) = e.path.segments.last() {
            let span = last.ident.span();
            match last.ident.to_string().as_str() {
                "index_1d" => self.one_d = self.one_d.or(Some(span)),
                "index_2d" => self.two_d = self.two_d.or(Some(span)),
                _ => {}
            }
        }
    }
    fn visit_item_fn_mut(&mut self, _f: &mut syn::ItemFn) {}
}

/// The domain against what the kernel's types show: `index_2d` needs 2 or 3 dimensions, and a
/// `DisjointSlice` written through `index_1d` needs exactly 1 (the index is unique per thread only
/// when the launch has no y or z, so more would let two threads write one element).
pub fn check_indexing(c: &Contract, body: &mut syn::Block, has_disjoint: bool) -> Result<(), (Span, String)> {
    let mut f = FindIndexing { one_d: None, two_d: None };
    f.visit_block_mut(body);
    if let (Some(span), 1) = (f.two_d, c.domain) {
        return Err((
            span,
            "launch_contract: domain = 1, but the kernel calls `index_2d`; declare `domain = 2`".into(),
        ));
    }
    if let (Some(span), true, 2..) = (f.one_d, has_disjoint, c.domain) {
        return Err((
            span,
            format!(
                "launch_contract: domain = {}, but the kernel's DisjointSlice is indexed by `index_1d`, which \
                 is unique per thread only in a 1-dimensional launch; declare `domain = 1`",
                c.domain
            ),
        ));
    }
    Ok(())
}

/// The descriptor's `contract` words (include/oxide.h's `oxide_launch_contract`): the names of
/// the fields it declares (cuda_device::__private's `CONTRACT_*` bits, the one Rust copy of
/// oxide.h's) and the nine values after `fields`.
pub fn words(c: Option<&Contract>) -> (Vec<&'static str>, [u32; 9]) {
    let Some(c) = c else { return (Vec::new(), [0; 9]) };
    let mut names = vec!["CONTRACT_DOMAIN"];
    let mut w = [0u32; 9];
    w[0] = c.domain;
    if let Some(b) = c.block {
        names.push("CONTRACT_BLOCK");
        w[1..4].copy_from_slice(&b);
    }
    if let Some((lo, hi)) = c.smem {
        names.push("CONTRACT_SMEM");
        w[4] = lo;
        w[5] = hi;
    }
    if let Some(a) = c.align {
        names.push("CONTRACT_SMEM_ALIGN");
        w[6] = a;
    }
    if let Some((major, minor)) = c.min_cc {
        names.push("CONTRACT_MIN_CC");
        w[7] = major;
        w[8] = minor;
    }
    (names, w)
}

/// The descriptor's `contract` field as an expression.
pub fn desc(c: Option<&Contract>) -> TokenStream {
    let (names, w) = words(c);
    let bits: Vec<TokenStream> = names
        .iter()
        .map(|n| {
            let n = format_ident!("{}", n);
            quote!(::cuda_device::__private::#n)
        })
        .collect();
    let fields = if bits.is_empty() { quote!(0) } else { quote!(#(#bits)|*) };
    quote!([#fields, #(#w),*])
}

/// The brand type of a kernel's prepared launches and its contract as a value of cuda_core's.
pub fn brand(name: &syn::Ident, c: &Contract) -> TokenStream {
    let kname = name.to_string();
    let config = format_ident!("LaunchConfig{}D", c.domain);
    let domain = c.domain;
    let opt2 = |v: Option<(u32, u32)>| match v {
        Some((a, b)) => quote!(::core::option::Option::Some((#a, #b))),
        None => quote!(::core::option::Option::None),
    };
    let block = match c.block {
        Some([x, y, z]) => quote!(::core::option::Option::Some((#x, #y, #z))),
        None => quote!(::core::option::Option::None),
    };
    let smem = opt2(c.smem);
    let min_cc = opt2(c.min_cc);
    let align = match c.align {
        Some(a) => quote!(::core::option::Option::Some(#a)),
        None => quote!(::core::option::Option::None),
    };
    let doc = format!("Brand of `{kname}`'s prepared launches (`PreparedLaunch<contract::{kname}>`).");
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        pub enum #name {}
        impl ::cuda_core::KernelContract for #name {
            type Config = ::cuda_core::#config;
            const NAME: &'static str = #kname;
            const CONTRACT: ::cuda_core::LaunchContract = ::cuda_core::LaunchContract {
                domain: #domain,
                block: #block,
                dynamic_shared: #smem,
                dynamic_shared_alignment: #align,
                min_compute_capability: #min_cc,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Contract, String> {
        parse(s.parse().unwrap())
    }

    #[test]
    fn contracts_parse_into_their_fields() {
        let c = p("domain = 1, block = (256, 1, 1), dynamic_shared = 1_024, dynamic_shared_alignment = 128, \
                   min_compute_capability = (8, 0),")
        .unwrap();
        assert_eq!(
            c,
            Contract {
                domain: 1,
                block: Some([256, 1, 1]),
                smem: Some((1024, 1024)),
                align: Some(128),
                min_cc: Some((8, 0))
            }
        );
        let (names, w) = words(Some(&c));
        assert_eq!(names.len(), 5);
        assert_eq!(w, [1, 256, 1, 1, 1024, 1024, 128, 8, 0]);
        let r = p("domain = 2, dynamic_shared_range = (512, 4096)").unwrap();
        assert_eq!((r.block, r.smem), (None, Some((512, 4096))));
        assert_eq!(words(Some(&r)).0, ["CONTRACT_DOMAIN", "CONTRACT_SMEM"]);
        assert_eq!(words(None), (vec![], [0; 9]));
        assert!(desc(Some(&r)).to_string().contains("CONTRACT_DOMAIN | :: cuda_device :: __private :: CONTRACT_SMEM"));
    }

    #[test]
    fn broken_contracts_are_refused_naming_the_key() {
        for (text, want) in [
            ("block = (256, 1, 1)", "needs `domain = 1`"),
            ("domain = 4", "domain = 4"),
            ("domain = 1, block = (16, 16, 1)", "more dimensions than domain = 1"),
            ("domain = 3, block = (1024, 2, 1)", "1 to 1024 threads"),
            ("domain = 1, block = (256, 1)", "`block` takes (x, y, z)"),
            ("domain = 1, dynamic_shared = 8, dynamic_shared_range = (1, 2)", "once"),
            ("domain = 1, dynamic_shared_range = (9, 2)", "smallest size comes first"),
            ("domain = 1, dynamic_shared_alignment = 48", "power of two"),
            ("domain = 1, min_compute_capability = (9, 10)", "(major, minor)"),
            ("domain = 1, grid = (1, 1, 1)", "unknown key `grid`"),
            ("domain = 1, coordinates = u32", "no `coordinates` key"),
            ("domain = 1, domain = 2", "`domain` given twice"),
            ("domain", "expected `key = value`"),
        ] {
            let e = p(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
        let c = p("domain = 1, block = (256, 1, 1)").unwrap();
        assert!(check_bounds(&c, 128).unwrap_err().contains("#[launch_bounds(128)]"));
        assert!(check_bounds(&c, 256).is_ok() && check_bounds(&c, 0).is_ok());
    }

    #[test]
    fn the_domain_is_checked_against_the_indexing() {
        let c1 = p("domain = 1").unwrap();
        let c2 = p("domain = 2").unwrap();
        let mut two: syn::Block = syn::parse_quote!({
            let i = thread::index_2d();
        });
        let mut one: syn::Block = syn::parse_quote!({
            let i = thread::index_1d();
        });
        assert!(check_indexing(&c1, &mut two, false).unwrap_err().1.contains("calls `index_2d`"));
        assert!(check_indexing(&c2, &mut two, true).is_ok());
        assert!(check_indexing(&c2, &mut one, true).unwrap_err().1.contains("declare `domain = 1`"));
        assert!(check_indexing(&c2, &mut one, false).is_ok());
        assert!(check_indexing(&c1, &mut one, true).is_ok());
    }
}
