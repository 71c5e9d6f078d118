//! JSON schemas for tool arguments, derived from the argument types so the
//! schema the model sees cannot drift from what the code accepts.

use schemars::generate::SchemaSettings;
use serde_json::Value;

pub fn for_args<T: schemars::JsonSchema>() -> Value {
    let schema = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    simplify(&mut value);
    if let Some(obj) = value.as_object_mut() {
        obj.remove("title");
        obj.entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    value
}

/// `Option<T>` fields come out as `"type": ["T", "null"]`; optional is already
/// said by `required`, and some providers reject type arrays, so keep `T`.
fn simplify(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get("type") {
                let non_null: Vec<Value> = types
                    .iter()
                    .filter(|t| t.as_str() != Some("null"))
                    .cloned()
                    .collect();
                if non_null.len() == 1 {
                    map.insert("type".into(), non_null[0].clone());
                }
            }
            map.remove("format");
            map.values_mut().for_each(simplify);
        }
        Value::Array(items) => items.iter_mut().for_each(simplify),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// The path.
        path: String,
        /// How many.
        limit: Option<u32>,
    }

    #[test]
    fn optional_fields_are_plain_types_and_required_lists_the_rest() {
        let v = for_args::<Args>();
        assert_eq!(v["type"], "object");
        assert_eq!(v["required"], serde_json::json!(["path"]));
        assert_eq!(v["properties"]["limit"]["type"], "integer");
        assert_eq!(v["properties"]["path"]["description"], "The path.");
        assert!(v.get("$schema").is_none() && v.get("title").is_none());
    }
}
