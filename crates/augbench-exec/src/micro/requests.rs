//! The requests the micro methodology sends and what a failed one becomes: the `prepare` request
//! of a transform under the settings, and a worker's failure mapped to an `unsupported`/`error`
//! result (a lost worker stays an error of the run).

use augbench_catalog::registry::TransformSpec;
use augbench_core::results::{Status, TransformResult};
use augbench_protocol::client::WorkerError;
use augbench_protocol::protocol::{FailureKind, PrepareRequest};

use super::settings::MicroSettings;

/// Maps a failed request to an `unsupported`/`error` result (the error named by its kind, a
/// `contract` reason marked as such); a lost worker stays an `Err`.
pub(crate) fn settle<T>(
    r: Result<T, WorkerError>,
    params: &serde_json::Value,
) -> Result<Result<T, TransformResult>, WorkerError> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(WorkerError::Failed { failure, .. }) => {
            let reason = match failure.detail.trim() {
                "" => failure.error,
                d => format!("{}\n{}", failure.error, d),
            };
            Ok(Err(match failure.kind {
                FailureKind::Unsupported => {
                    TransformResult::not_measured(Status::Unsupported, params.clone(), reason)
                }
                kind => TransformResult::failed(params.clone(), kind.name(), reason),
            }))
        }
        Err(e) => Err(e),
    }
}

pub(crate) fn prepare_request(
    spec: &TransformSpec,
    params: &serde_json::Value,
    set: &MicroSettings,
) -> PrepareRequest {
    PrepareRequest {
        transform: spec.name.clone(),
        params: params.clone(),
        device: set.device.clone(),
        batch: set.batch,
        seed: None,
    }
}
