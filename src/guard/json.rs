//! Strict JSON: a document with a key repeated in one object is refused (serde_json keeps the
//! last one silently, so a reader and a human looking at the file could see different values).
//!
//! [`price`] reads a document once without building it: it refuses repeated keys, fields a
//! [`Schema`] does not know and lists or strings longer than the schema allows, and prices what
//! building the document would allocate, so a reader can refuse a file its memory budget cannot
//! hold before deserialising it.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::de::{Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// What a reader accepts of a JSON document's shape: the fields each object may have and how long
/// its lists and strings may be. Paths are dotted keys from the top (`provenance.repair_candidates`);
/// a list adds no component, so the elements of `columns` are at `columns`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schema {
    /// The keys an object at a path may have (`""` is the top level); objects at other paths are
    /// not checked here (the typed reader refuses their unknown fields).
    pub known: &'static [(&'static str, &'static [&'static str])],
    /// The most elements a list at a path (or anywhere below it) may have.
    pub max_items: &'static [(&'static str, usize)],
    /// The most bytes a string at a path (or anywhere below it) may have.
    pub max_string: &'static [(&'static str, usize)],
    /// Paths whose numbers are built as plain integers or floats in typed lists (8 bytes each),
    /// not as JSON values.
    pub lean: &'static [&'static str],
    /// Paths that are built twice (serde buffers a tagged enum's content before typing it).
    pub buffered: &'static [&'static str],
}

/// The most keys one object may have (no object of ours has more than a few dozen; the cap bounds
/// the duplicate-key check's own memory).
pub(crate) const MAX_KEYS: usize = 4096;

/// The shape of a document that passed [`price`]: what building it costs, and its top-level
/// scalars (to tell the kind of file before typing it).
#[derive(Debug, Clone, Default)]
pub(crate) struct Shape {
    /// Bytes that deserialising the document may allocate beyond its text (an upper bound).
    pub bytes: u128,
    /// The same, per top-level field, in the file's order.
    pub fields: Vec<(String, u128)>,
    /// Top-level strings (up to 64 bytes each), by key.
    pub strings: Vec<(String, String)>,
    /// Top-level whole numbers, by key.
    pub numbers: Vec<(String, u64)>,
    /// Top-level lists' lengths, by key.
    pub lengths: Vec<(String, usize)>,
    /// Whether the document is an object.
    pub object: bool,
}

impl Shape {
    /// A top-level string.
    pub(crate) fn string(&self, key: &str) -> Option<&str> {
        self.strings.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// A top-level whole number.
    pub(crate) fn number(&self, key: &str) -> Option<u64> {
        self.numbers.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The length of a top-level list.
    pub(crate) fn length(&self, key: &str) -> Option<usize> {
        self.lengths.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// Add `bytes` to what building the top-level field `key` costs (a reader's own price of
    /// what it derives from the field, such as decoded weights).
    pub(crate) fn charge(&mut self, key: &str, bytes: u128) {
        self.bytes += bytes;
        if let Some(field) = self.fields.iter_mut().find(|(k, _)| k == key) {
            field.1 += bytes;
        }
    }

    /// Whether the top level has `key`.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.fields.iter().any(|(k, _)| k == key)
    }

    /// The top-level field that costs the most to build.
    pub(crate) fn heaviest(&self) -> Option<&str> {
        self.fields.iter().max_by_key(|(_, b)| *b).map(|(k, _)| k.as_str())
    }
}

/// Why a document's shape was refused. Every field is named by its dotted path; no value of the
/// file is quoted except a key (sanitised).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ShapeError {
    /// Not JSON (the parser's words, with line and column).
    Syntax(String),
    /// A key repeated in one object (the object's path, the key quoted and sanitised).
    Duplicate { path: String, key: String },
    /// A field the schema does not know.
    Unknown { path: String },
    /// A list (or object) longer than allowed.
    TooMany { path: String, max: usize },
    /// A string longer than allowed.
    TooLong { path: String, len: usize, max: usize },
}

impl ShapeError {
    /// The field the error is about (empty for a syntax error) and what is wrong with it.
    pub(crate) fn parts(&self) -> (String, String) {
        match self {
            ShapeError::Syntax(m) => (String::new(), m.clone()),
            ShapeError::Duplicate { path, key } => {
                let path = if path.is_empty() { "the top level".to_string() } else { path.clone() };
                (path, format!("duplicate key {key} (a key may appear once per object)"))
            }
            ShapeError::Unknown { path } => {
                (path.clone(), "is not a field of this kind of file (an unknown field is refused, not ignored)".into())
            }
            ShapeError::TooMany { path, max } => {
                (path.clone(), format!("has more than {max} entries, more than any file of this kind holds"))
            }
            ShapeError::TooLong { path, len, max } => {
                (path.clone(), format!("is a string of {len} bytes, more than the {max} this field may have"))
            }
        }
    }
}

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.parts() {
            (field, problem) if field.is_empty() => f.write_str(&problem),
            (field, problem) => write!(f, "{field}: {problem}"),
        }
    }
}

