//! The request loop of `augbench worker`: reads one JSON request per line, answers each on one
//! line, and keeps the loaded micro session or pipeline between requests (docs/protocol.md).
//! Decoding is in `load`, timing in `session`, pipeline mode in `pipeline`.

use std::io::{BufRead, Write};

use anyhow::Context;
use augbench_host::fsutil::TEST_FAULTS_ENV;
use augbench_protocol::protocol::{
    EmitResponse, Failure, FailureKind, HelloResponse, LoadRequest, LoadResponse, LoaderSlot,
    PROTOCOL_VERSION, PrepareResponse, ProductionBuildsRequest, ProductionBuildsResponse,
    RecipeBuild, Request, TimeResponse, failure_line, ok_line,
};

use crate::library::Library;
use crate::pipeline::{self, Pipeline};
use crate::reply::{WithDetail, failure};
use crate::session::{self, Session};
use crate::{clips, load, markers, sentinel, versions};

/// How the worker behaves beyond the protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServeOptions {
    /// Accept the debug fault transforms `__panic`, `__hang` and `__exit`.
    pub test_faults: bool,
}

impl ServeOptions {
    /// Faults are on only when `AUGBENCH_TEST_FAULTS` is set: `1` enables the `__panic`, `__hang`
    /// and `__exit` names; `panic:HorizontalFlip,hang:Rotate` also turns real transforms into faults.
    pub fn from_env() -> Self {
        let test_faults = std::env::var(TEST_FAULTS_ENV).is_ok_and(|v| !v.is_empty());
        ServeOptions { test_faults }
    }
}

/// Serves requests from `input` until EOF or `shutdown`; one response line per request.
/// A failed request answers `{"ok":false,...}` and the loop goes on.
pub fn serve(library: &str, input: impl BufRead, output: impl Write) -> anyhow::Result<()> {
    serve_with(library, input, output, ServeOptions::from_env())
}

