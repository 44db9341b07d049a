//! The Pare lexer: source text to a flat list of [`Token`]s.
//!
//! The lexical structure is the one of `docs/LANGUAGE.md`: keywords,
//! identifiers, integer literals (decimal, `0x` hexadecimal, `0b` binary, `_`
//! separators, optional `i64`/`i32`/`u8` suffix), character and string
//! literals with escapes, `//` and nested `/* */` comments, and punctuation
//! (longest match: `<<=` before `<<` before `<=` before `<`).
//!
//! Invariants:
//! - The result always ends with exactly one [`TokenKind::Eof`] token, whose
//!   span is the empty span at the end of the text.
//! - Every token span lies within the text and on `char` boundaries; spans
//!   are in increasing order and do not overlap.
//! - Lexing never stops at an error: each problem (unterminated literal or
//!   comment, bad escape, unknown character, literal too large, bad suffix)
//!   becomes a [`Diagnostic`] and the lexer goes on with a best-effort token
//!   (a literal with value 0, or [`TokenKind::Error`] for text that is no
//!   token), so the parser still sees the rest.

use crate::source::{Diagnostic, Diagnostics, FileId, Span};

/// One token: its kind (with the literal's value, already unescaped) and span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Ident(String),
    /// Integer literal: its value (64 bits, not yet wrapped to a type) and suffix.
    Int {
        value: u64,
        suffix: Option<String>,
    },
    /// Character literal: one byte.
    Char(u8),
    /// String literal: the unescaped bytes.
    Str(Vec<u8>),

    // Keywords.
    Fn,
    Pub,
    Extern,
    Struct,
    Global,
    Import,
    Let,
    Mut,
    If,
    Else,
    While,
    For,
    In,
    Break,
    Continue,
    Return,
    New,
    As,
    True,
    False,
    Null,
    Const,

    // Punctuation.
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Semi,
    Colon,
    ColonColon,
    Dot,
    DotDot,
    Arrow,
    Eq,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    PercentEq,
    AmpEq,
    PipeEq,
    CaretEq,
    ShlEq,
    ShrEq,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Amp,
    Pipe,
    Caret,
    Shl,
    Shr,
    Bang,
    EqEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    AndAnd,
    OrOr,

    /// Text that is no token (an unknown character, or an unterminated
    /// string or block comment running to the end); already reported by
    /// the lexer, so the parser fails on it without a second message.
    Error,

    /// End of input.
    Eof,
}

impl TokenKind {
    /// How the token is named in diagnostics: "`;`", "identifier `x`", "end of file".
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Ident(name) => format!("identifier `{name}`"),
            TokenKind::Int { .. } => "integer literal".to_string(),
            TokenKind::Char(_) => "character literal".to_string(),
            TokenKind::Str(_) => "string literal".to_string(),
            TokenKind::Eof => "end of file".to_string(),
            TokenKind::Error => "invalid token".to_string(),
            other => match other.keyword_or_punct_text() {
                Some(text) => format!("`{text}`"),
                None => "token".to_string(),
            },
        }
    }

    /// The source text of a keyword or punctuation token; `None` for
    /// identifiers, literals and end of file.
    pub fn keyword_or_punct_text(&self) -> Option<&'static str> {
        use TokenKind::*;
        let text = match self {
            Fn => "fn",
            Pub => "pub",
            Extern => "extern",
            Struct => "struct",
            Global => "global",
            Import => "import",
            Let => "let",
            Mut => "mut",
            If => "if",
            Else => "else",
            While => "while",
            For => "for",
            In => "in",
            Break => "break",
            Continue => "continue",
            Return => "return",
            New => "new",
            As => "as",
            True => "true",
            False => "false",
            Null => "null",
            Const => "const",
            LParen => "(",
            RParen => ")",
            LBrace => "{",
            RBrace => "}",
            LBracket => "[",
            RBracket => "]",
            Comma => ",",
            Semi => ";",
            Colon => ":",
            ColonColon => "::",
            Dot => ".",
            DotDot => "..",
            Arrow => "->",
            Eq => "=",
            PlusEq => "+=",
            MinusEq => "-=",
            StarEq => "*=",
            SlashEq => "/=",
            PercentEq => "%=",
            AmpEq => "&=",
            PipeEq => "|=",
            CaretEq => "^=",
            ShlEq => "<<=",
            ShrEq => ">>=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Amp => "&",
            Pipe => "|",
            Caret => "^",
            Shl => "<<",
            Shr => ">>",
            Bang => "!",
            EqEq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            AndAnd => "&&",
            OrOr => "||",
            Ident(_) | Int { .. } | Char(_) | Str(_) | Error | Eof => return None,
        };
        Some(text)
    }
}

