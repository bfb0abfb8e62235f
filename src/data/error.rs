//! The one error of the data layer: records that cannot give the model's statistic.

use std::fmt;

/// Where a record came from: a line of a CSV file (1-based, the header being line 1) or an
/// element of an array a binding passed (numbered as that language numbers them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A line of the file.
    Line(u64),
    /// An element of an array.
    Element(usize),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Line(l) => write!(f, "line {l}"),
            Place::Element(i) => write!(f, "element {i}"),
        }
    }
}

/// Records that cannot be read or give no statistic of the model: one sentence naming the source,
/// the record's place and the column where they apply. Always the caller's input (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}{}{}: {problem}", PlacePart(.place), ColumnPart(.column))]
pub struct DataError {
    /// The file (`<stdin>` for standard input) or the binding's argument.
    pub origin: String,
    /// The record concerned, where one is.
    pub place: Option<Place>,
    /// The column concerned, where one is.
    pub column: Option<String>,
    /// What is wrong and what was expected.
    pub problem: String,
}

impl DataError {
    /// An error about `origin`, at `place` in `column` where they apply.
    pub(crate) fn new(origin: &str, place: Option<Place>, column: Option<&str>, problem: impl Into<String>) -> Self {
        DataError {
            origin: origin.to_string(),
            place,
            column: column.map(|c| crate::guard::text::sanitize(c, crate::guard::text::QUOTE_CHARS)),
            problem: problem.into(),
        }
    }

    /// Always true: records are the caller's input.
    pub fn is_input(&self) -> bool {
        true
    }
}

struct PlacePart<'a>(&'a Option<Place>);
impl fmt::Display for PlacePart<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(p) => write!(f, ", {p}"),
            None => Ok(()),
        }
    }
}

struct ColumnPart<'a>(&'a Option<String>);
impl fmt::Display for ColumnPart<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(c) => write!(f, ", column \"{c}\""),
            None => Ok(()),
        }
    }
}
