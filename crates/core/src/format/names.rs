//! Names fitted to a width: a kernel signature cut in its middle or folded at its long
//! groups, a sentence that cuts its names before its facts.

use super::{fit, fit_end, width};

/// `s` cut to `w` columns in its middle, keeping its start and end (a kernel signature's
/// name and its last arguments): `void at::native::…(float*, int)`.
pub fn fit_middle(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    if w < 3 {
        return fit(s, w);
    }
    let head = fit(s, w.div_ceil(2));
    let tail = fit_end(s, w - width(&head) + 1);
    format!("{}{tail}", head.trim_end_matches('…'))
}

/// `s` in at most `w` columns, folding before cutting: a signature's long template arguments
/// and parameter lists become `<…>` and `(…)` (`void at::native::kernel<…>(…)`), and what is
/// still too wide is cut in its middle. Short groups (`enumerate(DataLoader)`) are kept.
pub fn fit_name(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    let folded = fold_groups(s, 12);
    if width(&folded) <= w || w < 6 {
        return fit_middle(&folded, w);
    }
    // The start names the thing (kernel family, module); the end tells variants apart.
    let head = fit(&folded, (w * 2).div_ceil(3));
    let tail = fit_end(&folded, w - width(&head) + 1);
    format!("{}{tail}", head.trim_end_matches('…'))
}

/// The longest value echoed whole in a message, in columns.
pub const MAX_ECHO: usize = 60;

/// A value quoted in a message (a cell, a colour, an option's value): in backticks, made
/// [`super::printable`], and cut to [`MAX_ECHO`] columns with its size when longer — an
/// echo never makes a message longer than the value's name deserves.
pub fn echo(v: &str) -> String {
    let p = super::printable(v);
    if width(&p) <= MAX_ECHO {
        return format!("`{p}`");
    }
    format!("`{}` ({} bytes)", fit_middle(&p, MAX_ECHO), v.len())
}

/// A sentence in at most `w` columns that keeps what it states: its longest words (kernel
/// names, signatures) are cut in their middle, down to 12 columns each, before the
/// sentence's end is cut (a status line: "rank 3 is last at ncclDev…RING_LL in step 13").
pub fn fit_sentence(s: &str, w: usize) -> String {
    let mut words: Vec<String> = s.split(' ').map(str::to_string).collect();
    let total =
        |v: &[String]| v.iter().map(|x| width(x)).sum::<usize>() + v.len().saturating_sub(1);
    while total(&words) > w {
        let Some((k, longest)) = words
            .iter()
            .enumerate()
            .map(|(k, x)| (k, width(x)))
            .max_by_key(|&(k, n)| (n, std::cmp::Reverse(k)))
        else {
            break;
        };
        if longest <= 12 {
            break;
        }
        let over = total(&words) - w;
        let cut = fit_name(&words[k], longest.saturating_sub(over).max(12));
        if width(&cut) >= longest {
            break;
        }
        words[k] = cut;
    }
    fit(&words.join(" "), w)
}

/// `s` with every outermost `<…>` or `(…)` group wider than `keep` columns replaced by `…`;
/// unchanged when its brackets do not balance.
fn fold_groups(s: &str, keep: usize) -> String {
    let mut out = String::with_capacity(s.len());
    let mut stack: Vec<char> = Vec::new();
    let mut inner = String::new();
    for c in s.chars() {
        match c {
            '<' | '(' => stack.push(if c == '<' { '>' } else { ')' }),
            '>' | ')' if stack.last() == Some(&c) => {
                stack.pop();
                if stack.is_empty() {
                    out.push_str(if width(&inner) > keep { "…" } else { &inner });
                    out.push(c);
                    inner.clear();
                    continue;
                }
            }
            '>' | ')' if !stack.is_empty() => return s.to_string(),
            _ => {}
        }
        if stack.is_empty() || (stack.len() == 1 && matches!(c, '<' | '(')) {
            out.push(c);
        } else {
            inner.push(c);
        }
    }
    if stack.is_empty() { out } else { s.to_string() }
}
