//! The table model shared by the text and markdown renderers: sections build [`Table`]s of
//! display cells; the renderers only lay them out.

/// A titled table of display cells, rendered by text and markdown alike.
#[derive(Debug, Default)]
pub struct Table {
    /// Section title.
    pub title: String,
    /// Column headers; a leading `<` marks a left-aligned column.
    pub header: Vec<&'static str>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
    /// Lines printed after the table.
    pub notes: Vec<String>,
}

/// Rows shown per table in text and markdown.
pub const TABLE_ROWS: usize = 10;

/// A fraction as a percentage with one decimal.
pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// GB/s with one decimal.
pub fn gbps(x: f64) -> String {
    format!("{x:.1} GB/s")
}

/// Rank ids joined by commas.
pub fn join(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// Bytes with a binary unit.
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
