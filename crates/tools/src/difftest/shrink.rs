//! Test-case reduction on program text.
//!
//! The shrinker knows only lines and braces. It repeatedly tries, largest
//! first, until nothing more can be removed or the attempt budget is spent:
//! 1. dropping a whole non-root module (and its `import` lines);
//! 2. deleting a brace-balanced chunk: a line that opens a block together
//!    with everything up to its matching close (functions, structs, `if`,
//!    loops, blocks), or the `else` part of an `if`, or a single line;
//! 3. unwrapping a block: deleting only its opening and closing lines;
//! 4. replacing a parenthesized expression, or the value of a `let`,
//!    assignment, `return` or `print`, by a literal (`0`, `1`, `false`) or
//!    by its inner expression.
//!
//! A candidate is kept only if it still parses and type-checks (checked in
//! process, cheaply) and the caller's predicate says the failure persists.
//! The predicate must reject programs that do not terminate (run them with a
//! time limit): deleting a loop counter's increment is a typical candidate.

use crate::gen::GeneratedProgram;

/// Limits and counters of one reduction.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShrinkStats {
    /// Candidates that type-checked and were given to the predicate.
    pub tested: usize,
    /// Candidates the predicate accepted.
    pub accepted: usize,
    /// Candidates rejected because they did not type-check.
    pub ill_typed: usize,
}

/// Whether the program parses and type-checks.
pub fn type_checks(program: &GeneratedProgram) -> bool {
    super::check_program(program).is_ok()
}

/// Reduces `program` while `still_fails` holds; `max_tests` bounds the number
/// of predicate calls. `program` itself is assumed to fail.
pub fn shrink(
    program: &GeneratedProgram,
    still_fails: &mut dyn FnMut(&GeneratedProgram) -> bool,
    max_tests: usize,
) -> (GeneratedProgram, ShrinkStats) {
    let mut shrinker = Shrinker {
        current: program.clone(),
        still_fails,
        stats: ShrinkStats::default(),
        max_tests,
    };
    loop {
        let before = shrinker.current.clone();
        shrinker.drop_modules();
        shrinker.delete_chunks();
        shrinker.delete_item_pairs();
        shrinker.unwrap_blocks();
        shrinker.simplify_expressions();
        if shrinker.current == before || shrinker.exhausted() {
            break;
        }
    }
    shrinker.drop_blank_lines();
    (shrinker.current, shrinker.stats)
}

struct Shrinker<'a> {
    current: GeneratedProgram,
    still_fails: &'a mut dyn FnMut(&GeneratedProgram) -> bool,
    stats: ShrinkStats,
    max_tests: usize,
}

