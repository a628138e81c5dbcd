//! The micro methodology's view of a worker: the `Session` trait (prepare, check, time) that
//! setup and the timed runs talk through, implemented by the protocol's `Worker`; tests script
//! their own.

use std::time::Duration;

use augbench_protocol::client::{Worker, WorkerError};
use augbench_protocol::protocol::{
    CheckResponse, PrepareRequest, PrepareResponse, Request, TimeRequest, TimeResponse,
};

/// What the methodology needs from a worker. `Worker` implements it; tests may script one.
pub trait Session {
    fn prepare(
        &mut self,
        req: PrepareRequest,
        timeout: Duration,
    ) -> Result<PrepareResponse, WorkerError>;
    fn check(&mut self, timeout: Duration) -> Result<CheckResponse, WorkerError>;
    /// Nanoseconds per loop.
    fn time(&mut self, req: TimeRequest, timeout: Duration) -> Result<Vec<u64>, WorkerError> {
        Ok(self.time_clocked(req, timeout)?.ns)
    }
    /// Wall and thread-CPU nanoseconds per loop (`cpu_ns` empty where the worker has no CPU clock).
    fn time_clocked(
        &mut self,
        req: TimeRequest,
        timeout: Duration,
    ) -> Result<TimeResponse, WorkerError>;
}

impl Session for Worker {
    fn prepare(
        &mut self,
        req: PrepareRequest,
        timeout: Duration,
    ) -> Result<PrepareResponse, WorkerError> {
        self.call(&Request::Prepare(req), timeout)
    }
    fn check(&mut self, timeout: Duration) -> Result<CheckResponse, WorkerError> {
        self.call(&Request::Check, timeout)
    }
    fn time_clocked(
        &mut self,
        req: TimeRequest,
        timeout: Duration,
    ) -> Result<TimeResponse, WorkerError> {
        self.call(&Request::Time(req), timeout)
    }
}
