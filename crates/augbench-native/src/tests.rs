//! Every supported transform of every native adapter honours its spec's output rule and dtype
//! (the same `contract::check` the coordinator runs) on a landscape and a portrait image.

use augbench_core::Registry;
use serde_json::Value;

use crate::adapters::Fir;
use crate::adapters::ImageRs;
use crate::adapters::Imageproc;
use crate::adapters::Kornia;
use crate::load::stack;
use crate::session::{Adapter, Loaded, Session};
use augbench_protocol::contract;
use augbench_protocol::protocol::{FailureKind, TimeRequest};

const SIZES: [(u32, u32); 2] = [(500, 375), (333, 500)];

/// A smooth RGB test pattern (content does not matter for shapes, only for the filters' paths).
fn pattern(w: u32, h: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity((w * h * 3) as usize);
    for y in 0..h {
        for x in 0..w {
            v.extend_from_slice(&[(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8]);
        }
    }
    v
}

/// Supported transforms of `set` for adapter `A`, after checking each against its spec.
fn supported<A: Adapter>(set: &str, k: usize) -> Vec<String> {
    let reg = Registry::get();
    let mut names = Vec::new();
    for name in reg.set(set).unwrap() {
        let spec = reg.spec(name).unwrap();
        let params = Value::Object(spec.params.clone().into_iter().collect());
        let mut ok = true;
        for (w, h) in SIZES {
            let item = A::convert(w, h, stack(&pattern(w, h), k)).unwrap();
            let mut s = Loaded::<A>::new(vec![item], false);
            match s.prepare(name, &params) {
                Ok(_) => {}
                Err(f) => {
                    assert_eq!(
                        f.kind,
                        FailureKind::Unsupported,
                        "{} {name}: {}",
                        A::LIBRARY,
                        f.error
                    );
                    ok = false;
                    break;
                }
            }
            let got = s
                .check()
                .unwrap_or_else(|f| panic!("{} {name}: {}", A::LIBRARY, f.error));
            if let Err(e) = contract::check(spec, &got) {
                panic!("{} {name} on {w}×{h}: {e}", A::LIBRARY);
            }
            let ns = s
                .time(TimeRequest {
                    start: 0,
                    count: 1,
                    loops: 2,
                    markers: false,
                })
                .unwrap();
            assert_eq!(ns.ns.len(), 2);
            assert_eq!(ns.cpu_ns.len(), 2, "every loop has its thread CPU time");
        }
        if ok {
            names.push(name.clone());
        }
        // The planner's view (`support::builds`, no media) agrees with what the session prepares.
        if k == 1 {
            let lib = crate::Library::parse(A::LIBRARY).unwrap();
            let planned = crate::support::builds(lib, name, &params);
            assert!(
                planned.is_none() || planned == Some(ok),
                "{} {name}: planner says {planned:?}, prepare says {ok}",
                A::LIBRARY
            );
        }
    }
    names
}

#[test]
fn image_transforms_honour_the_contract() {
    let names = supported::<ImageRs>("rgb", 1);
    let expect = [
        "Resize",
        "RandomCrop224",
        "RandomResizedCrop",
        "CenterCrop224",
        "HorizontalFlip",
        "VerticalFlip",
        "Grayscale",
        "GaussianBlur",
        "Invert",
        "JpegCompression",
        "Brightness",
        "Contrast",
        "Hue",
        "LongestMaxSize",
        "SmallestMaxSize",
        "RandomRotate90",
        "UnsharpMask",
    ];
    assert_eq!(names, expect);
}

#[test]
fn imageproc_transforms_honour_the_contract() {
    let names = supported::<Imageproc>("rgb", 1);
    let expect = [
        "Rotate",
        "Affine",
        "Perspective",
        "GaussianBlur",
        "GaussianNoise",
        "Erasing",
        "MedianBlur",
        "SaltAndPepper",
        "Shear",
        "RandomRotate90",
    ];
    assert_eq!(names, expect);
}

#[test]
fn fast_image_resize_transforms_honour_the_contract() {
    let names = supported::<Fir>("rgb", 1);
    let expect = [
        "Resize",
        "RandomCrop224",
        "RandomResizedCrop",
        "CenterCrop224",
        "LongestMaxSize",
        "SmallestMaxSize",
    ];
    assert_eq!(names, expect);
}

#[test]
fn kornia_rgb_transforms_honour_the_contract() {
    let names = supported::<Kornia<3>>("rgb", 1);
    let expect = [
        "Resize",
        "RandomCrop224",
        "CenterCrop224",
        "HorizontalFlip",
        "VerticalFlip",
        "Pad",
        "Affine",
        "Grayscale",
        "GaussianBlur",
        "MedianBlur",
        "Blur",
        "Shear",
        "LongestMaxSize",
        "SmallestMaxSize",
    ];
    assert_eq!(names, expect);
}

#[test]
fn kornia_9ch_transforms_honour_the_contract() {
    let names = supported::<Kornia<9>>("9ch", 3);
    let expect = [
        "RandomCrop224",
        "CenterCrop224",
        "HorizontalFlip",
        "VerticalFlip",
        "Pad",
        "Affine",
        "GaussianBlur",
        "MedianBlur",
        "Blur",
        "Shear",
    ];
    assert_eq!(names, expect);
}

#[test]
fn unknown_transforms_are_unsupported_with_a_reason() {
    let item = ImageRs::convert(4, 4, pattern(4, 4)).unwrap();
    let mut s = Loaded::<ImageRs>::new(vec![item], false);
    let f = s.prepare("Elastic", &Value::Null).unwrap_err();
    assert_eq!(f.kind, FailureKind::Unsupported);
    assert!(
        f.error.contains("image does not support Elastic"),
        "{}",
        f.error
    );
}
