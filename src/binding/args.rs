//! Reading JS values with errors that name the field: every bad value is an `ERR_INVALID_ARG`
//! with the field's path (`options.pty.cols`) and what was given, never a generic type error.
//! Types are checked first, then converted with napi's safe `FromNapiValue::from_unknown`.

use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::ValueType;

use crate::error::TermError;

/// A reading result: the core error carries the code and the field-naming message.
pub(super) type Parsed<T> = std::result::Result<T, TermError>;

/// Longest grace accepted for `killGraceMs` and `killProcessGroup()` (10 minutes).
pub(super) const MAX_GRACE_MS: f64 = 600_000.0;
/// Largest integer a JS number holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A napi failure while reading (an exotic object, a throwing getter).
pub(super) fn internal(e: Error) -> TermError {
    TermError::invalid_arg(e.reason.clone())
}

pub(super) fn type_of(v: &Unknown) -> Parsed<ValueType> {
    v.get_type().map_err(internal)
}

/// `undefined` or `null`: an absent optional value.
pub(super) fn is_nullish(v: &Unknown) -> Parsed<bool> {
    Ok(matches!(
        type_of(v)?,
        ValueType::Undefined | ValueType::Null
    ))
}

/// "a string", "a number", … for messages.
pub(super) fn describe(v: &Unknown) -> &'static str {
    match v.get_type() {
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::BigInt) => "a bigint",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Object) => "an object",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Undefined) => "undefined",
        _ => "an unknown value",
    }
}

/// Property `key` of `obj` (undefined when missing).
pub(super) fn get<'e>(obj: &Object<'e>, key: &str) -> Parsed<Unknown<'e>> {
    obj.get_named_property::<Unknown>(key).map_err(internal)
}

pub(super) fn as_string(v: &Unknown, field: &str) -> Parsed<String> {
    if type_of(v)? != ValueType::String {
        return Err(TermError::invalid_arg(format!(
            "{field} must be a string, got {}",
            describe(v)
        )));
    }
    String::from_unknown(*v).map_err(internal)
}

pub(super) fn opt_string(obj: &Object, key: &str, field: &str) -> Parsed<Option<String>> {
    let v = get(obj, key)?;
    if is_nullish(&v)? {
        return Ok(None);
    }
    as_string(&v, field).map(Some)
}

pub(super) fn as_object<'e>(v: &Unknown<'e>, field: &str) -> Parsed<Object<'e>> {
    if type_of(v)? != ValueType::Object {
        return Err(TermError::invalid_arg(format!(
            "{field} must be an object, got {}",
            describe(v)
        )));
    }
    Object::from_unknown(*v).map_err(internal)
}

/// An optional object property (`undefined` and `null` are absent).
pub(super) fn opt_object<'e>(
    obj: &Object<'e>,
    key: &str,
    field: &str,
) -> Parsed<Option<Object<'e>>> {
    let v = get(obj, key)?;
    if is_nullish(&v)? {
        return Ok(None);
    }
    as_object(&v, field).map(Some)
}

pub(super) fn as_array<'e>(v: &Unknown<'e>, field: &str) -> Parsed<Vec<Unknown<'e>>> {
    if !v.is_array().map_err(internal)? {
        return Err(TermError::invalid_arg(format!(
            "{field} must be an array, got {}",
            describe(v)
        )));
    }
    Vec::<Unknown>::from_unknown(*v).map_err(internal)
}

pub(super) fn opt_array<'e>(
    obj: &Object<'e>,
    key: &str,
    field: &str,
) -> Parsed<Option<Vec<Unknown<'e>>>> {
    let v = get(obj, key)?;
    if is_nullish(&v)? {
        return Ok(None);
    }
    as_array(&v, field).map(Some)
}

fn as_number(v: &Unknown) -> Parsed<Option<f64>> {
    if type_of(v)? != ValueType::Number {
        return Ok(None);
    }
    f64::from_unknown(*v).map(Some).map_err(internal)
}

/// A non-negative safe integer, or None for null/undefined.
pub(super) fn opt_count(obj: &Object, key: &str, field: &str) -> Parsed<Option<f64>> {
    let v = get(obj, key)?;
    if is_nullish(&v)? {
        return Ok(None);
    }
    let Some(n) = as_number(&v)? else {
        return Err(TermError::invalid_arg(format!(
            "{field} must be a non-negative integer, got {}",
            describe(&v)
        )));
    };
    if !n.is_finite() || n < 0.0 || n.fract() != 0.0 || n > MAX_SAFE {
        return Err(TermError::invalid_arg(format!(
            "{field} must be a non-negative integer no larger than 2^53-1, got {n}"
        )));
    }
    Ok(Some(n))
}

