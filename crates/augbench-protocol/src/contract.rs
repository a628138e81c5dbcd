//! The output contract check: a worker's `check` answer (shapes, dtypes, layout) against the
//! transform's spec in the registry. Run once per transform, outside any timing.

use augbench_catalog::registry::{DtypeRule, OutputRule, TransformSpec};

use crate::protocol::CheckResponse;

/// Index of the (height, width) axes and the channel axis for a layout.
fn axes(layout: &str) -> Option<((usize, usize), usize)> {
    match layout {
        "HWC" | "PIL" => Some(((0, 1), 2)),
        "CHW" => Some(((1, 2), 0)),
        "THWC" => Some(((1, 2), 3)),
        "TCHW" => Some(((2, 3), 1)),
        _ => None,
    }
}

/// `Ok(())` when the output honours the spec, else a one-line reason.
pub fn check(spec: &TransformSpec, got: &CheckResponse) -> Result<(), String> {
    let (inp, out) = (&got.input_shape, &got.output_shape);
    let ((h, w), c) =
        axes(&got.layout).ok_or_else(|| format!("unknown layout `{}`", got.layout))?;
    if out.len() != inp.len() || out.len() <= h.max(w).max(c) {
        return Err(format!(
            "output rank {:?} differs from input {:?}",
            out, inp
        ));
    }
    let shape_ok = match &spec.output {
        OutputRule::Same => out == inp,
        OutputRule::Fixed { size } => {
            out[h] == size[0]
                && out[w] == size[1]
                && out
                    .iter()
                    .enumerate()
                    .all(|(i, d)| i == h || i == w || *d == inp[i])
        }
        OutputRule::Depends => out[c] == inp[c],
    };
    if !shape_ok {
        return Err(format!(
            "output shape {out:?} breaks rule {:?} for input {inp:?} ({})",
            spec.output, got.layout
        ));
    }
    let want = match spec.dtype {
        DtypeRule::Same => got.input_dtype.as_str(),
        DtypeRule::Float32 => "float32",
    };
    if got.output_dtype != want {
        return Err(format!(
            "output dtype {} but the spec expects {want}",
            got.output_dtype
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn spec(output: OutputRule, dtype: DtypeRule) -> TransformSpec {
        TransformSpec {
            name: "T".into(),
            params: BTreeMap::new(),
            output,
            dtype,
        }
    }

    fn resp(layout: &str, i: &[u64], o: &[u64], dt: &str) -> CheckResponse {
        CheckResponse {
            input_shape: i.to_vec(),
            output_shape: o.to_vec(),
            input_dtype: "uint8".into(),
            output_dtype: dt.into(),
            layout: layout.into(),
            ..Default::default()
        }
    }

    #[test]
    fn fixed_size_in_hwc_and_chw() {
        let s = spec(OutputRule::Fixed { size: [224, 224] }, DtypeRule::Same);
        assert!(check(&s, &resp("HWC", &[375, 500, 3], &[224, 224, 3], "uint8")).is_ok());
        assert!(check(&s, &resp("CHW", &[3, 375, 500], &[3, 224, 224], "uint8")).is_ok());
        assert!(check(&s, &resp("HWC", &[375, 500, 3], &[224, 225, 3], "uint8")).is_err());
        assert!(check(&s, &resp("HWC", &[375, 500, 3], &[224, 224, 1], "uint8")).is_err());
    }

    #[test]
    fn same_and_dtype_rules() {
        let s = spec(OutputRule::Same, DtypeRule::Same);
        assert!(check(&s, &resp("HWC", &[4, 5, 3], &[4, 5, 3], "uint8")).is_ok());
        assert!(check(&s, &resp("HWC", &[4, 5, 3], &[5, 4, 3], "uint8")).is_err());
        assert!(check(&s, &resp("HWC", &[4, 5, 3], &[4, 5, 3], "float32")).is_err());
        let f = spec(OutputRule::Depends, DtypeRule::Float32);
        assert!(check(&f, &resp("THWC", &[16, 4, 5, 3], &[16, 9, 9, 3], "float32")).is_ok());
        assert!(check(&f, &resp("THWC", &[16, 4, 5, 3], &[16, 9, 9, 1], "float32")).is_err());
    }
}
