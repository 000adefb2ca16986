//! The one integration-test binary: every test runs the real `git-kams`
//! binary in a temporary directory (a real git repository where it
//! matters), with a clean environment, a fixed clock and no user config.

mod approval_loop;
mod approvals;
mod architecture;
mod attacks;
mod bad_input;
mod capture;
mod capture_honest;
mod capture_limits;
mod capture_real;
mod common;
mod configs;
mod corpus;
mod counts;
mod crash;
mod deny;
mod drivers;
mod enforce;
mod escapes;
mod flow;
mod frozen;
mod fuzz_regressions;
mod git;
mod history;
mod hooks;
mod hostile;
mod imports;
mod indexes;
mod input_size;
mod launch;
mod log_cache;
mod manners;
mod manual;
mod metrics;
mod pin_findings;
mod precommit;
mod properties;
mod readme;
mod renames;
mod reports;
mod review;
mod sarif;
mod signatures;
mod special_files;
mod transport;
