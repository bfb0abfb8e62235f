//! The packed form of a dense mechanism's weights (format version 4): every weight as an
//! unsigned LEB128 varint, column after column (observation i's |Θ̃| weights consecutively), the
//! bytes base64-encoded (standard alphabet, padded) into one JSON string. The writer packs a
//! mechanism of more than [`PACKED_ABOVE`] weights ([`packs`]); smaller ones keep the readable
//! JSON arrays of versions 1 and 2.
//!
//! Decoding refuses, naming the field `weights`, whatever is not exactly the model's
//! |Y|·|Θ̃| weights in that form: bad base64, a varint that is truncated, longer than 10 bytes,
//! beyond 2^64 − 1 or not minimal, too few or too many weights, and a column not summing to the
//! total. The privacy check itself runs afterwards on the decoded columns, as for the other
//! versions.

use base64::engine::general_purpose::STANDARD;
use base64::{DecodeError, DecodeSliceError, Engine};

/// The one encoding of version 4's `weights` (stored as `weights_encoding`).
pub(crate) const ENCODING: &str = "leb128-base64";

/// Mechanisms of more weights than this (|Y|·|Θ̃|) are written packed.
pub(crate) const PACKED_ABOVE: usize = 1 << 20;

/// The most bytes of one LEB128 varint of a u64.
const MAX_VARINT: usize = 10;

/// Base64 characters decoded at a time (a multiple of 4).
const CHUNK: usize = 4 << 10;

/// Whether a mechanism of |Y| = `n_observations` and |Θ̃| = `n_outputs` is written packed
/// rather than as JSON arrays (the writer's one decision; `packed_above` is [`PACKED_ABOVE`]
/// outside tests).
pub(crate) fn packs(n_observations: usize, n_outputs: usize, packed_above: usize) -> bool {
    n_observations.saturating_mul(n_outputs) > packed_above
}

/// What decoding |Y| = `n_observations` columns of |Θ̃| = `n_outputs` weights builds: the
/// columns and the sampler's prefix sums, 8 bytes a weight each, and two allocations a column.
pub(crate) fn decoded_bytes(n_observations: usize, n_outputs: usize) -> u128 {
    2 * n_observations as u128 * (8 * n_outputs as u128 + 64)
}

/// The weights `columns[i][k]`, column-major, as LEB128 varints in base64.
pub(crate) fn encode(columns: &[Vec<u64>]) -> String {
    let n_bytes: usize = columns.iter().flatten().map(|&w| varint_len(w)).sum();
    let mut out = String::with_capacity(n_bytes.div_ceil(3) * 4);
    let mut bytes = Vec::with_capacity(3 * CHUNK / 4 + MAX_VARINT);
    for &w in columns.iter().flatten() {
        push_varint(&mut bytes, w);
        if bytes.len() >= 3 * CHUNK / 4 {
            // A whole number of 3-byte groups encodes without padding, so the pieces concatenate.
            let whole = bytes.len() / 3 * 3;
            STANDARD.encode_string(&bytes[..whole], &mut out);
            bytes.drain(..whole);
        }
    }
    STANDARD.encode_string(&bytes, &mut out);
    out
}

fn varint_len(w: u64) -> usize {
    (64 - w.leading_zeros() as usize).div_ceil(7).max(1)
}

fn push_varint(out: &mut Vec<u8>, mut w: u64) {
    while w >= 0x80 {
        out.push((w as u8 & 0x7f) | 0x80);
        w >>= 7;
    }
    out.push(w as u8);
}

