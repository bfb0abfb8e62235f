//! What a deployer checks a mechanism file against: the model's fingerprint (SHA-256 of a
//! canonical form) and the first semantic difference between two validated models.
//!
//! The canonical form is the validated spec with every CSV file's data inline, with the parts
//! that do not change the problem removed (`name`, `description` and the `epsilon` list) and the
//! neighbour list of a table family in its validated form (pairs (a, b), a < b, sorted, without
//! repeats), serialised as compact JSON (keys in a fixed order, numbers in their shortest
//! round-trip form) after the tag `ubapp-model-v1`. It holds only numbers the user wrote, none the
//! code derived, so the same model gives the same fingerprint on every platform. Two models with
//! the same fingerprint define the same problem; the converse need not hold (a grid written as
//! `values` and the same points as `midpoint` differ in form), which is what
//! [`Model::first_difference`] is for.

use sha2::{Digest, Sha256};

use super::spec::{MatrixSource, ObservationSpec};
use super::{Family, Model};

/// The tag heading the canonical form (bump it if the form ever changes).
const CANONICAL_TAG: &str = "ubapp-model-v1";

impl Model {
    /// The canonical form the fingerprint hashes (see the module docs).
    pub fn canonical_form(&self) -> String {
        let mut spec = self.spec.clone();
        spec.name.clear();
        spec.description.clear();
        spec.epsilon.clear();
        if let (ObservationSpec::Table { neighbours, .. }, Family::Table { edges, .. }) =
            (&mut spec.observation, &self.family)
        {
            *neighbours = MatrixSource::Inline(edges.iter().map(|&(a, b)| vec![a as f64, b as f64]).collect());
        }
        let body = serde_json::to_string(&spec).expect("a model spec serialises to JSON");
        format!("{CANONICAL_TAG}\n{body}")
    }

    /// SHA-256 of [`Model::canonical_form`], as 64 lowercase hexadecimal digits.
    pub fn fingerprint(&self) -> String {
        let digest = Sha256::digest(self.canonical_form().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The first way in which this model defines a different problem from `trusted`, as a
    /// phrase naming the model field (e.g. `observation.family: table here, binomial in the
    /// trusted model`), or `None` when both define the same problem: the same family, observation
    /// space and neighbour relation, likelihood, parameter grid, prior weights, output grid, loss,
    /// objective and δ. Names, descriptions and ε lists are not compared.
    pub fn first_difference(&self, trusted: &Model) -> Option<String> {
        let (a, b) = (&self.family, &trusted.family);
        if a.name() != b.name() {
            return Some(format!("observation.family: {} here, {} in the trusted model", a.name(), b.name()));
        }
        let (ya, yb) = (a.observations(), b.observations());
        if ya != yb {
            return Some(format!("the observation space: |Y| = {} here, {} in the trusted model", ya.len(), yb.len()));
        }
        let (na, nb) = (a.neighbours(), b.neighbours());
        if na.edge_count() != nb.edge_count() || !na.edges().eq(nb.edges()) {
            return Some(format!(
                "the neighbour relation: {} neighbour pairs here, {} in the trusted model{}",
                na.edge_count(),
                nb.edge_count(),
                if na.edge_count() == nb.edge_count() { " (different pairs)" } else { "" }
            ));
        }
        if self.theta != trusted.theta {
            return Some(format!(
                "parameter.grid: {} points here, {} in the trusted model{}",
                self.theta.len(),
                trusted.theta.len(),
                if self.theta.len() == trusted.theta.len() { " (different values)" } else { "" }
            ));
        }
        if a != b {
            let field = match a {
                Family::Binomial { .. } => "observation.trials",
                Family::Poisson { .. } => "observation.records, observation.cap",
                Family::Multinomial { .. } => "observation.categories, observation.records",
                Family::Table { .. } => "observation.likelihood",
            };
            return Some(format!("{field}: the likelihood differs from the trusted model's"));
        }
        if self.prior != trusted.prior {
            return Some("parameter.prior: the prior weights differ from the trusted model's".to_string());
        }
        if self.exact != trusted.exact {
            return Some("parameter.prior: the closed-form prior differs from the trusted model's".to_string());
        }
        if self.outputs != trusted.outputs {
            return Some(format!(
                "output.grid: {} points here, {} in the trusted model{}",
                self.outputs.len(),
                trusted.outputs.len(),
                if self.outputs.len() == trusted.outputs.len() { " (different values)" } else { "" }
            ));
        }
        if self.loss != trusted.loss {
            return Some(format!(
                "loss: {} here, {} in the trusted model{}",
                self.loss.name(),
                trusted.loss.name(),
                if self.loss.name() == trusted.loss.name() { " (different values)" } else { "" }
            ));
        }
        if self.objective != trusted.objective {
            let name = |o: super::Objective| format!("{o:?}").to_lowercase();
            return Some(format!(
                "objective: {} here, {} in the trusted model",
                name(self.objective),
                name(trusted.objective)
            ));
        }
        if self.delta != trusted.delta {
            return Some(format!("delta: {} here, {} in the trusted model", self.delta, trusted.delta));
        }
        if self.constraints != trusted.constraints {
            let (here, there) = (self.constraints.names, trusted.constraints.names);
            return Some(if here == there {
                format!("constraints: {} in both, with different data (estimate or fixed_point)", here.label())
            } else {
                format!("constraints: {} here, {} in the trusted model", here.label(), there.label())
            });
        }
        None
    }
}

/// True when `hex` is a well-formed fingerprint: 64 hexadecimal digits (either case).
pub fn is_fingerprint(hex: &str) -> bool {
    hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())
}
