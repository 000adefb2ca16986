//! What is known of an inventory before the detectors run on it, and what
//! a run learned of it: values the edge keeps between runs (the findings
//! memo, [`crate::cache::findings`]) and hands to [`super::run_with`], so
//! that findings that depend on nothing new are not found again. Nothing
//! here reads or writes anything, and nothing names a lock: what was found
//! against a lock is handed in only for the lock of this run, which the
//! edge tells by the key it keeps beside it.

use crate::canon::Digest;
use crate::finding::Finding;

/// What is remembered of one tool (kept as it is in the findings memo,
/// `cache/findings.rs`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Remembered {
    /// The pure detectors' findings, before the lock moved their severity.
    pub pure: Vec<Finding>,
    /// True when no other per-tool detector reported anything.
    pub quiet: bool,
    /// The name of the tool's text it was found in
    /// ([`crate::inventory::text_name`]; `None` for a server's own fields,
    /// and a tool read without its text).
    pub text: Option<Digest>,
}

/// What is remembered of one server: its own fields, and its tools in
/// order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Server {
    /// The server's own fields.
    pub server: Remembered,
    /// Each tool, in the inventory's order.
    pub tools: Vec<Remembered>,
}

/// What is remembered of an inventory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Memo {
    /// Per server of the inventory, in order; empty when
    /// [`crate::cache::findings::load`] found the settled findings (they
    /// are all a scan then needs).
    pub servers: Vec<Server>,
    /// The settled findings against this run's lock: every finding of the
    /// detectors that depend on nothing but the inventory and the lock,
    /// with the severity the lock gave it.
    pub settled: Option<Vec<Finding>>,
    /// What the whole-inventory passes that depend on the inventory's
    /// names and the lock ([`super::Depends::InventoryAndLock`] at
    /// [`super::Level::Inventory`]: shadowed and squatted names) found
    /// against this run's lock, each pass's findings in detector order:
    /// an inventory with the same names scanned against that lock has
    /// them too.
    pub passes: Option<Vec<Vec<Finding>>>,
    /// True when it is another inventory's, with the same names
    /// ([`crate::cache::findings::load_earlier`]): only a tool whose text it
    /// names may be taken
    /// from it.
    pub earlier: bool,
}

/// What a run learned of an inventory ([`super::run_with`]), to store: a
/// memo whose findings are the run's own, named by where they are among
/// them, so that they are not copied: the copies were live at the scan's
/// peak (docs/performance.md, "Tenth pass", 89e37f2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Learned {
    /// Per server of the inventory, in order.
    pub servers: Vec<Server>,
    /// Where the settled findings ([`Memo::settled`]) are among the run's,
    /// when they are remembered ([`super::Learn::InventoryAndLock`]): for
    /// the lock the run was against only.
    pub settled: Option<std::ops::Range<usize>>,
    /// Where each pass on names put its findings ([`Memo::passes`]), when
    /// they are remembered as the pass found them (`None`: not
    /// remembered), for that lock only.
    pub passes: Option<Vec<std::ops::Range<usize>>>,
}

impl Learned {
    /// The memo to store, with `found` the run's findings.
    pub fn view<'a>(&'a self, found: &'a [Finding]) -> View<'a> {
        View {
            servers: &self.servers,
            settled: self.settled.clone().map(|r| &found[r]),
            passes: self
                .passes
                .as_ref()
                .map(|passes| passes.iter().map(|r| &found[r.clone()]).collect()),
        }
    }

    /// The memo a later run would load, with `found` the run's findings.
    #[cfg(test)]
    pub fn memo(&self, found: &[Finding]) -> Memo {
        self.view(found).to_memo()
    }
}

/// A memo to store, its findings borrowed: from a [`Learned`], or a
/// [`Memo`].
pub struct View<'a> {
    /// [`Memo::servers`].
    pub servers: &'a [Server],
    /// [`Memo::settled`].
    pub settled: Option<&'a [Finding]>,
    /// [`Memo::passes`].
    pub passes: Option<Vec<&'a [Finding]>>,
}

impl View<'_> {
    /// The memo it is.
    #[cfg(test)]
    fn to_memo(&self) -> Memo {
        Memo {
            servers: self.servers.to_vec(),
            settled: self.settled.map(<[Finding]>::to_vec),
            passes: self
                .passes
                .as_ref()
                .map(|found| found.iter().map(|f| f.to_vec()).collect()),
            earlier: false,
        }
    }
}

impl Memo {
    /// The memo to store.
    pub fn view(&self) -> View<'_> {
        View {
            servers: &self.servers,
            settled: self.settled.as_deref(),
            passes: self
                .passes
                .as_ref()
                .map(|p| p.iter().map(Vec::as_slice).collect()),
        }
    }
}
