//! parec's test tooling, kept out of the compiler: the Pare program
//! generator ([`gen`]), the differential tester ([`difftest`]) and the
//! benchmark harness ([`bench`], with [`heap`] for its memory figures).
//!
//! The `parec-tools` binary runs them (`parec-tools fuzz`, `parec-tools
//! bench`; `parec fuzz` and `parec bench` forward to it). It also runs
//! generated programs for the differential tester (`exec-interp`,
//! `exec-jit`, `exec-aot`, each a command of its own and a request its
//! worker processes serve): the same compilation as `parec run` and `parec
//! build`, through the `parec` library, with pipelines that may hold passes
//! `parec` does not have (the planted miscompile).

pub mod bench;
pub mod difftest;
pub mod gen;
pub mod heap;
