//! The labels every pipeline result file carries: the file-level pipeline info (scope, decoder,
//! loader shape, and the notes that say what a native, DALI or video row does differently) and
//! what a pipeline row's clock covers.

use augbench_core::results::{PipelineInfo, TimingInfo};
use augbench_core::{PipelineScope, policy};

use super::settings::{PipelineSettings, dali, native};
use crate::job::{JobInput, pipeline_scope};
use augbench_protocol::protocol::HelloResponse;

/// The file-level pipeline labels of a job.
pub(crate) fn info(input: &JobInput<'_>, hello: &HelloResponse, device: &str) -> PipelineInfo {
    let set = PipelineSettings::for_job(input, device);
    let mut notes = Vec::new();
    if set.split {
        notes.push("GPU split: loader workers decode and crop; the main process copies each uint8 batch to the device (pinned), runs the transform and Normalize there, and synchronizes; both decode scopes include that copy, and a crop transform row runs in the workers (`transform_device`)".into());
    }
    if input.job.device == augbench_core::Device::Auto && device != "cuda" {
        notes.push(format!(
            "device `auto` fell back to `{device}`: the worker reports no CUDA device"
        ));
    }
    if set.workers == 0 {
        notes.push("workers: 0: the main process loads every batch (no loader workers)".into());
    }
    if dali(input) {
        notes.push(dali_note(&set, device));
    }
    if let Some(frames) = set.frames {
        notes.push(clip_note(frames, native(input)));
    }
    if native(input) {
        notes.push(native_note());
    }
    if let Some(set) = &input.job.targets {
        notes.push(targets_note(&set.to_string()));
    }
    notes.extend(epoch_note(
        input.paths.len() as u64,
        set.batch_size,
        set.workers,
    ));
    PipelineInfo {
        scope: set.scope.to_string(),
        decoder: hello
            .device_decoders
            .get(device)
            .or(hello.decoder.as_ref())
            .cloned()
            .unwrap_or_default(),
        workers: set.workers,
        main_process_loading: set.workers == 0,
        batch_size: set.batch_size,
        clip_length: set.frames,
        prefetch_factor: if set.workers == 0 { 0 } else { set.prefetch },
        min_batches: set.min_batches,
        min_time: set.min_time,
        split: set.split,
        order_seed: policy::PIPELINE_ORDER_SEED,
        notes,
    }
}

/// What an epoch loop over this dataset would pay that the steady state leaves out, when its
/// epoch is under `policy::PIPELINE_EPOCH_NOTE_BATCHES_PER_WORKER` batches a worker: the loader
/// times an endless stream (no epoch boundary inside a
/// window), while `for batch in loader` refills it at every epoch's start and, when the epoch's
/// `items / batch` batches (drop_last) do not split evenly over the workers, leaves some of them
/// idle at its end: at least `ceil(b / w) × w / b` times the steady state's time.
fn epoch_note(items: u64, batch: u64, workers: u64) -> Option<String> {
    let batches = items.checked_div(batch)?;
    if workers == 0 || batches == 0 {
        return None;
    }
    let factor = (batches.div_ceil(workers) * workers) as f64 / batches as f64;
    (batches < policy::PIPELINE_EPOCH_NOTE_BATCHES_PER_WORKER * workers).then(|| {
        format!(
            "steady state of an endless stream: {items} items make {batches} batches an epoch over {workers} loader workers; a training loop that iterates epochs refills its loader at every epoch's start and, with batches that do not split evenly over the workers, idles some of them at its end (here at least {factor:.2}× this figure's time; 3 batches an epoch read 1.4–1.7× slower, docs/pipeline.md)"
        )
    })
}

/// What a target loader does beyond the image-only recipe, said in every target file.
fn targets_note(set: &str) -> String {
    format!(
        "targets ({set}): each item's targets go through the recipe with the image in the library's own joint call; converting them to the library's types, the library's own target rules (dropped, clipped or kept) and making them tensors are inside the loader and the clock; the collate stacks the images and keeps one targets dict per image; Kornia's crop runs on the float32 frame there (its image-only loader crops the uint8 frame); docs/targets.md, \"Pipeline mode\""
    )
}

/// What the native loader does differently from the Python rows, said in every native file.
fn native_note() -> String {
    format!(
        "native loader (augbench's own, threads): each worker thread reads, decodes (the image crate), crops, runs the crate's transform and normalizes each item straight into its slot of a preallocated batch; the crop ({}) and Normalize are augbench's one shared implementation for every Rust crate (they are not what is compared), the transform is the crate's own; each loader thread has a one-thread rayon pool",
        augbench_catalog::recipe::Recipe::get().crop
    )
}

