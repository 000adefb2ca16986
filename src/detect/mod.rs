//! Detectors: what the advertised text does, independent of the lock.
//!
//! Each detector looks at the whole inventory (first sightings included: a
//! server can arrive already poisoned) and returns findings. This module is
//! the seam where poisoning, hidden-character, shadowing, squatting and
//! transport detectors plug in; today it holds the ambiguity detector.

mod ambiguous;

use crate::finding::Finding;
use crate::inventory::Inventory;
use crate::lock::Lock;

/// What a detector sees.
pub struct Context<'a> {
    /// What the servers advertise now.
    pub inventory: &'a Inventory,
    /// The lock the inventory is compared with (empty when there is none).
    pub lock: &'a Lock,
}

/// A detector: reads the context, reports findings.
pub trait Detector {
    /// Short name, for `--help` and evidence.
    fn name(&self) -> &'static str;
    /// Appends this detector's findings.
    fn inspect(&self, cx: &Context<'_>, out: &mut Vec<Finding>);
}

/// Every detector, in a fixed order.
pub fn all() -> Vec<Box<dyn Detector>> {
    vec![Box::new(ambiguous::Ambiguous)]
}

/// Runs every detector.
pub fn run(cx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for d in all() {
        d.inspect(cx, &mut out);
    }
    out
}