impl Shrinker<'_> {
    fn exhausted(&self) -> bool {
        self.stats.tested >= self.max_tests
    }

    /// Keeps `candidate` if it type-checks and still fails.
    fn try_candidate(&mut self, candidate: GeneratedProgram) -> bool {
        if self.exhausted() || candidate == self.current {
            return false;
        }
        if !type_checks(&candidate) {
            self.stats.ill_typed += 1;
            return false;
        }
        self.stats.tested += 1;
        if (self.still_fails)(&candidate) {
            self.stats.accepted += 1;
            self.current = candidate;
            true
        } else {
            false
        }
    }

    fn with_module_lines(&self, module: usize, lines: Vec<String>) -> GeneratedProgram {
        let mut p = self.current.clone();
        p.modules[module].1 = join_lines(&lines);
        p
    }

    fn lines(&self, module: usize) -> Vec<String> {
        self.current.modules[module]
            .1
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn drop_modules(&mut self) {
        let mut m = self.current.modules.len();
        while m > 1 {
            m -= 1;
            if m >= self.current.modules.len() {
                continue;
            }
            let name = self.current.modules[m].0.clone();
            let mut p = self.current.clone();
            p.modules.remove(m);
            let import = format!("import {name};");
            for (_, text) in &mut p.modules {
                *text = text
                    .lines()
                    .filter(|l| l.trim() != import)
                    .map(|l| format!("{l}\n"))
                    .collect();
            }
            self.try_candidate(p);
        }
    }

    /// Deletes chunks, biggest first; restarts the scan after each success.
    fn delete_chunks(&mut self) {
        for module in 0..self.current.modules.len() {
            loop {
                let lines = self.lines(module);
                let mut chunks = chunks(&lines);
                chunks.sort_by_key(|c| std::cmp::Reverse(c.end - c.start));
                let mut progress = false;
                for chunk in chunks {
                    if self.exhausted() {
                        return;
                    }
                    let candidate = self.with_module_lines(module, chunk.apply(&lines));
                    if self.try_candidate(candidate) {
                        progress = true;
                        break;
                    }
                }
                if !progress {
                    break;
                }
            }
        }
    }

    /// Deletes two top-level items at once (in any modules): mutually
    /// recursive functions can only go together.
    fn delete_item_pairs(&mut self) {
        let items: Vec<(usize, Chunk)> = (0..self.current.modules.len())
            .flat_map(|m| {
                let lines = self.lines(m);
                chunks(&lines)
                    .into_iter()
                    .filter(|c| lines[c.start].starts_with(|ch: char| !ch.is_whitespace()))
                    .map(move |c| (m, c))
                    .collect::<Vec<_>>()
            })
            .collect();
        for (i, &(ma, a)) in items.iter().enumerate() {
            for &(mb, b) in &items[i + 1..] {
                if self.exhausted() {
                    return;
                }
                let mut candidate = self.current.clone();
                if ma == mb {
                    let lines = self.lines(ma);
                    let mut out: Vec<String> = Vec::new();
                    for (n, line) in lines.iter().enumerate() {
                        let inside = |c: &Chunk| n >= c.start && n < c.end;
                        if !inside(&a) && !inside(&b) {
                            out.push(line.clone());
                        }
                    }
                    candidate.modules[ma].1 = join_lines(&out);
                } else {
                    candidate.modules[ma].1 = join_lines(&a.apply(&self.lines(ma)));
                    candidate.modules[mb].1 = join_lines(&b.apply(&self.lines(mb)));
                }
                if self.try_candidate(candidate) {
                    // The item list is stale now; the outer loop comes back.
                    return;
                }
            }
        }
    }

    /// Removes blank and comment-only lines (one final check).
    fn drop_blank_lines(&mut self) {
        let mut candidate = self.current.clone();
        for (_, text) in &mut candidate.modules {
            let kept: Vec<String> = text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//"))
                .map(str::to_string)
                .collect();
            *text = join_lines(&kept);
        }
        self.max_tests = self.max_tests.max(self.stats.tested + 1);
        self.try_candidate(candidate);
    }

    /// Removes a block's opening and closing lines, keeping its body.
    fn unwrap_blocks(&mut self) {
        for module in 0..self.current.modules.len() {
            let mut i = 0;
            loop {
                let lines = self.lines(module);
                if i >= lines.len() || self.exhausted() {
                    break;
                }
                let trimmed = lines[i].trim();
                let opens = trimmed.ends_with('{')
                    && !trimmed.starts_with('}')
                    && !trimmed.starts_with("fn ")
                    && !trimmed.starts_with("pub ")
                    && !trimmed.starts_with("struct ");
                if opens {
                    if let Some(end) = matching_close(&lines, i) {
                        if lines[end].trim() == "}" {
                            let mut out = lines.clone();
                            out.remove(end);
                            out.remove(i);
                            if self.try_candidate(self.with_module_lines(module, out)) {
                                continue;
                            }
                        }
                    }
                }
                i += 1;
            }
        }
    }

    /// Replaces expressions by literals or by their inner expression.
    fn simplify_expressions(&mut self) {
        for module in 0..self.current.modules.len() {
            let mut i = 0;
            loop {
                let lines = self.lines(module);
                if i >= lines.len() || self.exhausted() {
                    break;
                }
                let mut changed = false;
                for replacement in line_simplifications(&lines[i]) {
                    let mut out = lines.clone();
                    out[i] = replacement;
                    if self.try_candidate(self.with_module_lines(module, out)) {
                        changed = true;
                        break;
                    }
                }
                if !changed {
                    i += 1;
                }
            }
        }
    }
}

fn join_lines(lines: &[String]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// A deletable range of lines, `start..end`; `keep_close` keeps a `}` in
/// place of the first line (for an `else` part: `} else {` ... `}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chunk {
    start: usize,
    end: usize,
    keep_close: bool,
}

impl Chunk {
    fn apply(&self, lines: &[String]) -> Vec<String> {
        let mut out: Vec<String> = lines[..self.start].to_vec();
        if self.keep_close {
            let indent: String = lines[self.start]
                .chars()
                .take_while(|c| c.is_whitespace())
                .collect();
            out.push(format!("{indent}}}"));
        }
        out.extend_from_slice(&lines[self.end..]);
        out
    }
}

/// Every deletable chunk of `lines`.
fn chunks(lines: &[String]) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t.is_empty() || t == "}" || t.starts_with("//") {
            continue;
        }
        if t.ends_with('{') {
            if let Some(end) = statement_end(lines, i) {
                out.push(Chunk {
                    start: i,
                    end: end + 1,
                    keep_close: t.starts_with('}'),
                });
            }
        } else if !t.starts_with('}') && brace_delta(t) == 0 {
            out.push(Chunk {
                start: i,
                end: i + 1,
                keep_close: false,
            });
        }
    }
    out
}