/// Decode `text` into |Y| = `n_observations` columns of |Θ̃| = `n_outputs` weights, each column
/// summing to `total`; the error is what is wrong, to follow the field's name. The length of the
/// text is checked against the count before anything is allocated, and nothing beyond the
/// model's count is ever built.
pub(crate) fn decode(
    text: &str,
    n_observations: usize,
    n_outputs: usize,
    total: u64,
) -> Result<Vec<Vec<u64>>, PackedError> {
    let count = n_observations as u128 * n_outputs as u128;
    let len = text.len();
    if len % 4 != 0 {
        return Err(PackedError::Length { len });
    }
    let padding = text.bytes().rev().take(2).take_while(|&b| b == b'=').count();
    let n_bytes = (len / 4 * 3).saturating_sub(padding) as u128;
    if n_bytes < count {
        return Err(PackedError::TooFewBytes { bytes: n_bytes, count });
    }
    if n_bytes > MAX_VARINT as u128 * count {
        return Err(PackedError::TooManyBytes { bytes: n_bytes, count });
    }
    let mut reader = Varints::new(n_observations, n_outputs, total);
    let mut buf = [0u8; 3 * CHUNK / 4];
    for (c, chunk) in text.as_bytes().chunks(CHUNK).enumerate() {
        let n =
            STANDARD.decode_slice(chunk, &mut buf).map_err(|error| PackedError::Base64 { error, offset: c * CHUNK })?;
        for &b in &buf[..n] {
            reader.byte(b)?;
        }
    }
    reader.finish()
}

/// What is wrong with packed weights, phrased to follow the field's name (`weights`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PackedError {
    /// The text's length is not a multiple of 4.
    #[error("is not valid base64 (standard alphabet, padded): its length {len} is not a multiple of 4")]
    Length { len: usize },
    /// Fewer bytes than weights.
    #[error("holds {bytes} bytes, too few for the |Y|·|Θ̃| = {count} weights of the embedded model (each takes at least one byte)")]
    TooFewBytes { bytes: u128, count: u128 },
    /// More bytes than the weights could take.
    #[error("holds {bytes} bytes, more than the |Y|·|Θ̃| = {count} weights of the embedded model can take (at most {MAX_VARINT} bytes each)")]
    TooManyBytes { bytes: u128, count: u128 },
    /// Base64 refused a chunk starting at `offset`.
    #[error("is not valid base64 (standard alphabet, padded): {}", base64_detail(.error, .offset))]
    Base64 { error: DecodeSliceError, offset: usize },
    /// Bytes after the last weight.
    #[error("holds more than the |Y|·|Θ̃| = {count} weights of the embedded model (bytes after the last weight)")]
    ExtraBytes { count: u128 },
    /// A varint beyond u64 or longer than 10 bytes.
    #[error("holds a varint beyond 2^64 − 1 (or longer than {MAX_VARINT} bytes) at {at}")]
    Overflow { at: Place },
    /// A varint with a zero last byte after others.
    #[error("holds a varint longer than its value needs at {at} (the encoding is minimal LEB128)")]
    NotMinimal { at: Place },
    /// A column whose weights do not sum to the total.
    #[error("has column {column} (observation index {column}) summing to {sum}, not to total = {total}")]
    ColumnSum { column: usize, sum: u128, total: u64 },
    /// The text ends inside a varint.
    #[error("ends inside a varint (truncated) at {at}")]
    Truncated { at: Place },
    /// Fewer weights than the model has.
    #[error("holds {read} weights, but the embedded model has |Y|·|Θ̃| = {count}")]
    TooFewWeights { read: u128, count: u128 },
}

/// Where a weight stands: its index, column and output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    column: usize,
    output: usize,
    n_outputs: usize,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Place { column, output, n_outputs } = *self;
        write!(f, "weight {} (column {column}, output {output})", column * n_outputs + output)
    }
}

/// Base64's complaint, with offsets into the whole string.
fn base64_detail(e: &DecodeSliceError, offset: &usize) -> String {
    let detail = match e {
        DecodeSliceError::DecodeError(DecodeError::InvalidByte(at, b)) => {
            format!("byte 0x{b:02x} at offset {} is not a base64 character where it stands", offset + at)
        }
        DecodeSliceError::DecodeError(DecodeError::InvalidLastSymbol(at, b)) => {
            format!("the last character (byte 0x{b:02x} at offset {}) carries bits beyond the data", offset + at)
        }
        DecodeSliceError::DecodeError(DecodeError::InvalidLength(_)) => "its last group is incomplete".to_string(),
        DecodeSliceError::DecodeError(DecodeError::InvalidPadding) => "its padding is not canonical".to_string(),
        DecodeSliceError::OutputSliceTooSmall => "a group decodes to more bytes than base64 can".to_string(),
    };
    detail
}

