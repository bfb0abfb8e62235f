//! The cost matrix and the LP's symmetry of one solve, each built at most once, on first need: a
//! [`super::SolvePlan`] owns them, and its estimate, its route, the reference risks and the
//! certification read them.

use std::sync::{Arc, OnceLock};

use ndarray::Array2;

use crate::lp::{cost_matrix, MemoryBudget, SizeError, Symmetry};
use crate::model::{Model, Neighbours};

/// The cost matrix C\[i, k\] = c\[k, i\] and the LP's symmetry, each built at most once, on first
/// need, and shared by whoever needs them after.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    cost: OnceLock<Arc<Array2<f64>>>,
    symmetry: OnceLock<Option<Arc<Symmetry>>>,
}

impl Shared {
    /// The model's cost matrix, built within `memory` the first time it is asked for (a refusal
    /// is not kept: asked again, the size is checked again, before any allocation).
    pub(crate) fn cost(&self, model: &Model, memory: MemoryBudget) -> std::result::Result<Arc<Array2<f64>>, SizeError> {
        if let Some(cost) = self.cost.get() {
            return Ok(cost.clone());
        }
        let built = Arc::new(cost_matrix(model, memory)?);
        Ok(self.cost.get_or_init(|| built).clone())
    }

    /// The cost matrix, where something has built it already (`None`: nothing has).
    pub(crate) fn built_cost(&self) -> Option<Arc<Array2<f64>>> {
        self.cost.get().cloned()
    }

    /// The symmetry of the model's LP on `cost` (the model's own cost matrix), found the first time
    /// it is asked for.
    pub(crate) fn symmetry(&self, model: &Model, cost: &Array2<f64>, neighbours: &Neighbours) -> Option<Arc<Symmetry>> {
        self.symmetry
            .get_or_init(|| {
                Symmetry::find(cost, &model.family.observations(), &model.outputs, neighbours).map(Arc::new)
            })
            .clone()
    }
}
