//! Pare: the source language of parec.
//!
//! Phases, in order: [`lexer`] → [`parser`] (syntax tree, [`ast`]) →
//! [`check`] (name resolution, types, monomorphization; typed program, [`tir`])
//! → [`interp`] (the reference interpreter) or [`lower`] (CLIF modules).
//! Every phase reports problems as [`source::Diagnostic`]s; none panics on bad input.

pub mod ast;
pub mod check;
pub mod input;
pub mod interp;
pub mod lexer;
pub mod load;
pub mod lower;
pub mod ops;
pub mod parser;
pub mod source;
pub mod stack;
pub mod tir;

pub use load::{
    check_sources, check_texts, load_modules, load_program, load_program_observed, LoadError,
    LoadStage,
};
