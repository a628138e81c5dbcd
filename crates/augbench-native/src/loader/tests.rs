//! The native loader's threading contract: batches in the seeded order whatever the worker
//! count, a failing or panicking item as an error delivery (never a hang), and clean shutdown.

use std::sync::Arc;

use super::*;

/// Writes each item's index as its pixel value (1×1 items); `fail` on one index.
struct Stamp {
    fail: Option<(u64, bool)>,
}

impl Fill for Stamp {
    fn fill(&mut self, index: u64, batch: &mut Batch, slot: usize) -> Result<(), String> {
        match self.fail {
            Some((i, true)) if i == index => panic!("item {index} panicked"),
            Some((i, false)) if i == index => return Err(format!("item {index} is corrupt")),
            _ => {}
        }
        let v = index as u8;
        let px = Pixels {
            width: 1,
            height: 1,
            channels: 3,
            data: &[v, v, v],
        };
        batch.put(slot, px, &Normalize::new([0.0; 3], [1.0 / 255.0; 3]))
    }
}

fn make(fail: Option<(u64, bool)>) -> MakeFill {
    Arc::new(move |w| {
        Ok((
            Box::new(Stamp { fail }) as Box<dyn Fill>,
            serde_json::json!({ "worker": w }),
        ))
    })
}

fn shape(workers: usize) -> Shape {
    Shape {
        workers,
        batch_size: 3,
        prefetch: 2,
        order: Arc::new(vec![4, 2, 0, 1, 3]),
        frames: None,
    }
}

/// The item indices of the next `n` batches.
fn take(loader: &mut Loader, n: usize) -> Vec<Vec<u64>> {
    (0..n)
        .map(|_| {
            let b = loader.next_batch().unwrap();
            let items = (0..3).map(|i| b.data[i * 3] as u64).collect();
            loader.recycle(b);
            items
        })
        .collect()
}

#[test]
fn batches_follow_the_order_for_any_worker_count() {
    let want = vec![vec![4, 2, 0], vec![1, 3, 4], vec![2, 0, 1], vec![3, 4, 2]];
    for workers in [0, 1, 2, 3] {
        let mut loader = Loader::start(shape(workers), make(None)).unwrap();
        assert_eq!(loader.threads.len(), workers.max(1));
        assert_eq!(take(&mut loader, 4), want, "{workers} workers");
    }
}

#[test]
fn a_failing_item_is_an_error_delivery() {
    for workers in [0, 2] {
        let mut loader = Loader::start(shape(workers), make(Some((1, false)))).unwrap();
        assert!(loader.next_batch().is_ok());
        let err = loader.next_batch().unwrap_err();
        assert!(err.contains("item 1 is corrupt"), "{err}");
        if workers == 0 {
            // The caller's thread keeps its buffer: the next batch fails on its own item again.
            let again = loader.next_batch().unwrap_err();
            assert!(again.contains("item 1 is corrupt"), "{again}");
        }
    }
}

#[test]
fn a_panicking_worker_is_an_error_not_a_hang() {
    let mut loader = Loader::start(shape(2), make(Some((1, true)))).unwrap();
    let _ = loader.next_batch();
    let err = loader.next_batch().unwrap_err();
    assert!(err.contains("panicked") && err.contains("item 1"), "{err}");
}

#[test]
fn a_worker_that_cannot_build_its_fill_fails_the_start() {
    let bad: MakeFill = Arc::new(|_| Err("no such transform".into()));
    assert_eq!(
        Loader::start(shape(2), bad).err().unwrap(),
        "no such transform"
    );
    assert!(
        Loader::start(
            Shape {
                order: Arc::new(vec![]),
                ..shape(1)
            },
            make(None)
        )
        .is_err()
    );
}

/// A `Stamp` that holds a token while its worker thread lives.
struct Held {
    inner: Stamp,
    _alive: Arc<()>,
}

impl Fill for Held {
    fn fill(&mut self, index: u64, batch: &mut Batch, slot: usize) -> Result<(), String> {
        self.inner.fill(index, batch, slot)
    }
}

#[test]
fn dropping_a_loader_with_full_queues_ends_its_threads() {
    let alive = Arc::new(());
    let token = alive.clone();
    let make: MakeFill = Arc::new(move |w| {
        let fill = Held {
            inner: Stamp { fail: None },
            _alive: token.clone(),
        };
        Ok((
            Box::new(fill) as Box<dyn Fill>,
            serde_json::json!({ "worker": w }),
        ))
    });
    let mut loader = Loader::start(shape(2), make).unwrap();
    let _ = loader.next_batch().unwrap(); // never recycled
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(
        Arc::strong_count(&alive) > 1,
        "the workers hold their fills"
    );
    // Workers blocked on full queues must see the channels close: the drop returns, in bounded
    // time. A watchdog fails the whole test binary if it does not (a hang would never end).
    let (done, dropped) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if dropped.recv_timeout(std::time::Duration::from_secs(30))
            == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        {
            eprintln!("dropping a loader with full queues did not return within 30 s");
            std::process::exit(101);
        }
    });
    drop(loader);
    let _ = done.send(());
    assert_eq!(
        Arc::strong_count(&alive),
        1,
        "every worker thread ended and released its fill"
    );
}

/// Writes frame `t` of clip `index` as pixel value `10·index + t` (1×1 frames, 2 a clip).
struct ClipStamp;

impl Fill for ClipStamp {
    fn fill(&mut self, index: u64, batch: &mut Batch, slot: usize) -> Result<(), String> {
        for t in 0..2 {
            let v = (10 * index + t as u64) as u8;
            let px = Pixels {
                width: 1,
                height: 1,
                channels: 3,
                data: &[v, v, v],
            };
            batch.put_frame(slot, t, px, &Normalize::new([0.0; 3], [1.0 / 255.0; 3]))?;
        }
        Ok(())
    }
}

#[test]
fn clip_batches_hold_every_frame_of_each_clip_in_order() {
    let make: MakeFill = Arc::new(|w| {
        Ok((
            Box::new(ClipStamp) as Box<dyn Fill>,
            serde_json::json!({ "worker": w }),
        ))
    });
    for workers in [0, 2] {
        let clips = Shape {
            frames: Some(2),
            ..shape(workers)
        };
        let mut loader = Loader::start(clips, make.clone()).unwrap();
        let b = loader.next_batch().unwrap();
        assert_eq!(b.dims(), vec![3, 2, 3, 1, 1], "{workers} workers");
        // Batch 0 holds clips 4, 2, 0; each clip's frames sit side by side (3 channels each).
        let firsts: Vec<f32> = (0..6).map(|s| b.data[s * 3]).collect();
        assert_eq!(
            firsts,
            [40.0, 41.0, 20.0, 21.0, 0.0, 1.0],
            "{workers} workers"
        );
        loader.recycle(b);
        assert_eq!(loader.next_batch().unwrap().dims()[..2], [3, 2]);
    }
}
