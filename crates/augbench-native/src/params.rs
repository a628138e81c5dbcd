//! Typed access to a transform's canonical parameters (the JSON object the coordinator sends
//! from `specs/transforms.yaml`). A missing or mistyped parameter is a `bad_request` failure
//! naming the transform and the parameter.

use serde_json::Value;

use crate::reply::failure;
use augbench_protocol::protocol::{Failure, FailureKind};

pub(crate) struct Params<'a> {
    transform: &'a str,
    value: &'a Value,
}

impl<'a> Params<'a> {
    pub fn new(transform: &'a str, value: &'a Value) -> Self {
        Params { transform, value }
    }

    fn get(&self, key: &str) -> Result<&'a Value, Failure> {
        self.value
            .get(key)
            .ok_or_else(|| self.bad(key, "is missing"))
    }

    fn bad(&self, key: &str, what: &str) -> Failure {
        failure(
            FailureKind::BadRequest,
            format!("parameter `{key}` of {} {what}", self.transform),
        )
    }

    pub fn f64(&self, key: &str) -> Result<f64, Failure> {
        self.get(key)?
            .as_f64()
            .ok_or_else(|| self.bad(key, "must be a number"))
    }

    pub fn u32(&self, key: &str) -> Result<u32, Failure> {
        self.get(key)?
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| self.bad(key, "must be a non-negative integer"))
    }

    /// A size in pixels: an integer of at least 1.
    pub fn dim(&self, key: &str) -> Result<u32, Failure> {
        match self.u32(key)? {
            0 => Err(self.bad(key, "must be at least 1")),
            v => Ok(v),
        }
    }

    /// A `[height, width]` pair of sizes in pixels, each at least 1.
    pub fn dims(&self, key: &str) -> Result<(u32, u32), Failure> {
        let (a, b) = self.pair(key)?;
        let ok = |v: f64| v >= 1.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX);
        if ok(a) && ok(b) {
            Ok((a as u32, b as u32))
        } else {
            Err(self.bad(key, "must be two whole sizes of at least 1"))
        }
    }

    /// A finite number greater than zero (sigmas, scales).
    pub fn positive(&self, key: &str) -> Result<f64, Failure> {
        let v = self.f64(key)?;
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.bad(key, "must be a positive number"))
        }
    }

    pub fn u8(&self, key: &str) -> Result<u8, Failure> {
        self.get(key)?
            .as_u64()
            .and_then(|v| u8::try_from(v).ok())
            .ok_or_else(|| self.bad(key, "must be an integer in 0..=255"))
    }

    pub fn str(&self, key: &str) -> Result<&'a str, Failure> {
        self.get(key)?
            .as_str()
            .ok_or_else(|| self.bad(key, "must be a string"))
    }

    /// A `[low, high]` pair; a single number `x` reads as `[x, x]`.
    pub fn range(&self, key: &str) -> Result<(f64, f64), Failure> {
        let v = self.get(key)?;
        if let Some(x) = v.as_f64() {
            return Ok((x, x));
        }
        match v.as_array().map(Vec::as_slice) {
            Some([a, b]) => match (a.as_f64(), b.as_f64()) {
                (Some(a), Some(b)) if a <= b => Ok((a, b)),
                _ => Err(self.bad(key, "must be [low, high] with low <= high")),
            },
            _ => Err(self.bad(key, "must be a number or [low, high]")),
        }
    }

    /// A `[a, b]` pair of numbers, in order (e.g. `[height, width]` or `[x, y]`).
    pub fn pair(&self, key: &str) -> Result<(f64, f64), Failure> {
        let v = self.get(key)?;
        match v.as_array().map(Vec::as_slice) {
            Some([a, b]) => match (a.as_f64(), b.as_f64()) {
                (Some(a), Some(b)) => Ok((a, b)),
                _ => Err(self.bad(key, "must be a pair of numbers")),
            },
            _ => Err(self.bad(key, "must be a pair of numbers")),
        }
    }

    /// Fails unless `key` equals `expected` (a mode the adapter implements, e.g. `constant`).
    pub fn expect_str(&self, key: &str, expected: &str) -> Result<(), Failure> {
        let got = self.str(key)?;
        if got == expected {
            Ok(())
        } else {
            Err(failure(
                FailureKind::Unsupported,
                format!(
                    "{} with {key} `{got}` is not supported (only `{expected}`)",
                    self.transform
                ),
            ))
        }
    }
}

/// Canonical interpolation names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interp {
    Nearest,
    Bilinear,
    Bicubic,
    Lanczos,
}

impl Params<'_> {
    pub fn interpolation(&self) -> Result<Interp, Failure> {
        match self.str("interpolation")? {
            "nearest" => Ok(Interp::Nearest),
            "bilinear" | "linear" => Ok(Interp::Bilinear),
            "bicubic" | "cubic" => Ok(Interp::Bicubic),
            "lanczos" | "lanczos3" => Ok(Interp::Lanczos),
            _ => Err(self.bad(
                "interpolation",
                "must be nearest, bilinear, bicubic or lanczos",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ranges_accept_scalars_and_pairs() {
        let v = json!({"a": 3, "b": [1, 2.5], "c": [2, 1], "d": "x"});
        let p = Params::new("T", &v);
        assert_eq!(p.range("a").unwrap(), (3.0, 3.0));
        assert_eq!(p.range("b").unwrap(), (1.0, 2.5));
        assert!(p.range("c").is_err());
        let e = p.range("d").unwrap_err();
        assert_eq!(e.kind, FailureKind::BadRequest);
        assert!(e.error.contains("`d` of T"), "{}", e.error);
        assert!(p.f64("missing").unwrap_err().error.contains("missing"));
    }

    #[test]
    fn integers_are_range_checked() {
        let v = json!({"q": 300, "n": 12});
        let p = Params::new("T", &v);
        assert!(p.u8("q").is_err());
        assert_eq!(p.u8("n").unwrap(), 12);
        assert_eq!(p.u32("q").unwrap(), 300);
        let v = json!({"zero": 0, "neg": -1.0, "s": 2.5});
        let p = Params::new("T", &v);
        assert!(p.dim("zero").is_err());
        assert!(p.positive("neg").is_err());
        assert_eq!(p.positive("s").unwrap(), 2.5);
    }
}