/// An optional boolean field (`undefined` and `null` are absent).
pub(super) fn opt_bool(obj: &Object, key: &str, field: &str) -> Parsed<Option<bool>> {
    let v = get(obj, key)?;
    if is_nullish(&v)? {
        return Ok(None);
    }
    if type_of(&v)? != ValueType::Boolean {
        return Err(TermError::invalid_arg(format!(
            "{field} must be a boolean, got {}",
            describe(&v)
        )));
    }
    bool::from_unknown(v).map(Some).map_err(internal)
}

/// A terminal dimension: an integer from 1 to 65535.
pub(super) fn dimension(v: &Unknown, field: &str) -> Parsed<u16> {
    let Some(n) = as_number(v)? else {
        return Err(TermError::invalid_arg(format!(
            "{field} must be an integer from 1 to 65535, got {}",
            describe(v)
        )));
    };
    if !(1.0..=65535.0).contains(&n) || n.fract() != 0.0 {
        return Err(TermError::invalid_arg(format!(
            "{field} must be an integer from 1 to 65535, got {n}"
        )));
    }
    Ok(n as u16)
}

pub(super) fn opt_dimension(obj: &Object, key: &str, field: &str) -> Parsed<Option<u16>> {
    let v = get(obj, key)?;
    if is_nullish(&v)? {
        return Ok(None);
    }
    dimension(&v, field).map(Some)
}

/// One of the allowed strings, or None for null/undefined.
pub(super) fn opt_choice(
    obj: &Object,
    key: &str,
    field: &str,
    allowed: &[&str],
) -> Parsed<Option<String>> {
    let Some(s) = opt_string(obj, key, field)? else {
        return Ok(None);
    };
    if !allowed.contains(&s.as_str()) {
        let list: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
        return Err(TermError::invalid_arg(format!(
            "{field} must be {}, got '{s}'",
            list.join(" or ")
        )));
    }
    Ok(Some(s))
}

/// A grace period in milliseconds: an integer from 0 to [`MAX_GRACE_MS`], or None for
/// null/undefined.
pub(super) fn opt_grace(v: &Unknown, field: &str) -> Parsed<Option<Duration>> {
    if is_nullish(v)? {
        return Ok(None);
    }
    let bad = |got: String| {
        TermError::invalid_arg(format!(
            "{field} must be an integer from 0 to {MAX_GRACE_MS} (milliseconds), got {got}"
        ))
    };
    let Some(n) = as_number(v)? else {
        return Err(bad(describe(v).to_string()));
    };
    if !(0.0..=MAX_GRACE_MS).contains(&n) || n.fract() != 0.0 {
        return Err(bad(n.to_string()));
    }
    Ok(Some(Duration::from_millis(n as u64)))
}

/// A pid: a positive integer that fits a pid.
pub(super) fn pid(v: &Unknown, field: &str) -> Parsed<i32> {
    let bad = |got: String| {
        TermError::invalid_arg(format!("{field} must be a positive integer pid, got {got}"))
    };
    let Some(n) = as_number(v)? else {
        return Err(bad(describe(v).to_string()));
    };
    if !(1.0..=i32::MAX as f64).contains(&n) || n.fract() != 0.0 {
        return Err(bad(n.to_string()));
    }
    Ok(n as i32)
}

/// The bytes of a `write()` argument: a string as UTF-8, or a Buffer / Uint8Array.
pub(super) fn input_bytes(data: &Unknown) -> Parsed<Vec<u8>> {
    match type_of(data)? {
        ValueType::String => Ok(as_string(data, "data")?.into_bytes()),
        ValueType::Object if data.is_buffer().map_err(internal)? => {
            let b = BufferSlice::from_unknown(*data).map_err(internal)?;
            Ok(b.to_vec())
        }
        ValueType::Object if data.is_typedarray().map_err(internal)? => {
            // Only a Uint8Array converts; other typed arrays are refused here.
            let a = Uint8ArraySlice::from_unknown(*data).map_err(|_| {
                TermError::invalid_arg("data must be a string, a Buffer or a Uint8Array")
            })?;
            Ok(a.to_vec())
        }
        _ => Err(TermError::invalid_arg(format!(
            "data must be a string, a Buffer or a Uint8Array, got {}",
            describe(data)
        ))),
    }
}
