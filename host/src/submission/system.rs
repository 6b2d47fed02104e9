//! The system description, `systems/<system>.json`: drafted from this machine, checked against
//! the fields the submission rules require.
