//! Records in, the model's sufficient statistic out: what `ubapp release --data` and the bindings'
//! `release` compute before a mechanism releases anything.
//!
//! A model's family says what its statistic is ([`Family`]): a binomial model's is the count of
//! 1s among exactly K records of 0 or 1; a Poisson model's the sum of exactly N non-negative
//! integer records, each clipped at the model's cap c (the model's own clipping, `min(x, c)`); a
//! multinomial model's the count of each category among exactly K records, given as one column of
//! category indices 0..d−1 or as d indicator columns (one 1 per record); a table model's the one
//! observation index its single record holds. [`statistic`] computes it and refuses, in one
//! sentence naming the source, the record's place and the column, anything outside the family's
//! domain, a wrong number of records, an empty column or a malformed cell — before anything is
//! released or spent.
//!
//! Records come from a CSV file with a header row ([`read_csv`], the file or standard input) or
//! from numbers a binding passes ([`Records::from_values`]); both go through [`statistic`].

mod csv;
mod error;

pub use self::csv::{read_csv, DataSource};
pub use error::{DataError, Place};

use crate::model::Family;

/// One column of records: its name and its values, with where each came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The column's name (a CSV header, or the binding's argument).
    pub name: String,
    /// The records, in order.
    pub values: Vec<f64>,
    /// Where each record came from (a line of the file, or an element of an array).
    pub places: Vec<Place>,
}

/// The columns a statistic is computed from, all with the same number of records.
#[derive(Debug, Clone, PartialEq)]
pub struct Records {
    /// The file (or `<stdin>`, or the binding's argument) named in messages.
    pub origin: String,
    /// The columns, in the order asked for.
    pub columns: Vec<Column>,
}

impl Records {
    /// Records from numbers a binding passes (`columns`: each one's name and values, all of one
    /// length); element `i` of a column is named in messages as `first + i` (0 for Python, 1 for R).
    pub fn from_values(origin: &str, columns: Vec<(String, Vec<f64>)>, first: usize) -> Result<Records, DataError> {
        let records = Records {
            origin: origin.to_string(),
            columns: columns
                .into_iter()
                .map(|(name, values)| {
                    let places = (0..values.len()).map(|i| Place::Element(first + i)).collect();
                    Column { name, values, places }
                })
                .collect(),
        };
        if records.columns.is_empty() {
            return Err(DataError::new(&records.origin, None, None, "no column of records was given"));
        }
        let n = records.columns[0].values.len();
        for c in &records.columns {
            if c.values.len() != n {
                return Err(DataError::new(
                    &records.origin,
                    None,
                    Some(&c.name),
                    format!("has {} records, but column \"{}\" has {n}", c.values.len(), records.columns[0].name),
                ));
            }
            if let Some(i) = c.values.iter().position(|v| !v.is_finite()) {
                return Err(DataError::new(
                    &records.origin,
                    Some(c.places[i]),
                    Some(&c.name),
                    format!("{} is not a number a record can hold", c.values[i]),
                ));
            }
        }
        Ok(records)
    }

