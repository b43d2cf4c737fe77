//! The one settings schema. Every learner's `XParams` derives `Serialize` / `Deserialize`:
//! its serialized field names are the stable, documented names of its settings (each field's
//! doc gives its default, written once, in the struct's `Default`; `#[serde(default)]` fills
//! what a settings object leaves out). Model files record the serialized settings, a resumed
//! run compares them, the CLI overlays its flags on the defaults ([`overlay`]) and the Python
//! package passes its keyword arguments as one settings object ([`from_json`]), all through
//! the same `check()`.
//!
//! ```
//! use boltzkit::rbm::train::RbmParams;
//! use boltzkit::settings;
//! let p: RbmParams = settings::from_json("rbm", r#"{"n_hidden": 20, "learning_rate": 0.1}"#)?;
//! assert_eq!((p.n_hidden, p.train.learning_rate), (20, 0.1));
//! assert_eq!(p.train.epochs, RbmParams::default().train.epochs); // left out: the default
//! let back = settings::to_json(&p)?;
//! assert_eq!(back["n_hidden"], 20);
//! assert_eq!(back["learning_rate"].to_string(), "0.1");
//! let err = settings::from_json::<RbmParams>("rbm", r#"{"n_hidden": -1}"#).unwrap_err();
//! assert!(err.to_string().contains("n_hidden"), "{err}"); // the entry at fault, named
//! # Ok::<(), boltzkit::Error>(())
//! ```

use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

/// `params` as a JSON object (its serialized names and values). Through JSON text, so that
/// an `f32` setting is its shortest decimal (`0.03`, the value a user typed), not the `f64`
/// nearest to it (`0.029999999329447746`).
pub fn to_json<P: Serialize>(params: &P) -> Result<Value> {
    serde_json::to_string(params)
        .and_then(|text| serde_json::from_str(&text))
        .map_err(|e| Error::Internal(format!("serializing settings: {e}")))
}

/// Settings of `what` (a learner's name, for the message) from a JSON object; settings left
/// out take their defaults. A value of the wrong type is an [`Error::InvalidParam`] with
/// serde's description.
pub fn from_json<P: DeserializeOwned>(what: &str, json: &str) -> Result<P> {
    let value: Value = serde_json::from_str(json)
        .map_err(|e| Error::param("settings", format!("{what}: not a JSON object: {e}")))?;
    from_value(what, value)
}

/// [`from_json`] of a parsed value. A number setting given `null` is what a NaN or an
/// infinity becomes in JSON (a flag's `--lr nan`): refused as "must be a finite number".
pub fn from_value<P: DeserializeOwned>(what: &str, value: Value) -> Result<P> {
    serde_json::from_value(value.clone()).map_err(|e| match entry_at_fault::<P>(&value) {
        Some(name) if value[&name].is_null() && e.to_string().contains("invalid type: null") => {
            Error::param(
                name,
                "must be a finite number, got NaN or an infinity (null)",
            )
        }
        Some(name) => Error::param(name, format!("{what} settings: {e}")),
        None => Error::param("settings", format!("{what} settings: {e}")),
    })
}

/// The entry of `value` without which it reads as a `P` (serde's message for a value of the
/// wrong type names no field, least of all through a tagged enum): the name an error gives.
fn entry_at_fault<P: DeserializeOwned>(value: &Value) -> Option<String> {
    let obj = value.as_object()?;
    obj.keys().find_map(|name| {
        let mut rest = obj.clone();
        rest.remove(name);
        serde_json::from_value::<P>(Value::Object(rest))
            .is_ok()
            .then(|| name.clone())
    })
}

/// `base` with the entries of `given` (a struct of flags serialized under the settings'
/// names, or any JSON object) put over its own: how the CLI builds settings from flags
/// without restating a default.
pub fn overlay<P: Serialize + DeserializeOwned>(base: &P, given: &impl Serialize) -> Result<P> {
    let mut value = to_json(base)?;
    if let (Some(obj), Value::Object(over)) = (value.as_object_mut(), to_json(given)?) {
        obj.extend(over);
    }
    from_value("the given", value)
}