/// The varint reader: bytes in, full columns out.
struct Varints {
    n_observations: usize,
    n_outputs: usize,
    total: u64,
    columns: Vec<Vec<u64>>,
    column: Vec<u64>,
    /// The varint being read: its value so far and its bytes.
    value: u64,
    len: usize,
}

impl Varints {
    fn new(n_observations: usize, n_outputs: usize, total: u64) -> Varints {
        Varints {
            n_observations,
            n_outputs,
            total,
            columns: Vec::with_capacity(n_observations),
            column: Vec::with_capacity(n_outputs),
            value: 0,
            len: 0,
        }
    }

    /// Where the weight being read stands, for messages.
    fn at(&self) -> Place {
        Place { column: self.columns.len(), output: self.column.len(), n_outputs: self.n_outputs }
    }

    fn byte(&mut self, b: u8) -> Result<(), PackedError> {
        if self.columns.len() == self.n_observations {
            return Err(PackedError::ExtraBytes { count: self.n_observations as u128 * self.n_outputs as u128 });
        }
        let bits = u64::from(b & 0x7f);
        let shift = 7 * self.len as u32;
        // The tenth byte holds bit 63 alone; a varint that goes on is longer than any u64's.
        if self.len == MAX_VARINT - 1 && (bits > 1 || b & 0x80 != 0) {
            return Err(PackedError::Overflow { at: self.at() });
        }
        self.value |= bits << shift;
        self.len += 1;
        if b & 0x80 != 0 {
            return Ok(());
        }
        if b == 0 && self.len > 1 {
            return Err(PackedError::NotMinimal { at: self.at() });
        }
        self.column.push(self.value);
        (self.value, self.len) = (0, 0);
        if self.column.len() == self.n_outputs {
            let sum: u128 = self.column.iter().map(|&w| w as u128).sum();
            if sum != self.total as u128 {
                return Err(PackedError::ColumnSum { column: self.columns.len(), sum, total: self.total });
            }
            let next = if self.columns.len() + 1 < self.n_observations { self.n_outputs } else { 0 };
            let full = std::mem::replace(&mut self.column, Vec::with_capacity(next));
            self.columns.push(full);
        }
        Ok(())
    }

