//! What a symbol's name says: its Pare module and generic, and its kind
//! when the name alone decides it.
//!
//! Pare's mangling (docs/LANGUAGE.md, "Generics"): `module::name` for plain
//! functions, `module::name<args>` for generic instances (arguments may
//! themselves be mangled names: `main::apply<util::scale<3>>`), the root
//! module's `main` is `main`; merging appends [`BODY_SUFFIX`] to a body
//! (`main::f<3>.Tgm`); the outliner names its functions
//! `OUTLINED_FUNCTION_<hash>[_<n>]`; the runtime's functions are `pare_*`.

use parec_passes::merge::BODY_SUFFIX;

use super::Kind;

/// The prefix of the outliner's functions.
pub const OUTLINED_PREFIX: &str = "OUTLINED_FUNCTION_";

/// The prefix of the runtime's functions (module `pare_runtime`).
pub const RUNTIME_PREFIX: &str = "pare_";

/// The runtime's trap helper: prints `trap: <reason>` and exits with 101.
pub const TRAP_HELPER: &str = "pare_trap";

/// The module of the runtime's functions.
pub const RUNTIME_MODULE: &str = "pare_runtime";

/// The program's entry point, the root module's `fn main`.
pub const ENTRY: &str = "main";

/// Whether `name` can be a Pare module's name (an identifier).
pub fn is_module_name(name: &str) -> bool {
    is_identifier(name)
}

/// A Pare-mangled name, taken apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PareName<'a> {
    /// The module that declares the function.
    pub module: &'a str,
    /// `module::name` of a generic instance (all instances of one generic
    /// function share it); `None` for plain functions.
    pub generic: Option<&'a str>,
}

/// Takes `name` apart if it is Pare-mangled (a merged body's suffix is
/// ignored): `module::name` or `module::name<args>`, with identifiers for
/// module and name.
pub fn pare_name(name: &str) -> Option<PareName<'_>> {
    let base = name.strip_suffix(BODY_SUFFIX).unwrap_or(name);
    let head_end = base.find('<').unwrap_or(base.len());
    let head = &base[..head_end];
    let (module, function) = head.split_once("::")?;
    if !is_identifier(module) || !is_identifier(function) {
        return None;
    }
    if head_end < base.len() && !base.ends_with('>') {
        return None;
    }
    Some(PareName {
        module,
        generic: (head_end < base.len()).then_some(head),
    })
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `name` is a shared trap path by its name: `pare_trap` followed
/// by `_` or `.` and a suffix (`pare_trap_null`, `pare_trap.bounds`) — the
/// names shared per-kind trap paths take. `pare_trap` itself is the
/// runtime's helper, not a path.
pub fn is_trap_path_name(name: &str) -> bool {
    name.strip_prefix(TRAP_HELPER)
        .is_some_and(|rest| rest.len() > 1 && (rest.starts_with('_') || rest.starts_with('.')))
}

/// The kind `name` has by its name alone, if the name decides it.
/// `has_body` says whether `name` + [`BODY_SUFFIX`] is defined too (then
/// `name` is a merge thunk). Trap paths found by their code are decided
/// later ([`super::traps`]).
pub fn kind_by_name(name: &str, has_body: bool) -> Option<Kind> {
    if name.starts_with(OUTLINED_PREFIX) {
        Some(Kind::Outlined)
    } else if name.ends_with(BODY_SUFFIX) {
        Some(Kind::MergeBody)
    } else if is_trap_path_name(name) {
        Some(Kind::TrapPath)
    } else if name.starts_with(RUNTIME_PREFIX) {
        Some(Kind::Runtime)
    } else if has_body {
        Some(Kind::MergeThunk)
    } else if name == ENTRY || pare_name(name).is_some() {
        Some(Kind::Program)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pare_names() {
        let p = pare_name("util::max<i64>").unwrap();
        assert_eq!((p.module, p.generic), ("util", Some("util::max")));
        let p = pare_name("main::apply<util::scale<3>>.Tgm").unwrap();
        assert_eq!((p.module, p.generic), ("main", Some("main::apply")));
        let p = pare_name("geo::area").unwrap();
        assert_eq!((p.module, p.generic), ("geo", None));
        assert_eq!(pare_name("main"), None);
        assert_eq!(pare_name("memcpy"), None);
        assert_eq!(pare_name("std::vector<int>::push"), None);
        assert_eq!(pare_name("a::b::c"), None);
    }

    #[test]
    fn kinds_by_name() {
        assert_eq!(
            kind_by_name("OUTLINED_FUNCTION_0123", false),
            Some(Kind::Outlined)
        );
        assert_eq!(kind_by_name("m::f<1>.Tgm", false), Some(Kind::MergeBody));
        assert_eq!(kind_by_name("m::f<1>", true), Some(Kind::MergeThunk));
        assert_eq!(kind_by_name("m::f<1>", false), Some(Kind::Program));
        assert_eq!(kind_by_name("main", false), Some(Kind::Program));
        assert_eq!(kind_by_name("pare_trap", false), Some(Kind::Runtime));
        assert_eq!(kind_by_name("pare_trap_null", false), Some(Kind::TrapPath));
        assert_eq!(
            kind_by_name("pare_trap.bounds", false),
            Some(Kind::TrapPath)
        );
        assert_eq!(kind_by_name("memcpy", false), None);
    }
}