impl std::error::Error for ShapeError {}

/// Read `text` once, building nothing of it: refuse what `schema` does not allow (see
/// [`ShapeError`]) and price what deserialising it would allocate.
pub(crate) fn price(text: &str, schema: &Schema) -> Result<Shape, ShapeError> {
    let mut state = State { schema, shape: Shape::default(), path: Vec::new(), error: None };
    let mut de = serde_json::Deserializer::from_str(text);
    let outcome = Node { st: &mut state, lean: false, buffered: false, listed: false }
        .deserialize(&mut de)
        .and_then(|()| de.end());
    match (outcome, state.error) {
        (_, Some(e)) => Err(e),
        (Err(e), None) => Err(ShapeError::Syntax(super::text::parser_message(&e.to_string()))),
        (Ok(()), None) => Ok(state.shape),
    }
}

// What building costs (bytes, upper bounds with allocator overhead and doubling growth): a JSON
// value (32 bytes, in a list grown by doubling), a number in a typed list, a list's header and
// smallest allocation, an object's (a B-tree leaf), an object's entry (a node's share and the
// key), a string's allocation.
const VALUE: u128 = 64;
const LEAN_NUMBER: u128 = 16;
const LIST: u128 = 96;
const OBJECT: u128 = 640;
const ENTRY: u128 = 160;
const STRING: u128 = 32;

struct State<'s> {
    schema: &'s Schema,
    shape: Shape,
    path: Vec<String>,
    error: Option<ShapeError>,
}

