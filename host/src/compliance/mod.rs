//! Compliance tests (TEST01, TEST04, TEST06): their official audit.config files and the
//! verification of a compliance run against the submission's own runs, written in the official
//! scripts' wording.