/// What DALI's pipeline is, said in every DALI file.
fn dali_note(set: &PipelineSettings, device: &str) -> String {
    let place = if device == "cuda" {
        "on the GPU (`device_id` 0): `mixed` decode, the operators on the device, each batch left in DALI's device buffer"
    } else {
        "CPU only (`device_id=None`): DALI's CPU decoder and CPU operators, each batch copied out of DALI's buffer into one NumPy array"
    };
    format!(
        "DALI pipeline (no DataLoader): fn.readers.file reads the files in the shared seeded order (fn.external_source feeds the preloaded items in the memory scope), then decode, the recipe as DALI operators (crop, transform, fn.crop_mirror_normalize) and DALI's batching; workers = DALI's num_threads ({}), prefetch_queue_depth {}; {place}",
        set.workers, set.prefetch
    )
}

/// How a video row's items are clips, said in every video pipeline file.
fn clip_note(frames: u64, native: bool) -> String {
    let draws = if native {
        "the Rust crates have no clip type: the transform runs frame by frame, and its random parameters are drawn per frame, as in video micro rows"
    } else {
        "the transform runs on the whole clip in the library's clip layout with one parameter draw per clip, as in video micro rows"
    };
    format!(
        "clips: each item is a clip of {frames} frames from the clip cache (`dataset.clips`: decoder and sampling rule); one crop window per clip, the same for all its frames; {draws}; batches are B×{frames}×3×H×W float32 and throughput counts clips (frames/s = clips/s × {frames})"
    )
}

/// What a pipeline row's clock covers, by scope (and the GPU split on CUDA).
pub(crate) fn timing(input: &JobInput<'_>, backend: String, device: &str) -> TimingInfo {
    let cfg = input.cfg;
    let scope = pipeline_scope(cfg);
    let split = PipelineSettings::for_job(input, device).split;
    let mut includes = Vec::new();
    if scope.decodes() && dali(input) {
        includes.push("decode (DALI's decoder, in DALI's pipeline)".to_string());
    } else if scope.decodes() {
        includes.push("decode (the library's decoder, in the loader workers)".to_string());
    }
    let collation = if native(input) {
        "collation: each item normalized in place into a preallocated batch buffer"
    } else if dali(input) {
        "DALI's batching, and the batch handed over as one array (copied out of DALI's buffer on the CPU)"
    } else {
        "collation into one batch tensor"
    };
    let recipe = if PipelineSettings::from_config(cfg, device).frames.is_some() {
        "crop (one window per clip), transform, normalize, TCHW float32 (the recipe, on clips)"
    } else {
        "crop, transform, normalize, CHW float32 (the recipe)"
    };
    includes.extend([
        recipe.to_string(),
        collation.to_string(),
        "delivery to the training step (steady-state window)".to_string(),
    ]);
    if split {
        includes.push("pinned host-to-device copy of each batch, transform and normalize on the device, synchronize (GPU split)".to_string());
    } else if scope == PipelineScope::DecodeDataloaderAugmentBatchCopy {
        includes.push("pinned host-to-device copy of each batch".to_string());
    }
    let loader = if native(input) {
        "native threads"
    } else if dali(input) {
        "DALI pipeline"
    } else {
        "torch DataLoader"
    };
    TimingInfo {
        backend: format!("{backend} ({loader})"),
        measurement_scope: scope.to_string(),
        includes,
    }
}

#[cfg(test)]
mod tests {
    use super::epoch_note;

    #[test]
    fn a_small_epoch_is_named_with_what_an_epoch_loop_pays() {
        let note = epoch_note(60, 16, 2).unwrap_or_default();
        assert!(note.contains("3 batches an epoch over 2"), "{note}");
        assert!(note.contains("at least 1.33×"), "{note}");
        let one = epoch_note(60, 16, 1).unwrap_or_default();
        assert!(
            one.contains("at least 1.00×"),
            "one worker idles at no epoch's end: {one}"
        );
        assert!(
            epoch_note(60, 16, 0).is_none(),
            "the main process loads: no loader to refill"
        );
        assert!(epoch_note(2000, 16, 2).is_none(), "125 batches an epoch");
        assert!(epoch_note(10, 16, 2).is_none(), "no batch at all");
    }
}
