//! What a raw shell word (as the parser returns it, quotes included) would do when the shell
//! expands it. One quote-aware scanner ([`any_live`]) sits under every check, so single quotes,
//! `$'…'`, double quotes and backslashes are understood the same way everywhere.
//!
//! `/bin/sh` is dash on Debian but bash on Fedora and macOS, so bash's expansions count:
//! `${x@P}` prompt-expands a value (which runs its `$(…)`), and arithmetic evaluates variable
//! values and array subscripts as expressions (`a[$(id)]` runs `id`).

/// Walks the live bytes of a raw word — those outside single quotes (and `$'…'`) and not
/// escaped — and stops at the first for which `hit` (given the index and whether it is inside
/// double quotes) is true.
pub fn any_live(raw: &str, mut hit: impl FnMut(&[u8], usize, bool) -> bool) -> bool {
    let b = raw.as_bytes();
    let mut i = 0;
    let mut double = false;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'\'' if !double => {
                // Literal until the closing quote.
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
            }
            b'"' => double = !double,
            b'$' if b.get(i + 1) == Some(&b'\'') && !double => {
                if hit(b, i, double) {
                    return true;
                }
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            _ if hit(b, i, double) => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Command or process substitution: `$(` (but not arithmetic `$((`), backticks, and outside
/// double quotes `<(` / `>(`.
pub fn has_substitution(raw: &str) -> bool {
    any_live(raw, |b, i, double| match b[i] {
        b'`' => true,
        b'$' => b.get(i + 1) == Some(&b'(') && b.get(i + 2) != Some(&b'('),
        b'<' | b'>' => !double && b.get(i + 1) == Some(&b'('),
        _ => false,
    })
}

/// True when a raw word has a live `$` expansion (outside single quotes).
pub fn has_expansion(raw: &str) -> bool {
    any_live(raw, |b, i, _| matches!(b[i], b'$' | b'`'))
}

/// True when a raw word has an unquoted glob character.
pub fn has_glob(raw: &str) -> bool {
    any_live(raw, |b, i, double| {
        !double && matches!(b[i], b'*' | b'?' | b'[')
    })
}

/// True when a raw word has an unquoted brace expansion (`{a,b}`, `{1..3}`), which bash turns
/// into several words (dash does not).
pub fn has_brace(raw: &str) -> bool {
    let mut open = false;
    let mut inner = false;
    any_live(raw, |b, i, double| {
        if double {
            return false;
        }
        match b[i] {
            b'{' if i == 0 || b[i - 1] != b'$' => {
                open = true;
                inner = false;
            }
            b',' if open => inner = true,
            b'.' if open && b.get(i + 1) == Some(&b'.') => inner = true,
            b'}' if open => {
                open = false;
                return inner;
            }
            _ => {}
        }
        false
    })
}

/// The first bash-only expansion in a word that can run a command or read more than it shows:
/// a `${…@X}` transformation (`@P` prompt-expands the value), `${!x}` indirection, and
/// arithmetic (`$((…))`, `((…))`) or an array subscript that names a variable — bash evaluates
/// a variable's value there as an expression, and `a[$(id)]` inside it runs `id`. Returns what
/// to call it in a refusal.
pub fn risky_expansion(raw: &str) -> Option<&'static str> {
    let mut found = None;
    any_live(raw, |b, i, _| {
        if b[i] != b'$' {
            return false;
        }
        match b.get(i + 1) {
            Some(b'{') => {
                let body = braced(b, i + 1);
                if body.first() == Some(&b'!') {
                    found = Some("${!…} indirection");
                } else if let Some(at) = body.iter().position(|c| *c == b'@') {
                    // `${@}`, `${x[@]}` are fine; `${x@P}` is a transformation.
                    if at > 0 && body[at - 1] != b'[' && body.get(at + 1).is_some() {
                        found = Some("a ${…@…} transformation");
                    }
                } else if subscript_names_something(body) {
                    found = Some("an array subscript with a variable or a command in it");
                }
            }
            Some(b'(')
                if b.get(i + 2) == Some(&b'(') && !literal_arithmetic(arith_body(b, i + 3)) =>
            {
                found = Some("arithmetic on variables");
            }
            // bash's old `$[ … ]` arithmetic.
            Some(b'[') => {
                let end = b[i + 2..]
                    .iter()
                    .position(|c| *c == b']')
                    .map_or(b.len(), |p| i + 2 + p);
                if !literal_arithmetic(&b[(i + 2).min(end)..end]) {
                    found = Some("arithmetic on variables");
                }
            }
            _ => {}
        }
        found.is_some()
    });
    found
}

/// True when an arithmetic command `(( … ))` or `for (( … ))` part uses anything but numbers
/// and operators.
pub fn risky_arithmetic(expr: &str) -> bool {
    !literal_arithmetic(expr.as_bytes())
}

/// True when a word (quotes removed) looks like `name[…$(…)…]` or holds a backtick inside
/// brackets: bash evaluates such a subscript (in `printf -v`, `read`, `unset`, `test -v`,
/// `declare`) and runs what is inside, even though the word was quoted.
pub fn subscript_with_command(literal: &str) -> bool {
    literal.find('[').is_some_and(|open| {
        let inner = &literal[open..];
        inner.contains("$(") || inner.contains('`') || inner.contains("${")
    })
}

/// The text between `{` at `open` and its matching `}`.
fn braced(b: &[u8], open: usize) -> &[u8] {
    let mut depth = 0;
    for (j, c) in b.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return &b[open + 1..j];
                }
            }
            _ => {}
        }
    }
    &b[(open + 1).min(b.len())..]
}

