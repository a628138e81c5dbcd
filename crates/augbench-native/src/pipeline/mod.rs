//! Pipeline mode in the native worker: the loaded media (decoded items in the memory scope,
//! paths in the decode scopes; for video, clips of frames or clip folders), the in-process
//! preflight, and the loader's start (first batch, contract, warm batches), steady-state windows
//! and stop. The row's recipe is in `recipe`; `crate::loader` owns the threads and the batch
//! buffers.
//! `pipe` serves the requests, `source` holds the media, `recipe` the row's stages,
//! `production` a production cell's chain of catalog stages. This file
//! only declares the modules and re-exports their items.

mod pipe;
mod production;
mod recipe;
mod source;

pub(crate) use pipe::{Pipeline, load};
pub(crate) use production::is_shared_crop;

#[cfg(test)]
mod tests;