    fn finish(self) -> Result<Vec<Vec<u64>>, PackedError> {
        if self.len > 0 {
            return Err(PackedError::Truncated { at: self.at() });
        }
        if self.columns.len() < self.n_observations {
            let read = self.columns.len() as u128 * self.n_outputs as u128 + self.column.len() as u128;
            return Err(PackedError::TooFewWeights {
                read,
                count: self.n_observations as u128 * self.n_outputs as u128,
            });
        }
        Ok(self.columns)
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use serde_json::Value;

    use super::*;
    use crate::mechanism::{ArtifactError, ArtifactErrorKind, Mechanism, MechanismError, Release};
    use crate::model::{Model, ModelSpec};
    use crate::solve::{solve_model, SolverChoice};

    fn packed_bytes(bytes: &[u8]) -> String {
        STANDARD.encode(bytes)
    }

    #[test]
    fn weights_round_trip_through_varints_and_base64() {
        let edges = [0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 1 << 52, u64::MAX - 1];
        let columns: Vec<Vec<u64>> = (0..700).map(|i| vec![edges[i % edges.len()], i as u64, 5]).collect();
        let text = encode(&columns);
        let mut bytes = Vec::new();
        columns.iter().flatten().for_each(|&w| push_varint(&mut bytes, w));
        assert_eq!(text, STANDARD.encode(&bytes), "chunked encoding equals the whole");
        assert!(columns.iter().flatten().all(|&w| {
            let mut b = Vec::new();
            push_varint(&mut b, w);
            b.len() == varint_len(w)
        }));
        // Sums differ per column here, so decode checks only the shape with a fitting total.
        let one = vec![vec![3u64, 0, 1 << 40, 7]; 3];
        let total = 3 + (1 << 40) + 7;
        assert_eq!(decode(&encode(&one), 3, 4, total).unwrap(), one);
        assert!(packs(1025, 1024, PACKED_ABOVE) && !packs(1024, 1024, PACKED_ABOVE) && packs(2, 1, 1));
    }

    #[test]
    fn decoding_refuses_every_malformed_form() {
        let good = vec![vec![1u64, 3], vec![4, 0]];
        let refused = |text: &str| decode(text, 2, 2, 4).unwrap_err().to_string();
        assert!(refused("AQMEAA=").contains("not a multiple of 4"));
        assert!(refused("AQ*EAA==").contains("not a base64 character"), "{}", refused("AQ*EAA=="));
        assert!(refused("AQMEAQ==").contains("column 1"), "{}", refused("AQMEAQ=="));
        assert!(refused(&packed_bytes(&[1, 3, 4])).contains("too few"));
        assert!(refused(&packed_bytes(&[1, 3, 4, 0x80])).contains("ends inside a varint"));
        assert!(refused(&packed_bytes(&[1, 3, 4, 0, 0])).contains("bytes after the last weight"));
        assert!(refused(&packed_bytes(&[1, 3, 0x84, 0, 0])).contains("longer than its value needs"));
        assert!(refused(&packed_bytes(&[1, 3, 0x84, 0x80, 0])).contains("longer than its value needs"));
        let mut long = vec![0xffu8; 9];
        long.push(0x02);
        assert!(refused(&packed_bytes(&[&long[..], &[0, 0, 0]].concat())).contains("beyond 2^64"));
        long[9] = 0x81;
        assert!(refused(&packed_bytes(&[&long[..], &[0, 0, 0]].concat())).contains("beyond 2^64"));
        assert!(refused(&packed_bytes(&[0x80; 41])).contains("more than the |Y|·|Θ̃| = 4 weights"));
        assert!(refused(&packed_bytes(&[0x81, 0, 3, 4, 0])).contains("longer than its value needs"));
        assert!(refused(&packed_bytes(&[1, 3, 4, 0, 0x80, 0x80])).contains("bytes after the last weight"));
        assert!(refused("AQMEAA=A").contains("base64"));
        assert!(refused("AQMEAB==").contains("base64"), "{}", refused("AQMEAB=="));
        assert_eq!(decode(&encode(&good), 2, 2, 4).unwrap(), good);
        // u64::MAX itself is 10 bytes and decodes (the total check refuses it afterwards).
        let max = encode(&[vec![u64::MAX]]);
        assert_eq!(decode(&max, 1, 1, u64::MAX).unwrap(), vec![vec![u64::MAX]]);
    }

    /// The certified mechanism of a small binomial model at ε = 1 and `delta`.
    fn solved(delta: f64) -> Mechanism {
        let text = format!(
            "name = \"packed\"\nepsilon = [1.0]\ndelta = {delta}\n[parameter]\nlower = 0.0\nupper = 1.0\n\
             grid = {{ kind = \"midpoint\", points = 16 }}\nprior = {{ kind = \"uniform\" }}\n\
             [observation]\nfamily = \"binomial\"\ntrials = 20\n[loss]\nkind = \"squared\"\n"
        );
        let model = Model::from_spec(ModelSpec::from_toml(&text, "packed").unwrap()).unwrap();
        let solution = solve_model(&model, None, SolverChoice::Auto).unwrap().remove(0);
        match Release::certify(&model, &solution).unwrap() {
            Release::Dense(m) => m,
            Release::Compact(_) => panic!("a dense mechanism expected"),
        }
    }

    fn pretty(v: &Value) -> String {
        serde_json::to_string_pretty(v).unwrap()
    }

    #[test]
    fn a_packed_file_reads_back_as_the_same_mechanism_and_is_smaller() {
        for delta in [0.0, 0.01] {
            let m = solved(delta);
            let arrays = m.to_json_packed_above(usize::MAX);
            assert_eq!(m.to_json(), arrays, "a small mechanism keeps the readable arrays");
            assert_eq!(arrays["format_version"], if delta > 0.0 { 2 } else { 1 });
            let packed = m.to_json_packed_above(0);
            assert_eq!(packed["format_version"], 4);
            assert_eq!(packed["weights_encoding"], ENCODING);
            assert!(packed.get("columns").is_none() && packed["weights"].is_string());
            assert_eq!(packed["delta"].as_f64(), Some(delta), "version 4 always states delta");
            assert!(pretty(&packed).len() < pretty(&arrays).len());
            let back = Mechanism::from_json_str(&pretty(&packed), "packed").unwrap();
            assert!((0..m.n_observations()).all(|i| back.column(i) == m.column(i)));
            assert_eq!(
                (back.certificate(), back.total(), back.bayes_risk()),
                (m.certificate(), m.total(), m.bayes_risk())
            );
            let back = Release::from_json_str(&pretty(&packed), "packed").unwrap();
            let draws = |r: &Release| r.sample_batch(7, 20, &mut StdRng::seed_from_u64(5));
            assert_eq!(draws(&back), draws(&Release::Dense(m.clone())));
        }
    }

    /// Each forged `weights` of a packed file, refused with a `Field` error naming the field.
    #[test]
    fn forged_packed_weights_are_refused_naming_the_field() {
        let m = solved(0.0);
        let v = m.to_json_packed_above(0);
        let bytes = STANDARD.decode(v["weights"].as_str().unwrap()).unwrap();
        let columns: Vec<Vec<u64>> = (0..m.n_observations()).map(|i| m.column(i).to_vec()).collect();
        let first = bytes.iter().position(|b| b & 0x80 == 0).unwrap() + 1;
        let mut edited_sum = columns.clone();
        edited_sum[3][2] += 1;
        let mut truncated = bytes.clone();
        *truncated.last_mut().unwrap() |= 0x80;
        let mut minimal = bytes.clone();
        minimal.splice(..first, [0xff; 10].into_iter().chain([0x01]));
        let forged: Vec<(String, &str)> = vec![
            (format!("!{}", &v["weights"].as_str().unwrap()[1..]), "not valid base64"),
            (STANDARD.encode(&truncated), "ends inside a varint"),
            (STANDARD.encode(&minimal), "beyond 2^64"),
            (encode(&columns[1..]), "weights, but the embedded model has"),
            (STANDARD.encode([&bytes[..], &[0]].concat()), "bytes after the last weight"),
            (encode(&edited_sum), "column 3 (observation index 3) summing to"),
            (STANDARD.encode([&[bytes[0] | 0x80, 0], &bytes[1..]].concat()), "weights"),
        ];
        for (weights, needle) in forged {
            let mut f = v.clone();
            f["weights"] = weights.into();
            let e = Release::from_json_str(&pretty(&f), "forged").unwrap_err();
            let message = e.to_string();
            assert!(e.is_input() && message.contains(needle), "{needle}: {message}");
            match e {
                MechanismError::Artifact(ArtifactError { kind: ArtifactErrorKind::Field { field, .. }, .. }) => {
                    assert_eq!(field, "weights", "{message}")
                }
                other => panic!("a field error expected: {other}"),
            }
        }
        // The fields of the other form, and an encoding this reader does not know.
        let refused = |f: Value| Release::from_json_str(&pretty(&f), "forged").unwrap_err().to_string();
        let mut f = v.clone();
        f["weights_encoding"] = "zstd".into();
        assert!(refused(f).contains("weights_encoding is \"zstd\""));
        let mut f = v.clone();
        f["columns"] = m.to_json_packed_above(usize::MAX)["columns"].clone();
        assert!(refused(f).contains("columns is not part of format_version 4"));
        let mut f = m.to_json_packed_above(usize::MAX);
        f["weights"] = v["weights"].clone();
        assert!(refused(f).contains("weights is not part of format_version 1"));
        let mut f = v.clone();
        f.as_object_mut().unwrap().remove("weights");
        assert!(refused(f).contains("weights is missing"));
    }

    /// The decoded weights are priced from the file's own `observations` and `outputs`, so a
    /// file claiming a huge model is refused for its size before anything is decoded.
    #[test]
    fn packed_weights_are_priced_before_they_are_decoded() {
        let m = solved(0.0);
        let v = m.to_json_packed_above(0);
        let shape = crate::mechanism::shape_of(&pretty(&v), "packed").unwrap();
        assert!(shape.bytes >= decoded_bytes(m.n_observations(), m.n_outputs()));
        let mut f = v.clone();
        let many: Vec<u64> = (0..200_000).collect();
        f["observations"] = many.clone().into();
        f["outputs"] = many.into();
        let e = Release::from_json_str(&f.to_string(), "huge").unwrap_err();
        assert!(matches!(e, MechanismError::TooLarge(_)) && e.to_string().contains("\"weights\""), "{e}");
    }
}