impl State<'_> {
    fn path(&self) -> String {
        self.path.join(".")
    }

    fn under(&self, list: &[(&'static str, usize)]) -> Option<usize> {
        let path = self.path();
        list.iter().filter(|(p, _)| path == *p || path.starts_with(&format!("{p}."))).map(|&(_, n)| n).min()
    }

    fn matches(&self, paths: &[&str]) -> bool {
        let path = self.path();
        paths.iter().any(|p| path == *p || path.starts_with(&format!("{p}.")))
    }

    fn add(&mut self, bytes: u128, buffered: bool) {
        let bytes = if buffered { 2 * bytes } else { bytes };
        self.shape.bytes += bytes;
        if let Some(last) = self.shape.fields.last_mut().filter(|_| !self.path.is_empty()) {
            last.1 += bytes;
        }
    }

    fn fail<E: serde::de::Error>(&mut self, e: ShapeError) -> E {
        let message = e.to_string();
        self.error.get_or_insert(e);
        E::custom(message)
    }
}

struct Node<'a, 's> {
    st: &'a mut State<'s>,
    lean: bool,
    buffered: bool,
    /// Inside a list (a scalar there is not a top-level field's own value).
    listed: bool,
}

impl<'de> DeserializeSeed<'de> for Node<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Node<'_, '_> {
    fn scalar(&mut self) {
        let cost = if self.lean { LEAN_NUMBER } else { VALUE };
        self.st.add(cost, self.buffered);
    }

    fn string<E: serde::de::Error>(&mut self, v: &str) -> Result<(), E> {
        if let Some(max) = self.st.under(self.st.schema.max_string).filter(|&m| v.len() > m) {
            let path = self.st.path();
            return Err(self.st.fail(ShapeError::TooLong { path, len: v.len(), max }));
        }
        self.st.add(VALUE + STRING + v.len() as u128, self.buffered);
        if self.st.path.len() == 1 && !self.listed && v.len() <= 64 {
            let key = self.st.path[0].clone();
            self.st.shape.strings.push((key, v.to_string()));
        }
        Ok(())
    }

    fn number(&mut self, v: Option<u64>) {
        self.scalar();
        if let (1, false, Some(v)) = (self.st.path.len(), self.listed, v) {
            let key = self.st.path[0].clone();
            self.st.shape.numbers.push((key, v));
        }
    }
}

impl<'de> Visitor<'de> for Node<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(mut self, _: bool) -> Result<(), E> {
        self.scalar();
        Ok(())
    }

    fn visit_i64<E>(mut self, v: i64) -> Result<(), E> {
        self.number(u64::try_from(v).ok());
        Ok(())
    }

    fn visit_u64<E>(mut self, v: u64) -> Result<(), E> {
        self.number(Some(v));
        Ok(())
    }

    fn visit_f64<E: serde::de::Error>(mut self, v: f64) -> Result<(), E> {
        if !v.is_finite() {
            return Err(E::custom("a number that is not finite"));
        }
        self.number(None);
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(mut self, v: &str) -> Result<(), E> {
        self.string(v)
    }

    fn visit_unit<E>(mut self) -> Result<(), E> {
        self.scalar();
        Ok(())
    }

    fn visit_none<E>(mut self) -> Result<(), E> {
        self.scalar();
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let max = self.st.under(self.st.schema.max_items);
        let lean = self.lean || self.st.matches(self.st.schema.lean);
        self.st.add(if lean { LIST } else { VALUE + LIST }, self.buffered);
        let mut n = 0usize;
        while seq.next_element_seed(Node { st: self.st, lean, buffered: self.buffered, listed: true })?.is_some() {
            n += 1;
            if let Some(max) = max.filter(|&m| n > m) {
                let path = self.st.path();
                return Err(self.st.fail(ShapeError::TooMany { path, max }));
            }
        }
        if self.st.path.len() == 1 && !self.listed {
            let key = self.st.path[0].clone();
            self.st.shape.lengths.push((key, n));
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let known = {
            let path = self.st.path();
            self.st.schema.known.iter().find(|(p, _)| *p == path).map(|(_, keys)| *keys)
        };
        if self.st.path.is_empty() {
            self.st.shape.object = true;
        }
        self.st.add(VALUE + OBJECT, self.buffered);
        let mut seen: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            self.st.path.push(key.to_string());
            if seen.len() >= MAX_KEYS {
                let path = self.st.path();
                return Err(self.st.fail(ShapeError::TooMany { path, max: MAX_KEYS }));
            }
            if known.is_some_and(|keys| !keys.contains(&key.as_ref())) {
                let path = self.st.path();
                return Err(self.st.fail(ShapeError::Unknown { path }));
            }
            if seen.contains(&key) {
                self.st.path.pop();
                let (path, key) = (self.st.path(), super::text::quote(&key));
                return Err(self.st.fail(ShapeError::Duplicate { path, key }));
            }
            if self.st.path.len() == 1 {
                self.st.shape.fields.push((key.to_string(), 0));
            }
            let buffered = self.buffered || self.st.matches(self.st.schema.buffered);
            self.st.add(ENTRY + key.len() as u128, buffered);
            map.next_value_seed(Node { st: self.st, lean: false, buffered, listed: false })?;
            self.st.path.pop();
            seen.insert(key);
        }
        Ok(())
    }
}

/// For "invalid type: … `v`, expected …" (or `"v"`) reported at the object `path` (dotted keys;
/// serde reads a tagged enum whole, so it names only the object): the one key of that object
/// whose value is `v`. Builds only that object.
pub(crate) fn key_holding(text: &str, path: &str, message: &str) -> Option<String> {
    let rest = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: "))?;
    let token = rest.split_once(['`', '"'])?.1.split_once(['`', '"'])?.0;
    if path.is_empty() || path.contains(['[', ']']) {
        return None;
    }
    let parts: Vec<&str> = path.split('.').collect();
    let mut de = serde_json::Deserializer::from_str(text);
    let Value::Object(object) = (At { rest: &parts }).deserialize(&mut de).ok()?? else { return None };
    let found: Vec<&String> = object
        .iter()
        .filter(|(_, v)| match v {
            Value::String(s) => s == token,
            Value::Number(n) => token.parse::<f64>().ok().is_some_and(|t| n.as_f64() == Some(t)),
            Value::Bool(b) => token == if *b { "true" } else { "false" },
            Value::Object(_) | Value::Array(_) | Value::Null => false,
        })
        .map(|(k, _)| k)
        .collect();
    (found.len() == 1).then(|| found[0].clone())
}

/// The value at a path of keys, the rest of the document skipped unbuilt.
struct At<'p> {
    rest: &'p [&'p str],
}

