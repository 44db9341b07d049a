//! `parec size`: where every byte of a build went — every file byte to a
//! part of the file (headers, code, data, symbols, strings, other sections,
//! padding), every code byte to a function, module, generic and kind — and
//! what changed between two builds.
//!
//! The questions bloaty, `llvm-size` and twiggy answer, for parec's
//! executables and objects (and, as far as names allow, any aarch64 or
//! x86_64 ELF file), from the ELF headers ([`file`]), the symbol table and
//! the code ([`elf`]), never from tool output.
//!
//! # Notation
//!
//! - A **block** is a range of a code section that one or more function
//!   symbols start at: its size is the largest of their sizes ([`elf`] says
//!   how sizes are found), clipped where the next block starts, so every
//!   byte belongs to at most one block. Several symbols at one block are
//!   *sharing* it: identical code the linker folded (`ld.lld --icf=all`),
//!   or aliases.
//! - A **function** (a row of the report) is a symbol name — in objects,
//!   the pair (object, name). Its bytes are those of its blocks, each
//!   counted once; it has several *copies* when equal names have different
//!   blocks (duplicate generic instances the linker did not fold), and is
//!   *shared with N* when N other functions share its blocks.
//! - **Padding**: code-section bytes in no block (alignment, unnamed code).
//!
//! # Attribution
//!
//! Folded code is counted once in every total and attributed to every
//! function that shares it: each function's row shows the whole block with
//! a `shared with N` mark. A group (kind, module, generic) counts each
//! block once if any of its functions is in it; `shared` is the part of
//! those bytes that other groups count too, so the rows of a table add up
//! to the total plus the shared bytes counted more than once. The HTML
//! treemap, which must tile the total, splits a shared block evenly among
//! its functions.
//!
//! # Kinds
//!
//! Decided from names first ([`names::kind_by_name`]), then code:
//!
//! | kind          | what                                                         |
//! |---------------|--------------------------------------------------------------|
//! | `program`     | Pare functions (`module::name`, `module::name<args>`, `main`); in objects every function parec wrote that is none of the below; in executables also unknown names inside the program's code range (below) |
//! | `merge-thunk` | a function `f` for which `f.Tgm` is defined: merging made `f` a thunk |
//! | `merge-body`  | `f.Tgm` (`parec_passes::merge::BODY_SUFFIX`): a merged body     |
//! | `outlined`    | `OUTLINED_FUNCTION_*`: the machine outliner's functions        |
//! | `trap-path`   | trap stubs: inside functions, the `[mov w0,#k]; bl pare_trap; udf` of a failed check; whole functions that are one stub (an outlined stub, a shared trap path) or named `pare_trap_*` / `pare_trap.*` ([`traps`]) |
//! | `runtime`     | `pare_*`: the Pare runtime (module `pare_runtime`), `pare_trap` included; `_start` in an executable without the C library |
//! | `libc`        | everything else: the C library and the start files          |
//! | `unknown`     | the code of a stripped file (below): no symbol says whose it is |
//! | `padding`     | code-section bytes in no function                            |
//!
//! A function's row has one kind; the trap stubs inside it count for the
//! kind `trap-path` in the kind table (and stay in the function's and its
//! module's bytes). In an executable, the *program's code range* is the
//! span of the functions named as parec's (Pare names, `pare_*`,
//! `OUTLINED_*`, `.Tgm`): parec links its objects together after the start
//! files and before the libraries ([`crate::link`]), so a function inside
//! the range is the program's even when its name is not Pare's (a `.clif`
//! program's). Outside it, unknown names are `libc` — when the C library
//! is linked: statically (the executable defines `__libc_start_main`,
//! which glibc's and musl's start files call) or dynamically (`.interp`,
//! `.dynamic`). An executable without it (parec's freestanding runtime)
//! has no `libc` code: its `_start` is `runtime`, and so are, in a Pare
//! program, the C functions the runtime defines for `extern fn`s
//! (`putchar`, `getchar`, `abs`, `labs`, `exit`:
//! `pare_frontend::lower::CFunction`); every other function is the
//! program's code. In objects, every function of `pare_runtime.o` is
//! `runtime` unless its name says otherwise (outlined, trap path).
//!
//! # Modules and generics
//!
//! Objects: each object is one module (its file name without `.o`).
//! Executables: a Pare name's module is its first component; `pare_*` is
//! `pare_runtime`; `main` of a Pare program (one with the runtime) is the
//! root module's (LANGUAGE.md), whose object parec links first: the first
//! `STT_FILE` symbol that names a module (cranelift-object writes one per
//! object, the module's name; C objects are named by their source files,
//! `crtstuff.c`) other than the runtime's. Other functions of the
//! program's code take the object they came from — the `STT_FILE` symbol
//! before a local symbol (outlined functions), or, for a global one (a
//! `.clif` program's), the module of the closest function before it in the
//! program's code (after it, if none is before): the linker keeps each
//! object's code together. `libc` is one module, `(libc)`. A
//! generic is `module::name` of the instances `module::name<args>`,
//! their thunks and bodies ([`names`]).
//!
//! # File bytes
//!
//! [`file`] puts every byte of each input in one part: the ELF header, the
//! program and section header tables, the sections by class (code,
//! read-only data, writable data, relocations, symbol table, string tables),
//! any other section by its name (`.eh_frame`, `.comment`, notes), and the
//! padding no header names. The parts of a file add up to its size; the
//! report sums them over the inputs. The `code` part is the code
//! sections' bytes: the total the kinds divide. Zero-initialised sections
//! take memory, not file bytes: the report gives their size apart.
//!
//! # Stripped files
//!
//! A file without a symbol table (`strip`, `ld -s`, `parec build -s`) names
//! no function. Its code is still counted, per code section: each is one
//! block whose row is named after the section (`.text`), of kind
//! `unknown`, module `(unknown)` (objects: the object's module). The report
//! says the file is stripped; the own code is then 0 (nothing is known to
//! be the program's).
//!
//! # Output
//!
//! [`text`] renders sorted tables for a terminal, [`json`] the whole
//! report, [`compare`] the differences from another build, [`html`] a
//! self-contained treemap page.