    /// The number of records (every column has it).
    pub fn len(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn error(&self, place: Option<Place>, column: Option<&str>, problem: impl Into<String>) -> DataError {
        DataError::new(&self.origin, place, column, problem)
    }
}

/// The observation the records make under `family` (its coordinates, as `sample --y` takes
/// them), or the first thing wrong with them. `model` names the model in messages.
pub fn statistic(family: &Family, model: &str, records: &Records) -> Result<Vec<f64>, DataError> {
    let columns = &records.columns;
    let one_column = |what: &str| -> Result<&Column, DataError> {
        match columns.as_slice() {
            [c] => Ok(c),
            _ => Err(records.error(
                None,
                None,
                format!("model {model} ({}) takes one column, {what}; {} were given", family.name(), columns.len()),
            )),
        }
    };
    let column = match family {
        Family::Binomial { .. } => one_column("of records 0 or 1")?,
        Family::Poisson { .. } => one_column("of non-negative whole numbers")?,
        Family::Table { .. } => one_column("holding the one observation index")?,
        Family::Multinomial { categories, .. } if columns.len() == *categories && *categories > 1 => &columns[0],
        Family::Multinomial { categories, .. } => one_column(&format!(
            "of category indices 0..{} (or {categories} indicator columns, one per category)",
            categories - 1
        ))?,
    };
    if records.is_empty() {
        return Err(records.error(None, Some(&column.name), "has no records (the column is empty)"));
    }
    let expected = match family {
        Family::Binomial { trials } => *trials,
        Family::Poisson { records, .. } | Family::Multinomial { records, .. } => *records,
        Family::Table { .. } => 1,
    };
    if records.len() as u64 != expected {
        let unit = match family {
            Family::Binomial { .. } => format!("trials = {expected}"),
            Family::Table { .. } => "one observation index, one record".to_string(),
            _ => format!("records = {expected}"),
        };
        return Err(records.error(
            None,
            Some(&column.name),
            format!("has {} records, but model {model} is for exactly {expected} ({unit})", records.len()),
        ));
    }
    match family {
        Family::Binomial { .. } => {
            let mut count = 0.0;
            for (v, p) in column.values.iter().zip(&column.places) {
                if *v != 0.0 && *v != 1.0 {
                    return Err(outside(records, column, *p, *v, "a binomial model's records are 0 or 1"));
                }
                count += v;
            }
            Ok(vec![count])
        }
        Family::Poisson { cap, .. } => {
            // The model's own clipping: each record contributes min(x, c).
            let mut sum = 0.0;
            for (v, p) in column.values.iter().zip(&column.places) {
                if *v < 0.0 || v.fract() != 0.0 {
                    return Err(outside(records, column, *p, *v, "a Poisson model's records are whole numbers ≥ 0"));
                }
                sum += v.min(*cap as f64);
            }
            Ok(vec![sum])
        }
        Family::Multinomial { categories, .. } if columns.len() == 1 => {
            let mut counts = vec![0.0; *categories];
            for (v, p) in column.values.iter().zip(&column.places) {
                if *v < 0.0 || v.fract() != 0.0 || *v >= *categories as f64 {
                    let why = format!("this model's categories are 0..{}", categories - 1);
                    return Err(outside(records, column, *p, *v, &why));
                }
                counts[*v as usize] += 1.0;
            }
            Ok(counts)
        }
        Family::Multinomial { categories, .. } => indicator_counts(records, *categories),
        Family::Table { .. } => {
            let (v, p) = (column.values[0], column.places[0]);
            let n = family.observation_count();
            if v < 0.0 || v.fract() != 0.0 || v >= n as f64 {
                let why = format!("a table model's observation is an index 0..{}", n - 1);
                return Err(outside(records, column, p, v, &why));
            }
            Ok(vec![v])
        }
    }
}

/// Category counts from one indicator column per category: every record has one 1 and 0s.
fn indicator_counts(records: &Records, categories: usize) -> Result<Vec<f64>, DataError> {
    let mut counts = vec![0.0; categories];
    for r in 0..records.len() {
        let mut ones = 0;
        for (c, column) in records.columns.iter().enumerate() {
            let v = column.values[r];
            if v != 0.0 && v != 1.0 {
                return Err(outside(records, column, column.places[r], v, "indicator columns hold 0 or 1"));
            }
            if v == 1.0 {
                ones += 1;
                counts[c] += 1.0;
            }
        }
        if ones != 1 {
            let column = &records.columns[0];
            return Err(records.error(
                Some(column.places[r]),
                None,
                format!("the {categories} category columns hold {ones} ones; each record is in exactly one category"),
            ));
        }
    }
    Ok(counts)
}

fn outside(records: &Records, column: &Column, place: Place, v: f64, why: &str) -> DataError {
    records.error(Some(place), Some(&column.name), format!("{v} is outside the model's domain ({why})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(values: Vec<f64>) -> Records {
        Records::from_values("data", vec![("x".into(), values)], 0).unwrap()
    }

    #[test]
    fn the_statistics_of_each_family() {
        let b = Family::Binomial { trials: 4 };
        assert_eq!(statistic(&b, "m", &one(vec![1.0, 0.0, 1.0, 1.0])).unwrap(), vec![3.0]);
        let p = Family::Poisson { records: 3, cap: 2 };
        assert_eq!(statistic(&p, "m", &one(vec![0.0, 5.0, 1.0])).unwrap(), vec![3.0]);
        let m = Family::Multinomial { categories: 3, records: 4 };
        assert_eq!(statistic(&m, "m", &one(vec![0.0, 2.0, 2.0, 1.0])).unwrap(), vec![1.0, 1.0, 2.0]);
        let cols = vec![
            ("a".to_string(), vec![1.0, 0.0, 0.0, 0.0]),
            ("b".to_string(), vec![0.0, 0.0, 1.0, 0.0]),
            ("c".to_string(), vec![0.0, 1.0, 0.0, 1.0]),
        ];
        let r = Records::from_values("data", cols, 0).unwrap();
        assert_eq!(statistic(&m, "m", &r).unwrap(), vec![1.0, 1.0, 2.0]);
    }

    #[test]
    fn refusals_name_the_place_and_column() {
        let b = Family::Binomial { trials: 3 };
        let e = statistic(&b, "m", &one(vec![1.0, 7.0, 0.0])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "data, element 1, column \"x\": 7 is outside the model's domain (a binomial model's records are 0 or 1)"
        );
        let e = statistic(&b, "m", &one(vec![1.0, 0.0])).unwrap_err();
        assert!(e.to_string().contains("has 2 records, but model m is for exactly 3"), "{e}");
        let e = statistic(&b, "m", &one(vec![])).unwrap_err();
        assert!(e.to_string().contains("has no records"), "{e}");
        let p = Family::Poisson { records: 2, cap: 2 };
        assert!(statistic(&p, "m", &one(vec![1.5, 0.0])).is_err());
        let m = Family::Multinomial { categories: 2, records: 2 };
        let cols = vec![("a".to_string(), vec![1.0, 1.0]), ("b".to_string(), vec![0.0, 1.0])];
        let e = statistic(&m, "m", &Records::from_values("data", cols, 1).unwrap()).unwrap_err();
        assert!(e.to_string().starts_with("data, element 2: the 2 category columns hold 2 ones"), "{e}");
        assert!(Records::from_values("data", vec![("x".into(), vec![f64::NAN])], 0).is_err());
    }
}
