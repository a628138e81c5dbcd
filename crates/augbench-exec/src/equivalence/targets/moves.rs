//! Which registry transforms the targets reference covers, and how: the one place that turns a
//! transform name and its canonical parameters (`specs/transforms.yaml`) into the reference's
//! [`TargetMove`]. The spec's `targets.transforms` lists the names the check runs; a test keeps
//! the two in step.

use augbench_core::Registry;
use augbench_media::target_reference::TargetMove;

/// The reference's move for `transform` with the registry's canonical parameters, or why there
/// is none.
pub fn target_move(transform: &str) -> Result<TargetMove, String> {
    let spec = Registry::get()
        .spec(transform)
        .ok_or_else(|| format!("`{transform}` is not in the transform registry"))?;
    let param = |name: &str| {
        spec.params
            .get(name)
            .and_then(serde_json::Value::as_u64)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| format!("{transform}: no whole `{name}` among its canonical parameters"))
    };
    match transform {
        "HorizontalFlip" => Ok(TargetMove::HorizontalFlip),
        "VerticalFlip" => Ok(TargetMove::VerticalFlip),
        "Resize" => {
            let side = param("target_size")?;
            Ok(TargetMove::Resize {
                width: side,
                height: side,
            })
        }
        "Pad" => Ok(TargetMove::Pad {
            padding: param("padding")?,
        }),
        "CenterCrop224" => Ok(TargetMove::CenterCrop {
            width: param("width")?,
            height: param("height")?,
        }),
        _ => Err(format!(
            "the targets reference does not cover `{transform}`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use augbench_catalog::equivalence::EquivalenceSpec;

    #[test]
    fn every_transform_of_the_targets_spec_has_a_move_and_every_kind_parses() {
        let spec = &EquivalenceSpec::get().targets;
        for name in spec.transforms.keys() {
            assert!(target_move(name).is_ok(), "{name}: {:?}", target_move(name));
        }
        for k in &spec.known_differences {
            let kind: Result<augbench_core::targets::TargetKind, _> = k.kind.parse();
            assert!(kind.is_ok(), "{} {}: {}", k.transform, k.library, k.kind);
        }
        assert_eq!(
            target_move("Resize"),
            Ok(TargetMove::Resize {
                width: 512,
                height: 512
            })
        );
        assert!(target_move("Rotate").is_err(), "Rotate draws an angle");
    }
}