pub mod compare;
pub mod elf;
pub mod file;
pub mod html;
pub mod json;
pub mod names;
pub mod roles;
pub mod text;
pub mod traps;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use pare_frontend::lower::CFunction;
use parec_passes::merge::BODY_SUFFIX;

use crate::io_error;
use crate::outputs::Outputs;
use elf::{Arch, Image, SectionInfo};
use traps::{Range, TrapTargets};

/// What a function's code is for (module doc, "Kinds").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Program,
    MergeThunk,
    MergeBody,
    Outlined,
    TrapPath,
    Runtime,
    Libc,
    Unknown,
    Padding,
}

impl Kind {
    pub const ALL: [Kind; 9] = [
        Kind::Program,
        Kind::MergeThunk,
        Kind::MergeBody,
        Kind::Outlined,
        Kind::TrapPath,
        Kind::Runtime,
        Kind::Libc,
        Kind::Unknown,
        Kind::Padding,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Program => "program",
            Kind::MergeThunk => "merge-thunk",
            Kind::MergeBody => "merge-body",
            Kind::Outlined => "outlined",
            Kind::TrapPath => "trap-path",
            Kind::Runtime => "runtime",
            Kind::Libc => "libc",
            Kind::Unknown => "unknown",
            Kind::Padding => "padding",
        }
    }

    /// Whether the kind is the program's own code (not the C library's,
    /// not code of unknown owner, not padding).
    pub fn is_own(self) -> bool {
        !matches!(self, Kind::Libc | Kind::Unknown | Kind::Padding)
    }
}

/// The module of the C library and start files in executables.
pub const LIBC_MODULE: &str = "(libc)";

/// The module of a stripped executable's code.
pub const UNKNOWN_MODULE: &str = "(unknown)";

/// The C library's entry from the start files (glibc's and musl's): an
/// executable that defines it links the C library statically.
const LIBC_ENTRY: &str = "__libc_start_main";

/// The ELF entry point's conventional name: in an executable without the
/// C library, parec's freestanding runtime defines it.
const ENTRY: &str = "_start";

/// One function of the report (module doc, "Notation").
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionRow {
    pub name: String,
    pub module: String,
    pub kind: Kind,
    /// `module::name` of a generic instance, its thunk or body.
    pub generic: Option<String>,
    /// Bytes of its blocks, each counted once.
    pub bytes: u64,
    /// Blocks with this name (more than 1: unfolded duplicates).
    pub copies: usize,
    /// Other functions sharing its blocks.
    pub shared_with: usize,
    /// Bytes of trap stubs inside it.
    pub trap_bytes: u64,
    /// Its bytes with every shared block split evenly among its sharers
    /// (what the treemap draws).
    pub share: f64,
    /// The address of its first block (executables; objects: the offset).
    pub address: u64,
}

/// A row of a kind, module or generic table (module doc, "Attribution").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRow {
    pub name: String,
    pub bytes: u64,
    /// Bytes of [`GroupRow::bytes`] that other rows of the table count too.
    pub shared: u64,
    pub functions: usize,
}

/// Where the code of one build went.
#[derive(Clone, Debug)]
pub struct Report {
    /// The files read.
    pub inputs: Vec<String>,
    /// An executable (one input), or objects.
    pub executable: bool,
    pub arch: Arch,
    /// Code bytes: every code section, each byte once.
    pub total: u64,
    /// Code bytes of the program's own code (no `libc`, no padding).
    pub own: u64,
    /// Sorted by bytes (largest first), then name and module.
    pub functions: Vec<FunctionRow>,
    /// In [`Kind::ALL`] order, kinds without bytes left out.
    pub kinds: Vec<GroupRow>,
    /// Sorted by bytes, then name.
    pub modules: Vec<GroupRow>,
    pub generics: Vec<GroupRow>,
    /// Every section, summed by name over the inputs, by class and name.
    pub sections: Vec<SectionInfo>,
    /// Where every byte of the files went.
    pub file: FileReport,
}

