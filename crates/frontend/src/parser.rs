//! The Pare parser: tokens to the syntax tree of [`crate::ast`].
//!
//! Recursive descent for items, statements and types; precedence climbing
//! for binary operators (lowest first: `||`, `&&`, comparisons, `|`, `^`,
//! `&`, shifts, `+ -`, `* / %`; comparisons do not associate). Unary `-`/`!`
//! bind looser than postfix operators (calls, indexing, fields, `as`).
//!
//! Generic arguments in expressions are ambiguous with `<`: `name<` starts
//! generic arguments only when the matching `>` is directly followed by `(`.
//! The parser decides by speculation: it saves its position, tries to parse
//! generic arguments, and backtracks (dropping any diagnostics the attempt
//! produced) when that fails or no `(` follows. Failed attempts are
//! remembered per token position so that nested speculation stays linear.
//! Inside generic arguments a `>>` (or `>=`, `>>=`) token closes a list with
//! its first `>`; the parser then stands "half way" through that token.
//!
//! Invariants and guarantees:
//! - Every node gets a span covering its source text.
//! - The parser never panics and always terminates: every loop consumes a
//!   token or leaves, and nesting (expressions, blocks, types, generic
//!   arguments, postfix operations) is limited to [`MAX_DEPTH`] levels,
//!   reported as "expression nested too deeply". A chain of binary
//!   operators (`1 + 1 + ... + 1`) is parsed by a loop, not by recursion, so
//!   it is not nesting; but it builds a tree as deep as it is long, which
//!   later phases walk recursively, so the depth of an expression tree
//!   (nesting levels plus the binary operators along the way) is limited to
//!   [`MAX_EXPR_DEPTH`], reported as "expression too long". Later phases
//!   run on threads with stacks sized for that ([`crate::stack`]).
//! - Parsing time is linear in the input (speculation is memoized, and its
//!   depth bounded).
//! - Errors are reported as "expected X, found Y" at the offending token;
//!   the parser then resynchronizes at `;` or `}` (at the statement's brace
//!   depth) or at the next item keyword, so one file yields several
//!   independent errors. A second error at the same position as the
//!   previous one is dropped (it is a cascade), and so is an error at a
//!   token the lexer already reported ([`TokenKind::Error`]).

use crate::ast::*;
use crate::lexer::{lex, Token, TokenKind};
use crate::source::{Diagnostic, Diagnostics, FileId, Span};

/// Deepest nesting of expressions, blocks, types and generic arguments.
pub const MAX_DEPTH: u32 = 256;

/// Deepest expression tree: nesting levels plus the binary operators of
/// chains along the way (`1 + 1 + ... + 1` of 50,000 terms is accepted).
pub const MAX_EXPR_DEPTH: u32 = 50_000;

/// Nesting limit when the parser must run on the caller's stack (no thread
/// could be started): small enough for a 2 MiB stack in unoptimized builds.
const FALLBACK_MAX_DEPTH: u32 = 64;

/// [`MAX_EXPR_DEPTH`] on the caller's stack (later phases may then have to
/// run there too).
const FALLBACK_MAX_EXPR_DEPTH: u32 = 128;

/// Stack for the parsing thread: deep enough for [`MAX_DEPTH`] nesting
/// levels even in unoptimized builds (about 10 KiB per level there), whatever
/// the caller's stack (test threads get 2 MiB).
const PARSER_STACK_SIZE: usize = 64 << 20;

/// Parses the module `name` from `text` (the contents of `file`).
///
/// The recursive descent runs on a scoped thread with its own large stack,
/// so that the nesting limit, not the caller's stack size, bounds recursion.
/// If no thread can be started, it runs on the caller's thread with a lower
/// nesting limit.
pub fn parse_module(name: &str, file: FileId, text: &str, diags: &mut Diagnostics) -> Module {
    let mut module = None;
    std::thread::scope(|scope| {
        let builder = std::thread::Builder::new()
            .name("pare-parser".to_string())
            .stack_size(PARSER_STACK_SIZE);
        // On spawn failure the closure is dropped unrun and `module` stays `None`.
        let _ = builder.spawn_scoped(scope, || {
            module = Some(parse_here(name, file, text, diags, Limits::FULL))
        });
    });
    module.unwrap_or_else(|| parse_here(name, file, text, diags, Limits::FALLBACK))
}

/// How deep the parser lets the syntax tree grow.
#[derive(Clone, Copy)]
struct Limits {
    /// Nesting levels, see [`MAX_DEPTH`].
    nesting: u32,
    /// Expression tree depth, see [`MAX_EXPR_DEPTH`].
    expr: u32,
}

impl Limits {
    const FULL: Limits = Limits {
        nesting: MAX_DEPTH,
        expr: MAX_EXPR_DEPTH,
    };
    const FALLBACK: Limits = Limits {
        nesting: FALLBACK_MAX_DEPTH,
        expr: FALLBACK_MAX_EXPR_DEPTH,
    };
}

/// [`parse_module`] on the current thread.
///
/// Lexer and parser diagnostics are merged in source order (stable, so each
/// phase's own order is kept at equal positions).
fn parse_here(
    name: &str,
    file: FileId,
    text: &str,
    diags: &mut Diagnostics,
    limits: Limits,
) -> Module {
    let mut found = Diagnostics::default();
    let tokens = lex(file, text, &mut found);
    let mut parser_diags = Diagnostics::default();
    let mut parser = Parser::new(tokens, &mut parser_diags, limits);
    let items = parser.parse_items();
    found.list.append(&mut parser_diags.list);
    found.list.sort_by_key(|d| d.span.start);
    diags.list.append(&mut found.list);
    Module {
        name: name.to_string(),
        file,
        items,
    }
}

/// The error has been reported; the caller must resynchronize.
#[derive(Debug)]
struct Reported;

type PResult<T> = Result<T, Reported>;

/// What a statement-position parse produced.
///
/// Boxed: a `Stmt` is large, and these travel through the recursion.
enum StmtOrTail {
    Stmt(Box<Stmt>),
    /// An expression without `;` directly before the block's `}`.
    Tail(Box<Expr>),
}

/// Precedence levels of binary operators, higher binds tighter.
const PREC_OR: u8 = 1;
const PREC_AND: u8 = 2;
const PREC_CMP: u8 = 3;
const PREC_BITOR: u8 = 4;
const PREC_BITXOR: u8 = 5;
const PREC_BITAND: u8 = 6;
const PREC_SHIFT: u8 = 7;
const PREC_ADD: u8 = 8;
const PREC_MUL: u8 = 9;

/// A position to backtrack to.
#[derive(Clone, Copy)]
struct Checkpoint {
    pos: usize,
    half: bool,
    open_braces: usize,
    diag_count: usize,
    last_error_at: Option<u32>,
}

struct Parser<'d> {
    tokens: Vec<Token>,
    /// Index of the current token; never past the final `Eof`.
    pos: usize,
    /// The first `>` of the current token (`>>`, `>=`, `>>=`) was consumed
    /// as the end of a generic argument list.
    half: bool,
    /// `{` minus `}` tokens consumed so far: how deep in braces the current
    /// token is (recovery skips to a `;` or `}` at the right depth).
    open_braces: usize,
    diags: &'d mut Diagnostics,
    /// Current nesting depth, see [`MAX_DEPTH`].
    depth: u32,
    /// Current expression tree depth, see [`MAX_EXPR_DEPTH`]: `depth` plus
    /// the binary operators folded into chains on the way here.
    expr_depth: u32,
    /// The limits of both: [`Limits::FULL`], or less on a small stack.
    limits: Limits,
    /// Start offset of the last reported error, to drop cascades.
    last_error_at: Option<u32>,
    /// `args_failed[i]`: generic arguments starting at token `i` do not
    /// parse (a context-free fact, so each position is tried once).
    args_failed: Vec<bool>,
    /// `call_failed[i]`: at token `i`, generic arguments followed by `(` were
    /// tried in an expression and rejected.
    call_failed: Vec<bool>,
}

impl<'d> Parser<'d> {
    fn new(tokens: Vec<Token>, diags: &'d mut Diagnostics, limits: Limits) -> Self {
        let count = tokens.len();
        Parser {
            tokens,
            pos: 0,
            half: false,
            open_braces: 0,
            diags,
            depth: 0,
            expr_depth: 0,
            limits,
            last_error_at: None,
            args_failed: vec![false; count],
            call_failed: vec![false; count],
        }
    }

    // ---------------------------------------------------------------------
    // Token access.

