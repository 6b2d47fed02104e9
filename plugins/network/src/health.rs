//! Before the run: every endpoint is live and ready, serves the model, and describes it the
//! same way; the model's metadata fits the config. Any failure is an error naming the
//! endpoint, raised at create, before anything is timed.

use std::future::Future;
use std::time::Duration;

use crate::config::Config;
use crate::dispatch::Node;
use crate::model::Io;
use crate::protocol::Client;

/// What the checks learnt.
#[derive(Debug)]
pub(crate) struct Checked {
    pub io: Io,
    /// Each endpoint's server, "name version".
    pub servers: Vec<String>,
    pub platform: String,
}

pub(crate) async fn check_nodes(config: &Config, nodes: &[Node]) -> Result<Checked, String> {
    let mut checked: Option<Checked> = None;
    for node in nodes {
        let (io, server, platform) = check_node(config, node)
            .await
            .map_err(|e| format!("endpoint {}: {e}", node.name))?;
        match &mut checked {
            None => {
                checked = Some(Checked {
                    io,
                    servers: vec![server],
                    platform,
                })
            }
            Some(first) => {
                if io != first.io {
                    return Err(format!(
                        "endpoint {} serves {:?} as {} -> {}: {}, but endpoint {} as {} -> {}: {}",
                        node.name,
                        config.model_name(),
                        io.describe_input(),
                        io.target.output,
                        io.target.output_datatype.name(),
                        nodes[0].name,
                        first.io.describe_input(),
                        first.io.target.output,
                        first.io.target.output_datatype.name(),
                    ));
                }
                first.servers.push(server);
            }
        }
    }
    checked.ok_or_else(|| "no endpoints".to_string())
}

async fn check_node(config: &Config, node: &Node) -> Result<(Io, String, String), String> {
    let limit = config.timeout();
    let client = &node.client;
    if !within(limit, "is the server live", client.server_live()).await? {
        return Err("the server says it is not live (/v2/health/live)".into());
    }
    if !within(limit, "is the server ready", client.server_ready()).await? {
        return Err("the server says it is not ready (/v2/health/ready)".into());
    }
    let model = config.model_name();
    let version = &config.model_version;
    let not_ready = || {
        let version = match version.is_empty() {
            true => String::new(),
            false => format!(" version {version:?}"),
        };
        format!("model {model:?}{version} is not ready (or not served) there")
    };
    // Servers answer a model they do not have with false, 404 or an error status.
    match within(
        limit,
        "is the model ready",
        client.model_ready(model, version),
    )
    .await
    {
        Ok(true) => {}
        Ok(false) => return Err(not_ready()),
        Err(e) => return Err(format!("{}: {e}", not_ready())),
    }
    let meta = within(
        limit,
        "model metadata",
        client.model_metadata(model, version),
    )
    .await?;
    let io = Io::resolve(config, &meta).map_err(|e| format!("model {model:?}: {e}"))?;
    // Only for the record: servers need not implement it.
    let server = match within(limit, "server metadata", client.server_metadata()).await {
        Ok(server) => format!("{} {}", server.name, server.version)
            .trim()
            .to_string(),
        Err(_) => String::new(),
    };
    let server = if server.is_empty() {
        "unknown".to_string()
    } else {
        server
    };
    Ok((io, server, meta.platform))
}

/// OpenAI endpoints: each lists the model among those it serves (`/v1/models`).
pub(crate) async fn check_openai_nodes(config: &Config, nodes: &[Node]) -> Result<(), String> {
    let model = config.model_name();
    for node in nodes {
        let Client::OpenAi(client) = &node.client else {
            return Err(format!("endpoint {}: not an OpenAI client", node.name));
        };
        let served = within(config.timeout(), "GET /v1/models", client.models())
            .await
            .map_err(|e| format!("endpoint {}: {e}", node.name))?;
        if !served.iter().any(|id| id == model) {
            return Err(format!(
                "endpoint {}: model {model:?} is not served there (GET /v1/models lists {served:?})",
                node.name
            ));
        }
    }
    Ok(())
}

async fn within<T>(
    limit: Duration,
    what: &str,
    call: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    match tokio::time::timeout(limit, call).await {
        Ok(result) => result.map_err(|e| format!("{what}: {e}")),
        Err(_) => Err(format!(
            "{what}: no answer within {} ms (timeout_ms)",
            limit.as_millis()
        )),
    }
}
