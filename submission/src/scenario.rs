//! The scenario a result is filed under: LoadGen's four and Interactive, as the submission
//! tree's folders, the round tables and the detail logs name them.

use std::fmt;
use std::str::FromStr;

use mlperf_loadgen::TestScenario;

/// What the config files' model of an Interactive run ends with (mlperf.conf's
/// `llama3_1-8b-interactive.Server.ttft_latency`): the references run Interactive as a Server
/// run of that model.
pub const INTERACTIVE_SUFFIX: &str = "-interactive";

/// A scenario folder of the submission tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scenario {
    SingleStream,
    MultiStream,
    Server,
    Offline,
    /// A Server run held to an interactive model's tighter token latencies.
    Interactive,
}

impl Scenario {
    pub const ALL: [Scenario; 5] = [
        Scenario::SingleStream,
        Scenario::MultiStream,
        Scenario::Server,
        Scenario::Offline,
        Scenario::Interactive,
    ];

    /// The name of its folder (case matters, as it does to the official checker).
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::SingleStream => "SingleStream",
            Scenario::MultiStream => "MultiStream",
            Scenario::Server => "Server",
            Scenario::Offline => "Offline",
            Scenario::Interactive => "Interactive",
        }
    }

    /// The scenario named exactly `name`; None for any other folder or log value.
    pub fn parse(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The LoadGen scenario its run is: an Interactive folder holds a Server run.
    pub fn loadgen(self) -> TestScenario {
        match self {
            Scenario::SingleStream => TestScenario::SingleStream,
            Scenario::MultiStream => TestScenario::MultiStream,
            Scenario::Server | Scenario::Interactive => TestScenario::Server,
            Scenario::Offline => TestScenario::Offline,
        }
    }

    /// The folder a run of `model` in LoadGen's `scenario` is filed under, and the model
    /// without the Interactive suffix: a Server run of an `-interactive` model is Interactive.
    pub fn of_run(scenario: TestScenario, model: &str) -> (Scenario, &str) {
        match model.strip_suffix(INTERACTIVE_SUFFIX) {
            Some(base) if scenario == TestScenario::Server => (Scenario::Interactive, base),
            _ => (Scenario::from(scenario), model),
        }
    }

    /// LoadGen's own scenario, as a folder name (Interactive is not one).
    pub fn is_loadgen(self) -> bool {
        self != Scenario::Interactive
    }

    /// Whether LoadGen's early-stopping estimate decides the run (the scenarios with a
    /// latency tail); Offline keeps a minimum query count instead.
    pub fn has_early_stopping(self) -> bool {
        self.loadgen() != TestScenario::Offline
    }

    /// Whether the result is a latency (ms) rather than a rate.
    pub fn reports_latency(self) -> bool {
        matches!(self, Scenario::SingleStream | Scenario::MultiStream)
    }

    /// "SingleStream, MultiStream, Server, Offline, Interactive", for messages.
    pub fn names() -> String {
        Scenario::ALL.map(Scenario::as_str).join(", ")
    }
}

/// The LoadGen scenario a detail log's `effective_scenario` names, exactly as LoadGen writes it.
pub fn logged_scenario(name: &str) -> Option<TestScenario> {
    Scenario::parse(name)
        .filter(|s| s.is_loadgen())
        .map(Scenario::loadgen)
}

impl From<TestScenario> for Scenario {
    fn from(scenario: TestScenario) -> Scenario {
        match scenario {
            TestScenario::SingleStream => Scenario::SingleStream,
            TestScenario::MultiStream => Scenario::MultiStream,
            TestScenario::Server => Scenario::Server,
            TestScenario::Offline => Scenario::Offline,
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the scenarios.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name:?} is not a scenario ({})", Scenario::names())]
pub struct UnknownScenario {
    pub name: String,
}

impl FromStr for Scenario {
    type Err = UnknownScenario;

    fn from_str(name: &str) -> Result<Scenario, UnknownScenario> {
        Scenario::parse(name).ok_or_else(|| UnknownScenario { name: name.into() })
    }
}

impl serde::Serialize for Scenario {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Scenario {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Scenario, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_reads_back_from_its_own_name_and_no_other_spelling() {
        for scenario in Scenario::ALL {
            assert_eq!(scenario.as_str().parse::<Scenario>(), Ok(scenario));
            assert_eq!(Scenario::parse(&scenario.as_str().to_lowercase()), None);
        }
        let error = "Servr".parse::<Scenario>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "\"Servr\" is not a scenario (SingleStream, MultiStream, Server, Offline, Interactive)"
        );
    }

    #[test]
    fn an_interactive_folder_holds_a_server_run_and_loadgens_four_map_to_themselves() {
        assert_eq!(Scenario::Interactive.loadgen(), TestScenario::Server);
        for scenario in TestScenario::ALL {
            assert_eq!(Scenario::from(scenario).loadgen(), scenario);
        }
        assert!(!Scenario::Offline.has_early_stopping());
        assert!(Scenario::Interactive.has_early_stopping());
    }

    #[test]
    fn a_server_run_of_an_interactive_model_is_filed_as_interactive() {
        assert_eq!(
            Scenario::of_run(TestScenario::Server, "llama3_1-8b-interactive"),
            (Scenario::Interactive, "llama3_1-8b")
        );
        assert_eq!(
            Scenario::of_run(TestScenario::Server, "llama3_1-8b"),
            (Scenario::Server, "llama3_1-8b")
        );
        // Only a Server run is one.
        assert_eq!(
            Scenario::of_run(TestScenario::Offline, "llama2-70b-interactive"),
            (Scenario::Offline, "llama2-70b-interactive")
        );
    }
}
