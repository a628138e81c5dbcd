//! Pipeline mode in the native worker: `source` holds the loaded media (decoded items, or the
//! paths the loader decodes; clips for video), `recipe` builds a row's stages per loader thread,
//! `pipe` serves the pipeline requests (preflight, start, windows, stop) and `production` a
//! production cell's chain of catalog stages; `crate::loader` owns the threads and the batch
//! buffers. This file only declares the modules and re-exports their items.

mod pipe;
mod production;
mod recipe;
mod source;

pub(crate) use pipe::{Pipeline, load};
pub(crate) use production::is_shared_crop;

#[cfg(test)]
mod tests;
