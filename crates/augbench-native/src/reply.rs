//! Failure replies every module answers with: a `Failure` of a kind with its message, and the
//! offending request line attached as detail.

use augbench_protocol::protocol::{Failure, FailureKind};

pub(crate) fn failure(kind: FailureKind, error: String) -> Failure {
    Failure {
        error,
        kind,
        detail: String::new(),
    }
}

pub(crate) trait WithDetail {
    fn with_detail(self, detail: &str) -> Failure;
}

impl WithDetail for Failure {
    fn with_detail(mut self, detail: &str) -> Failure {
        self.detail = detail.to_string();
        self
    }
}
