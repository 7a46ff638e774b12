//! JSON read strictly: an object that names a key twice is an error. Two
//! readers of `{"flagged": true, "flagged": false}` can each take a
//! different one (serde_json and most others keep the last, some the
//! first), and a gate must not act on a reading its sender may not share.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Parses `text` as JSON, refusing duplicate keys at any depth.
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Strict>(text).map(|s| s.0)
}

/// Parses `bytes` as JSON, refusing duplicate keys at any depth.
pub fn from_slice(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice::<Strict>(bytes).map(|s| s.0)
}

/// The first JSON value at the start of `text` (what follows is left), with
/// the number of bytes it took; duplicate keys are refused.
pub fn first(text: &str) -> Option<Result<(Value, usize), serde_json::Error>> {
    let mut it = serde_json::Deserializer::from_str(text).into_iter::<Strict>();
    let v = it.next()?;
    Some(v.map(|s| (s.0, it.byte_offset())))
}

struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "the key \"{key}\" appears twice"
                )));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_named_twice_at_any_depth_is_an_error() {
        assert!(from_str(r#"{"flagged":true,"flagged":false}"#).is_err());
        assert!(from_str(r#"{"a":[{"b":1,"b":2}]}"#).is_err());
        let v = from_str(r#"{"a":[1,2.5,"x",null,true,{"b":{}}],"c":-3}"#).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a":[1,2.5,"x",null,true,{"b":{}}],"c":-3})
        );
        let (v, n) = first(r#"{"flagged":true} and more"#).unwrap().unwrap();
        assert_eq!((v, n), (serde_json::json!({"flagged": true}), 16));
    }
}
