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
