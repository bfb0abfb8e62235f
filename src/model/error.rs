//! Errors about a model: every one names the source (file) and the field, and says what was
//! expected.

use std::fmt;

/// A model that does not parse or validate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{kind}", Origin(.origin))]
pub struct ModelError {
    /// The file (or other source) the model came from, when known.
    pub origin: Option<String>,
    /// What is wrong.
    pub kind: ModelErrorKind,
}

/// What is wrong with a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The file could not be read.
    #[error("cannot read the model file: {reason}")]
    Unreadable {
        /// What the operating system said.
        reason: String,
    },
    /// The text is not valid TOML or does not match the schema.
    #[error("{}{message}{}", FieldPrefix(.field), Line(.line))]
    Syntax {
        /// The key path, e.g. `observation.trials`, when the parser knows it.
        field: Option<String>,
        /// The 1-based line.
        line: Option<usize>,
        /// The parser's words.
        message: String,
    },
    /// A field holds a value out of range or inconsistent with another field.
    #[error("{field}: {problem}")]
    Invalid {
        /// The key path, e.g. `observation.trials` or `parameter.prior.alpha[2]`.
        field: String,
        /// What is wrong and what was expected.
        problem: String,
    },
    /// Validating the model would allocate more memory than is available (the size guard).
    #[error("{0}")]
    TooLarge(Box<crate::guard::SizeError>),
    /// A CSV file a field names (or its inline data) is malformed.
    #[error("{source_name} ({field}): {problem}")]
    Csv {
        /// The file path, or `field (inline)` for inline data.
        source_name: String,
        /// The key that names it.
        field: String,
        /// What is wrong, with row and column where known.
        problem: String,
    },
}

impl ModelError {
    /// An error with no origin yet (the loader adds it).
    pub fn new(kind: ModelErrorKind) -> Self {
        ModelError { origin: None, kind }
    }

    /// A field holds a bad value.
    pub fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Self {
        ModelError::new(ModelErrorKind::Invalid { field: field.into(), problem: problem.into() })
    }

    /// Name the source, unless one is named already.
    pub fn in_origin(mut self, origin: &str) -> Self {
        if self.origin.is_none() && !origin.is_empty() {
            self.origin = Some(origin.to_string());
        }
        self
    }

    /// The field path the error is about, when there is one.
    pub fn field(&self) -> Option<&str> {
        match &self.kind {
            ModelErrorKind::Syntax { field, .. } => field.as_deref(),
            ModelErrorKind::Invalid { field, .. } | ModelErrorKind::Csv { field, .. } => Some(field),
            ModelErrorKind::Unreadable { .. } | ModelErrorKind::TooLarge(_) => None,
        }
    }
}

struct Origin<'a>(&'a Option<String>);
impl fmt::Display for Origin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(o) => write!(f, "{o}: "),
            None => Ok(()),
        }
    }
}

struct FieldPrefix<'a>(&'a Option<String>);
impl fmt::Display for FieldPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(p) => write!(f, "{p}: "),
            None => Ok(()),
        }
    }
}

struct Line<'a>(&'a Option<usize>);
impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(l) => write!(f, " (line {l})"),
            None => Ok(()),
        }
    }
}

/// Return early with [`ModelErrorKind::Invalid`]: `bail_field!("observation.trials", "must be at
/// least 1 (got {t})")`. Both parts are format strings sharing the arguments.
macro_rules! bail_field {
    ($field:expr, $($arg:tt)*) => {
        return Err($crate::model::ModelError::invalid($field, format!($($arg)*)).into())
    };
}
pub(crate) use bail_field;

/// Return early with [`ModelErrorKind::Csv`].
macro_rules! bail_csv {
    ($source:expr, $field:expr, $($arg:tt)*) => {
        return Err($crate::model::ModelError::new($crate::model::ModelErrorKind::Csv {
            source_name: $source.to_string(),
            field: $field.to_string(),
            problem: format!($($arg)*),
        })
        .into())
    };
}
pub(crate) use bail_csv;
