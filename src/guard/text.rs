//! Strings a file supplied, made fit for a terminal: every control character (C0, DEL, C1) and
//! every bidirectional-override character is escaped as `\u{..}`, so a model name cannot move the
//! cursor, clear the screen or paint a fake "OK" line; and a quoted string is cut to a few dozen
//! characters, so a file cannot flood a message.

/// How many characters of a file-supplied string a message quotes.
pub const QUOTE_CHARS: usize = 40;

/// The longest error message printed whole (a backstop: every part is short already).
pub const MESSAGE_CHARS: usize = 1000;

/// Whether a terminal or page must show `c` escaped: a control character (C0, DEL, C1) or a
/// bidirectional override.
pub fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

/// `s` with control and bidi characters escaped, cut to `max` characters (then ending in `…`).
pub fn sanitize(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        if needs_escape(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A file-supplied string as a message quotes it: sanitised, at most [`QUOTE_CHARS`] characters,
/// in double quotes.
pub fn quote(s: &str) -> String {
    format!("\"{}\"", sanitize(s, QUOTE_CHARS))
}

/// A parser's message about a file, made safe: sanitised, every `` `…` `` or `"…"` span in it (the
/// parsers quote the file's own keys and strings that way) cut to [`QUOTE_CHARS`] characters, and
/// the whole to [`MESSAGE_CHARS`].
pub fn parser_message(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let q = rest[open..].chars().next().expect("found a quote");
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        match after.find(q) {
            Some(close) => {
                out.push_str(&sanitize(&after[..close], QUOTE_CHARS));
                out.push(q);
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&sanitize(after, QUOTE_CHARS));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    sanitize(&out, MESSAGE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_cuts() {
        assert_eq!(sanitize("ok\u{1b}[2J\u{7}\n", 40), "ok\\u{1b}[2J\\u{7}\\u{a}");
        assert_eq!(sanitize("a\u{202e}b", 40), "a\\u{202e}b");
        assert_eq!(sanitize("abcdef", 3), "abc…");
        assert_eq!(quote(&"x".repeat(100)).chars().count(), QUOTE_CHARS + 3);
        let m = parser_message(&format!("unknown field `{}`, expected `name`", "k".repeat(500)));
        assert!(m.starts_with("unknown field `kkk") && m.ends_with("…`, expected `name`"), "{m}");
        assert!(!parser_message("bad \"\u{1b}]0;x\u{7}\" here").contains('\u{1b}'));
    }
}

/// A number as people write it: the shortest decimal of at most 15 significant digits that lies
/// within a few units in the last place of `x` (`0.1175`, not the `0.11750000000000001` that a
/// grid's arithmetic leaves), else Rust's shortest round-trip form. Parsing the text gives `x` or
/// a double within 4 ulps of it, which every output match accepts as the same value.
pub fn number(x: f64) -> String {
    tidy(x).to_string()
}

/// The value [`number`] prints: `x` rounded to 15 significant digits when that moves it by at
/// most 4 ulps, else `x`.
pub fn tidy(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let Ok(r) = format!("{x:.14e}").parse::<f64>() else { return x };
    let ulps = (r.to_bits() as i64 - x.to_bits() as i64).unsigned_abs();
    if r.signum() == x.signum() && ulps <= 4 {
        r
    } else {
        x
    }
}

#[cfg(test)]
mod number_tests {
    use super::*;

    #[test]
    fn grid_round_off_prints_as_written_and_true_digits_are_kept() {
        assert_eq!(number(0.11750000000000001), "0.1175");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(0.1175), "0.1175");
        assert_eq!(number(-2.0), "-2");
        assert_eq!(number(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(tidy(0.11750000000000001), 0.1175);
        // A value whose 16th and 17th digits are not round-off keeps them.
        assert_eq!(number(0.1234567890123456), "0.1234567890123456");
        assert_eq!(number(0.0), "0");
        assert!(number(f64::NAN) == "NaN");
    }
}
