//! augbench-catalog: the embedded catalogs, one place apart from the config language. Each spec
//! under `specs/` is compiled in and parsed once (`embedded`): the scenario × library support
//! matrix (`matrix`), the transform registry and its curated sets (`registry`), the production
//! recipes and their shared recipe (`recipes`, `recipe`), the equivalence tolerances
//! (`equivalence`; its targets section `equivalence_targets`), the calibrated cost table (`costs`) and the example configs (`examples`). `config_error` is the located error
//! (file, line, column, hint) that these parsers and the config language both report.

pub mod config_error;
pub mod costs;
mod embedded;
pub mod equivalence;
pub mod equivalence_targets;
pub mod examples;
pub mod matrix;
pub mod recipe;
pub mod recipes;
pub mod registry;

pub use config_error::{ConfigError, Source};
pub use matrix::{Backend, Device, Matrix, Media, Mode};
pub use registry::Registry;
