//! KServe v2 over gRPC (`inference.GRPCInferenceService`): one HTTP/2 connection per endpoint
//! carries every request in flight. Inputs go as `raw_input_contents`; answers are read from
//! `raw_output_contents` or, from servers that answer with typed values, `contents`.

use std::time::Duration;

use http::Uri;
use tonic::transport::{Channel, Endpoint};

use super::{with_causes, Infer, ModelMeta, ServerMeta, Target, TensorMeta};
use crate::kserve::grpc_inference_service_client::GrpcInferenceServiceClient;
use crate::kserve::model_infer_request::{InferInputTensor, InferRequestedOutputTensor};
use crate::kserve::{
    ModelInferRequest, ModelMetadataRequest, ModelReadyRequest, ServerLiveRequest,
    ServerMetadataRequest, ServerReadyRequest,
};
use crate::tensor::contents_to_bytes;

/// The most a request may be: large Offline batches exceed tonic's 4 MiB default.
const MAX_MESSAGE_BYTES: usize = 1 << 30;

#[derive(Clone)]
pub(crate) struct GrpcClient {
    client: GrpcInferenceServiceClient<Channel>,
}

impl GrpcClient {
    /// `max_response`: the largest answer decoded (`max_response_bytes`).
    pub(crate) fn new(
        uri: Uri,
        connect_timeout: Duration,
        max_response: usize,
    ) -> Result<GrpcClient, String> {
        let channel = Endpoint::from(uri)
            .connect_timeout(connect_timeout)
            .tcp_nodelay(true)
            .connect_lazy();
        let client = GrpcInferenceServiceClient::new(channel)
            .max_decoding_message_size(max_response)
            .max_encoding_message_size(MAX_MESSAGE_BYTES);
        Ok(GrpcClient { client })
    }

    pub(crate) async fn server_live(&self) -> Result<bool, String> {
        let answer = self.client.clone().server_live(ServerLiveRequest {}).await;
        Ok(answer
            .map_err(|s| status("ServerLive", &s))?
            .into_inner()
            .live)
    }

    pub(crate) async fn server_ready(&self) -> Result<bool, String> {
        let answer = self
            .client
            .clone()
            .server_ready(ServerReadyRequest {})
            .await;
        Ok(answer
            .map_err(|s| status("ServerReady", &s))?
            .into_inner()
            .ready)
    }

    pub(crate) async fn server_metadata(&self) -> Result<ServerMeta, String> {
        let answer = self
            .client
            .clone()
            .server_metadata(ServerMetadataRequest {})
            .await
            .map_err(|s| status("ServerMetadata", &s))?
            .into_inner();
        Ok(ServerMeta {
            name: answer.name,
            version: answer.version,
        })
    }

    pub(crate) async fn model_ready(&self, model: &str, version: &str) -> Result<bool, String> {
        let request = ModelReadyRequest {
            name: model.into(),
            version: version.into(),
        };
        match self.client.clone().model_ready(request).await {
            Ok(answer) => Ok(answer.into_inner().ready),
            // Servers answer NOT_FOUND for a model they do not have.
            Err(s) if s.code() == tonic::Code::NotFound => Ok(false),
            Err(s) => Err(status("ModelReady", &s)),
        }
    }

    pub(crate) async fn model_metadata(
        &self,
        model: &str,
        version: &str,
    ) -> Result<ModelMeta, String> {
        let request = ModelMetadataRequest {
            name: model.into(),
            version: version.into(),
        };
        let answer = self
            .client
            .clone()
            .model_metadata(request)
            .await
            .map_err(|s| status("ModelMetadata", &s))?
            .into_inner();
        let tensors = |list: Vec<crate::kserve::model_metadata_response::TensorMetadata>| {
            list.into_iter()
                .map(|t| TensorMeta {
                    name: t.name,
                    datatype: t.datatype,
                    shape: t.shape,
                })
                .collect()
        };
        Ok(ModelMeta {
            name: answer.name,
            platform: answer.platform,
            inputs: tensors(answer.inputs),
            outputs: tensors(answer.outputs),
        })
    }

    pub(crate) async fn infer(&self, target: &Target, request: Infer) -> Result<Vec<u8>, String> {
        let message = ModelInferRequest {
            model_name: target.model.clone(),
            model_version: target.version.clone(),
            inputs: vec![InferInputTensor {
                name: target.input.clone(),
                datatype: target.input_datatype.name().into(),
                shape: request.shape,
                ..Default::default()
            }],
            outputs: vec![InferRequestedOutputTensor {
                name: target.output.clone(),
                ..Default::default()
            }],
            raw_input_contents: vec![request.data],
            ..Default::default()
        };
        let answer = self
            .client
            .clone()
            .model_infer(message)
            .await
            .map_err(|s| status("ModelInfer", &s))?
            .into_inner();
        let single = answer.outputs.len() == 1;
        let Some(position) = answer
            .outputs
            .iter()
            .position(|o| o.name == target.output || single)
        else {
            let names: Vec<&str> = answer.outputs.iter().map(|o| o.name.as_str()).collect();
            return Err(format!(
                "ModelInfer: the answer has no output {:?} (it has {names:?})",
                target.output
            ));
        };
        let output = &answer.outputs[position];
        if output.datatype != target.output_datatype.name() {
            return Err(format!(
                "ModelInfer: output {:?} is {}, but the model's metadata said {}",
                target.output,
                output.datatype,
                target.output_datatype.name()
            ));
        }
        if !answer.raw_output_contents.is_empty() {
            // Raw contents are in output order, one per output.
            return answer
                .raw_output_contents
                .get(position)
                .map(|raw| raw.to_vec())
                .ok_or_else(|| {
                    format!(
                        "ModelInfer: {} raw output(s) for {} outputs",
                        answer.raw_output_contents.len(),
                        answer.outputs.len()
                    )
                });
        }
        let contents = output.contents.as_ref().ok_or_else(|| {
            format!(
                "ModelInfer: output {:?} has neither raw nor typed contents",
                target.output
            )
        })?;
        contents_to_bytes(target.output_datatype, contents).map_err(|e| format!("ModelInfer: {e}"))
    }
}

/// A gRPC error in one line: the call, the code and the server's message (a refused or
/// broken connection shows as `Unavailable` with its cause).
fn status(call: &str, status: &tonic::Status) -> String {
    with_causes(
        format!("{call}: {:?}: {}", status.code(), status.message()),
        status,
    )
}