/// The entries whose values differ between `saved` and `given` (`name (LABEL X, given Y)`,
/// `label` naming where `saved` came from), for a refusal that says what differs.
pub fn differences(saved: &Value, given: &Value, label: &str) -> Vec<String> {
    let empty = Map::new();
    let (saved, given) = (
        saved.as_object().unwrap_or(&empty),
        given.as_object().unwrap_or(&empty),
    );
    let mut keys: Vec<&String> = saved.keys().chain(given.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| saved.get(*k) != given.get(*k))
        .map(|k| {
            let show = |v: Option<&Value>| v.map_or("none".to_string(), Value::to_string);
            let (was, now) = (show(saved.get(k)), show(given.get(k)));
            format!("{k} ({label} {was}, given {now})")
        })
        .collect()
}

/// `#[serde(with = "crate::settings::infinity_as_null")]` for an `f32` or `f64` setting
/// whose `∞` is a legal value ("no bound", "off"): serialized as a number, `null` for `∞`
/// (JSON has no infinity: serde_json writes `null` for it, which would not read back), and
/// read from a number, `null` or the word `"inf"` / `"infinity"` (any case: what Python's
/// settings object sends for `float("inf")`).
pub mod infinity_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    /// The float types a setting can be.
    pub trait Float: Copy + PartialEq {
        /// `+∞`.
        const INFINITY: Self;
        /// Neither NaN nor infinite.
        fn is_finite(self) -> bool;
        /// NaN.
        fn is_nan(self) -> bool;
        /// Serialized as itself (an `f32` as its shortest decimal).
        fn serialize<S: Serializer>(self, s: S) -> Result<S::Ok, S::Error>;
        /// From the `f64` JSON gives.
        fn from_f64(x: f64) -> Self;
    }

    impl Float for f32 {
        const INFINITY: Self = f32::INFINITY;
        fn is_finite(self) -> bool {
            f32::is_finite(self)
        }
        fn is_nan(self) -> bool {
            f32::is_nan(self)
        }
        fn serialize<S: Serializer>(self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_f32(self)
        }
        fn from_f64(x: f64) -> Self {
            x as f32
        }
    }

    impl Float for f64 {
        const INFINITY: Self = f64::INFINITY;
        fn is_finite(self) -> bool {
            f64::is_finite(self)
        }
        fn is_nan(self) -> bool {
            f64::is_nan(self)
        }
        fn serialize<S: Serializer>(self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_f64(self)
        }
        fn from_f64(x: f64) -> Self {
            x
        }
    }

    /// `x` as a number, `null` for `+∞`; a NaN or `−∞` as the word `"NaN"` / `"-inf"`, which
    /// [`deserialize`] refuses (as a number JSON would write either as `null`, read back as
    /// `+∞`: a flag's `--max-abs-param nan` would silently mean "no bound").
    pub fn serialize<F: Float, S: Serializer>(x: &F, s: S) -> Result<S::Ok, S::Error> {
        if *x == F::INFINITY {
            s.serialize_none()
        } else if x.is_finite() {
            x.serialize(s)
        } else if x.is_nan() {
            s.serialize_str("NaN")
        } else {
            s.serialize_str("-inf")
        }
    }

    /// A number, `null` or the word for infinity.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Number(f64),
        Word(String),
    }

    /// A number, `null` (`+∞`) or `"inf"` / `"infinity"` (any case).
    pub fn deserialize<'de, F: Float, D: Deserializer<'de>>(d: D) -> Result<F, D::Error> {
        match Option::<Given>::deserialize(d)? {
            None => Ok(F::INFINITY),
            Some(Given::Number(x)) => Ok(F::from_f64(x)),
            Some(Given::Word(w))
                if w.eq_ignore_ascii_case("inf") || w.eq_ignore_ascii_case("infinity") =>
            {
                Ok(F::INFINITY)
            }
            Some(Given::Word(w)) => Err(serde::de::Error::custom(format!(
                "must be a number, null or \"inf\" (no bound), got {w:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbm::frank_wolfe::FwParams;
    use crate::rbm::train::RbmParams;

    /// A NaN or infinite learning rate (a flag's `--lr nan`, `null` in JSON) is refused as
    /// "must be a finite number" naming the setting, not serde's "invalid type: null".
    #[test]
    fn a_nan_flag_reads_must_be_a_finite_number() {
        #[derive(serde::Serialize)]
        struct Flags {
            learning_rate: f32,
        }
        for x in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let e = overlay(&RbmParams::default(), &Flags { learning_rate: x })
                .unwrap_err()
                .to_string();
            assert_eq!(
                e,
                "invalid setting `learning_rate`: must be a finite number, got NaN or an \
                 infinity (null)",
                "{x}"
            );
        }
    }

    /// An infinite bound goes out as `null` and comes back as `∞`, from `null` or `"inf"`; a
    /// finite one as its shortest decimal; another word is refused naming the setting.
    #[test]
    fn infinity_round_trips_as_null_or_inf() {
        let mut p = RbmParams::default();
        p.train.max_abs_param = f32::INFINITY;
        let v = to_json(&p).unwrap();
        assert_eq!(v["max_abs_param"], Value::Null);
        let back: RbmParams = from_value("rbm", v).unwrap();
        assert_eq!(back, p);
        for given in [r#""inf""#, r#""Infinity""#, "null"] {
            let q: RbmParams =
                from_json("rbm", &format!(r#"{{"max_abs_param": {given}}}"#)).unwrap();
            assert_eq!(q.train.max_abs_param, f32::INFINITY, "{given}");
        }
        let q: RbmParams = from_json("rbm", r#"{"max_abs_param": 0.1}"#).unwrap();
        assert_eq!(q.train.max_abs_param, 0.1f32);
        assert_eq!(to_json(&q).unwrap()["max_abs_param"].to_string(), "0.1");
        let err = from_json::<RbmParams>("rbm", r#"{"max_abs_param": "big"}"#).unwrap_err();
        assert!(err.to_string().contains("max_abs_param"), "{err}");
        // a NaN or −∞ bound is refused naming the setting, not read back as "no bound"
        for bad in [f32::NAN, f32::NEG_INFINITY] {
            let given = serde_json::json!({});
            let mut p = RbmParams::default();
            p.train.max_abs_param = bad;
            let e = overlay(&p, &given).unwrap_err().to_string();
            assert!(
                e.contains("max_abs_param") && e.contains("must be a number"),
                "{e}"
            );
        }
        // the f64 setting of the same helper
        let fw: FwParams = from_json("frank-wolfe", r#"{"fall_tol": "inf"}"#).unwrap();
        assert_eq!(fw.fall_tol, f64::INFINITY);
        assert_eq!(to_json(&fw).unwrap()["fall_tol"], Value::Null);
    }

    /// The settings of the optimizer, the classifier, FVBM sampling and the lab are in the
    /// schema too: each round-trips, a field left out takes its default, a changed one is
    /// kept under its field name.
    #[test]
    fn remaining_params_round_trip() {
        use crate::classify::LogisticParams;
        use crate::fvbm::gibbs::GibbsParams;
        use crate::rbm::lab::LabParams;
        use crate::rbm::train::SgdParams;
        fn check<P>(what: &str, changed: &str, value: Value)
        where
            P: Serialize + DeserializeOwned + Default + PartialEq + std::fmt::Debug,
        {
            let d = P::default();
            assert_eq!(from_value::<P>(what, to_json(&d).unwrap()).unwrap(), d);
            assert_eq!(from_json::<P>(what, "{}").unwrap(), d);
            let mut given = Map::new();
            given.insert(changed.into(), value.clone());
            let p: P = from_value(what, Value::Object(given)).unwrap();
            assert_ne!(p, d, "{what}.{changed}");
            assert_eq!(to_json(&p).unwrap()[changed], value, "{what}.{changed}");
        }
        check::<SgdParams>("sgd", "momentum", serde_json::json!(0.5));
        check::<LogisticParams>("logistic", "l2", serde_json::json!(0.25));
        check::<GibbsParams>("gibbs", "thin", serde_json::json!(7));
        check::<LabParams>("lab", "batch_size", serde_json::json!(64));
    }
}