impl<'de> DeserializeSeed<'de> for At<'_> {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Value>, D::Error> {
        if self.rest.is_empty() {
            return Value::deserialize(d).map(Some);
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for At<'_> {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Value>, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if key == self.rest[0] && found.is_none() {
                found = map.next_value_seed(At { rest: &self.rest[1..] })?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Value>, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Option<Value>, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Option<Value>, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Option<Value>, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Option<Value>, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Option<Value>, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Option<Value>, E> {
        Ok(None)
    }
}

/// A key, borrowed from the text where it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn price_refuses_what_the_schema_does_not_allow_and_prices_the_rest() {
        const SCHEMA: Schema = Schema {
            known: &[("", &["a", "list", "p"]), ("p", &["s", "xs"])],
            max_items: &[("p.xs", 2)],
            max_string: &[("p", 5)],
            lean: &["list"],
            buffered: &[],
        };
        let shape =
            price(r#"{"a": "hello", "list": [[1, 2], [3]], "p": {"s": "abc", "xs": [1, 2]}}"#, &SCHEMA).unwrap();
        assert_eq!(shape.string("a"), Some("hello"));
        assert!(shape.numbers.is_empty(), "numbers in lists are no field's own value: {:?}", shape.numbers);
        assert!(shape.has("list") && !shape.has("b"));
        assert_eq!((shape.length("list"), shape.length("p"), shape.length("a")), (Some(2), None, None));
        let mut charged = shape.clone();
        charged.charge("list", 1 << 20);
        assert_eq!(charged.bytes, shape.bytes + (1 << 20));
        assert_eq!(charged.heaviest(), Some("list"));
        assert!(shape.bytes > 0 && shape.heaviest().is_some());
        let refused = |text: &str| price(text, &SCHEMA).unwrap_err().to_string();
        assert!(refused(r#"{"b": 1}"#).starts_with("b: is not a field"));
        assert!(refused(r#"{"p": {"q": 1}}"#).starts_with("p.q: is not a field"));
        assert!(refused(r#"{"p": {"xs": [1, 2, 3]}}"#).starts_with("p.xs: has more than 2"));
        assert!(refused(r#"{"p": {"s": "abcdef"}}"#).starts_with("p.s: is a string of 6 bytes"));
        assert!(refused(r#"{"a": 1, "a": 2}"#).contains("duplicate key \"a\""));
        assert!(refused("{\"a\": ").contains("EOF"));
        assert!(refused(&"[".repeat(10_000)).contains("recursion limit"));
        assert!(refused("{\"a\": 1,\n \"p\": {\"s\": \"x\", \"s\": \"y\"}}").starts_with("p: duplicate key \"s\""));
        // Numbers in a lean list cost less than the same numbers as JSON values.
        let lean = price(r#"{"list": [1, 2, 3, 4, 5, 6, 7, 8]}"#, &SCHEMA).unwrap().bytes;
        let plain = price(r#"{"a": [1, 2, 3, 4, 5, 6, 7, 8]}"#, &SCHEMA).unwrap().bytes;
        assert!(lean < plain, "{lean} {plain}");
        let text = r#"{"model": {"observation": {"family": "binomial", "trials": "100"}}, "x": [1]}"#;
        let message = "invalid type: string \"100\", expected u64";
        assert_eq!(key_holding(text, "model.observation", message).as_deref(), Some("trials"));
        assert_eq!(key_holding(text, "model", message), None);
    }
}