    fn token(&self) -> &Token {
        // The lexer always ends the list with `Eof` and `bump` never moves
        // past it, so `pos` is in range; the fallback is for robustness.
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    /// The current token's kind, as seen after a consumed half of it.
    fn peek(&self) -> &TokenKind {
        let kind = &self.token().kind;
        if self.half {
            match kind {
                TokenKind::Shr => &TokenKind::Gt,
                TokenKind::Ge => &TokenKind::Eq,
                TokenKind::ShrEq => &TokenKind::Ge,
                other => other,
            }
        } else {
            kind
        }
    }

    fn peek_at(&self, ahead: usize) -> &TokenKind {
        if ahead == 0 {
            return self.peek();
        }
        let index = (self.pos + ahead).min(self.tokens.len() - 1);
        &self.tokens[index].kind
    }

    fn span(&self) -> Span {
        let mut span = self.token().span;
        if self.half {
            span.start += 1;
        }
        span
    }

    fn at(&self, kind: &TokenKind) -> bool {
        self.peek() == kind
    }

    fn at_eof(&self) -> bool {
        self.at(&TokenKind::Eof)
    }

    /// Consumes the current token and returns its span.
    fn bump(&mut self) -> Span {
        let span = self.span();
        match self.peek() {
            TokenKind::LBrace => self.open_braces += 1,
            TokenKind::RBrace => self.open_braces = self.open_braces.saturating_sub(1),
            _ => {}
        }
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        self.half = false;
        span
    }

    fn eat(&mut self, kind: &TokenKind) -> Option<Span> {
        if self.at(kind) {
            Some(self.bump())
        } else {
            None
        }
    }

    /// Span of the last consumed token (for ends of nodes).
    fn prev_span(&self) -> Span {
        if self.half {
            let span = self.token().span;
            return Span {
                end: span.start + 1,
                ..span
            };
        }
        match self.pos.checked_sub(1) {
            Some(i) => self.tokens[i].span,
            None => self.span(),
        }
    }

    fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            pos: self.pos,
            half: self.half,
            open_braces: self.open_braces,
            diag_count: self.diags.list.len(),
            last_error_at: self.last_error_at,
        }
    }

    fn restore(&mut self, cp: Checkpoint) {
        self.pos = cp.pos;
        self.half = cp.half;
        self.open_braces = cp.open_braces;
        self.diags.list.truncate(cp.diag_count);
        self.last_error_at = cp.last_error_at;
    }

    // ---------------------------------------------------------------------
    // Errors and recovery.

    fn report(&mut self, diag: Diagnostic) {
        if self.last_error_at == Some(diag.span.start) {
            return;
        }
        self.last_error_at = Some(diag.span.start);
        self.diags.push(diag);
    }

    /// The current token is, or follows to the end, text the lexer already
    /// reported (an unknown character, an unterminated string or comment):
    /// complaining about it again would only repeat that error.
    fn at_lexer_error(&self) -> bool {
        match self.peek() {
            TokenKind::Error => true,
            TokenKind::Eof => self.pos > 0 && self.tokens[self.pos - 1].kind == TokenKind::Error,
            _ => false,
        }
    }

    /// Reports "expected `what`, found <current token>" and returns the error.
    fn expected<T>(&mut self, what: &str) -> PResult<T> {
        if self.at_lexer_error() {
            return Err(Reported);
        }
        let found = self.peek().describe();
        let span = self.span();
        self.report(
            Diagnostic::error(span, format!("expected {what}, found {found}"))
                .with_label(format!("expected {what}")),
        );
        Err(Reported)
    }

    fn expect(&mut self, kind: &TokenKind, what: &str) -> PResult<Span> {
        match self.eat(kind) {
            Some(span) => Ok(span),
            None => self.expected(what),
        }
    }

    fn expect_ident(&mut self, what: &str) -> PResult<Ident> {
        if let TokenKind::Ident(name) = self.peek() {
            let name = name.clone();
            let span = self.bump();
            Ok(Ident { name, span })
        } else {
            self.expected(what)
        }
    }

    /// Runs `f` one nesting level deeper, failing beyond the nesting limit.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        let outer = self.save_depth();
        let result = self.deepen().and_then(|()| f(self));
        self.restore_depth(outer);
        result
    }

    /// Both depths, to restore after a nested parse or a chain.
    fn save_depth(&self) -> (u32, u32) {
        (self.depth, self.expr_depth)
    }

    fn restore_depth(&mut self, (depth, expr_depth): (u32, u32)) {
        self.depth = depth;
        self.expr_depth = expr_depth;
    }

    /// Goes one nesting level deeper; the caller restores the depths.
    fn deepen(&mut self) -> PResult<()> {
        if self.depth >= self.limits.nesting {
            let span = self.span();
            self.report(
                Diagnostic::error(span, "expression nested too deeply")
                    .with_label(format!("more than {} nested levels", self.limits.nesting))
                    .with_note("blocks, parentheses, operands and postfix operations nest; split the expression with `let`"),
            );
            return Err(Reported);
        }
        self.depth += 1;
        self.lengthen()
    }

    /// Makes the expression tree one level deeper (a binary operator folded
    /// into a chain, or a nesting level); the caller restores the depths.
    fn lengthen(&mut self) -> PResult<()> {
        if self.expr_depth >= self.limits.expr {
            let span = self.span();
            self.report(
                Diagnostic::error(span, "expression too long")
                    .with_label(format!("more than {} operators deep", self.limits.expr))
                    .with_note("split the expression with `let`"),
            );
            return Err(Reported);
        }
        self.expr_depth += 1;
        Ok(())
    }

    fn at_item_start(&self) -> bool {
        matches!(
            self.peek(),
            TokenKind::Fn
                | TokenKind::Pub
                | TokenKind::Extern
                | TokenKind::Struct
                | TokenKind::Global
                | TokenKind::Import
        )
    }

    /// Skips to the next item keyword outside braces, or past the `}` that
    /// closes the item's braces (its body or field list).
    fn recover_item(&mut self) {
        while !self.at_eof() {
            if self.open_braces == 0 && self.at_item_start() {
                return;
            }
            let closes_item = self.at(&TokenKind::RBrace) && self.open_braces <= 1;
            self.bump();
            if closes_item {
                return;
            }
        }
    }

    /// Skips the rest of a statement of the block at brace depth `depth`:
    /// past its `;`, or to the `}` closing the block; stops early at an item
    /// keyword (the block is probably missing its `}`).
    fn recover_stmt(&mut self, depth: usize) {
        while !self.at_eof() {
            if self.open_braces <= depth {
                match self.peek() {
                    TokenKind::RBrace => return,
                    TokenKind::Semi => {
                        self.bump();
                        return;
                    }
                    _ if self.at_item_start() => return,
                    _ => {}
                }
            }
            self.bump();
        }
    }

    // ---------------------------------------------------------------------
    // Items.

    fn parse_items(&mut self) -> Vec<Item> {
        let mut items = Vec::new();
        while !self.at_eof() {
            let start = self.pos;
            // Items are outside all braces, whatever an earlier error left.
            self.open_braces = 0;
            match self.parse_item() {
                Ok(item) => items.push(item),
                Err(Reported) => {
                    self.recover_item();
                    if self.pos == start && !self.at_eof() {
                        // The item keyword itself was bad (`pub import`): skip it.
                        self.bump();
                        self.recover_item();
                    }
                }
            }
        }
        items
    }

    fn parse_item(&mut self) -> PResult<Item> {
        let start = self.span();
        let is_pub = self.eat(&TokenKind::Pub).is_some();
        match self.peek() {
            TokenKind::Fn => self.parse_fn(start, is_pub).map(Item::Fn),
            TokenKind::Struct => self.parse_struct(start, is_pub).map(Item::Struct),
            TokenKind::Global => self.parse_global(start, is_pub).map(Item::Global),
            TokenKind::Import if !is_pub => self.parse_import(start).map(Item::Import),
            TokenKind::Extern if !is_pub => self.parse_extern(start).map(Item::Extern),
            _ if is_pub => self.expected("`fn`, `struct` or `global` after `pub`"),
            _ => self.expected("an item (`fn`, `struct`, `global`, `extern` or `import`)"),
        }
    }

    fn parse_import(&mut self, start: Span) -> PResult<Import> {
        self.bump();
        let module = self.expect_ident("a module name")?;
        self.expect(&TokenKind::Semi, "`;`")?;
        Ok(Import {
            module,
            span: start.to(self.prev_span()),
        })
    }

    fn parse_fn(&mut self, start: Span, is_pub: bool) -> PResult<FnDecl> {
        self.bump();
        let name = self.expect_ident("a function name")?;
        let generics = if self.at(&TokenKind::Lt) {
            self.parse_generic_params()?
        } else {
            Vec::new()
        };
        let params = self.parse_params()?;
        let ret = self.parse_return_type()?;
        let body = self.parse_block()?;
        let span = start.to(body.span);
        Ok(FnDecl {
            is_pub,
            name,
            generics,
            params,
            ret,
            body,
            span,
        })
    }

    fn parse_extern(&mut self, start: Span) -> PResult<ExternFn> {
        self.bump();
        self.expect(&TokenKind::Fn, "`fn` after `extern`")?;
        let name = self.expect_ident("a function name")?;
        let params = self.parse_params()?;
        let ret = self.parse_return_type()?;
        self.expect(&TokenKind::Semi, "`;` after an extern function")?;
        Ok(ExternFn {
            name,
            params,
            ret,
            span: start.to(self.prev_span()),
        })
    }

    fn parse_struct(&mut self, start: Span, is_pub: bool) -> PResult<StructDecl> {
        self.bump();
        let name = self.expect_ident("a struct name")?;
        self.expect(&TokenKind::LBrace, "`{`")?;
        let fields = self.parse_comma_list(&TokenKind::RBrace, "`,` or `}`", Self::parse_param)?;
        Ok(StructDecl {
            is_pub,
            name,
            fields,
            span: start.to(self.prev_span()),
        })
    }

    fn parse_global(&mut self, start: Span, is_pub: bool) -> PResult<GlobalDecl> {
        self.bump();
        let name = self.expect_ident("a global name")?;
        self.expect(&TokenKind::Colon, "`:` and the global's type")?;
        let ty = self.parse_type()?;
        self.expect(&TokenKind::Eq, "`=` and an initializer")?;
        let init = self.parse_expr()?;
        self.expect(&TokenKind::Semi, "`;`")?;
        Ok(GlobalDecl {
            is_pub,
            name,
            ty,
            init,
            span: start.to(self.prev_span()),
        })
    }

    /// `<T, const K: i64, f: fn(i64) -> i64>`; a trailing comma is allowed.
    fn parse_generic_params(&mut self) -> PResult<Vec<GenericParam>> {
        self.bump();
        let params =
            self.parse_comma_list(&TokenKind::Gt, "`,` or `>`", Self::parse_generic_param)?;
        if params.is_empty() {
            let span = self.prev_span();
            self.report(
                Diagnostic::error(span, "empty generic parameter list")
                    .with_label("expected a parameter"),
            );
        }
        Ok(params)
    }

    fn parse_generic_param(&mut self) -> PResult<GenericParam> {
        if self.eat(&TokenKind::Const).is_some() {
            let name = self.expect_ident("a constant parameter name")?;
            self.expect(&TokenKind::Colon, "`:` and the constant's type")?;
            let ty = self.parse_type()?;
            return Ok(GenericParam::Const(name, ty));
        }
        let name = self.expect_ident("a generic parameter")?;
        if self.eat(&TokenKind::Colon).is_some() {
            let fn_type = self.parse_fn_type()?;
            return Ok(GenericParam::Fn(name, fn_type));
        }
        Ok(GenericParam::Type(name))
    }

    /// `fn(T, U) -> R`
    fn parse_fn_type(&mut self) -> PResult<FnTypeExpr> {
        let start = self.expect(&TokenKind::Fn, "a function type `fn(...)`")?;
        self.expect(&TokenKind::LParen, "`(`")?;
        let params = self.parse_comma_list(&TokenKind::RParen, "`,` or `)`", Self::parse_type)?;
        let ret = self.parse_return_type()?.map(Box::new);
        Ok(FnTypeExpr {
            params,
            ret,
            span: start.to(self.prev_span()),
        })
    }

    /// `(a: T, b: U)`; a trailing comma is allowed.
    fn parse_params(&mut self) -> PResult<Vec<Param>> {
        self.expect(&TokenKind::LParen, "`(`")?;
        self.parse_comma_list(&TokenKind::RParen, "`,` or `)`", Self::parse_param)
    }

    /// `name: T` (a parameter or a struct field).
    fn parse_param(&mut self) -> PResult<Param> {
        let name = self.expect_ident("a name")?;
        self.expect(&TokenKind::Colon, "`:` and a type")?;
        let ty = self.parse_type()?;
        let span = name.span.to(ty.span);
        Ok(Param { name, ty, span })
    }

    fn parse_return_type(&mut self) -> PResult<Option<TypeExpr>> {
        if self.eat(&TokenKind::Arrow).is_some() {
            Ok(Some(self.parse_type()?))
        } else {
            Ok(None)
        }
    }

    /// Parses `elem, elem, ... close` (the opener already consumed), allowing
    /// a trailing comma; consumes `close`.
    fn parse_comma_list<T>(
        &mut self,
        close: &TokenKind,
        what: &str,
        mut elem: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut list = Vec::new();
        loop {
            if self.eat(close).is_some() {
                return Ok(list);
            }
            list.push(elem(self)?);
            if self.eat(&TokenKind::Comma).is_none() {
                self.expect(close, what)?;
                return Ok(list);
            }
        }
    }

    // ---------------------------------------------------------------------
    // Types.

    fn parse_type(&mut self) -> PResult<TypeExpr> {
        self.nested(Self::parse_type_inner)
    }

    fn parse_type_inner(&mut self) -> PResult<TypeExpr> {
        match self.peek() {
            TokenKind::Ident(_) => {
                let path = self.parse_path("a type")?;
                Ok(TypeExpr {
                    span: path.span,
                    kind: TypeExprKind::Named(path),
                })
            }
            TokenKind::LBracket => {
                let start = self.bump();
                let elem = Box::new(self.parse_type()?);
                let kind = if self.eat(&TokenKind::Semi).is_some() {
                    TypeExprKind::FixedArray(elem, Box::new(self.parse_expr()?))
                } else {
                    TypeExprKind::Array(elem)
                };
                let end = self.expect(&TokenKind::RBracket, "`]`")?;
                Ok(TypeExpr {
                    kind,
                    span: start.to(end),
                })
            }
            _ => self.expected("a type"),
        }
    }

    /// `name` or `module::name`.
    fn parse_path(&mut self, what: &str) -> PResult<Path> {
        let first = self.expect_ident(what)?;
        if self.eat(&TokenKind::ColonColon).is_none() {
            return Ok(Path {
                span: first.span,
                module: None,
                name: first,
            });
        }
        let name = self.expect_ident("a name after `::`")?;
        let span = first.span.to(name.span);
        if self.at(&TokenKind::ColonColon) {
            let here = self.span();
            self.report(
                Diagnostic::error(here, "a path has at most one `::`")
                    .with_label("unexpected `::`")
                    .with_note("paths are `name` or `module::name`"),
            );
            return Err(Reported);
        }
        Ok(Path {
            module: Some(first),
            name,
            span,
        })
    }

    // ---------------------------------------------------------------------
    // Blocks and statements.

    fn parse_block(&mut self) -> PResult<Block> {
        self.nested(Self::parse_block_inner)
    }

    fn parse_block_inner(&mut self) -> PResult<Block> {
        let outer_braces = self.open_braces;
        let open = self.expect(&TokenKind::LBrace, "`{`")?;
        let inner_braces = self.open_braces;
        let mut stmts = Vec::new();
        let mut tail = None;
        loop {
            if let Some(close) = self.eat(&TokenKind::RBrace) {
                return Ok(Block {
                    stmts,
                    tail,
                    span: open.to(close),
                });
            }
            if self.at_eof() || self.at_item_start() {
                self.report_unclosed_block(open);
                self.open_braces = outer_braces;
                return Ok(Block {
                    stmts,
                    tail,
                    span: open.to(self.prev_span()),
                });
            }
            // A tail expression is only valid right before `}`; the
            // statement parser guarantees that, so none is pending here.
            if let Some(previous) = tail.take() {
                stmts.push(Stmt {
                    span: previous.span,
                    kind: StmtKind::Expr(*previous),
                });
            }
            let start = self.pos;
            match self.parse_stmt() {
                Ok(StmtOrTail::Stmt(stmt)) => stmts.push(*stmt),
                Ok(StmtOrTail::Tail(expr)) => tail = Some(expr),
                Err(Reported) => {
                    self.recover_stmt(inner_braces);
                    if self.pos == start
                        && !self.at(&TokenKind::RBrace)
                        && !self.at_eof()
                        && !self.at_item_start()
                    {
                        self.bump();
                    }
                }
            }
        }
    }

    fn report_unclosed_block(&mut self, open: Span) {
        if self.at_lexer_error() {
            return;
        }
        let found = self.peek().describe();
        let span = self.span();
        self.report(
            Diagnostic::error(span, format!("expected `}}`, found {found}"))
                .with_label("expected `}`")
                .with_secondary(open, "this block is not closed"),
        );
    }

    fn parse_stmt(&mut self) -> PResult<StmtOrTail> {
        let start = self.span();
        let kind = match self.peek() {
            TokenKind::Let => self.parse_let()?,
            TokenKind::While => {
                self.bump();
                let cond = self.parse_expr()?;
                let body = self.parse_block()?;
                StmtKind::While { cond, body }
            }
            TokenKind::For => self.parse_for()?,
            TokenKind::Break => {
                self.bump();
                self.expect_semi()?;
                StmtKind::Break
            }
            TokenKind::Continue => {
                self.bump();
                self.expect_semi()?;
                StmtKind::Continue
            }
            TokenKind::Return => {
                self.bump();
                let value = if self.at(&TokenKind::Semi) || self.at(&TokenKind::RBrace) {
                    None
                } else {
                    Some(self.parse_expr()?)
                };
                self.expect_semi()?;
                StmtKind::Return(value)
            }
            TokenKind::If | TokenKind::LBrace => return self.parse_blocklike_stmt(),
            _ => return self.parse_expr_stmt(),
        };
        Ok(StmtOrTail::Stmt(Box::new(Stmt {
            kind,
            span: start.to(self.prev_span()),
        })))
    }

    /// A missing `;` is reported but not fatal: the statement is complete,
    /// and parsing goes on as if the `;` had been there. Before an item
    /// keyword or the end of the file the block lacks its `}`, which the
    /// block reports instead.
    fn expect_semi(&mut self) -> PResult<()> {
        if self.eat(&TokenKind::Semi).is_none() && !self.at_eof() && !self.at_item_start() {
            let _ = self.expected::<()>("`;`");
        }
        Ok(())
    }

    fn parse_let(&mut self) -> PResult<StmtKind> {
        self.bump();
        let mutable = self.eat(&TokenKind::Mut).is_some();
        let name = self.expect_ident("a variable name")?;
        let ty = if self.eat(&TokenKind::Colon).is_some() {
            Some(self.parse_type()?)
        } else {
            None
        };
        self.expect(&TokenKind::Eq, "`=` and an initializer")?;
        let init = self.parse_expr()?;
        self.expect_semi()?;
        Ok(StmtKind::Let {
            mutable,
            name,
            ty,
            init,
        })
    }

    fn parse_for(&mut self) -> PResult<StmtKind> {
        self.bump();
        let var = self.expect_ident("a loop variable")?;
        self.expect(&TokenKind::In, "`in`")?;
        let start = self.parse_expr()?;
        self.expect(&TokenKind::DotDot, "`..`")?;
        let end = self.parse_expr()?;
        let body = self.parse_block()?;
        Ok(StmtKind::For {
            var,
            start,
            end,
            body,
        })
    }

    /// `if` or a block in statement position: a complete statement without
    /// `;` (an optional `;` is consumed), or the tail if `}` follows.
    fn parse_blocklike_stmt(&mut self) -> PResult<StmtOrTail> {
        let expr = self.parse_blocklike()?;
        if self.at(&TokenKind::RBrace) {
            return Ok(StmtOrTail::Tail(Box::new(expr)));
        }
        let mut span = expr.span;
        if let Some(semi) = self.eat(&TokenKind::Semi) {
            span = span.to(semi);
        }
        Ok(StmtOrTail::Stmt(Box::new(Stmt {
            kind: StmtKind::Expr(expr),
            span,
        })))
    }

    /// `e;`, `place = e;`, `place op= e;`, or a tail expression before `}`.
    fn parse_expr_stmt(&mut self) -> PResult<StmtOrTail> {
        let expr = self.parse_expr()?;
        let start = expr.span;
        if let Some(op) = self.peek_assign_op() {
            self.bump();
            let value = self.parse_expr()?;
            self.expect_semi()?;
            let kind = StmtKind::Assign {
                target: expr,
                op,
                value,
            };
            return Ok(StmtOrTail::Stmt(Box::new(Stmt {
                kind,
                span: start.to(self.prev_span()),
            })));
        }
        if self.at(&TokenKind::RBrace) || self.at_eof() || self.at_item_start() {
            return Ok(StmtOrTail::Tail(Box::new(expr)));
        }
        self.expect_semi()?;
        Ok(StmtOrTail::Stmt(Box::new(Stmt {
            kind: StmtKind::Expr(expr),
            span: start.to(self.prev_span()),
        })))
    }

    /// `Some(None)` for `=`, `Some(Some(op))` for `op=`.
    fn peek_assign_op(&self) -> Option<Option<BinOp>> {
        let op = match self.peek() {
            TokenKind::Eq => None,
            TokenKind::PlusEq => Some(BinOp::Add),
            TokenKind::MinusEq => Some(BinOp::Sub),
            TokenKind::StarEq => Some(BinOp::Mul),
            TokenKind::SlashEq => Some(BinOp::Div),
            TokenKind::PercentEq => Some(BinOp::Rem),
            TokenKind::AmpEq => Some(BinOp::BitAnd),
            TokenKind::PipeEq => Some(BinOp::BitOr),
            TokenKind::CaretEq => Some(BinOp::BitXor),
            TokenKind::ShlEq => Some(BinOp::Shl),
            TokenKind::ShrEq => Some(BinOp::Shr),
            _ => return None,
        };
        Some(op)
    }

    // ---------------------------------------------------------------------
    // Expressions.

    fn parse_expr(&mut self) -> PResult<Expr> {
        self.nested(|p| p.parse_binary(PREC_OR))
    }

    fn peek_binop(&self) -> Option<(BinOp, u8)> {
        let op = match self.peek() {
            TokenKind::OrOr => (BinOp::Or, PREC_OR),
            TokenKind::AndAnd => (BinOp::And, PREC_AND),
            TokenKind::EqEq => (BinOp::Eq, PREC_CMP),
            TokenKind::Ne => (BinOp::Ne, PREC_CMP),
            TokenKind::Lt => (BinOp::Lt, PREC_CMP),
            TokenKind::Le => (BinOp::Le, PREC_CMP),
            TokenKind::Gt => (BinOp::Gt, PREC_CMP),
            TokenKind::Ge => (BinOp::Ge, PREC_CMP),
            TokenKind::Pipe => (BinOp::BitOr, PREC_BITOR),
            TokenKind::Caret => (BinOp::BitXor, PREC_BITXOR),
            TokenKind::Amp => (BinOp::BitAnd, PREC_BITAND),
            TokenKind::Shl => (BinOp::Shl, PREC_SHIFT),
            TokenKind::Shr => (BinOp::Shr, PREC_SHIFT),
            TokenKind::Plus => (BinOp::Add, PREC_ADD),
            TokenKind::Minus => (BinOp::Sub, PREC_ADD),
            TokenKind::Star => (BinOp::Mul, PREC_MUL),
            TokenKind::Slash => (BinOp::Div, PREC_MUL),
            TokenKind::Percent => (BinOp::Rem, PREC_MUL),
            _ => return None,
        };
        Some(op)
    }

    /// Precedence climbing: operators of precedence `>= min_prec`, left
    /// associative, except that comparisons do not chain.
    fn parse_binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let outer = self.save_depth();
        let result = self.parse_binary_chain(min_prec);
        self.restore_depth(outer);
        result
    }

    /// The loop of [`Parser::parse_binary`]; each operator folded in makes
    /// the tree one level deeper on the left: not nesting, but it counts
    /// against [`MAX_EXPR_DEPTH`] (later phases walk the tree recursively).
    fn parse_binary_chain(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.parse_unary()?;
        // The first comparison of this chain: its span and token index.
        let mut previous_cmp: Option<(Span, usize)> = None;
        while let Some((op, prec)) = self.peek_binop() {
            if prec < min_prec {
                break;
            }
            self.lengthen()?;
            let op_index = self.pos;
            let op_span = self.bump();
            if prec == PREC_CMP {
                match previous_cmp {
                    Some((first, first_index)) => {
                        self.report_chained_comparison(op_span, first, first_index)
                    }
                    None => previous_cmp = Some((op_span, op_index)),
                }
            }
            let rhs = self.nested(|p| p.parse_binary(prec + 1))?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
        Ok(lhs)
    }

    /// Reports `a < b < c`. When the first `<` follows a name and was tried
    /// as generic arguments, the user probably meant a generic call with an
    /// unparenthesized constant expression (`f<K + 1>(x)`): say so.
    fn report_chained_comparison(&mut self, second: Span, first: Span, first_index: usize) {
        let mut diag = Diagnostic::error(second, "comparison operators cannot be chained")
            .with_label("second comparison")
            .with_secondary(first, "first comparison")
            .with_note("split the comparison with `&&`: `a < b && b < c`");
        if self.call_failed.get(first_index).copied().unwrap_or(false) {
            diag = diag.with_note(
                "for generic arguments, write a constant expression in parentheses or braces: `f<(K + 1)>(x)`",
            );
        }
        self.report(diag);
    }

    fn parse_unary(&mut self) -> PResult<Expr> {
        let op = match self.peek() {
            TokenKind::Minus => UnOp::Neg,
            TokenKind::Bang => UnOp::Not,
            _ => return self.parse_postfix(),
        };
        let start = self.bump();
        let operand = self.nested(Self::parse_unary)?;
        let span = start.to(operand.span);
        Ok(Expr {
            kind: ExprKind::Unary(op, Box::new(operand)),
            span,
        })
    }

    fn parse_postfix(&mut self) -> PResult<Expr> {
        let outer = self.save_depth();
        let result = self.parse_postfix_chain();
        self.restore_depth(outer);
        result
    }

    /// The loop of [`Parser::parse_postfix`]; each postfix operation counts
    /// as one nesting level.
    fn parse_postfix_chain(&mut self) -> PResult<Expr> {
        let mut expr = self.parse_primary()?;
        loop {
            if self.at_postfix_operator() {
                self.deepen()?;
            }
            expr = match self.peek() {
                TokenKind::LParen => {
                    self.bump();
                    let args =
                        self.parse_comma_list(&TokenKind::RParen, "`,` or `)`", Self::parse_expr)?;
                    let span = expr.span.to(self.prev_span());
                    Expr {
                        kind: ExprKind::Call(Box::new(expr), args),
                        span,
                    }
                }
                TokenKind::LBracket => {
                    self.bump();
                    let index = self.parse_expr()?;
                    let end = self.expect(&TokenKind::RBracket, "`]`")?;
                    let span = expr.span.to(end);
                    Expr {
                        kind: ExprKind::Index(Box::new(expr), Box::new(index)),
                        span,
                    }
                }
                TokenKind::Dot => {
                    self.bump();
                    let field = self.expect_ident("a field name")?;
                    let span = expr.span.to(field.span);
                    Expr {
                        kind: ExprKind::Field(Box::new(expr), field),
                        span,
                    }
                }
                TokenKind::As => {
                    self.bump();
                    let ty = self.parse_type()?;
                    let span = expr.span.to(ty.span);
                    Expr {
                        kind: ExprKind::Cast(Box::new(expr), ty),
                        span,
                    }
                }
                _ => return Ok(expr),
            };
        }
    }

    fn at_postfix_operator(&self) -> bool {
        matches!(
            self.peek(),
            TokenKind::LParen | TokenKind::LBracket | TokenKind::Dot | TokenKind::As
        )
    }

    fn parse_primary(&mut self) -> PResult<Expr> {
        let span = self.span();
        let kind = match self.peek() {
            TokenKind::Int { value, suffix } => ExprKind::Int(*value, suffix.clone()),
            TokenKind::Char(c) => ExprKind::Char(*c),
            TokenKind::Str(bytes) => ExprKind::Str(bytes.clone()),
            TokenKind::True => ExprKind::Bool(true),
            TokenKind::False => ExprKind::Bool(false),
            TokenKind::Null => ExprKind::Null,
            TokenKind::Ident(_) => return self.parse_path_expr(),
            TokenKind::New => return self.parse_new(),
            TokenKind::LBracket => return self.parse_array_literal(),
            TokenKind::If | TokenKind::LBrace => return self.parse_blocklike(),
            TokenKind::LParen => return self.parse_paren(),
            _ => return self.expected("an expression"),
        };
        self.bump();
        Ok(Expr { kind, span })
    }

    /// `( e )`: the inner expression, its span widened to the parentheses.
    fn parse_paren(&mut self) -> PResult<Expr> {
        let open = self.bump();
        let mut expr = self.parse_expr()?;
        let close = self.expect(&TokenKind::RParen, "`)`")?;
        expr.span = open.to(close);
        Ok(expr)
    }

    /// `name`, `module::name`, or either with generic arguments when they
    /// are followed by `(`.
    fn parse_path_expr(&mut self) -> PResult<Expr> {
        let path = self.parse_path("a name")?;
        let mut span = path.span;
        let mut args = Vec::new();
        if self.at(&TokenKind::Lt) {
            if let Some(parsed) = self.try_call_generic_args() {
                args = parsed;
                span = span.to(self.prev_span());
            }
        }
        Ok(Expr {
            kind: ExprKind::Path(path, args),
            span,
        })
    }

    /// Speculatively parses `<args>` followed by `(`; on failure restores
    /// the position (and drops the attempt's diagnostics), so `<` is a
    /// comparison.
    fn try_call_generic_args(&mut self) -> Option<Vec<GenericArg>> {
        if self.call_failed.get(self.pos).copied().unwrap_or(false) {
            return None;
        }
        let cp = self.checkpoint();
        match self.parse_generic_args() {
            Ok(args) if !self.half && self.at(&TokenKind::LParen) => Some(args),
            _ => {
                self.restore(cp);
                if let Some(failed) = self.call_failed.get_mut(cp.pos) {
                    *failed = true;
                }
                None
            }
        }
    }

    /// `<arg, arg, ...>`; `>>` closes this list with its first `>`.
    ///
    /// Only used under speculation (see [`Parser::try_call_generic_args`]),
    /// whose failure drops diagnostics; so a position known to fail fails
    /// again silently.
    fn parse_generic_args(&mut self) -> PResult<Vec<GenericArg>> {
        let start = self.pos;
        if self.args_failed.get(start).copied().unwrap_or(false) {
            return Err(Reported);
        }
        let result = self.parse_generic_args_uncached();
        if result.is_err() {
            if let Some(failed) = self.args_failed.get_mut(start) {
                *failed = true;
            }
        }
        result
    }

    fn parse_generic_args_uncached(&mut self) -> PResult<Vec<GenericArg>> {
        self.nested(|p| {
            p.expect(&TokenKind::Lt, "`<`")?;
            let mut args = vec![p.parse_generic_arg()?];
            while p.eat(&TokenKind::Comma).is_some() {
                args.push(p.parse_generic_arg()?);
            }
            p.expect_closing_angle()?;
            Ok(args)
        })
    }

    /// Consumes one `>`, possibly the first half of `>>`, `>=` or `>>=`.
    fn expect_closing_angle(&mut self) -> PResult<()> {
        match self.peek() {
            TokenKind::Gt => {
                self.bump();
                Ok(())
            }
            TokenKind::Shr | TokenKind::Ge | TokenKind::ShrEq => {
                self.half = true;
                Ok(())
            }
            _ => self.expected("`,` or `>`"),
        }
    }

    fn parse_generic_arg(&mut self) -> PResult<GenericArg> {
        let span = self.span();
        match self.peek() {
            TokenKind::LBracket => Ok(GenericArg::ArrayType(Box::new(self.parse_type()?))),
            TokenKind::Ident(_) => {
                let path = self.parse_path("a generic argument")?;
                let args = if self.at(&TokenKind::Lt) {
                    self.parse_generic_args()?
                } else {
                    Vec::new()
                };
                Ok(GenericArg::Path(path, args))
            }
            TokenKind::Int { .. } | TokenKind::Char(_) | TokenKind::True | TokenKind::False => {
                Ok(GenericArg::Const(Box::new(self.parse_primary()?)))
            }
            TokenKind::Minus if matches!(self.peek_at(1), TokenKind::Int { .. }) => {
                self.bump();
                let literal = self.parse_primary()?;
                let span = span.to(literal.span);
                Ok(GenericArg::Const(Box::new(Expr {
                    kind: ExprKind::Unary(UnOp::Neg, Box::new(literal)),
                    span,
                })))
            }
            TokenKind::LParen => Ok(GenericArg::Const(Box::new(self.parse_paren()?))),
            TokenKind::LBrace => {
                let open = self.bump();
                let mut expr = self.parse_expr()?;
                let close = self.expect(&TokenKind::RBrace, "`}`")?;
                expr.span = open.to(close);
                Ok(GenericArg::Const(Box::new(expr)))
            }
            _ => self.expected("a generic argument"),
        }
    }

    /// `new [T; n]` or `new Path { field: e, ... }`.
    fn parse_new(&mut self) -> PResult<Expr> {
        let start = self.bump();
        if self.eat(&TokenKind::LBracket).is_some() {
            let elem = self.parse_type()?;
            self.expect(&TokenKind::Semi, "`;` and the array length")?;
            let len = self.parse_expr()?;
            let end = self.expect(&TokenKind::RBracket, "`]`")?;
            return Ok(Expr {
                kind: ExprKind::NewArray(elem, Box::new(len)),
                span: start.to(end),
            });
        }
        if !matches!(self.peek(), TokenKind::Ident(_)) {
            return self.expected("`[` or a struct name after `new`");
        }
        let path = self.parse_path("a struct name")?;
        self.expect(&TokenKind::LBrace, "`{` and the struct's fields")?;
        let fields =
            self.parse_comma_list(&TokenKind::RBrace, "`,` or `}`", Self::parse_field_init)?;
        Ok(Expr {
            kind: ExprKind::NewStruct(path, fields),
            span: start.to(self.prev_span()),
        })
    }

    fn parse_field_init(&mut self) -> PResult<(Ident, Expr)> {
        let name = self.expect_ident("a field name")?;
        self.expect(&TokenKind::Colon, "`:` and the field's value")?;
        let value = self.parse_expr()?;
        Ok((name, value))
    }

    /// `[a, b, c]`
    fn parse_array_literal(&mut self) -> PResult<Expr> {
        let start = self.bump();
        let elems = self.parse_comma_list(&TokenKind::RBracket, "`,` or `]`", Self::parse_expr)?;
        Ok(Expr {
            kind: ExprKind::ArrayLit(elems),
            span: start.to(self.prev_span()),
        })
    }

    /// `if c { } [else ...]` or `{ ... }` as an expression.
    fn parse_blocklike(&mut self) -> PResult<Expr> {
        if self.at(&TokenKind::If) {
            self.nested(Self::parse_if)
        } else {
            let block = self.parse_block()?;
            Ok(Expr {
                span: block.span,
                kind: ExprKind::Block(block),
            })
        }
    }

    fn parse_if(&mut self) -> PResult<Expr> {
        let start = self.bump();
        let cond = self.parse_expr()?;
        let then = self.parse_block()?;
        let mut span = start.to(then.span);
        let mut otherwise = None;
        if self.eat(&TokenKind::Else).is_some() {
            let branch = match self.peek() {
                TokenKind::If | TokenKind::LBrace => self.parse_blocklike()?,
                _ => return self.expected("`{` or `if` after `else`"),
            };
            span = span.to(branch.span);
            otherwise = Some(Box::new(branch));
        }
        Ok(Expr {
            kind: ExprKind::If(Box::new(cond), then, otherwise),
            span,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Module, Vec<String>) {
        let mut diags = Diagnostics::default();
        let module = parse_module("test", FileId(0), text, &mut diags);
        let messages = diags.list.iter().map(|d| d.message.clone()).collect();
        (module, messages)
    }

    fn parse_ok(text: &str) -> Module {
        let (module, errors) = parse(text);
        assert!(errors.is_empty(), "unexpected errors {errors:?} in\n{text}");
        module
    }

    /// A compact S-expression of an expression, for shape checks.
    fn sexpr(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Int(v, None) => v.to_string(),
            ExprKind::Int(v, Some(s)) => format!("{v}{s}"),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Char(c) => format!("'{}'", *c as char),
            ExprKind::Str(s) => format!("{:?}", String::from_utf8_lossy(s)),
            ExprKind::Null => "null".into(),
            ExprKind::Path(p, args) if args.is_empty() => path(p),
            ExprKind::Path(p, args) => format!("{}<{}>", path(p), generic_args(args)),
            ExprKind::Unary(op, x) => format!("({op:?} {})", sexpr(x)),
            ExprKind::Binary(op, a, b) => format!("({op:?} {} {})", sexpr(a), sexpr(b)),
            ExprKind::Cast(x, t) => format!("(as {} {})", sexpr(x), ty(t)),
            ExprKind::Call(f, args) => {
                format!(
                    "(call {}{})",
                    sexpr(f),
                    args.iter()
                        .map(|a| format!(" {}", sexpr(a)))
                        .collect::<String>()
                )
            }
            ExprKind::Field(x, f) => format!("(. {} {})", sexpr(x), f.name),
            ExprKind::Index(a, i) => format!("(index {} {})", sexpr(a), sexpr(i)),
            ExprKind::NewArray(t, n) => format!("(new-array {} {})", ty(t), sexpr(n)),
            ExprKind::NewStruct(p, fields) => format!(
                "(new {}{})",
                path(p),
                fields
                    .iter()
                    .map(|(f, v)| format!(" {}:{}", f.name, sexpr(v)))
                    .collect::<String>()
            ),
            ExprKind::ArrayLit(xs) => {
                format!("[{}]", xs.iter().map(sexpr).collect::<Vec<_>>().join(" "))
            }
            ExprKind::If(c, t, e) => match e {
                Some(e) => format!("(if {} {} {})", sexpr(c), block(t), sexpr(e)),
                None => format!("(if {} {})", sexpr(c), block(t)),
            },
            ExprKind::Block(b) => block(b),
        }
    }

    fn path(p: &Path) -> String {
        match &p.module {
            Some(m) => format!("{}::{}", m.name, p.name.name),
            None => p.name.name.clone(),
        }
    }

    fn generic_args(args: &[GenericArg]) -> String {
        let parts: Vec<String> = args
            .iter()
            .map(|a| match a {
                GenericArg::Path(p, inner) if inner.is_empty() => path(p),
                GenericArg::Path(p, inner) => format!("{}<{}>", path(p), generic_args(inner)),
                GenericArg::ArrayType(t) => ty(t),
                GenericArg::Const(e) => format!("#{}", sexpr(e)),
            })
            .collect();
        parts.join(", ")
    }

    fn ty(t: &TypeExpr) -> String {
        match &t.kind {
            TypeExprKind::Named(p) => path(p),
            TypeExprKind::Array(e) => format!("[{}]", ty(e)),
            TypeExprKind::FixedArray(e, n) => format!("[{}; {}]", ty(e), sexpr(n)),
        }
    }

    fn stmt(s: &Stmt) -> String {
        match &s.kind {
            StmtKind::Let {
                mutable,
                name,
                ty: t,
                init,
            } => format!(
                "(let{} {}{} {})",
                if *mutable { " mut" } else { "" },
                name.name,
                t.as_ref()
                    .map(|t| format!(":{}", ty(t)))
                    .unwrap_or_default(),
                sexpr(init)
            ),
            StmtKind::Assign { target, op, value } => match op {
                Some(op) => format!("({op:?}= {} {})", sexpr(target), sexpr(value)),
                None => format!("(= {} {})", sexpr(target), sexpr(value)),
            },
            StmtKind::Expr(e) => format!("{};", sexpr(e)),
            StmtKind::While { cond, body } => format!("(while {} {})", sexpr(cond), block(body)),
            StmtKind::For {
                var,
                start,
                end,
                body,
            } => {
                format!(
                    "(for {} {} {} {})",
                    var.name,
                    sexpr(start),
                    sexpr(end),
                    block(body)
                )
            }
            StmtKind::Break => "break".into(),
            StmtKind::Continue => "continue".into(),
            StmtKind::Return(None) => "return".into(),
            StmtKind::Return(Some(e)) => format!("(return {})", sexpr(e)),
        }
    }

    fn block(b: &Block) -> String {
        let mut parts: Vec<String> = b.stmts.iter().map(stmt).collect();
        if let Some(t) = &b.tail {
            parts.push(format!("=> {}", sexpr(t)));
        }
        format!("{{{}}}", parts.join(" "))
    }

    /// Parses `text` as the body of `fn main` and renders it.
    fn body(text: &str) -> String {
        let module = parse_ok(&format!("fn main() {{ {text} }}"));
        match &module.items[0] {
            Item::Fn(f) => block(&f.body),
            other => panic!("not a function: {other:?}"),
        }
    }

    fn expr(text: &str) -> String {
        body(&format!("let x = {text};"))
    }

    fn errors(text: &str) -> Vec<String> {
        parse(text).1
    }

    #[test]
    fn precedence() {
        assert_eq!(expr("1 + 2 * 3"), "{(let x (Add 1 (Mul 2 3)))}");
        assert_eq!(expr("1 - 2 - 3"), "{(let x (Sub (Sub 1 2) 3))}");
        assert_eq!(
            expr("a || b && c == d"),
            "{(let x (Or a (And b (Eq c d))))}"
        );
        assert_eq!(
            expr("a | b ^ c & d << 1 + 2"),
            "{(let x (BitOr a (BitXor b (BitAnd c (Shl d (Add 1 2))))))}"
        );
        assert_eq!(expr("a < b + 1"), "{(let x (Lt a (Add b 1)))}");
        assert_eq!(
            expr("-a.b[1] as i32"),
            "{(let x (Neg (as (index (. a b) 1) i32)))}"
        );
        assert_eq!(expr("!f(x)(y)"), "{(let x (Not (call (call f x) y)))}");
        assert_eq!(expr("(1 + 2) * 3"), "{(let x (Mul (Add 1 2) 3))}");
        assert_eq!(expr("x >> 2 >= 1"), "{(let x (Ge (Shr x 2) 1))}");
        assert_eq!(
            expr("-9223372036854775808"),
            "{(let x (Neg 9223372036854775808))}"
        );
    }

    #[test]
    fn comparisons_do_not_chain() {
        assert_eq!(
            errors("fn f() { let x = a < b < c; }"),
            vec!["comparison operators cannot be chained"]
        );
        assert_eq!(
            errors("fn f() { let x = a == b != c; }"),
            vec!["comparison operators cannot be chained"]
        );
        assert!(errors("fn f() { let x = (a < b) == c; }").is_empty());
        assert!(errors("fn f() { let x = a < b && b < c; }").is_empty());
    }

    #[test]
    fn generic_args_versus_comparison() {
        assert_eq!(expr("max<i32>(a, b)"), "{(let x (call max<i32> a b))}");
        assert_eq!(expr("a < b"), "{(let x (Lt a b))}");
        assert_eq!(
            expr("a < b && c > (d)"),
            "{(let x (And (Lt a b) (Gt c d)))}"
        );
        assert_eq!(
            expr("sum_by<scale<3>>(xs)"),
            "{(let x (call sum_by<scale<#3>> xs))}"
        );
        assert_eq!(
            expr("sum_by<util::scale<3>>(xs)"),
            "{(let x (call sum_by<util::scale<#3>> xs))}"
        );
        assert_eq!(expr("scale<-2>(x)"), "{(let x (call scale<#(Neg 2)> x))}");
        assert_eq!(expr("f<(K + 1)>(x)"), "{(let x (call f<#(Add K 1)> x))}");
        assert_eq!(expr("f<{K + 1}>(x)"), "{(let x (call f<#(Add K 1)> x))}");
        assert_eq!(
            expr("f<[i64], str, true>()"),
            "{(let x (call f<[i64], str, #true>))}"
        );
        assert_eq!(expr("f<a<b<1>>>(x)"), "{(let x (call f<a<b<#1>>> x))}");
        assert_eq!(
            expr("f<[[u8]]>(x) < 3"),
            "{(let x (Lt (call f<[[u8]]> x) 3))}"
        );
        assert_eq!(
            body("if i < n { f(i); }"),
            "{=> (if (Lt i n) {(call f i);})}"
        );
        assert_eq!(
            body("while i < n { i += 1; }"),
            "{(while (Lt i n) {(Add= i 1)})}"
        );
        assert_eq!(
            errors("fn f() { let x = a < b > c; }"),
            vec!["comparison operators cannot be chained"]
        );
    }

    #[test]
    fn unparenthesized_generic_constant_gets_a_hint() {
        let mut diags = Diagnostics::default();
        parse_module(
            "t",
            FileId(0),
            "fn f() { let y = scale<K + 1>(x); }",
            &mut diags,
        );
        assert_eq!(diags.list.len(), 1);
        assert_eq!(
            diags.list[0].message,
            "comparison operators cannot be chained"
        );
        assert_eq!(diags.list[0].notes.len(), 2);
        let mut diags = Diagnostics::default();
        parse_module(
            "t",
            FileId(0),
            "fn f() { let y = (a + 1) < b < c; }",
            &mut diags,
        );
        assert_eq!(diags.list[0].notes.len(), 1);
    }

    #[test]
    fn else_if_chains() {
        assert_eq!(
            body("if a { 1 } else if b { 2 } else { 3 }"),
            "{=> (if a {=> 1} (if b {=> 2} {=> 3}))}"
        );
        assert_eq!(
            expr("if a { 1 } else { 2 }"),
            "{(let x (if a {=> 1} {=> 2}))}"
        );
        assert_eq!(
            body("if a { f(); } g()"),
            "{(if a {(call f);}); => (call g)}"
        );
    }

    #[test]
    fn statements_and_compound_assignment() {
        assert_eq!(
            body("let mut s: i64 = 0; s += 1; a[i] <<= 2; p.x = 3; s -= 1; s ^= 2; s >>= 1;"),
            "{(let mut s:i64 0) (Add= s 1) (Shl= (index a i) 2) (= (. p x) 3) (Sub= s 1) (BitXor= s 2) (Shr= s 1)}"
        );
        assert_eq!(
            body("for i in 0..len(xs) { s = s + f(xs[i]); } s"),
            "{(for i 0 (call len xs) {(= s (Add s (call f (index xs i))))}) => s}"
        );
        assert_eq!(
            body("while true { break; continue; return; }"),
            "{(while true {break continue return})}"
        );
        assert_eq!(body("return 1 + 2;"), "{(return (Add 1 2))}");
        assert_eq!(body("{ 1 } { 2 }"), "{{=> 1}; => {=> 2}}");
    }

    #[test]
    fn new_and_literals() {
        assert_eq!(
            expr("new [i64; n + 1]"),
            "{(let x (new-array i64 (Add n 1)))}"
        );
        assert_eq!(
            expr("new util::Point { x: 1, y: 2, }"),
            "{(let x (new util::Point x:1 y:2))}"
        );
        assert_eq!(
            expr("[1, 2, 'a', \"s\", null, 5u8]"),
            "{(let x [1 2 'a' \"s\" null 5u8])}"
        );
        assert_eq!(expr("[]"), "{(let x [])}");
    }

    #[test]
    fn language_reference_examples() {
        let first = parse_ok(
            r#"import util;

extern fn putchar(c: i32) -> i32;

pub struct Point { x: i64, y: i64 }

global counter: i64 = 0;
global primes: [i64; 5] = [2, 3, 5, 7, 11];

fn main() {
    let p = new Point { x: 3, y: 4 };
    counter = counter + util::square(p.x);
    print(counter);          // 9
    print_str("done\n");
}
"#,
        );
        assert_eq!(first.items.len(), 6);
        assert!(matches!(&first.items[0], Item::Import(i) if i.module.name == "util"));
        assert!(
            matches!(&first.items[1], Item::Extern(e) if e.params.len() == 1 && e.ret.is_some())
        );
        assert!(matches!(&first.items[2], Item::Struct(s) if s.is_pub && s.fields.len() == 2));
        match &first.items[4] {
            Item::Global(g) => {
                assert_eq!(ty(&g.ty), "[i64; 5]");
                assert_eq!(sexpr(&g.init), "[2 3 5 7 11]");
            }
            other => panic!("{other:?}"),
        }

        let generics = parse_ok(
            r#"
fn max<T>(a: T, b: T) -> T { if a > b { a } else { b } }
fn scale<const K: i64>(x: i64) -> i64 { x * K }
fn sum_by<f: fn(i64) -> i64>(xs: [i64]) -> i64 {
    let mut s = 0;
    for i in 0..len(xs) { s = s + f(xs[i]); }
    s
}
fn main() { let a = new [i64; 3]; a[1] = 5; print(sum_by<scale<3>>(a)); print(max(2, 7)); }
fn f<const N: i64>() { f<(N + 1)>(); }
"#,
        );
        assert_eq!(generics.items.len(), 5);
        match &generics.items[2] {
            Item::Fn(f) => {
                assert!(
                    matches!(&f.generics[0], GenericParam::Fn(name, t) if name.name == "f" && t.params.len() == 1 && t.ret.is_some())
                );
                assert_eq!(ty(&f.params[0].ty), "[i64]");
                assert_eq!(
                    block(&f.body),
                    "{(let mut s 0) (for i 0 (call len xs) {(= s (Add s (call f (index xs i))))}) => s}"
                );
            }
            other => panic!("{other:?}"),
        }
        match &generics.items[3] {
            Item::Fn(f) => assert_eq!(
                block(&f.body),
                "{(let a (new-array i64 3)) (= (index a 1) 5) (call print (call sum_by<scale<#3>> a)); (call print (call max 2 7));}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_pare_block_of_the_language_reference_parses() {
        let doc = include_str!("../../../docs/LANGUAGE.md");
        let mut blocks = 0;
        let mut rest = doc;
        while let Some(start) = rest.find("```pare\n") {
            let body = &rest[start + "```pare\n".len()..];
            let end = body.find("```").unwrap_or(body.len());
            parse_ok(&body[..end]);
            blocks += 1;
            rest = &body[end..];
        }
        assert!(blocks >= 2);
    }

    #[test]
    fn items() {
        let module = parse_ok(
            "import a;\npub fn f() {}\nextern fn g();\nextern fn h(x: i64, y: u8,) -> bool;\n\
             struct E {}\nstruct S { a: [u8], b: m::T, }\npub global G: [[i64]] = null;\n\
             fn k<T, const N: bool, f: fn(), g: fn(T, [T]) -> T,>(x: T) -> [T] { null }",
        );
        let kinds: Vec<String> = module
            .items
            .iter()
            .map(|item| match item {
                Item::Import(i) => format!("import {}", i.module.name),
                Item::Fn(f) => format!(
                    "fn {} pub={} generics={} params={} ret={}",
                    f.name.name,
                    f.is_pub,
                    f.generics.len(),
                    f.params.len(),
                    f.ret.as_ref().map(ty).unwrap_or_default()
                ),
                Item::Extern(e) => format!(
                    "extern {} params={} ret={}",
                    e.name.name,
                    e.params.len(),
                    e.ret.as_ref().map(ty).unwrap_or_default()
                ),
                Item::Struct(s) => format!(
                    "struct {} pub={} {}",
                    s.name.name,
                    s.is_pub,
                    s.fields
                        .iter()
                        .map(|f| format!("{}:{} ", f.name.name, ty(&f.ty)))
                        .collect::<String>()
                ),
                Item::Global(g) => format!(
                    "global {} pub={} {} = {}",
                    g.name.name,
                    g.is_pub,
                    ty(&g.ty),
                    sexpr(&g.init)
                ),
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                "import a",
                "fn f pub=true generics=0 params=0 ret=",
                "extern g params=0 ret=",
                "extern h params=2 ret=bool",
                "struct E pub=false ",
                "struct S pub=false a:[u8] b:m::T ",
                "global G pub=true [[i64]] = null",
                "fn k pub=false generics=4 params=1 ret=[T]",
            ]
        );
        let Item::Fn(k) = &module.items[7] else {
            panic!()
        };
        assert!(
            matches!(&k.generics[1], GenericParam::Const(n, t) if n.name == "N" && ty(t) == "bool")
        );
        assert!(
            matches!(&k.generics[2], GenericParam::Fn(_, t) if t.params.is_empty() && t.ret.is_none())
        );
        assert!(
            matches!(&k.generics[3], GenericParam::Fn(_, t) if t.params.len() == 2 && t.ret.is_some())
        );
    }

    #[test]
    fn spans_cover_nodes() {
        let text = "fn main() { let x = foo(1, 2) + 3; }";
        let module = parse_ok(text);
        let Item::Fn(f) = &module.items[0] else {
            panic!()
        };
        assert_eq!((f.span.start, f.span.end), (0, text.len() as u32));
        let StmtKind::Let { init, .. } = &f.body.stmts[0].kind else {
            panic!()
        };
        assert_eq!(
            &text[init.span.start as usize..init.span.end as usize],
            "foo(1, 2) + 3"
        );
        assert_eq!(
            &text[f.body.stmts[0].span.start as usize..f.body.stmts[0].span.end as usize],
            "let x = foo(1, 2) + 3;"
        );
    }

    #[test]
    fn several_errors_are_reported() {
        let errs = errors(
            "fn a() { let x = ; let y = 1 }\nstruct S { x: }\nlet z = 3;\nfn b() { f(1; }\nfn c() { return 1 }",
        );
        assert_eq!(
            errs,
            vec![
                "expected an expression, found `;`",
                "expected `;`, found `}`",
                "expected a type, found `}`",
                "expected an item (`fn`, `struct`, `global`, `extern` or `import`), found `let`",
                "expected `,` or `)`, found `;`",
                "expected `;`, found `}`",
            ]
        );
    }

    #[test]
    fn missing_semicolon_and_brace() {
        assert_eq!(
            errors("fn a() { let x = 1 let y = 2; }"),
            vec!["expected `;`, found `let`"]
        );
        assert_eq!(
            errors("fn a() { f(); \nfn b() {}"),
            vec!["expected `}`, found `fn`"]
        );
        assert_eq!(
            errors("fn a() { if x { f(); }"),
            vec!["expected `}`, found end of file"]
        );
    }

    #[test]
    fn recovery_respects_braces_inside_statements() {
        assert_eq!(
            errors("fn a() { let c = new P { x 1 }; let d = ; }\nfn b() {}"),
            vec![
                "expected `:` and the field's value, found integer literal",
                "expected an expression, found `;`",
            ]
        );
        assert_eq!(
            errors("fn a(x i64) { if x { y } }\nstruct S { x: }\nlet z = 1;"),
            vec![
                "expected `:` and a type, found identifier `i64`",
                "expected a type, found `}`",
                "expected an item (`fn`, `struct`, `global`, `extern` or `import`), found `let`",
            ]
        );
        // A tail expression directly before the next item: only the `}` is missing.
        assert_eq!(
            errors("fn a() { x + 1\nfn b() {}"),
            vec!["expected `}`, found `fn`"]
        );
    }

    #[test]
    fn lexer_errors_are_not_repeated_by_the_parser() {
        let (module, errs) =
            parse("fn a() { let x = 1 $ 2; let y# = 3; }\nfn b() { print_str(\"abc); }");
        assert_eq!(
            errs,
            vec![
                "unknown character `$`",
                "unknown character `#`",
                "unterminated string literal"
            ]
        );
        assert_eq!(module.items.len(), 2);
        assert_eq!(
            errors("fn a() { /* unclosed"),
            vec!["unterminated block comment"]
        );
    }

    #[test]
    fn diagnostics_are_in_source_order() {
        let errs = errors("fn a() { let x = ; }\nfn b() { let y = 5u16; }");
        assert_eq!(
            errs,
            vec![
                "expected an expression, found `;`",
                "invalid suffix `u16` for an integer literal"
            ]
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        for open in ["(", "{", "[", "-", "!", "if x {"] {
            let text = format!("fn f() {{ let x = {}1; }}", open.repeat(20_000));
            let errs = errors(&text);
            assert!(
                errs.iter().any(|e| e == "expression nested too deeply"),
                "{open}: {errs:?}"
            );
        }
        let text = format!("fn f() {{ let x = f<{}1(x); }}", "g<".repeat(20_000));
        let _ = errors(&text);
        for chain in ["(x)", ".x", " as i64", "[0]"] {
            let text = format!("fn f() {{ let x = y{}; }}", chain.repeat(20_000));
            let errs = errors(&text);
            assert!(
                errs.iter().any(|e| e == "expression nested too deeply"),
                "{chain}: {errs:?}"
            );
        }
        for chain in ["1 + ", "2 * ", "x & ", "1 + 2 * "] {
            let text = format!("fn f() {{ let x = y{}1; }}", chain.repeat(60_000));
            assert_eq!(errors(&text), ["expression too long"], "{chain}");
        }
    }

    #[test]
    fn long_flat_chains_are_not_nesting() {
        for chain in ["1 + ", "1 * 2 - ", "x | ", "(1 + 2) << "] {
            let text = format!("fn f() {{ let x = {}1; }}", chain.repeat(10_000));
            assert_eq!(errors(&text), Vec::<String>::new(), "{chain}");
        }
        // Nesting still counts inside a chain: each parenthesized operand is
        // one level deeper than the chain.
        let text = format!(
            "fn f() {{ let x = 1 + {}1{}; }}",
            "(1 + ".repeat(MAX_DEPTH as usize),
            ")".repeat(MAX_DEPTH as usize)
        );
        assert_eq!(errors(&text), ["expression nested too deeply"]);
        // The tree depth limit counts nesting levels and chain operators.
        let within = MAX_EXPR_DEPTH as usize - 10;
        let text = format!("fn f() {{ let x = {}1; }}", "1 + ".repeat(within));
        assert_eq!(errors(&text), Vec::<String>::new());
        let text = format!("fn f() {{ let x = {}1; }}", "1 + ".repeat(within + 10));
        assert_eq!(errors(&text), ["expression too long"]);
    }

    #[test]
    fn fallback_limit_fits_a_test_thread_stack() {
        // The caller's-stack fallback, run on this (2 MiB) test thread.
        let mut texts: Vec<String> = ["(", "{", "if x {", "f<(", "-", "[", "a + "]
            .iter()
            .map(|open| format!("fn f() {{ let x = {}1; }}", open.repeat(1000)))
            .collect();
        texts.push(format!("fn f() {{ let x: {}i64 = 1; }}", "[".repeat(1000)));
        texts.push(format!("fn f() {{ let x = y{}; }}", ".b(1)".repeat(1000)));
        for text in texts {
            let mut diags = Diagnostics::default();
            parse_here("t", FileId(0), &text, &mut diags, Limits::FALLBACK);
            let too_deep = diags.list.iter().any(|d| {
                d.message == "expression nested too deeply" || d.message == "expression too long"
            });
            assert!(too_deep, "{}", &text[..40]);
        }
    }

    #[test]
    fn speculation_stays_linear() {
        // Each `(a<` would be re-tried at every level without memoization.
        let text = format!("fn f() {{ let x = {}1; }}", "(a<".repeat(200));
        let start = std::time::Instant::now();
        let _ = errors(&text);
        assert!(start.elapsed().as_secs() < 5);
    }
}
