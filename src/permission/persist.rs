//! Saving "always" answers as allow rules in the project's
//! `.agent/config.toml`, keeping the file's other content and comments
//! (`toml_edit`), written atomically.

use std::io::Write;
use std::path::Path;

use toml_edit::{Array, DocumentMut, Item, Table, value};

pub fn add_allow_rules(path: &Path, rules: &[String]) -> Result<(), String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e.to_string()),
    };
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    let permissions = doc
        .entry("permissions")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_mut()
        .ok_or("`permissions` is not a table")?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| value(Array::new()))
        .as_array_mut()
        .ok_or("`permissions.allow` is not an array")?;
    for rule in rules {
        if !allow.iter().any(|v| v.as_str() == Some(rule)) {
            allow.push(rule.as_str());
        }
    }
    let dir = path.parent().ok_or("the config path has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| e.to_string())?;
    tmp.write_all(doc.to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    tmp.as_file().sync_all().map_err(|e| e.to_string())?;
    tmp.persist(path).map_err(|e| e.error.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_comments_and_other_content() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".agent/config.toml");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(
            &p,
            "# my settings\nprovider = \"x\" # inline\n\n[permissions]\nallow = [\"bash(ls:*)\"]\n",
        )
        .unwrap();
        add_allow_rules(&p, &["bash(cargo test:*)".into(), "bash(ls:*)".into()]).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.starts_with("# my settings\nprovider = \"x\" # inline\n"),
            "{text}"
        );
        assert!(
            text.contains(r#"allow = ["bash(ls:*)", "bash(cargo test:*)"]"#),
            "{text}"
        );
    }

    #[test]
    fn creates_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".agent/config.toml");
        add_allow_rules(&p, &["edit(src/a.rs)".into()]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "[permissions]\nallow = [\"edit(src/a.rs)\"]\n"
        );
    }
}