/// [`serve`] with explicit options.
pub fn serve_with(
    library: &str,
    input: impl BufRead,
    mut output: impl Write,
    options: ServeOptions,
) -> anyhow::Result<()> {
    let lib = Library::parse(library)?;
    let threads = session::pin_threads();
    let mut worker = Worker {
        lib,
        threads,
        options,
        session: None,
        pipeline: None,
        ceiling: None,
    };
    for line in input.lines() {
        let line = line.context("reading a request line from stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let (reply, stop) = worker.handle(&line);
        writeln!(output, "{reply}").context("writing a response to stdout")?;
        output.flush().context("flushing stdout")?;
        if stop {
            break;
        }
    }
    Ok(())
}

struct Worker {
    lib: Library,
    threads: usize,
    options: ServeOptions,
    session: Option<Box<dyn Session>>,
    /// Media loaded for pipeline mode (`load` with `pipeline: true`), with the row's loader.
    pipeline: Option<Box<dyn Pipeline>>,
    /// The ceiling slot's loader over the same media, made on its first request.
    ceiling: Option<Box<dyn Pipeline>>,
}

impl Worker {
    /// Answers one request line; the flag says whether the worker should stop.
    fn handle(&mut self, line: &str) -> (String, bool) {
        let request: Request = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(e) => {
                let f = failure(FailureKind::BadRequest, format!("malformed request: {e}"));
                return (failure_line(&f.with_detail(line)), false);
            }
        };
        let stop = matches!(request, Request::Shutdown);
        let reply = match self.answer(request) {
            Ok(line) => line,
            Err(f) => failure_line(&f),
        };
        (reply, stop)
    }

    fn answer(&mut self, request: Request) -> Result<String, Failure> {
        match request {
            Request::Hello => Ok(ok_line(&self.hello())),
            Request::Load(req) => self.load(&req),
            Request::Prepare(req) => {
                let warnings = match self.options.test_faults {
                    true => session::injected_prepare(self.lib.name(), &req.transform)?,
                    false => Vec::new(),
                };
                let name = self
                    .loaded()?
                    .prepare_seeded(&req.transform, &req.params, req.seed)?;
                Ok(ok_line(&PrepareResponse {
                    transform: name,
                    regime: None,
                    warnings,
                }))
            }
            Request::Check => Ok(ok_line(&self.loaded()?.check()?)),
            Request::Time(req) => Ok(ok_line(&self.loaded()?.time(req)?)),
            Request::Emit(req) => Ok(ok_line(&EmitResponse {
                outputs: self.loaded()?.emit(std::path::Path::new(&req.dir))?,
            })),
            Request::Sentinel(req) => Ok(ok_line(&TimeResponse {
                ns: sentinel::time(req.loops),
                cpu_ns: Vec::new(),
            })),
            Request::PipelinePrepare(req) => Ok(ok_line(&self.piped(req.slot)?.prepare(&req)?)),
            Request::PipelineStart(req) => Ok(ok_line(&self.piped(req.slot)?.start(&req)?)),
            Request::PipelineRun(req) => Ok(ok_line(&self.piped(req.slot)?.run(req)?)),
            Request::PipelineStop(req) => {
                if let Ok(p) = self.piped(req.slot) {
                    p.stop();
                }
                Ok(ok_line(&serde_json::json!({})))
            }
            Request::ProductionCell(req) => {
                Ok(ok_line(&self.piped(LoaderSlot::Row)?.production(&req)?))
            }
            Request::ProductionBuilds(req) => Ok(ok_line(&self.production_builds(&req))),
            Request::DecodeOpen(_) | Request::DecodeTime(_) => Err(failure(
                FailureKind::BadRequest,
                "decode ops are served by the Python decode worker (python -m augbench_clips.bench)"
                    .into(),
            )),
            Request::Shutdown => Ok(ok_line(&serde_json::json!({}))),
        }
    }

    /// `production_builds`: each recipe asked of the crate's builders as its cell builds it.
    fn production_builds(&self, req: &ProductionBuildsRequest) -> ProductionBuildsResponse {
        let recipes = req.recipes.iter().map(|r| {
            let stages = r
                .stages
                .iter()
                .map(|s| (s.op.as_str(), s.params.clone(), s.crop));
            RecipeBuild {
                recipe: r.recipe.clone(),
                refused: crate::support::refusal(self.lib, stages),
            }
        });
        ProductionBuildsResponse {
            recipes: recipes.collect(),
        }
    }

    /// `load`: a micro session, or the pipeline's media with `pipeline: true`.
    fn load(&mut self, req: &LoadRequest) -> Result<String, Failure> {
        self.session = None;
        self.pipeline = None;
        self.ceiling = None;
        let response = if req.pipeline {
            load::check_request(self.lib, req)?;
            let (pipeline, response) = pipeline::load(self.lib, req, self.options.test_faults)?;
            self.pipeline = Some(pipeline);
            response
        } else if req.media == "video" {
            load::check_request(self.lib, req)?;
            let (session, response) = clips::load(self.lib, req)?;
            self.session = Some(session);
            response
        } else {
            let (session, response) = load::load(self.lib, req, self.options.test_faults)?;
            self.session = Some(session);
            response
        };
        Ok(ok_line::<LoadResponse>(&response))
    }

    /// The slot's loader side: the row's holds the media; the ceiling's shares them.
    fn piped(&mut self, slot: LoaderSlot) -> Result<&mut Box<dyn Pipeline>, Failure> {
        let row = self.pipeline.as_mut().ok_or_else(|| {
            failure(
                FailureKind::BadRequest,
                "no pipeline media loaded: send `load` with `pipeline: true` first".to_string(),
            )
        })?;
        match slot {
            LoaderSlot::Row => Ok(row),
            LoaderSlot::Ceiling => Ok(self.ceiling.get_or_insert_with(|| row.companion())),
        }
    }

    fn loaded(&mut self) -> Result<&mut Box<dyn Session>, Failure> {
        self.session.as_mut().ok_or_else(|| {
            failure(
                FailureKind::BadRequest,
                "no media loaded: send `load` first".to_string(),
            )
        })
    }

    fn hello(&self) -> HelloResponse {
        let versions = versions::for_library(self.lib)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let threads = [("rayon".to_string(), serde_json::json!(self.threads))].into();
        HelloResponse {
            protocol: PROTOCOL_VERSION,
            library: self.lib.name().to_string(),
            versions,
            runtime: format!("rustc {}", versions::RUSTC_VERSION),
            threads,
            decoder: Some(versions::decoder()),
            device_decoders: std::collections::BTreeMap::new(),
            access: None,
            cpu_features: Some(markers::cpu_features()),
        }
    }
}