/// Whether `word` is a keyword (and so not an identifier).
pub fn is_keyword(word: &str) -> bool {
    keyword(word).is_some()
}

/// The keyword spelled `word`, if it is one.
fn keyword(word: &str) -> Option<TokenKind> {
    use TokenKind::*;
    let kind = match word {
        "fn" => Fn,
        "pub" => Pub,
        "extern" => Extern,
        "struct" => Struct,
        "global" => Global,
        "import" => Import,
        "let" => Let,
        "mut" => Mut,
        "if" => If,
        "else" => Else,
        "while" => While,
        "for" => For,
        "in" => In,
        "break" => Break,
        "continue" => Continue,
        "return" => Return,
        "new" => New,
        "as" => As,
        "true" => True,
        "false" => False,
        "null" => Null,
        "const" => Const,
        _ => return None,
    };
    Some(kind)
}

/// Punctuation, longest spellings first so that the first match is the longest.
const PUNCTUATION: &[(&str, TokenKind)] = &[
    ("<<=", TokenKind::ShlEq),
    (">>=", TokenKind::ShrEq),
    ("::", TokenKind::ColonColon),
    ("..", TokenKind::DotDot),
    ("->", TokenKind::Arrow),
    ("+=", TokenKind::PlusEq),
    ("-=", TokenKind::MinusEq),
    ("*=", TokenKind::StarEq),
    ("/=", TokenKind::SlashEq),
    ("%=", TokenKind::PercentEq),
    ("&=", TokenKind::AmpEq),
    ("|=", TokenKind::PipeEq),
    ("^=", TokenKind::CaretEq),
    ("<<", TokenKind::Shl),
    (">>", TokenKind::Shr),
    ("==", TokenKind::EqEq),
    ("!=", TokenKind::Ne),
    ("<=", TokenKind::Le),
    (">=", TokenKind::Ge),
    ("&&", TokenKind::AndAnd),
    ("||", TokenKind::OrOr),
    ("(", TokenKind::LParen),
    (")", TokenKind::RParen),
    ("{", TokenKind::LBrace),
    ("}", TokenKind::RBrace),
    ("[", TokenKind::LBracket),
    ("]", TokenKind::RBracket),
    (",", TokenKind::Comma),
    (";", TokenKind::Semi),
    (":", TokenKind::Colon),
    (".", TokenKind::Dot),
    ("=", TokenKind::Eq),
    ("+", TokenKind::Plus),
    ("-", TokenKind::Minus),
    ("*", TokenKind::Star),
    ("/", TokenKind::Slash),
    ("%", TokenKind::Percent),
    ("&", TokenKind::Amp),
    ("|", TokenKind::Pipe),
    ("^", TokenKind::Caret),
    ("!", TokenKind::Bang),
    ("<", TokenKind::Lt),
    (">", TokenKind::Gt),
];

/// Lexes `text` (the contents of `file`) into tokens ending with [`TokenKind::Eof`].
pub fn lex(file: FileId, text: &str, diags: &mut Diagnostics) -> Vec<Token> {
    let mut lexer = Lexer {
        file,
        text,
        bytes: text.as_bytes(),
        pos: 0,
        tokens: Vec::new(),
        diags,
    };
    lexer.run();
    lexer.tokens
}

struct Lexer<'a, 'd> {
    file: FileId,
    text: &'a str,
    bytes: &'a [u8],
    /// Byte offset of the next unread character; always on a char boundary.
    pos: usize,
    tokens: Vec<Token>,
    diags: &'d mut Diagnostics,
}