/// Every byte of the input files, by part ([`file`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileReport {
    /// The files' sizes, summed.
    pub bytes: u64,
    /// Each input: its path, size and whether it is stripped.
    pub inputs: Vec<FileInput>,
    /// Summed by part over the inputs, in [`file::Part`] order; they add
    /// up to [`FileReport::bytes`].
    pub parts: Vec<file::PartBytes>,
    /// Memory of the zero-initialised sections (no file bytes).
    pub zero_initialised: u64,
}

/// One input file in the [`FileReport`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileInput {
    pub path: String,
    pub bytes: u64,
    /// No symbol table: its code is attributed per section, as kind
    /// `unknown` (module doc, "Stripped files").
    pub stripped: bool,
}

impl FileReport {
    fn of_images(images: &[Image]) -> FileReport {
        let mut parts: BTreeMap<file::Part, file::PartBytes> = BTreeMap::new();
        for image in images {
            for p in &image.file.parts {
                let sum = parts
                    .entry(p.part.clone())
                    .or_insert_with(|| file::PartBytes {
                        part: p.part.clone(),
                        bytes: 0,
                        sections: Vec::new(),
                    });
                sum.bytes += p.bytes;
                for name in &p.sections {
                    if !sum.sections.contains(name) {
                        sum.sections.push(name.clone());
                    }
                }
            }
        }
        FileReport {
            bytes: images.iter().map(|i| i.file.bytes).sum(),
            inputs: images
                .iter()
                .map(|i| FileInput {
                    path: i.path.clone(),
                    bytes: i.file.bytes,
                    stripped: i.file.stripped,
                })
                .collect(),
            parts: parts.into_values().collect(),
            zero_initialised: images.iter().map(|i| i.file.zero_initialised).sum(),
        }
    }

    /// Whether any input is stripped.
    pub fn stripped(&self) -> bool {
        self.inputs.iter().any(|i| i.stripped)
    }

    /// The bytes of `part` (0 if the files have none).
    pub fn part(&self, part: &file::Part) -> u64 {
        self.parts
            .iter()
            .find(|p| p.part == *part)
            .map_or(0, |p| p.bytes)
    }
}

impl Report {
    /// The report of `paths`: one executable, or objects (a directory
    /// stands for the `.o` files in it).
    pub fn of_files(paths: &[PathBuf]) -> Result<Report> {
        Report::of_input_files(&input_files(paths)?)
    }

    /// The report of files (no directories), as [`input_files`] lists them.
    fn of_input_files(files: &[PathBuf]) -> Result<Report> {
        let images = files
            .iter()
            .map(|p| elf::read(p))
            .collect::<Result<Vec<_>>>()?;
        Report::of_images(&images)
    }

    /// The report of images read already.
    pub fn of_images(images: &[Image]) -> Result<Report> {
        let Some(first) = images.first() else {
            bail!("no input files");
        };
        if images.iter().any(|i| i.arch != first.arch) {
            bail!("the inputs are for different architectures");
        }
        let executables = images.iter().filter(|i| i.executable).count();
        if executables > 0 && images.len() > 1 {
            bail!("give one executable, or objects (not both, not several executables)");
        }
        Ok(Analysis::new(images).report())
    }

    /// The function rows that are the program's own code.
    pub fn own_functions(&self) -> impl Iterator<Item = &FunctionRow> {
        self.functions.iter().filter(|f| f.kind.is_own())
    }

    /// The row of the kind `kind`, if it has bytes.
    pub fn kind(&self, kind: Kind) -> Option<&GroupRow> {
        self.kinds.iter().find(|k| k.name == kind.name())
    }
}

/// A block (module doc, "Notation") and what is known about it.
#[derive(Clone, Debug)]
struct Block {
    image: usize,
    section: usize,
    range: Range,
    /// Indices into [`Analysis::rows`], sorted, without repeats.
    rows: Vec<usize>,
    /// Bytes of trap stubs inside (zero for trap-path and libc blocks).
    trap_bytes: u64,
}

/// A function row under construction.
#[derive(Clone, Debug)]
struct Row {
    name: String,
    module: String,
    kind: Kind,
    /// Blocks, in address order.
    blocks: Vec<usize>,
}

/// The computation of a [`Report`].
struct Analysis<'a> {
    images: &'a [Image],
    blocks: Vec<Block>,
    rows: Vec<Row>,
    padding: u64,
}

