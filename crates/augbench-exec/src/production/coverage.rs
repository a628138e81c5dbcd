//! Which catalog recipes a production implementation measures, asked of what runs: its own
//! worker (`production_builds`: each recipe built as its cell builds it, nothing loaded or timed;
//! a native crate's worker is this binary, a Python one starts in its environment), so
//! `production --plan` and `list recipes` count what a run measures rather than what the catalog
//! claims. A Python implementation that cannot be asked here (its environment not built, a GPU
//! implementation without a CUDA device) keeps the catalog's list, and says why. A Python
//! worker's answer is kept in the cache (`answers`): asking imports the library, seconds each time.

use std::collections::BTreeMap;
use std::time::Duration;

use augbench_catalog::recipes::{Catalog, Recipe};
use augbench_core::config::ThreadPolicy;
use augbench_core::production::{Implementation, Production};
use augbench_core::{Device, Matrix, Mode, policy};
use augbench_protocol::client::Worker;
use augbench_protocol::protocol::{
    ProductionBuildsRequest, ProductionBuildsResponse, RecipeStages, Request,
};

use super::answers;
use super::run::{chain_stages, stages_in_workers};

/// An implementation's answer for the recipes it was asked about.
#[derive(Debug, Clone, PartialEq)]
pub enum Coverage {
    /// It answered: each recipe it would refuse, with the reason its cell would give.
    Asked { refused: BTreeMap<String, String> },
    /// Not asked: the catalog's list stands, for this reason.
    NotAsked { why: String },
}

impl Coverage {
    /// Whether a run would measure `recipe` with `imp`: listed for it (`Production::listed`) and
    /// not refused by what it builds.
    pub fn measures(&self, imp: &Implementation, recipe: &Recipe) -> bool {
        let refused = match self {
            Coverage::Asked { refused } => refused.contains_key(&recipe.id),
            Coverage::NotAsked { .. } => false,
        };
        Production::listed(recipe, imp) && !refused
    }
}

/// `ask` for each of `imps`, in their order, the workers started side by side (each start
/// imports its library, a few seconds).
pub fn ask_all(catalog: &Catalog, imps: &[Implementation], recipes: &[Recipe]) -> Vec<Coverage> {
    std::thread::scope(|scope| {
        let asking: Vec<_> = imps
            .iter()
            .map(|imp| scope.spawn(move || ask(catalog, imp, recipes)))
            .collect();
        let answer = |h: std::thread::ScopedJoinHandle<'_, Coverage>| {
            h.join().unwrap_or_else(|_| Coverage::NotAsked {
                why: "asking it failed".into(),
            })
        };
        asking.into_iter().map(answer).collect()
    })
}

/// What `imp` builds of `recipes` (the ones listed for it; the catalog gives the CPU prefix).
pub fn ask(catalog: &Catalog, imp: &Implementation, recipes: &[Recipe]) -> Coverage {
    let listed: Vec<&Recipe> = recipes
        .iter()
        .filter(|r| Production::listed(r, imp))
        .collect();
    match of_worker(catalog, imp, &listed) {
        Ok(c) => c,
        Err(why) => Coverage::NotAsked { why },
    }
}

/// The worker of `imp` (a Python one in its pipeline environment when that is built; a native
/// crate's is this binary), asked once.
fn of_worker(
    catalog: &Catalog,
    imp: &Implementation,
    recipes: &[&Recipe],
) -> Result<Coverage, String> {
    if imp.device == Device::Cuda && !augbench_host::machine::cuda_here() {
        return Err("its batch stages need a CUDA device, and this machine has none".into());
    }
    let env = if imp.native {
        None
    } else {
        Some(built_env(imp)?)
    };
    let command = crate::worker::transforms_command(
        env.as_ref(),
        &imp.library,
        None,
        ThreadPolicy::PipelineDefault,
    )
    .map_err(|e| format!("{e:#}"))?;
    let request = ProductionBuildsRequest {
        device: imp.device.to_string(),
        recipes: recipes
            .iter()
            .map(|r| RecipeStages {
                recipe: r.id.clone(),
                stages: chain_stages(r),
                stages_in_workers: stages_in_workers(catalog, imp, r),
            })
            .collect(),
    };
    let kept = env.is_some().then(|| answers::key(&command, &request));
    let answer = match kept.as_deref().and_then(answers::read) {
        Some(answer) => answer,
        None => {
            let answer = asked(&command, request)?;
            if let Some(key) = &kept {
                answers::keep(key, &answer);
            }
            answer
        }
    };
    let refused = answer
        .recipes
        .into_iter()
        .filter_map(|b| Some((b.recipe, b.refused?)))
        .collect();
    Ok(Coverage::Asked { refused })
}

/// Starts the worker of `command` and asks it `request` once.
fn asked(
    command: &augbench_host::child::CommandLine,
    request: ProductionBuildsRequest,
) -> Result<ProductionBuildsResponse, String> {
    let wait = Duration::from_secs_f64(policy::PRODUCTION_START_TIMEOUT_SEC);
    let ask = || -> Result<ProductionBuildsResponse, augbench_protocol::client::WorkerError> {
        let mut worker = Worker::start(command, policy::STDERR_TAIL_LINES)?;
        worker.request(&Request::Hello, wait)?;
        let answer = worker.call(&Request::ProductionBuilds(request), wait)?;
        worker.shutdown();
        Ok(answer)
    };
    ask().map_err(|e| format!("its worker did not answer: {e}"))
}

/// The implementation's pipeline environment where it is built already (nothing is built here).
fn built_env(imp: &Implementation) -> Result<augbench_env::EnvInfo, String> {
    let group = Matrix::get()
        .library(&imp.library)
        .map(|info| info.env_group_for(Mode::Pipeline).to_string())
        .ok_or_else(|| format!("`{}` is not in the support matrix", imp.library))?;
    let envs = augbench_env::list().map_err(|e| format!("{e:#}"))?;
    envs.into_iter()
        .find(|e| e.group == group && e.built)
        .ok_or_else(|| {
            format!("its environment `{group}` is not built (augbench env build {group})")
        })
}
