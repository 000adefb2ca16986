//! What is known of an inventory before the detectors run on it, and what
//! a run learned of it: values the edge keeps between runs (the findings
//! memo, [`crate::cache::findings`]) and hands to [`super::run_with`], so
//! that findings that depend on nothing new are not found again. Nothing
//! here reads or writes anything.

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
    /// ([`crate::names::text`]; `None` for a server's own fields, and a
    /// tool read without its text).
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

/// The findings that depend on the inventory and the lock, for one lock.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settled {
    /// The lock's index key (see [`crate::cache::lock::Key::name`]).
    pub lock: String,
    /// Every finding of the detectors that depend on nothing but the
    /// inventory and the lock, with the severity the lock gave it.
    pub findings: Vec<Finding>,
}

/// The findings of the whole-inventory passes that depend on the
/// inventory's names and the lock ([`super::Depends::InventoryAndLock`] at
/// [`super::Level::Inventory`]: shadowed and squatted names), for one
/// lock: an inventory with the same names scanned against that lock has
/// them too.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Passes {
    /// The lock's index key.
    pub lock: String,
    /// Each such pass's findings, in detector order.
    pub found: Vec<Vec<Finding>>,
}

/// What is remembered of an inventory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Memo {
    /// Per server of the inventory, in order; empty when
    /// [`crate::cache::findings::load`] found
    /// the settled findings of the lock it was asked for (they are all a
    /// scan then needs).
    pub servers: Vec<Server>,
    /// What was found against the lock last scanned with it.
    pub settled: Option<Settled>,
    /// What the passes on names found against that lock.
    pub passes: Option<Passes>,
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
    /// The index key of the lock the run was against, if any: the findings
    /// below are remembered for that lock only.
    pub lock: Option<String>,
    /// Where the settled findings ([`Settled::findings`]) are among the
    /// run's.
    pub settled: std::ops::Range<usize>,
    /// Where each pass on names put its findings ([`Passes::found`]),
    /// when they are as the pass found them (`None`: not remembered).
    pub passes: Option<Vec<std::ops::Range<usize>>>,
}

impl Learned {
    /// The memo to store, with `found` the run's findings.
    pub fn view<'a>(&'a self, found: &'a [Finding]) -> View<'a> {
        let lock = self.lock.as_deref();
        View {
            servers: &self.servers,
            settled: lock.map(|lock| (lock, &found[self.settled.clone()])),
            passes: lock.zip(self.passes.as_ref()).map(|(lock, passes)| {
                let found = passes.iter().map(|r| &found[r.clone()]).collect();
                (lock, found)
            }),
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
    /// [`Memo::settled`]: the lock's index key and the findings.
    pub settled: Option<(&'a str, &'a [Finding])>,
    /// [`Memo::passes`]: the lock's index key and each pass's findings.
    pub passes: Option<(&'a str, Vec<&'a [Finding]>)>,
}

impl View<'_> {
    /// The memo it is.
    #[cfg(test)]
    fn to_memo(&self) -> Memo {
        Memo {
            servers: self.servers.to_vec(),
            settled: self.settled.map(|(lock, findings)| Settled {
                lock: lock.to_string(),
                findings: findings.to_vec(),
            }),
            passes: self.passes.as_ref().map(|(lock, found)| Passes {
                lock: lock.to_string(),
                found: found.iter().map(|f| f.to_vec()).collect(),
            }),
            earlier: false,
        }
    }
}

impl Memo {
    /// The memo to store.
    pub fn view(&self) -> View<'_> {
        View {
            servers: &self.servers,
            settled: self
                .settled
                .as_ref()
                .map(|s| (s.lock.as_str(), s.findings.as_slice())),
            passes: self.passes.as_ref().map(|p| {
                let found = p.found.iter().map(Vec::as_slice).collect();
                (p.lock.as_str(), found)
            }),
        }
    }
}