impl<'a> Analysis<'a> {
    fn new(images: &'a [Image]) -> Analysis<'a> {
        let mut analysis = Analysis {
            images,
            blocks: Vec::new(),
            rows: Vec::new(),
            padding: 0,
        };
        let mut row_of: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (i, image) in images.iter().enumerate() {
            analysis.add_image(i, image, &mut row_of);
        }
        analysis.find_trap_paths();
        analysis
    }

    /// Cuts `image`'s code into blocks and assigns every symbol to a row.
    fn add_image(
        &mut self,
        index: usize,
        image: &Image,
        row_of: &mut BTreeMap<(String, String), usize>,
    ) {
        if image.file.stripped {
            self.add_stripped_image(index, image, row_of);
            return;
        }
        let defined: BTreeSet<&str> = image.symbols.iter().map(|s| s.name.as_str()).collect();
        let naming = Naming::new(image, &defined);
        for (section_index, section) in image.code.iter().enumerate() {
            let symbols: Vec<_> = image
                .symbols
                .iter()
                .filter(|s| s.section == section_index)
                .collect();
            let mut covered = 0;
            for SymbolBlock {
                start,
                size,
                symbols: at,
            } in symbol_blocks(&symbols, section.end())
            {
                covered += size;
                let block = self.blocks.len();
                let mut rows = Vec::new();
                for symbol in at {
                    let (module, kind) = naming.classify(symbol);
                    let key = if image.executable {
                        (String::new(), symbol.name.clone())
                    } else {
                        (module.clone(), symbol.name.clone())
                    };
                    let row = *row_of.entry(key).or_insert_with(|| {
                        self.rows.push(Row {
                            name: symbol.name.clone(),
                            module,
                            kind,
                            blocks: Vec::new(),
                        });
                        self.rows.len() - 1
                    });
                    if !self.rows[row].blocks.contains(&block) {
                        self.rows[row].blocks.push(block);
                    }
                    rows.push(row);
                }
                rows.sort_unstable();
                rows.dedup();
                self.blocks.push(Block {
                    image: index,
                    section: section_index,
                    range: Range { start, size },
                    rows,
                    trap_bytes: 0,
                });
            }
            self.padding += (section.bytes.len() as u64).saturating_sub(covered);
        }
    }

    /// A stripped image's code (module doc, "Stripped files"): each code
    /// section one block, with a row of kind `unknown` named after it.
    fn add_stripped_image(
        &mut self,
        index: usize,
        image: &Image,
        row_of: &mut BTreeMap<(String, String), usize>,
    ) {
        let module = if image.executable {
            UNKNOWN_MODULE.to_string()
        } else {
            object_module(&image.path)
        };
        for (section_index, section) in image.code.iter().enumerate() {
            let size = section.bytes.len() as u64;
            if size == 0 {
                continue;
            }
            let block = self.blocks.len();
            let row = *row_of
                .entry((module.clone(), section.name.clone()))
                .or_insert_with(|| {
                    self.rows.push(Row {
                        name: section.name.clone(),
                        module: module.clone(),
                        kind: Kind::Unknown,
                        blocks: Vec::new(),
                    });
                    self.rows.len() - 1
                });
            self.rows[row].blocks.push(block);
            self.blocks.push(Block {
                image: index,
                section: section_index,
                range: Range {
                    start: section.address,
                    size,
                },
                rows: vec![row],
                trap_bytes: 0,
            });
        }
    }

    /// Marks the blocks that are one trap stub as trap paths (to a fixed
    /// point: a stub may call another trap path), then measures the stubs
    /// inside the other blocks of the program's code.
    fn find_trap_paths(&mut self) {
        loop {
            let targets = self.trap_targets();
            let stubs: Vec<usize> = (0..self.blocks.len())
                .filter(|&b| self.may_be_trap_path(b) && self.is_stub(b, &targets))
                .collect();
            if stubs.is_empty() {
                break;
            }
            for b in stubs {
                for &r in &self.blocks[b].rows {
                    self.rows[r].kind = Kind::TrapPath;
                }
            }
        }
        let targets = self.trap_targets();
        for b in 0..self.blocks.len() {
            let block = &self.blocks[b];
            let own = block.rows.iter().all(|&r| {
                !matches!(
                    self.rows[r].kind,
                    Kind::TrapPath | Kind::Libc | Kind::Unknown
                )
            });
            if own {
                let image = &self.images[block.image];
                let section = &image.code[block.section];
                let bytes =
                    traps::stub_bytes(image.arch, section, block.range, &targets[block.image]);
                self.blocks[b].trap_bytes = bytes;
            }
        }
    }

    /// Whether block `b` is the program's code and not yet a trap path:
    /// the runtime's `pare_trap`, the C library and code of unknown owner
    /// are never trap paths.
    fn may_be_trap_path(&self, b: usize) -> bool {
        self.blocks[b].rows.iter().all(|&r| {
            !matches!(
                self.rows[r].kind,
                Kind::TrapPath | Kind::Libc | Kind::Runtime | Kind::Unknown
            )
        })
    }

    /// Whether block `b` is exactly one trap stub.
    fn is_stub(&self, b: usize, targets: &[TrapTargets]) -> bool {
        let block = &self.blocks[b];
        let image = &self.images[block.image];
        let section = &image.code[block.section];
        traps::is_stub(image.arch, section, block.range, &targets[block.image])
    }

    /// The trap targets of every image: `pare_trap` and the trap paths.
    /// Names are those of every image: objects refer by name to trap
    /// paths another object defines (the runtime's `pare_trap_<kind>`).
    fn trap_targets(&self) -> Vec<TrapTargets> {
        let mut targets = vec![TrapTargets::default(); self.images.len()];
        let mut names = BTreeSet::from([names::TRAP_HELPER.to_string()]);
        for block in &self.blocks {
            for &r in &block.rows {
                let row = &self.rows[r];
                if row.kind == Kind::TrapPath || row.name == names::TRAP_HELPER {
                    names.insert(row.name.clone());
                    if self.images[block.image].executable {
                        targets[block.image].addresses.insert(block.range.start);
                    }
                }
            }
        }
        for target in &mut targets {
            target.names.clone_from(&names);
        }
        targets
    }

    fn report(&self) -> Report {
        let first = &self.images[0];
        let total = self.blocks.iter().map(|b| b.range.size).sum::<u64>() + self.padding;
        let own = self
            .blocks
            .iter()
            .filter(|b| b.rows.iter().any(|&r| self.rows[r].kind.is_own()))
            .map(|b| b.range.size)
            .sum();
        Report {
            inputs: self.images.iter().map(|i| i.path.clone()).collect(),
            executable: first.executable,
            arch: first.arch,
            total,
            own,
            functions: self.function_rows(),
            kinds: self.kind_rows(),
            modules: self.group_rows(|row| Some(row.module.clone())),
            generics: self.group_rows(|row| generic_of(&row.name)),
            sections: self.sections(),
            file: FileReport::of_images(self.images),
        }
    }

    fn function_rows(&self) -> Vec<FunctionRow> {
        let mut rows: Vec<FunctionRow> = self
            .rows
            .iter()
            .enumerate()
            .map(|(r, row)| {
                let blocks = row.blocks.iter().map(|&b| &self.blocks[b]);
                let sharers: BTreeSet<usize> = blocks
                    .clone()
                    .flat_map(|b| b.rows.iter().copied())
                    .filter(|&other| other != r)
                    .collect();
                FunctionRow {
                    name: row.name.clone(),
                    module: row.module.clone(),
                    kind: row.kind,
                    generic: generic_of(&row.name),
                    bytes: blocks.clone().map(|b| b.range.size).sum(),
                    copies: row.blocks.len(),
                    shared_with: sharers.len(),
                    trap_bytes: blocks.clone().map(|b| b.trap_bytes).sum(),
                    share: blocks
                        .clone()
                        .map(|b| b.range.size as f64 / b.rows.len() as f64)
                        .sum(),
                    address: blocks.clone().next().map_or(0, |b| b.range.start),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.bytes
                .cmp(&a.bytes)
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.module.cmp(&b.module))
        });
        rows
    }

    /// The kind table: trap stubs inside functions move to `trap-path`.
    fn kind_rows(&self) -> Vec<GroupRow> {
        let mut table: BTreeMap<Kind, GroupRow> = BTreeMap::new();
        let mut add = |kind: Kind, bytes: u64, shared: bool| {
            let row = table.entry(kind).or_insert_with(|| GroupRow {
                name: kind.name().to_string(),
                bytes: 0,
                shared: 0,
                functions: 0,
            });
            row.bytes += bytes;
            if shared {
                row.shared += bytes;
            }
        };
        for block in &self.blocks {
            let kinds: BTreeSet<Kind> = block.rows.iter().map(|&r| self.rows[r].kind).collect();
            for &kind in &kinds {
                add(kind, block.range.size - block.trap_bytes, kinds.len() > 1);
            }
            if block.trap_bytes > 0 {
                add(Kind::TrapPath, block.trap_bytes, false);
            }
        }
        if self.padding > 0 {
            add(Kind::Padding, self.padding, false);
        }
        for row in &self.rows {
            if let Some(group) = table.get_mut(&row.kind) {
                group.functions += 1;
            }
        }
        table.into_values().collect()
    }

    /// A table grouping the rows by `key` (rows without a key left out).
    fn group_rows(&self, key: impl Fn(&Row) -> Option<String>) -> Vec<GroupRow> {
        let mut table: BTreeMap<String, GroupRow> = BTreeMap::new();
        for row in &self.rows {
            if let Some(name) = key(row) {
                table
                    .entry(name.clone())
                    .or_insert_with(|| GroupRow {
                        name,
                        bytes: 0,
                        shared: 0,
                        functions: 0,
                    })
                    .functions += 1;
            }
        }
        for block in &self.blocks {
            let groups: BTreeSet<String> = block
                .rows
                .iter()
                .filter_map(|&r| key(&self.rows[r]))
                .collect();
            for name in &groups {
                let group = table.get_mut(name).expect("every key has a row");
                group.bytes += block.range.size;
                if groups.len() > 1 {
                    group.shared += block.range.size;
                }
            }
        }
        let mut rows: Vec<GroupRow> = table.into_values().collect();
        rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
        rows
    }

    fn sections(&self) -> Vec<SectionInfo> {
        let mut table: BTreeMap<(elf::SectionClass, String), u64> = BTreeMap::new();
        for image in self.images {
            for s in &image.file.sections {
                *table.entry((s.class, s.name.clone())).or_default() += s.size;
            }
        }
        table
            .into_iter()
            .map(|((class, name), size)| SectionInfo { name, size, class })
            .collect()
    }
}

/// Symbols of a code section that share an address, and the bytes they
/// cover.
pub(crate) struct SymbolBlock<'a> {
    pub start: u64,
    /// The largest of the symbols' sizes, cut at the next symbol or the
    /// section's end (`st_size` may overlap what follows).
    pub size: u64,
    pub symbols: Vec<&'a elf::CodeSymbol>,
}