impl Lexer<'_, '_> {
    fn run(&mut self) {
        // Editors may save a byte order mark; it is not part of the program.
        if self.text.starts_with('\u{feff}') {
            self.pos = '\u{feff}'.len_utf8();
        }
        loop {
            self.skip_whitespace_and_comments();
            let start = self.pos;
            let Some(c) = self.peek_byte(0) else { break };
            match c {
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.lex_word(),
                b'0'..=b'9' => self.lex_number(),
                b'\'' => self.lex_char(),
                b'"' => self.lex_string(),
                _ => {
                    if !self.lex_punctuation() {
                        self.unknown_character(start);
                    }
                }
            }
        }
        let end = self.text.len();
        self.tokens.push(Token {
            kind: TokenKind::Eof,
            span: self.span(end, end),
        });
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start, end)
    }

    fn error(
        &mut self,
        start: usize,
        end: usize,
        message: impl Into<String>,
        label: impl Into<String>,
    ) {
        let span = self.span(start, end);
        self.diags
            .push(Diagnostic::error(span, message).with_label(label));
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        let span = self.span(start, self.pos);
        self.tokens.push(Token { kind, span });
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    /// The character at `pos`, which must be on a char boundary.
    fn char_at(&self, pos: usize) -> Option<char> {
        self.text.get(pos..).and_then(|rest| rest.chars().next())
    }

    fn skip_whitespace_and_comments(&mut self) {
        loop {
            match (self.peek_byte(0), self.peek_byte(1)) {
                (Some(b' ' | b'\t' | b'\n' | b'\r'), _) => self.pos += 1,
                (Some(b'/'), Some(b'/')) => self.skip_line_comment(),
                (Some(b'/'), Some(b'*')) => self.skip_block_comment(),
                _ => return,
            }
        }
    }

    fn skip_line_comment(&mut self) {
        // A newline byte never occurs inside a multi-byte UTF-8 sequence, so
        // stopping at it keeps `pos` on a char boundary.
        while let Some(c) = self.peek_byte(0) {
            if c == b'\n' {
                return;
            }
            self.pos += 1;
        }
    }

    /// Skips a `/* ... */` comment, counting nested openers.
    fn skip_block_comment(&mut self) {
        let start = self.pos;
        self.pos += 2;
        let mut depth = 1usize;
        while depth > 0 {
            match (self.peek_byte(0), self.peek_byte(1)) {
                (None, _) => {
                    self.error(
                        start,
                        start + 2,
                        "unterminated block comment",
                        "comment starts here",
                    );
                    self.push(TokenKind::Error, start);
                    return;
                }
                (Some(b'/'), Some(b'*')) => {
                    depth += 1;
                    self.pos += 2;
                }
                (Some(b'*'), Some(b'/')) => {
                    depth -= 1;
                    self.pos += 2;
                }
                // `*` and `/` are ASCII, so skipping byte by byte cannot stop
                // inside a multi-byte character at a match.
                _ => self.pos += 1,
            }
        }
    }

    fn is_word_byte(c: u8) -> bool {
        c.is_ascii_alphanumeric() || c == b'_'
    }

    fn lex_word(&mut self) {
        let start = self.pos;
        while self.peek_byte(0).is_some_and(Self::is_word_byte) {
            self.pos += 1;
        }
        let word = &self.text[start..self.pos];
        let kind = keyword(word).unwrap_or_else(|| TokenKind::Ident(word.to_string()));
        self.push(kind, start);
    }

    /// Lexes an integer literal: digits in the literal's base, `_` separators,
    /// then an optional suffix (any identifier characters, validated here).
    fn lex_number(&mut self) {
        let start = self.pos;
        let (radix, prefix_len) = match (self.peek_byte(0), self.peek_byte(1)) {
            (Some(b'0'), Some(b'x' | b'X')) => (16, 2),
            (Some(b'0'), Some(b'b' | b'B')) => (2, 2),
            _ => (10, 0),
        };
        self.pos += prefix_len;
        let mut value: Option<u64> = Some(0);
        let mut digit_count = 0usize;
        let mut bad_digit = None;
        while let Some(c) = self.peek_byte(0) {
            let digit = match c {
                b'_' => {
                    self.pos += 1;
                    continue;
                }
                b'0'..=b'9' => u64::from(c - b'0'),
                b'a'..=b'f' if radix == 16 => u64::from(c - b'a' + 10),
                b'A'..=b'F' if radix == 16 => u64::from(c - b'A' + 10),
                _ => break,
            };
            if digit >= radix {
                // A decimal digit in a binary literal: keep going so the
                // whole literal is one token, and report it once.
                bad_digit.get_or_insert(self.pos);
            }
            digit_count += 1;
            value = value
                .and_then(|v| v.checked_mul(radix))
                .and_then(|v| v.checked_add(digit));
            self.pos += 1;
        }
        let digits_end = self.pos;
        while self.peek_byte(0).is_some_and(Self::is_word_byte) {
            self.pos += 1;
        }
        let suffix = self.check_suffix(digits_end);

        let mut value_ok = true;
        if digit_count == 0 {
            self.error(
                start,
                self.pos,
                "integer literal has no digits",
                "expected digits after the prefix",
            );
            value_ok = false;
        } else if let Some(at) = bad_digit {
            // Only binary literals can contain a digit too large for their base.
            self.error(
                at,
                at + 1,
                "invalid digit for a binary literal",
                "only `0` and `1` are binary digits",
            );
            value_ok = false;
        } else if value.is_none() {
            let span = self.span(start, self.pos);
            let diag = Diagnostic::error(span, "integer literal is too large")
                .with_label("does not fit in 64 bits")
                .with_note(
                    "the largest integer literal is 18446744073709551615 (0xffff_ffff_ffff_ffff)",
                );
            self.diags.push(diag);
            value_ok = false;
        }
        let value = if value_ok { value.unwrap_or(0) } else { 0 };
        self.push(TokenKind::Int { value, suffix }, start);
    }

    /// Validates the suffix `text[from..pos]` of an integer literal; reports
    /// anything but `i64`, `i32`, `u8`.
    fn check_suffix(&mut self, from: usize) -> Option<String> {
        if from == self.pos {
            return None;
        }
        // Separators may stand between the digits and the suffix (`1_000_i64`).
        let raw = &self.text[from..self.pos];
        let trimmed = raw.trim_start_matches('_');
        match trimmed {
            "i64" | "i32" | "u8" => Some(trimmed.to_string()),
            "" => None,
            _ => {
                let span = self.span(from, self.pos);
                let diag = Diagnostic::error(
                    span,
                    format!("invalid suffix `{trimmed}` for an integer literal"),
                )
                .with_label("invalid suffix")
                .with_note("the valid suffixes are `i64`, `i32` and `u8`");
                self.diags.push(diag);
                None
            }
        }
    }

    fn lex_char(&mut self) {
        let start = self.pos;
        self.pos += 1;
        let value = match self.peek_byte(0) {
            None | Some(b'\n') => {
                self.error(
                    start,
                    self.pos,
                    "unterminated character literal",
                    "missing closing `'`",
                );
                self.push(TokenKind::Char(0), start);
                return;
            }
            Some(b'\'') => {
                self.pos += 1;
                self.error(
                    start,
                    self.pos,
                    "empty character literal",
                    "expected one character",
                );
                self.push(TokenKind::Char(0), start);
                return;
            }
            Some(b'\\') => self.lex_escape().unwrap_or(0),
            Some(_) => self.lex_plain_char_byte(),
        };
        if self.peek_byte(0) == Some(b'\'') {
            self.pos += 1;
        } else {
            self.bad_char_literal_end(start);
        }
        self.push(TokenKind::Char(value), start);
    }

    /// Consumes one unescaped character of a character literal; a
    /// character literal is one byte, so only ASCII is allowed.
    fn lex_plain_char_byte(&mut self) -> u8 {
        let at = self.pos;
        let c = self.char_at(at).unwrap_or('\0');
        self.pos += c.len_utf8();
        if c.is_ascii() {
            c as u8
        } else {
            self.error(
                at,
                self.pos,
                "non-ASCII character in a character literal",
                "character literals are single bytes",
            );
            0
        }
    }

    /// After the character of a character literal there is no closing `'`:
    /// if one follows on the same line, the literal has too many characters
    /// (skip to it); otherwise it is unterminated.
    fn bad_char_literal_end(&mut self, start: usize) {
        let rest = &self.text[self.pos..];
        let line = rest.split('\n').next().unwrap_or("");
        match line.find('\'') {
            Some(offset) => {
                self.pos += offset + 1;
                self.error(
                    start,
                    self.pos,
                    "character literal may only contain one character",
                    "more than one character",
                );
            }
            None => self.error(
                start,
                self.pos,
                "unterminated character literal",
                "missing closing `'`",
            ),
        }
    }

    /// Lexes a string literal; an unterminated one runs to the end of the
    /// text and becomes an [`TokenKind::Error`] token.
    fn lex_string(&mut self) {
        let start = self.pos;
        self.pos += 1;
        let mut bytes = Vec::new();
        loop {
            match self.peek_byte(0) {
                None => {
                    self.error(
                        start,
                        start + 1,
                        "unterminated string literal",
                        "string starts here",
                    );
                    self.push(TokenKind::Error, start);
                    return;
                }
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    if let Some(b) = self.lex_escape() {
                        bytes.push(b);
                    }
                }
                Some(b) => {
                    // Raw bytes, including those of multi-byte characters:
                    // the literal ends at an ASCII `"`, so `pos` stays on a
                    // char boundary.
                    bytes.push(b);
                    self.pos += 1;
                }
            }
        }
        self.push(TokenKind::Str(bytes), start);
    }

    /// Lexes an escape sequence at `pos` (a `\`); returns its byte, or `None`
    /// after reporting a bad escape.
    fn lex_escape(&mut self) -> Option<u8> {
        let start = self.pos;
        self.pos += 1;
        let Some(c) = self.char_at(self.pos) else {
            self.error(
                start,
                self.pos,
                "unterminated escape sequence",
                "expected an escape after `\\`",
            );
            return None;
        };
        self.pos += c.len_utf8();
        let byte = match c {
            'n' => b'\n',
            't' => b'\t',
            'r' => b'\r',
            '0' => 0,
            '\\' => b'\\',
            '\'' => b'\'',
            '"' => b'"',
            'x' => return self.lex_hex_escape(start),
            _ => {
                let diag = Diagnostic::error(
                    self.span(start, self.pos),
                    format!("unknown escape `\\{c}`"),
                )
                .with_label("unknown escape")
                .with_note("the escapes are `\\n \\t \\r \\0 \\\\ \\' \\\"` and `\\xHH`");
                self.diags.push(diag);
                return None;
            }
        };
        Some(byte)
    }

    /// The two hex digits of a `\xHH` escape starting at `start`.
    fn lex_hex_escape(&mut self, start: usize) -> Option<u8> {
        let hi = self.peek_byte(0).and_then(|c| (c as char).to_digit(16));
        let lo = self.peek_byte(1).and_then(|c| (c as char).to_digit(16));
        match (hi, lo) {
            (Some(hi), Some(lo)) => {
                self.pos += 2;
                Some((hi * 16 + lo) as u8)
            }
            _ => {
                // Consume the hex digits that are there so they are not
                // taken as literal text.
                if hi.is_some() {
                    self.pos += 1;
                }
                self.error(
                    start,
                    self.pos,
                    "invalid `\\x` escape",
                    "expected two hexadecimal digits after `\\x`",
                );
                None
            }
        }
    }

    /// Lexes punctuation at `pos`, longest match first; false if none matches.
    fn lex_punctuation(&mut self) -> bool {
        let start = self.pos;
        let rest = &self.bytes[start..];
        for (text, kind) in PUNCTUATION {
            if rest.starts_with(text.as_bytes()) {
                self.pos += text.len();
                self.push(kind.clone(), start);
                return true;
            }
        }
        false
    }

    /// Reports one character that cannot start a token; it becomes an
    /// [`TokenKind::Error`] token.
    fn unknown_character(&mut self, start: usize) {
        let c = self.char_at(start).unwrap_or('\u{fffd}');
        self.pos += c.len_utf8().max(1);
        let diag = Diagnostic::error(
            self.span(start, self.pos),
            format!("unknown character `{}`", c.escape_debug()),
        )
        .with_label("not valid in Pare source");
        self.diags.push(diag);
        self.push(TokenKind::Error, start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> (Vec<TokenKind>, Vec<String>) {
        let mut diags = Diagnostics::default();
        let tokens = lex(FileId(0), text, &mut diags);
        let messages = diags.list.iter().map(|d| d.message.clone()).collect();
        (tokens.into_iter().map(|t| t.kind).collect(), messages)
    }

    fn int(value: u64, suffix: Option<&str>) -> TokenKind {
        TokenKind::Int {
            value,
            suffix: suffix.map(str::to_string),
        }
    }

    #[test]
    fn keywords_identifiers_and_punctuation() {
        use TokenKind::*;
        let (k, errors) = kinds("fn main_1 <<= >>= :: .. -> < << <= >> >= != == && || a.b");
        assert!(errors.is_empty());
        assert_eq!(
            k,
            vec![
                Fn,
                Ident("main_1".into()),
                ShlEq,
                ShrEq,
                ColonColon,
                DotDot,
                Arrow,
                Lt,
                Shl,
                Le,
                Shr,
                Ge,
                Ne,
                EqEq,
                AndAnd,
                OrOr,
                Ident("a".into()),
                Dot,
                Ident("b".into()),
                Eof
            ]
        );
    }

    #[test]
    fn integer_literals() {
        let (k, errors) =
            kinds("123 0xff 0b1010 1_000_000 255u8 7i32 1_i64 0..3 18446744073709551615");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            k,
            vec![
                int(123, None),
                int(255, None),
                int(10, None),
                int(1_000_000, None),
                int(255, Some("u8")),
                int(7, Some("i32")),
                int(1, Some("i64")),
                int(0, None),
                TokenKind::DotDot,
                int(3, None),
                int(u64::MAX, None),
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn integer_literal_errors() {
        let (_, errors) = kinds("18446744073709551616 12abc 0x 0b102 5u16");
        assert_eq!(
            errors,
            vec![
                "integer literal is too large",
                "invalid suffix `abc` for an integer literal",
                "integer literal has no digits",
                "invalid digit for a binary literal",
                "invalid suffix `u16` for an integer literal",
            ]
        );
    }

    #[test]
    fn char_and_string_literals() {
        let (k, errors) = kinds(r#"'a' '\n' '\x41' '\'' "hi\t\"\\\0\xff" "é""#);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            k,
            vec![
                TokenKind::Char(b'a'),
                TokenKind::Char(b'\n'),
                TokenKind::Char(0x41),
                TokenKind::Char(b'\''),
                TokenKind::Str(b"hi\t\"\\\0\xff".to_vec()),
                TokenKind::Str("é".as_bytes().to_vec()),
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn literal_errors_continue_lexing() {
        let (k, errors) = kinds("'ab' '' '\\q' \"a\\zb\\x4\" 'é' @ x");
        assert_eq!(
            errors,
            vec![
                "character literal may only contain one character",
                "empty character literal",
                "unknown escape `\\q`",
                "unknown escape `\\z`",
                "invalid `\\x` escape",
                "non-ASCII character in a character literal",
                "unknown character `@`",
            ]
        );
        assert_eq!(k[k.len() - 2], TokenKind::Ident("x".into()));
    }

    #[test]
    fn comments_nest() {
        let (k, errors) = kinds("a /* x /* y */ z */ b // c\n d");
        assert!(errors.is_empty());
        assert_eq!(
            k,
            vec![
                TokenKind::Ident("a".into()),
                TokenKind::Ident("b".into()),
                TokenKind::Ident("d".into()),
                TokenKind::Eof
            ]
        );
        let (k, errors) = kinds("a /* /* */");
        assert_eq!(errors, vec!["unterminated block comment"]);
        assert_eq!(
            k,
            vec![
                TokenKind::Ident("a".into()),
                TokenKind::Error,
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn unterminated_string() {
        let mut diags = Diagnostics::default();
        let tokens = lex(FileId(0), "x = \"abc", &mut diags);
        assert_eq!(diags.list.len(), 1);
        assert_eq!(diags.list[0].message, "unterminated string literal");
        assert_eq!(
            tokens[2],
            Token {
                kind: TokenKind::Error,
                span: Span::new(FileId(0), 4, 8)
            }
        );
        assert_eq!(
            tokens.last().map(|t| t.span),
            Some(Span::new(FileId(0), 8, 8))
        );
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let (k, errors) = kinds("\u{feff}fn");
        assert!(errors.is_empty());
        assert_eq!(k, vec![TokenKind::Fn, TokenKind::Eof]);
    }

    #[test]
    fn non_ascii_unknown_character_span() {
        let mut diags = Diagnostics::default();
        let tokens = lex(FileId(0), "a ∑ b", &mut diags);
        assert_eq!(diags.list[0].span, Span::new(FileId(0), 2, 5));
        assert_eq!(
            tokens[1],
            Token {
                kind: TokenKind::Error,
                span: Span::new(FileId(0), 2, 5)
            }
        );
        assert_eq!(tokens.len(), 4);
    }
}
