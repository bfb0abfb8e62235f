//! A release from records, recorded in a ledger: the records' statistic under the mechanism's own
//! model ([`crate::data::statistic`]), then one [`Ledger::spend`] — the budget checked, the value
//! drawn by the exact sampler, the release committed with its value — and only then the value
//! handed back to be shown. `ubapp release` and the bindings' `release` both come here.

use rand::Rng;

use super::error::Result;
use super::Release;
use crate::data::{statistic, Records};
use crate::ledger::{Charge, Entry, Ledger};

/// A release made and recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The observation the records gave (its coordinates).
    pub observation: Vec<f64>,
    /// The output drawn (index into Θ̃).
    pub output: usize,
    /// The ledger's committed entry (its `value` is the output as printed).
    pub entry: Entry,
}

impl Release {
    /// The observation index the records give under this mechanism's model, or the first thing
    /// wrong with them (naming the source, the record and the column).
    pub fn observation_of(&self, records: &Records) -> Result<(usize, Vec<f64>)> {
        let name = crate::guard::text::quote(self.model().name());
        let y = statistic(self.model().family(), &name, records)?;
        match self.observation_index(&y) {
            Some(i) => Ok((i, y)),
            // The statistic of valid records is always in Y; a mismatch is this layer's bug.
            None => Err(super::MechanismError::argument(
                "data",
                format!("gives the observation {y:?}, which is not in the model's observation space"),
            )),
        }
    }

    /// The value of output `k` as `sample` prints it: coordinates separated by commas.
    pub fn output_text(&self, k: usize) -> String {
        self.output(k).iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
    }

    /// Release for observation index `i` from `dataset`, recorded in `ledger` before it is
    /// returned: the mechanism's certified (ε, δ) is charged against the dataset's budget (refused
    /// before sampling when it does not fit), one output is drawn with `rng`, and the entry with
    /// its value is committed. `mechanism` names the artifact in the ledger.
    pub fn release_recorded<R: Rng + ?Sized>(
        &self,
        i: usize,
        ledger: &mut dyn Ledger,
        dataset: &str,
        mechanism: &str,
        rng: &mut R,
    ) -> Result<(usize, Entry)> {
        crate::ledger::check_dataset(dataset)?;
        let charge = Charge {
            dataset: dataset.to_string(),
            eps: self.certified_eps(),
            delta: self.certified_delta(),
            fingerprint: self.fingerprint(),
            mechanism: mechanism.to_string(),
        };
        let mut drawn = None;
        let entry = ledger.spend(&charge, &mut || {
            let k = self.sample(i, rng);
            drawn = Some(k);
            self.output_text(k)
        })?;
        let k = drawn.expect("a committed release was drawn");
        Ok((k, entry))
    }

    /// [`Release::observation_of`] then [`Release::release_recorded`]: nothing is spent when the
    /// records are refused.
    pub fn release_from_records<R: Rng + ?Sized>(
        &self,
        records: &Records,
        ledger: &mut dyn Ledger,
        dataset: &str,
        mechanism: &str,
        rng: &mut R,
    ) -> Result<Recorded> {
        let (i, observation) = self.observation_of(records)?;
        let (output, entry) = self.release_recorded(i, ledger, dataset, mechanism, rng)?;
        Ok(Recorded { observation, output, entry })
    }
}