/// The text of `$((…))` from `start` (after the two parentheses) to the matching `))`.
fn arith_body(b: &[u8], start: usize) -> &[u8] {
    let mut depth = 0i32;
    let mut j = start;
    while j < b.len() {
        match b[j] {
            b'(' => depth += 1,
            b')' if depth > 0 => depth -= 1,
            b')' => return &b[start..j],
            _ => {}
        }
        j += 1;
    }
    &b[start.min(b.len())..]
}

/// Numbers, operators, spaces and parentheses only.
fn literal_arithmetic(body: &[u8]) -> bool {
    body.iter()
        .all(|c| c.is_ascii_digit() || c.is_ascii_whitespace() || b"+-*/%()<>=!&|^~?:,".contains(c))
}

/// `name[subscript]` inside `${…}` where the subscript is not a plain number, `@` or `*`.
fn subscript_names_something(body: &[u8]) -> bool {
    let Some(open) = body.iter().position(|c| *c == b'[') else {
        return false;
    };
    let close = body.iter().rposition(|c| *c == b']').unwrap_or(body.len());
    let inner = &body[open + 1..close.max(open + 1)];
    !(inner == b"@" || inner == b"*" || inner.iter().all(u8::is_ascii_digit))
}

/// The word with its quotes and escapes removed.
pub fn literal(raw: &str) -> String {
    brush_parser::unquote_str(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_scanner_understands_quotes() {
        assert!(has_substitution("$(id)"));
        assert!(has_substitution("\"$(id)\""));
        assert!(has_substitution("`id`"));
        assert!(has_substitution("${x:-$(id)}"));
        assert!(!has_substitution("'$(id)'"));
        assert!(!has_substitution("$((1 + 2))"));
        assert!(has_substitution("$((1 + $(id)))"));
        assert!(!has_substitution("\\$(id)"));
        assert!(!has_substitution("$'\\x24(id)'"));
    }

    #[test]
    fn braces_and_globs() {
        assert!(has_brace("{.git,x}/config"));
        assert!(has_brace(".g{i,}t/config"));
        assert!(has_brace("a{1..3}"));
        assert!(!has_brace("'{a,b}'"));
        assert!(!has_brace("\"{a,b}\""));
        assert!(!has_brace("${x}"));
        assert!(!has_brace("{}"));
        assert!(has_glob(".gi?/config"));
        assert!(!has_glob("'*.txt'"));
    }

    #[test]
    fn bash_only_expansions() {
        assert!(risky_expansion("${x@P}").is_some());
        assert!(risky_expansion("\"${x@Q}\"").is_some());
        assert!(risky_expansion("${!prefix}").is_some());
        assert!(risky_expansion("$((x + 1))").is_some());
        assert!(risky_expansion("$(($i))").is_some());
        assert!(risky_expansion("${a[$i]}").is_some());
        assert!(risky_expansion("${a[i]}").is_some());
        assert!(risky_expansion("$[x + 1]").is_some());
        assert!(risky_expansion("$[1 + 2]").is_none());
        assert!(risky_expansion("$((1 + 2 * (3 - 4)))").is_none());
        assert!(risky_expansion("${a[@]}").is_none());
        assert!(risky_expansion("${a[0]}").is_none());
        assert!(risky_expansion("${x:-default}").is_none());
        assert!(risky_expansion("'${x@P}'").is_none());
        assert!(risky_expansion("$@").is_none());
        assert!(risky_expansion("${@}").is_none());
        assert!(risky_arithmetic("i++"));
        assert!(!risky_arithmetic("1 + 2"));
        assert!(subscript_with_command("a[$(id)]"));
        assert!(subscript_with_command("x[`id`]"));
        assert!(!subscript_with_command("[abc]"));
        assert!(!subscript_with_command("$(id)"));
    }
}