/// The blocks of `symbols` (one code section's, in address order, the
/// section ending at `end`) that cover bytes.
pub(crate) fn symbol_blocks<'a>(symbols: &[&'a elf::CodeSymbol], end: u64) -> Vec<SymbolBlock<'a>> {
    let mut blocks = Vec::new();
    let mut k = 0;
    while k < symbols.len() {
        let start = symbols[k].address;
        let mut at = Vec::new();
        while k < symbols.len() && symbols[k].address == start {
            at.push(symbols[k]);
            k += 1;
        }
        let limit = symbols.get(k).map_or(end, |s| s.address);
        let size = at.iter().map(|s| s.size).max().unwrap_or(0);
        let size = size.min(limit.saturating_sub(start));
        if size > 0 {
            blocks.push(SymbolBlock {
                start,
                size,
                symbols: at,
            });
        }
    }
    blocks
}

/// The images of `paths`: files, and the `.o` files of directories.
pub fn read_images(paths: &[PathBuf]) -> Result<Vec<Image>> {
    input_files(paths)?.iter().map(|p| elf::read(p)).collect()
}

/// The files `paths` stand for: a directory stands for the `.o` files in
/// it.
pub fn input_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            files.extend(elf::objects_in(path)?);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// The generic of a function name: `module::name` of an instance, its
/// thunk or body.
fn generic_of(name: &str) -> Option<String> {
    names::pare_name(name)?.generic.map(str::to_string)
}

