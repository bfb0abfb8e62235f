//! Which comparison a model gets: the one decision `ubapp compare`, the bindings' `compare` and
//! `ubapp report` share.

use super::{check_model, CompareError};
use crate::eval::Setting;
use crate::model::Model;

/// The comparison a model gets.
#[derive(Debug)]
pub enum CompareRoute {
    /// One data holder of Bernoulli records under squared or absolute loss: the single-holder
    /// table of the literature's baselines ([`compare`](super::compare)), in this setting.
    SingleHolder(Setting),
    /// One data holder of a model that table does not cover (the error says why): the party
    /// comparison with every record at one holder, read as one holder's
    /// ([`PartyComparison::single_holder`](super::parties::PartyComparison::single_holder)).
    OneHolder(CompareError),
    /// Several parties — a `[parties]` section, or numbers of parties asked for: the party
    /// comparison ([`compare_parties`](super::parties::compare_parties)).
    Parties,
}

impl CompareRoute {
    /// The route of `model`, given whether numbers of parties were asked for (`--parties`,
    /// `parties=`). `source` names the model in [`CompareRoute::OneHolder`]'s reason: its file for
    /// the CLI.
    pub fn for_model(model: &Model, parties_asked: bool, source: &str) -> CompareRoute {
        if parties_asked || model.parties() > 1 {
            return CompareRoute::Parties;
        }
        match check_model(model, source) {
            Ok(setting) => CompareRoute::SingleHolder(setting),
            Err(why) => CompareRoute::OneHolder(why),
        }
    }
}
