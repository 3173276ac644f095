//! What a face asks to open, before anything is read: the inputs, the title, how to load and
//! how to analyse. Every face opens a job through a [`Plan`] — `Session::open` (report,
//! whatif, export, snapshot), the TUI's background load (progress counted for its loading
//! screen), and the diff (two plans loaded one after the other, analysed at once) — so that
//! what opening means (discovery, the demo, the scope checks) is written once.

use super::{Input, LoadOptions, Loaded, Session, Settings};
use crate::analysis::Options;
use crate::error::Error;
use crate::ingest::progress::Counters;
use std::path::PathBuf;

/// A job to open.
pub struct Plan {
    /// The inputs (discovered files and folders, or a demo job's ranks).
    pub inputs: Vec<Input>,
    /// What the job is called (`demo cluster`, a path, `N paths`).
    pub title: String,
    /// How to load it.
    pub load: LoadOptions,
    /// How to analyse it.
    pub analysis: Options,
}

/// How a load shows its progress.
pub enum Progress<'a> {
    /// On stderr when it is a terminal and the load is slow; skipped inputs said there.
    Stderr,
    /// Silently, bumping counters a view draws (the TUI's loading screen).
    Counted(&'a Counters),
}

impl Plan {
    /// The plan of `paths` (none: the demo job of the settings' scenario).
    pub fn of(paths: &[PathBuf], settings: &Settings) -> Result<Plan, Error> {
        Ok(Plan {
            inputs: super::inputs(paths, settings.scenario)?,
            title: super::title(paths, settings.scenario),
            load: settings.load_options()?,
            analysis: settings.analysis_options()?,
        })
    }

    /// The plan of given `inputs` called `title`.
    pub fn with_inputs(
        inputs: Vec<Input>,
        title: String,
        settings: &Settings,
    ) -> Result<Plan, Error> {
        Ok(Plan {
            inputs,
            title,
            load: settings.load_options()?,
            analysis: settings.analysis_options()?,
        })
    }

    /// Loads the inputs.
    pub fn load(&self, progress: Progress) -> Result<Loaded, Error> {
        match progress {
            Progress::Stderr => super::load(&self.inputs, &self.load),
            Progress::Counted(c) => super::load_counted(&self.inputs, &self.load, c),
        }
    }

    /// The loaded job checked against the scope and analysed.
    pub fn analyse(self, loaded: Loaded) -> Result<Session, Error> {
        Session::analyse(loaded, self.analysis, self.title, self.inputs)
    }

    /// Loads and analyses.
    pub fn open(self, progress: Progress) -> Result<Session, Error> {
        let loaded = self.load(progress)?;
        self.analyse(loaded)
    }
}
