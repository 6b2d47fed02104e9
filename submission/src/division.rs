//! The division a submitter's results are in: the top folders of the submission tree.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Division {
    /// The default, as in a drafted system description.
    #[default]
    Closed,
    Open,
    Network,
}

impl Division {
    pub const ALL: [Division; 3] = [Division::Closed, Division::Open, Division::Network];

    /// The name of its folder and of the system description's `division`.
    pub fn as_str(self) -> &'static str {
        match self {
            Division::Closed => "closed",
            Division::Open => "open",
            Division::Network => "network",
        }
    }

    /// The division named exactly `name`.
    pub fn parse(name: &str) -> Option<Division> {
        Division::ALL.into_iter().find(|d| d.as_str() == name)
    }

    /// "closed, open, network", for messages.
    pub fn names() -> String {
        Division::ALL.map(Division::as_str).join(", ")
    }

    /// Closed and network results keep the rules of the closed division (the official
    /// LoadGen, the accuracy targets, the compliance tests); open ones may differ.
    pub fn is_open(self) -> bool {
        self == Division::Open
    }

    /// Whether the system must be (Some(true)) or must not be (Some(false)) a network
    /// system; the open division takes either.
    pub fn requires_network_system(self) -> Option<bool> {
        match self {
            Division::Network => Some(true),
            Division::Closed => Some(false),
            Division::Open => None,
        }
    }
}

impl fmt::Display for Division {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the divisions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name:?} is not a division ({})", Division::names())]
pub struct UnknownDivision {
    pub name: String,
}

impl FromStr for Division {
    type Err = UnknownDivision;

    fn from_str(name: &str) -> Result<Division, UnknownDivision> {
        Division::parse(name).ok_or_else(|| UnknownDivision { name: name.into() })
    }
}

impl serde::Serialize for Division {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisions_read_back_from_their_folder_names_only() {
        for division in Division::ALL {
            assert_eq!(division.as_str().parse::<Division>(), Ok(division));
        }
        assert_eq!(Division::parse("Closed"), None);
        assert_eq!(
            "close".parse::<Division>().unwrap_err().to_string(),
            "\"close\" is not a division (closed, open, network)"
        );
    }
}
