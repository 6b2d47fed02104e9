//! The software stack: this host, and the backend plugin's name, version and attributes
//! (read from the plugin by the host).

/// The software a system description names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SoftwareStack {
    /// `mlperf-host 0.1.0`.
    pub host: String,
    /// The backend the results are run with, when known.
    pub backend: Option<Backend>,
}

impl SoftwareStack {
    /// This build of mlperf-host, with `backend`.
    pub fn with_backend(backend: Option<Backend>) -> SoftwareStack {
        SoftwareStack {
            host: format!("mlperf-host {}", env!("CARGO_PKG_VERSION")),
            backend,
        }
    }
}

/// A backend plugin as it describes itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backend {
    pub name: String,
    pub version: String,
    /// The plugin's attributes (vendor, device, provider, precision, …).
    pub attributes: Vec<(String, String)>,
}

impl Backend {
    /// An attribute's value, unless it is empty or `none`.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty() && !v.eq_ignore_ascii_case("none"))
    }

    /// `framework` as MLPerf means it: the plugin's own `framework` attribute; else the
    /// runtime a known plugin names (ONNX Runtime and its execution provider); else the
    /// plugin itself, which then is the framework.
    pub fn framework(&self) -> String {
        if let Some(framework) = self.attribute("framework") {
            return framework.to_string();
        }
        if let Some(version) = self.attribute("onnxruntime_version") {
            return match self.attribute("provider") {
                Some(provider) if provider.ends_with("ExecutionProvider") => {
                    format!("ONNX Runtime {version} ({provider})")
                }
                Some(provider) => format!("ONNX Runtime {version} ({provider} execution provider)"),
                None => format!("ONNX Runtime {version}"),
            };
        }
        format!("{} plugin {}", self.name, self.version)
    }

    /// `name version` plus its driver, for `other_software_stack`.
    pub fn stack_entry(&self) -> String {
        let mut entry = format!("mlperf-host plugin {} {}", self.name, self.version);
        if let Some(driver) = self.attribute("driver_version") {
            entry += &format!(" (driver {driver})");
        }
        entry
    }

    /// What runs where, for `sw_notes`: device, provider and precision when the plugin says.
    pub fn notes(&self) -> String {
        let facts: Vec<String> = ["device", "provider", "precision"]
            .iter()
            .filter_map(|key| self.attribute(key).map(|value| format!("{key} {value}")))
            .collect();
        if facts.is_empty() {
            String::new()
        } else {
            format!("{} plugin: {}", self.name, facts.join(", "))
        }
    }
}
