//! Named columns of a CSV file with a header row, read from a file or standard input within the
//! same cap as any CSV file a model names; each cell a number (or `true`/`false`), each error
//! naming the line and the column.

use std::io::Read;
use std::path::PathBuf;

use super::{Column, DataError, Place, Records};
use crate::guard::read::{read_text, CSV_FILE_BYTES};
use crate::guard::text::quote;

/// Where the records are: a file, or standard input (`--data -`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataSource {
    /// A CSV file.
    File(PathBuf),
    /// Standard input.
    Stdin,
}

impl DataSource {
    /// `-` is standard input, anything else a file.
    pub fn parse(text: &str) -> DataSource {
        if text == "-" {
            DataSource::Stdin
        } else {
            DataSource::File(PathBuf::from(text))
        }
    }

    /// How messages name it.
    pub fn origin(&self) -> String {
        match self {
            DataSource::File(p) => p.display().to_string(),
            DataSource::Stdin => "<stdin>".to_string(),
        }
    }

    fn text(&self) -> Result<String, DataError> {
        let origin = self.origin();
        let unreadable = |why: String| DataError::new(&origin, None, None, format!("cannot read the records: {why}"));
        match self {
            DataSource::File(p) => read_text(p, CSV_FILE_BYTES).map_err(|e| unreadable(e.to_string())),
            DataSource::Stdin => {
                let mut bytes = Vec::new();
                std::io::stdin()
                    .lock()
                    .take(CSV_FILE_BYTES + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| unreadable(e.to_string()))?;
                if bytes.len() as u64 > CSV_FILE_BYTES {
                    return Err(unreadable(format!("more than the {CSV_FILE_BYTES} bytes a CSV file may have")));
                }
                String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".to_string()))
            }
        }
    }
}

/// The columns `names` of the CSV at `source` (a header row, then one record per row; every row
/// as long as the header). A missing or repeated column, a ragged row, an empty or non-numeric
/// cell: one [`DataError`] naming the file, the line and the column.
pub fn read_csv(source: &DataSource, names: &[String]) -> Result<Records, DataError> {
    let origin = source.origin();
    if names.is_empty() {
        return Err(DataError::new(&origin, None, None, "no column was named"));
    }
    let text = source.text()?;
    // A byte-order mark (spreadsheets write one) is not part of the first column's name.
    let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut reader = ::csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(body.as_bytes());
    let malformed = |e: ::csv::Error| {
        let line = e.position().map(|p| Place::Line(p.line()));
        let why = match e.kind() {
            ::csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
                format!("the row has {len} fields, but the header has {expected_len}")
            }
            _ => format!("not a CSV row ({e})"),
        };
        DataError::new(&origin, line, None, why)
    };
    let header = reader.headers().map_err(malformed)?.clone();
    if header.is_empty() || (header.len() == 1 && header[0].trim().is_empty()) {
        return Err(DataError::new(&origin, None, None, "has no header row (the first line names the columns)"));
    }
    let mut index = Vec::with_capacity(names.len());
    for (n, name) in names.iter().enumerate() {
        if names[..n].contains(name) {
            return Err(DataError::new(&origin, None, Some(name), "is named twice"));
        }
        let found: Vec<usize> = header.iter().enumerate().filter(|(_, h)| h.trim() == name).map(|(i, _)| i).collect();
        match found.as_slice() {
            [i] => index.push(*i),
            [] => {
                let all: Vec<String> = header.iter().take(10).map(quote).collect();
                let more = if header.len() > 10 { ", …" } else { "" };
                return Err(DataError::new(
                    &origin,
                    None,
                    Some(name),
                    format!("is missing: the header's columns are {}{more}", all.join(", ")),
                ));
            }
            _ => return Err(DataError::new(&origin, Some(Place::Line(1)), Some(name), "heads more than one column")),
        }
    }
    let mut columns: Vec<Column> =
        names.iter().map(|n| Column { name: n.clone(), values: Vec::new(), places: Vec::new() }).collect();
    for row in reader.records() {
        let row = row.map_err(malformed)?;
        let line = Place::Line(row.position().map_or(0, |p| p.line()));
        for (column, &i) in columns.iter_mut().zip(&index) {
            let cell = row[i].trim();
            let value = parse_cell(cell).ok_or_else(|| {
                let why = if cell.is_empty() {
                    "the cell is empty".to_string()
                } else {
                    format!("{} is not a number", quote(cell))
                };
                DataError::new(&origin, Some(line), Some(&column.name), why)
            })?;
            column.values.push(value);
            column.places.push(line);
        }
    }
    Ok(Records { origin, columns })
}

/// A cell's number: a finite float, or `true`/`false` (any case) as 1/0.
fn parse_cell(cell: &str) -> Option<f64> {
    match cell.to_ascii_lowercase().as_str() {
        "true" => Some(1.0),
        "false" => Some(0.0),
        _ => cell.parse::<f64>().ok().filter(|v| v.is_finite()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, names: &[&str]) -> Result<Records, DataError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.csv");
        std::fs::write(&path, text).unwrap();
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        read_csv(&DataSource::File(path), &names).map_err(|mut e| {
            e.origin = "d.csv".into();
            e
        })
    }

    #[test]
    fn reads_named_columns_and_names_each_fault() {
        let r = read("id,cured\n1,0\n2,\"1\"\n3,TRUE\n", &["cured"]).unwrap();
        assert_eq!(r.columns[0].values, vec![0.0, 1.0, 1.0]);
        assert_eq!(r.columns[0].places[2], Place::Line(4));
        let e = read("id,cured\n1,0\n2,yes\n", &["cured"]).unwrap_err();
        assert_eq!(e.to_string(), "d.csv, line 3, column \"cured\": \"yes\" is not a number");
        let e = read("id,cured\n1,0\n2,\n", &["cured"]).unwrap_err();
        assert_eq!(e.to_string(), "d.csv, line 3, column \"cured\": the cell is empty");
        let e = read("id,cured\n1,0\n", &["age"]).unwrap_err();
        assert_eq!(e.to_string(), "d.csv, column \"age\": is missing: the header's columns are \"id\", \"cured\"");
        let e = read("id,cured\n1,0\n2\n", &["cured"]).unwrap_err();
        assert!(e.to_string().starts_with("d.csv, line 3: the row has 1 fields, but the header has 2"), "{e}");
        assert!(read("", &["cured"]).is_err());
        assert_eq!(read("\u{feff}cured,id\n1,2\n", &["cured"]).unwrap().columns[0].values, vec![1.0]);
        assert_eq!(read("cured\n", &["cured"]).unwrap().len(), 0);
    }
}
