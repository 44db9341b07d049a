//! What the runtime of an executable stands on: `--runtime` and the one
//! place it is settled (docs/DESIGN.md, "The runtime and linking").
//!
//! The choice ([`RuntimeChoice`]) is made on the command line; what it
//! settles to, [`Runtime`], depends on the program — whether it calls C — so
//! it is settled right after the front end has read the program: for Pare
//! by `crate::frontend::settle_runtime`, for `.clif` modules by
//! [`RuntimeChoice::settle_for_modules`], both through
//! [`RuntimeChoice::settle`]. Nothing decides it again: the build carries
//! the result to the link (`crate::build::Output::runtime`) and the plan of
//! a separate build records it.

use std::collections::BTreeSet;

use anyhow::{anyhow, Result};
use pare_frontend::lower::{CFunction, Runtime};
use parec_passes::clif_module::{ClifModule, Linkage};

/// `--runtime`: what the runtime of an executable stands on
/// (docs/DESIGN.md, "The runtime"). Settled once per build, right after the
/// front end has read the program ([`RuntimeChoice::settle`]): whether a
/// program calls C is known only then.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RuntimeChoice {
    /// Freestanding, unless the program needs the C library (a Pare
    /// `extern fn`, a `.clif` import no module defines, that the
    /// freestanding runtime does not define either: it defines `putchar`,
    /// `getchar`, `abs`, `labs` and `exit`, the C functions the reference
    /// interpreter implements).
    #[default]
    Auto,
    /// Linux system calls alone; a program that calls C is an error.
    Freestanding,
    /// The C library, as the JIT.
    Libc,
}

impl RuntimeChoice {
    /// The name `--runtime` takes.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeChoice::Auto => "auto",
            RuntimeChoice::Freestanding => "freestanding",
            RuntimeChoice::Libc => "libc",
        }
    }

    /// The runtime of a program whose first need of the C library is
    /// `needs_c` (`None`: it needs none), or that need when the choice is
    /// freestanding: the caller reports it where it is.
    pub fn settle<N>(self, needs_c: Option<N>) -> Result<Runtime, N> {
        match (self, needs_c) {
            (RuntimeChoice::Libc, _) | (RuntimeChoice::Auto, Some(_)) => Ok(Runtime::Libc),
            (RuntimeChoice::Auto | RuntimeChoice::Freestanding, None) => Ok(Runtime::Freestanding),
            (RuntimeChoice::Freestanding, Some(need)) => Err(need),
        }
    }

    /// The runtime of an executable of the `.clif` modules `modules`: what
    /// one of them imports, none defines and the freestanding runtime does
    /// not define either ([`CFunction`]) comes from the C library.
    pub fn settle_for_modules(self, modules: &[ClifModule]) -> Result<Runtime> {
        let defined: BTreeSet<&str> = modules
            .iter()
            .flat_map(|m| &m.symbols)
            .filter(|s| s.linkage != Linkage::Import)
            .map(|s| s.name.as_str())
            .collect();
        let needs_c = |name: &str| !defined.contains(name) && CFunction::named(name).is_none();
        let outside = modules.iter().find_map(|m| {
            m.symbols
                .iter()
                .find(|s| s.linkage == Linkage::Import && needs_c(&s.name))
                .map(|s| (m.name.as_str(), s.name.as_str()))
        });
        self.settle(outside).map_err(|(module, symbol)| {
            anyhow!(
                "module `{module}` uses `{symbol}`, which neither a module nor the freestanding \
                 runtime defines, but the build is freestanding: --runtime freestanding links no \
                 C library (--runtime libc or auto, the default, link it)"
            )
        })
    }
}

impl std::str::FromStr for RuntimeChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<RuntimeChoice, String> {
        [
            RuntimeChoice::Auto,
            RuntimeChoice::Freestanding,
            RuntimeChoice::Libc,
        ]
        .into_iter()
        .find(|r| r.name() == s)
        .ok_or_else(|| format!("unknown runtime `{s}`; expected auto, freestanding or libc"))
    }
}