/// Net `{` minus `}` of a line, ignoring string and character literals.
fn brace_delta(line: &str) -> i64 {
    let mut depth = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in line.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// The line that closes the block opened at the end of line `open`.
fn matching_close(lines: &[String], open: usize) -> Option<usize> {
    // A line like `} else {` closes one block before opening the next: count
    // only what it opens.
    let first = lines[open].trim();
    let mut depth = if first.starts_with('}') {
        brace_delta(first) + 1
    } else {
        brace_delta(first)
    };
    if depth <= 0 {
        return None;
    }
    for (j, line) in lines.iter().enumerate().skip(open + 1) {
        let t = line.trim();
        // A `} else {` line closes this block even though it nets zero.
        if t.starts_with('}') && depth == 1 {
            return Some(j);
        }
        depth += brace_delta(t);
        if depth <= 0 {
            return Some(j);
        }
    }
    None
}

/// The last line of the statement whose block opens at line `open`: its
/// matching close, following `} else {` continuations.
fn statement_end(lines: &[String], open: usize) -> Option<usize> {
    let mut end = matching_close(lines, open)?;
    loop {
        let t = lines[end].trim();
        if t.starts_with('}') && t.ends_with('{') {
            end = matching_close(lines, end)?;
        } else {
            return Some(end);
        }
    }
}

/// Simpler versions of one line, most aggressive first.
fn line_simplifications(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((head, value)) = statement_value(line) {
        if !is_literal(value) {
            for lit in ["0", "1", "false"] {
                out.push(format!("{head}{lit};"));
            }
        }
    }
    for (open, close) in paren_groups(line) {
        let inner = &line[open + 1..close];
        if is_literal(inner.trim()) {
            continue;
        }
        for lit in ["0", "false"] {
            out.push(format!("{}{lit}{}", &line[..open], &line[close + 1..]));
        }
        if inner.contains('(') {
            out.push(format!("{}{inner}{}", &line[..open], &line[close + 1..]));
        }
    }
    out
}

/// Splits `let x = V;`, `let x: T = V;`, `x = V;`, `x op= V;`, `return V;`
/// into the part up to and including `= ` / `return ` and `V`.
fn statement_value(line: &str) -> Option<(&str, &str)> {
    let body = line.trim_end().strip_suffix(';')?;
    let t = body.trim_start();
    if t.starts_with("return ") {
        let at = body.find("return ")? + "return ".len();
        return Some((&body[..at], &body[at..]));
    }
    let eq = body.find(" = ").or_else(|| {
        // compound assignment `x += v`
        body.find("= ")
            .filter(|&i| i > 0 && !body[..i].ends_with(['=', '!', '<', '>']))
    })?;
    let at = body[eq..].find("= ")? + eq + 2;
    let value = &body[at..];
    if value.is_empty() || value.contains('{') {
        return None;
    }
    Some((&body[..at], value))
}

fn is_literal(s: &str) -> bool {
    s == "true" || s == "false" || s.chars().all(|c| c.is_ascii_digit() || c == '-')
}

/// Byte ranges of parenthesized groups that are expressions (not call
/// argument lists), outermost first.
fn paren_groups(line: &str) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut stack = Vec::new();
    let mut groups = Vec::new();
    let mut quote = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quote = !quote,
            b'(' if !quote => stack.push(i),
            b')' if !quote => {
                if let Some(open) = stack.pop() {
                    let before = line[..open].trim_end();
                    let call = before
                        .chars()
                        .last()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '>');
                    if !call {
                        groups.push((stack.len(), open, i));
                    }
                }
            }
            _ => {}
        }
    }
    groups.sort_by_key(|&(depth, open, _)| (depth, open));
    groups.into_iter().map(|(_, o, c)| (o, c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn chunks_follow_braces() {
        let l =
            lines("fn f() {\n    if a {\n        x = 1;\n    } else {\n        x = 2;\n    }\n}");
        let c = chunks(&l);
        assert!(c.contains(&Chunk {
            start: 0,
            end: 7,
            keep_close: false
        }));
        assert!(c.contains(&Chunk {
            start: 1,
            end: 6,
            keep_close: false
        }));
        assert!(c.contains(&Chunk {
            start: 3,
            end: 6,
            keep_close: true
        }));
        let else_removed = Chunk {
            start: 3,
            end: 6,
            keep_close: true,
        }
        .apply(&l);
        assert_eq!(
            else_removed.join("\n"),
            "fn f() {\n    if a {\n        x = 1;\n    }\n}"
        );
    }

    #[test]
    fn braces_in_strings_do_not_count() {
        assert_eq!(brace_delta(r#"let s = "{";"#), 0);
        assert_eq!(brace_delta("if x { y } else {"), 1);
    }

    #[test]
    fn values_become_literals() {
        let s = line_simplifications("    let mut x: i64 = (a + b) * 3;");
        assert_eq!(s[0], "    let mut x: i64 = 0;");
        assert!(s.contains(&"    let mut x: i64 = 0 * 3;".to_string()));
        let s = line_simplifications("    x += f(y);");
        assert_eq!(s[0], "    x += 0;");
    }

    #[test]
    fn call_arguments_are_not_groups() {
        assert_eq!(paren_groups("f(a) + (b)"), vec![(7, 9)]);
    }
}
