//! The one result cap. Every tool result passes through [`cap`] on its way to any caller, so a
//! single oversized result can never evict the rest of a small model's context.

/// The smallest cap that still leaves room for a useful head, tail and steering text.
pub const MIN_MAX_TOOL_CHARS: usize = 500;

/// Caps `text` at `max_chars` characters (Unicode scalar values, not bytes).
///
/// Over the cap, the head (about three quarters of the room) and the tail are kept, cut at line
/// boundaries where one is near, with a marker counting what was left out in the middle, and
/// the result ends with steering text naming the total size and `how_to_get_rest` — the call
/// that fetches what was dropped. The returned text never exceeds `max_chars`.
///
/// ```
/// use slmcode_aci::output::cap;
///
/// let long: String = (0..1000).map(|i| format!("line {i}\n")).collect();
/// let out = cap(&long, 600, "Narrow with glob=.");
/// assert!(out.chars().count() <= 600);
/// assert!(out.starts_with("line 0\n"));
/// assert!(out.ends_with("Narrow with glob=.]"));
/// assert_eq!(cap("short", 600, "unused"), "short");
/// ```
pub fn cap(text: &str, max_chars: usize, how_to_get_rest: &str) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let hint = if how_to_get_rest.is_empty() {
        String::new()
    } else {
        format!(" {how_to_get_rest}")
    };
    let footer_for = |head: usize, tail: usize| {
        format!(
            "\n[output truncated: {total} chars in all; showing the first {head} and the last {tail}.{hint}]"
        )
    };
    let marker_for = |omitted: usize| format!("\n[… {omitted} chars omitted …]\n");
    // Size the fixed parts with the widest numbers they can hold, so the sum stays under the cap.
    let fixed = footer_for(total, total).chars().count() + marker_for(total).chars().count();
    if fixed + 2 > max_chars {
        // A cap too small for steering text: hard cut, still within the limit.
        return text.chars().take(max_chars).collect();
    }
    let room = max_chars - fixed;
    let head_room = room * 3 / 4;
    let tail_room = room - head_room;

    let head_end = char_boundary(text, head_room);
    let head_end = snap_back_to_newline(text, head_end, head_room / 4);
    let tail_start = char_boundary_from_end(text, tail_room);
    let tail_start = snap_forward_past_newline(text, tail_start, tail_room / 4).max(head_end);

    let head = &text[..head_end];
    let tail = &text[tail_start..];
    let head_chars = head.chars().count();
    let tail_chars = tail.chars().count();
    let omitted = total - head_chars - tail_chars;
    let mut out = String::with_capacity(max_chars * 4);
    out.push_str(head);
    out.push_str(&marker_for(omitted));
    out.push_str(tail);
    out.push_str(&footer_for(head_chars, tail_chars));
    out
}

/// Byte index after the first `n` chars.
fn char_boundary(text: &str, n: usize) -> usize {
    text.char_indices()
        .nth(n)
        .map(|(i, _)| i)
        .unwrap_or(text.len())
}

/// Byte index where the last `n` chars begin.
fn char_boundary_from_end(text: &str, n: usize) -> usize {
    if n == 0 {
        return text.len();
    }
    text.char_indices()
        .rev()
        .nth(n - 1)
        .map(|(i, _)| i)
        .unwrap_or(0)
}

/// Moves `end` back to just after a newline if one lies within `slack` bytes-ish, so the head
/// ends on a whole line.
fn snap_back_to_newline(text: &str, end: usize, slack: usize) -> usize {
    match text[..end].rfind('\n') {
        Some(i) if end - (i + 1) <= slack => i + 1,
        _ => end,
    }
}

/// Moves `start` forward to just after a newline if one lies within `slack`, so the tail starts
/// on a whole line.
fn snap_forward_past_newline(text: &str, start: usize, slack: usize) -> usize {
    match text[start..].find('\n') {
        Some(i) if i < slack && start + i + 1 < text.len() => start + i + 1,
        _ => start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_text_is_unchanged() {
        assert_eq!(cap("hello", 8000, "x"), "hello");
    }

    #[test]
    fn long_text_keeps_head_and_tail_and_steers() {
        let text: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let out = cap(&text, 2000, "narrow with glob=");
        assert!(out.chars().count() <= 2000);
        assert!(out.starts_with("line 0\nline 1\n"));
        assert!(out.contains("line 4999"));
        assert!(out.contains(&format!("{} chars in all", text.chars().count())));
        assert!(out.ends_with("narrow with glob=]"));
        assert!(out.contains("chars omitted"));
    }

    #[test]
    fn counts_chars_not_bytes() {
        let text = "é".repeat(3000);
        let out = cap(&text, 1000, "x");
        assert!(out.chars().count() <= 1000);
        assert!(out.contains("3000 chars in all"));
    }

    proptest! {
        #[test]
        fn never_exceeds_the_cap(text in ".{0,3000}", max in 0usize..4000) {
            let out = cap(&text, max, "hint: call again with offset=");
            prop_assert!(out.chars().count() <= max.max(text.chars().count().min(max)));
            if text.chars().count() <= max {
                prop_assert_eq!(out, text);
            }
        }

        #[test]
        fn multiline_never_exceeds(lines in proptest::collection::vec("[a-zé ]{0,80}", 0..400), max in 500usize..3000) {
            let text = lines.join("\n");
            let out = cap(&text, max, "pass a path");
            prop_assert!(out.chars().count() <= max);
        }
    }
}