/// How one image's symbols get their modules and kinds (module doc).
struct Naming<'a> {
    image: &'a Image,
    defined: &'a BTreeSet<&'a str>,
    /// Executables: the program's code range, by code section.
    program_range: BTreeMap<usize, (u64, u64)>,
    /// Executables: whether the C library is linked in (module doc).
    libc: bool,
    /// Executables of Pare programs: the root module, `main`'s.
    root_module: Option<String>,
}

impl<'a> Naming<'a> {
    fn new(image: &'a Image, defined: &'a BTreeSet<&'a str>) -> Naming<'a> {
        let mut program_range: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
        for s in &image.symbols {
            if names::kind_by_name(&s.name, false).is_some() {
                let range = program_range
                    .entry(s.section)
                    .or_insert((s.address, s.address + s.size));
                range.0 = range.0.min(s.address);
                range.1 = range.1.max(s.address + s.size);
            }
        }
        let libc = defined.contains(LIBC_ENTRY)
            || image
                .file
                .sections
                .iter()
                .any(|s| s.name == ".interp" || s.name == ".dynamic");
        let pare_program = image
            .symbols
            .iter()
            .any(|s| s.name.starts_with(names::RUNTIME_PREFIX));
        let root_module = image
            .files
            .iter()
            .find(|f| names::is_module_name(f) && f.as_str() != names::RUNTIME_MODULE)
            .filter(|_| image.executable && pare_program)
            .cloned();
        Naming {
            image,
            defined,
            program_range,
            libc,
            root_module,
        }
    }

    fn has_body(&self, name: &str) -> bool {
        self.defined
            .contains(format!("{name}{BODY_SUFFIX}").as_str())
    }

    /// The module and the kind (by name, or by place) of `symbol`.
    fn classify(&self, symbol: &elf::CodeSymbol) -> (String, Kind) {
        let by_name = names::kind_by_name(&symbol.name, self.has_body(&symbol.name));
        if !self.image.executable {
            // The runtime's object defines C functions too (the
            // freestanding runtime's `putchar`, ...): its code is runtime.
            let module = object_module(&self.image.path);
            let by_place = if module == names::RUNTIME_MODULE {
                Kind::Runtime
            } else {
                Kind::Program
            };
            return (module, by_name.unwrap_or(by_place));
        }
        let kind = by_name.unwrap_or(
            if !self.libc && self.defined_by_freestanding_runtime(symbol) {
                Kind::Runtime
            } else if self.in_program(symbol) {
                Kind::Program
            } else {
                Kind::Libc
            },
        );
        (self.executable_module(symbol, kind), kind)
    }

    /// Whether `symbol`, in an executable without the C library, is one the
    /// freestanding runtime defines without a `pare_` name: the entry
    /// point, and (in Pare programs) the C functions it implements.
    fn defined_by_freestanding_runtime(&self, symbol: &elf::CodeSymbol) -> bool {
        symbol.name == ENTRY
            || (self.root_module.is_some() && CFunction::named(&symbol.name).is_some())
    }

    /// A symbol's module in an executable (module doc).
    fn executable_module(&self, symbol: &elf::CodeSymbol, kind: Kind) -> String {
        match kind {
            Kind::Libc => return LIBC_MODULE.to_string(),
            Kind::Runtime => return names::RUNTIME_MODULE.to_string(),
            _ => {}
        }
        if let Some(module) = self.named_module(symbol) {
            return module;
        }
        if let Some(root) = self
            .root_module
            .as_ref()
            .filter(|_| symbol.name == names::ENTRY)
        {
            return root.clone();
        }
        // A global without a module in its name: the object around it.
        let same_section = |s: &&elf::CodeSymbol| s.section == symbol.section;
        let before = self
            .image
            .symbols
            .iter()
            .filter(same_section)
            .filter(|s| s.address < symbol.address)
            .rev()
            .find_map(|s| self.named_module(s));
        let after = || {
            self.image
                .symbols
                .iter()
                .filter(same_section)
                .filter(|s| s.address > symbol.address)
                .find_map(|s| self.named_module(s))
        };
        before
            .or_else(after)
            .unwrap_or_else(|| "(program)".to_string())
    }

    /// The module a symbol of the program's code names: by its Pare name,
    /// as the runtime's, or by its `STT_FILE` (locals).
    fn named_module(&self, symbol: &elf::CodeSymbol) -> Option<String> {
        if !self.in_program(symbol) {
            return None;
        }
        if let Some(name) = names::pare_name(&symbol.name) {
            return Some(name.module.to_string());
        }
        if symbol.name.starts_with(names::RUNTIME_PREFIX) {
            return Some(names::RUNTIME_MODULE.to_string());
        }
        symbol.file.clone()
    }

    /// Whether `symbol` is in the program's code: its range, or anywhere
    /// in an executable without the C library.
    fn in_program(&self, symbol: &elf::CodeSymbol) -> bool {
        !self.libc
            || self
                .program_range
                .get(&symbol.section)
                .is_some_and(|&(lo, hi)| symbol.address >= lo && symbol.address < hi)
    }
}

/// The module an object stands for: its file name without `.o`.
fn object_module(path: &str) -> String {
    let name = Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
    name.strip_suffix(".o").unwrap_or(&name).to_string()
}

/// Options of `parec size`.
#[derive(Clone, Debug, Default)]
pub struct SizeOptions {
    /// One executable, or objects (directories: the `.o` files in them).
    pub inputs: Vec<PathBuf>,
    /// Print JSON instead of tables.
    pub json: bool,
    /// Compare with this build (the same kind of input).
    pub compare: Option<PathBuf>,
    /// Write the treemap page here.
    pub html: Option<PathBuf>,
    /// Rows of the function and generic tables (0: all).
    pub top: usize,
    /// List the C library's functions too.
    pub all: bool,
    /// Report the roles of the own code's instructions instead
    /// ([`roles`]).
    pub roles: bool,
}

/// `parec size`: prints the report (or the comparison) and writes the
/// page; returns the exit status.
pub fn command(opts: &SizeOptions) -> Result<i32> {
    let inputs = input_files(&opts.inputs)?;
    let compared = match &opts.compare {
        Some(other) => Some(input_files(std::slice::from_ref(other))?),
        None => None,
    };
    // The page may not replace a file the report reads.
    let mut outputs = Outputs::default();
    if let Some(page) = &opts.html {
        outputs.file(page, "--html");
    }
    let read: Vec<PathBuf> = inputs
        .iter()
        .chain(compared.iter().flatten())
        .cloned()
        .collect();
    outputs.check(&read)?;
    if opts.roles {
        io_error::write_stdout(roles::command(opts)?.as_bytes())?;
        return Ok(0);
    }
    let report = Report::of_input_files(&inputs)?;
    let text = match &compared {
        Some(other) => {
            let old = Report::of_input_files(other)?;
            let diff = compare::compare(&old, &report)?;
            if opts.json {
                json::comparison(&diff)
            } else {
                text::comparison(&diff, opts.top)
            }
        }
        None if opts.json => json::report(&report),
        None => text::report(&report, opts.top, opts.all),
    };
    io_error::write_stdout(text.as_bytes())?;
    if let Some(path) = &opts.html {
        io_error::write(path, html::page(&report).as_bytes())?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use elf::{CodeSection, CodeSymbol, SectionClass};

    /// `bl` (or `b`) from `from` to `to`.
    fn branch(link: bool, from: u64, to: u64) -> u32 {
        let op = if link { 0x9400_0000 } else { 0x1400_0000 };
        op | (((to as i64 - from as i64) >> 2) as u32 & 0x03FF_FFFF)
    }

    const RET: u32 = 0xD65F_03C0;
    const UDF: u32 = 0x0000_C11F;
    const MOV_W0_3: u32 = 0x5280_0060;
    const CBZ_X0: u32 = 0xB400_0000;

    /// An executable with a shared trap path in the style of issue 13
    /// (`pare_trap_null`: checks branch to it), an unnamed function that
    /// is one stub, a function with a stub inside, `pare_trap`, and the C
    /// library's `memcpy` and `__libc_start_main`.
    fn image() -> Image {
        let base = 0x1000;
        let trap = base + 0x40;
        let mut words = [0u32; 0x58 / 4];
        let mut put = |at: u64, w: u32| words[((at - base) / 4) as usize] = w;
        // main::f at 0x1000: cbz x0, pare_trap_null; ret; then a stub.
        put(0x1000, CBZ_X0);
        put(0x1004, RET);
        put(0x1008, MOV_W0_3);
        put(0x100c, branch(true, 0x100c, trap));
        put(0x1010, UDF);
        // pare_trap_null at 0x1020: mov w0, #3; b pare_trap.
        put(0x1020, MOV_W0_3);
        put(0x1024, branch(false, 0x1024, trap));
        // helper at 0x1030 (no Pare name, inside the program): one stub.
        put(0x1030, MOV_W0_3);
        put(0x1034, branch(true, 0x1034, trap));
        put(0x1038, UDF);
        // pare_trap at 0x1040.
        put(0x1040, RET);
        let symbol = |name: &str, address: u64, size: u64| CodeSymbol {
            name: name.to_string(),
            section: 0,
            address,
            size,
            global: true,
            file: None,
        };
        Image {
            path: "prog".into(),
            executable: true,
            arch: Arch::Aarch64,
            file: file::Layout {
                bytes: 0x58,
                stripped: false,
                sections: vec![file::Section {
                    index: 1,
                    name: ".text".into(),
                    class: SectionClass::Code,
                    size: 0x58,
                }],
                parts: vec![file::PartBytes {
                    part: file::Part::Code,
                    bytes: 0x58,
                    sections: vec![".text".into()],
                }],
                zero_initialised: 0,
            },
            code: vec![CodeSection {
                index: 1,
                name: ".text".into(),
                address: base,
                bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
                relocs: Default::default(),
            }],
            symbols: vec![
                symbol("main::f", 0x1000, 0x14),
                symbol("pare_trap_null", 0x1020, 8),
                symbol("helper", 0x1030, 12),
                symbol("pare_trap", 0x1040, 4),
                symbol("memcpy", 0x1048, 8),
                symbol("__libc_start_main", 0x1050, 8),
            ],
            files: Vec::new(),
        }
    }

    #[test]
    fn trap_paths_by_name_by_code_and_inside_functions() {
        let report = Report::of_images(&[image()]).unwrap();
        let row = |name: &str| report.functions.iter().find(|f| f.name == name).unwrap();
        assert_eq!(row("pare_trap_null").kind, Kind::TrapPath);
        assert_eq!(row("helper").kind, Kind::TrapPath);
        // No module in its name: the module of the function before it.
        assert_eq!(row("helper").module, names::RUNTIME_MODULE);
        assert_eq!(row("pare_trap_null").module, names::RUNTIME_MODULE);
        assert_eq!(row("pare_trap").kind, Kind::Runtime);
        assert_eq!(row("memcpy").kind, Kind::Libc);
        let f = row("main::f");
        assert_eq!((f.kind, f.trap_bytes), (Kind::Program, 12));
        // Trap paths: the two functions and the stub inside main::f.
        assert_eq!(report.kind(Kind::TrapPath).unwrap().bytes, 8 + 12 + 12);
        assert_eq!(report.kind(Kind::Program).unwrap().bytes, 0x14 - 12);
        // Gaps between functions are padding; everything adds up.
        let kinds: u64 = report.kinds.iter().map(|k| k.bytes).sum();
        assert_eq!(kinds, report.total);
        assert_eq!(report.total, 0x58);
    }

    /// Without the C library (a freestanding executable), `_start` is the
    /// runtime's and other names outside parec's are the program's.
    #[test]
    fn executables_without_libc_have_no_libc_code() {
        let mut image = image();
        image.symbols.retain(|s| s.name != "__libc_start_main");
        image.symbols.push(CodeSymbol {
            name: "_start".into(),
            section: 0,
            address: 0x1050,
            size: 8,
            global: true,
            file: None,
        });
        let report = Report::of_images(&[image]).unwrap();
        let row = |name: &str| report.functions.iter().find(|f| f.name == name).unwrap();
        assert_eq!(row("_start").kind, Kind::Runtime);
        assert_eq!(row("_start").module, names::RUNTIME_MODULE);
        assert_eq!(row("memcpy").kind, Kind::Program);
        assert_eq!(report.kind(Kind::Libc), None);
        let padding = report.kind(Kind::Padding).unwrap().bytes;
        assert_eq!(report.own, report.total - padding);
    }
}
