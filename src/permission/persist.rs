//! Saving "always" answers as allow rules in the person's own config file,
//! under `[projects."<root>"]`: the answers are the person's, not the
//! repository's, so they are never written where they would be committed,
//! shared with everyone who clones the project, or forged by it. The file's
//! other content and comments are kept (`toml_edit`); written atomically.

use std::io::Write;
use std::path::Path;

use toml_edit::{Array, DocumentMut, Item, Table, value};

pub fn add_allow_rules(path: &Path, project: &Path, rules: &[String]) -> Result<(), String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e.to_string()),
    };
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    let projects = doc
        .entry("projects")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_mut()
        .ok_or("`projects` is not a table")?;
    let mine = projects
        .entry(&project.display().to_string())
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_mut()
        .ok_or("this project's entry under `projects` is not a table")?;
    let allow = mine
        .entry("allow")
        .or_insert_with(|| value(Array::new()))
        .as_array_mut()
        .ok_or("this project's `allow` is not an array")?;
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
        let p = d.path().join("config.toml");
        std::fs::write(
            &p,
            "# my settings\nprovider = \"x\" # inline\n\n[projects.\"/w/p\"]\nallow = [\"bash(ls:*)\"]\n",
        )
        .unwrap();
        let project = Path::new("/w/p");
        add_allow_rules(
            &p,
            project,
            &["bash(cargo test:*)".into(), "bash(ls:*)".into()],
        )
        .unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.starts_with("# my settings\nprovider = \"x\" # inline\n"),
            "{text}"
        );
        assert!(
            text.contains(r#"allow = ["bash(ls:*)", "bash(cargo test:*)"]"#),
            "{text}"
        );
        add_allow_rules(&p, Path::new("/w/q"), &["edit(a)".into()]).unwrap();
        let parsed: toml::Table = std::fs::read_to_string(&p).unwrap().parse().unwrap();
        assert_eq!(
            parsed["projects"]["/w/q"]["allow"][0].as_str(),
            Some("edit(a)")
        );
        assert_eq!(
            parsed["projects"]["/w/p"]["allow"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn creates_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("agent/config.toml");
        add_allow_rules(&p, Path::new("/w/p"), &["edit(src/a.rs)".into()]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "[projects.\"/w/p\"]\nallow = [\"edit(src/a.rs)\"]\n"
        );
    }
}
