//! The words of each finding: its title (from what it claims), its cause and what to change.
//! One file per rule category, like the rules.

mod accelerator;
mod communication;
mod compute;
mod host;
mod parallel;

use crate::analysis::advisor::{Claim, Finding};

/// A finding in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    /// One line.
    pub title: String,
    /// Why it happens.
    pub cause: &'static str,
    /// What to change.
    pub suggestions: &'static [&'static str],
}

/// The words of a finding.
pub fn words(f: &Finding) -> Words {
    claim_words(&f.claim)
}

/// The words of what a finding claims.
pub fn claim_words(c: &Claim) -> Words {
    match c {
        Claim::Parallel(c) => parallel::words(c),
        Claim::Communication(c) => communication::words(c),
        Claim::Host(c) => host::words(c),
        Claim::Compute(c) => compute::words(c),
        Claim::Accelerator(c) => accelerator::words(c),
    }
}
