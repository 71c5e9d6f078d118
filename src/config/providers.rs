//! The provider table: built-in entries, merged field by field with the user's
//! `[providers.<id>]` tables, and the choice of which one a run uses.

use std::collections::BTreeMap;
use std::path::Path;

use super::file::ProviderFile;
use super::{ConfigError, Overrides};
use crate::llm::{Prices, ProviderKind, ResolvedProvider};

#[derive(Debug, Clone)]
struct ProviderDef {
    kind: Option<ProviderKind>,
    base_url: Option<String>,
    api_key_env: Option<String>,
    model: Option<String>,
    headers: BTreeMap<String, String>,
    max_tokens: Option<u32>,
    thinking_budget: Option<u32>,
    reasoning_effort: Option<String>,
    prices: Option<Prices>,
    context_window: Option<u64>,
    /// Where it was last changed, for error messages.
    origin: String,
}

pub const DEFAULT_MAX_TOKENS: u32 = 16_384;

/// Models OpenAI serves only over the Responses API (`/responses`).
pub fn responses_only(model: &str) -> bool {
    const PREFIXES: [&str; 6] = [
        "gpt-5-codex",
        "codex-",
        "gpt-5-pro",
        "o1-pro",
        "o3-pro",
        "o3-deep-research",
    ];
    PREFIXES.iter().any(|p| model.starts_with(p))
}

/// Built-in providers, in the order a run without a choice tries them (by
/// whose key is present). `ollama` needs no key, so it is used only when chosen.
const BUILTIN: &[(&str, ProviderKind, &str, Option<&str>, &str)] = &[
    (
        "anthropic",
        ProviderKind::Anthropic,
        "https://api.anthropic.com",
        Some("ANTHROPIC_API_KEY"),
        "claude-sonnet-4-5",
    ),
    (
        "openai",
        ProviderKind::Openai,
        "https://api.openai.com/v1",
        Some("OPENAI_API_KEY"),
        "gpt-5",
    ),
    (
        "openrouter",
        ProviderKind::Openai,
        "https://openrouter.ai/api/v1",
        Some("OPENROUTER_API_KEY"),
        "anthropic/claude-sonnet-4.5",
    ),
    (
        "deepseek",
        ProviderKind::Openai,
        "https://api.deepseek.com/v1",
        Some("DEEPSEEK_API_KEY"),
        "deepseek-chat",
    ),
    (
        "ollama",
        ProviderKind::Openai,
        "http://localhost:11434/v1",
        None,
        "qwen2.5-coder",
    ),
];

#[derive(Debug, Clone)]
pub(super) struct ProviderTable {
    defs: BTreeMap<String, ProviderDef>,
    /// Ids in auto-selection order: built-ins first, then the user's.
    order: Vec<String>,
}

impl ProviderTable {
    pub fn builtin() -> ProviderTable {
        let mut defs = BTreeMap::new();
        let mut order = Vec::new();
        for &(id, kind, url, env, model) in BUILTIN {
            defs.insert(
                id.to_string(),
                ProviderDef {
                    kind: Some(kind),
                    base_url: Some(url.to_string()),
                    api_key_env: env.map(str::to_string),
                    model: Some(model.to_string()),
                    headers: BTreeMap::new(),
                    max_tokens: None,
                    thinking_budget: None,
                    reasoning_effort: None,
                    prices: None,
                    context_window: None,
                    origin: "built-in defaults".into(),
                },
            );
            order.push(id.to_string());
        }
        ProviderTable { defs, order }
    }

    pub fn apply(
        &mut self,
        files: BTreeMap<String, ProviderFile>,
        path: &Path,
    ) -> Result<(), ConfigError> {
        for (id, f) in files {
            let def = self.defs.entry(id.clone()).or_insert_with(|| {
                self.order.push(id.clone());
                ProviderDef {
                    kind: None,
                    base_url: None,
                    api_key_env: None,
                    model: None,
                    headers: BTreeMap::new(),
                    max_tokens: None,
                    thinking_budget: None,
                    reasoning_effort: None,
                    prices: None,
                    context_window: None,
                    origin: String::new(),
                }
            });
            def.origin = path.display().to_string();
            def.kind = f.kind.or(def.kind);
            def.base_url = f.base_url.or(def.base_url.take());
            def.api_key_env = f.api_key_env.or(def.api_key_env.take());
            def.model = f.model.or(def.model.take());
            def.headers.extend(f.headers);
            def.max_tokens = f.max_tokens.or(def.max_tokens);
            def.thinking_budget = f.thinking_budget.or(def.thinking_budget);
            def.reasoning_effort = f.reasoning_effort.or(def.reasoning_effort.take());
            if let (Some(i), Some(o)) = (f.input_price, f.output_price) {
                let anthropic = def.kind == Some(ProviderKind::Anthropic);
                def.prices = Some(Prices {
                    input: i,
                    output: o,
                    cache_read: f.cache_read_price.unwrap_or(i / 10.0),
                    cache_write: f.cache_write_price.unwrap_or(if anthropic {
                        i * 1.25
                    } else {
                        0.0
                    }),
                });
            }
            def.context_window = f.context_window.or(def.context_window);
        }
        Ok(())
    }

    pub fn resolve(
        &self,
        chosen: Option<&str>,
        overrides: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ResolvedProvider, ConfigError> {
        let key_of = |def: &ProviderDef| {
            def.api_key_env
                .as_deref()
                .and_then(env)
                .filter(|k| !k.trim().is_empty())
        };
        let id = match chosen {
            Some(id) => {
                if !self.defs.contains_key(id) {
                    return Err(ConfigError::UnknownProvider {
                        id: id.to_string(),
                        known: self.order.join(", "),
                        hint: "~/.config/agent/config.toml or .agent/config.toml".into(),
                    });
                }
                id.to_string()
            }
            None => self
                .order
                .iter()
                .find(|id| {
                    self.defs[*id].api_key_env.is_some() && key_of(&self.defs[*id]).is_some()
                })
                .cloned()
                .ok_or_else(|| ConfigError::NoProvider(self.no_provider_help()))?,
        };
        let def = &self.defs[&id];
        let err = |message: String| ConfigError::Provider {
            provider: id.clone(),
            message,
        };
        let kind = def.kind.ok_or_else(|| {
            err(format!(
                "has no `kind`: add kind = \"openai\" or kind = \"anthropic\" to [providers.{id}] in {}",
                def.origin
            ))
        })?;
        let base_url = overrides
            .base_url
            .clone()
            .or_else(|| def.base_url.clone())
            .ok_or_else(|| {
                err(format!(
                    "has no `base_url`: add one to [providers.{id}] in {} or pass --base-url",
                    def.origin
                ))
            })?;
        let parsed = reqwest::Url::parse(&base_url)
            .map_err(|e| err(format!("has an invalid base URL `{base_url}`: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(err(format!(
                "has base URL `{base_url}` with scheme `{}`; use http:// or https://",
                parsed.scheme()
            )));
        }
        let model = overrides
            .model
            .clone()
            .or_else(|| def.model.clone())
            .ok_or_else(|| {
                err(format!(
                    "has no `model`: add one to [providers.{id}] in {} or pass --model",
                    def.origin
                ))
            })?;
        let model_for_price = model.clone();
        // OpenAI serves some models only over the Responses API.
        let kind = if kind == ProviderKind::Openai
            && parsed.host_str() == Some("api.openai.com")
            && responses_only(&model)
        {
            ProviderKind::OpenaiResponses
        } else {
            kind
        };
        let api_key = key_of(def);
        if let Some(env_name) = &def.api_key_env
            && api_key.is_none()
        {
            return Err(ConfigError::MissingKey {
                provider: id.clone(),
                env: env_name.clone(),
            });
        }
        Ok(ResolvedProvider {
            id: id.clone(),
            kind,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            api_key_env: def.api_key_env.clone(),
            model,
            headers: def.headers.clone(),
            max_tokens: def.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            thinking_budget: def.thinking_budget,
            reasoning_effort: def.reasoning_effort.clone(),
            prices: def.prices.or_else(|| known_prices(&model_for_price)),
            context_window: def
                .context_window
                .or_else(|| known_window(&model_for_price))
                .map(|w| w.max(1_000)),
        })
    }

    /// Every environment variable a provider's key is read from.
    pub fn knows(&self, id: &str) -> bool {
        self.defs.contains_key(id)
    }

    /// What a project's file may say about providers: the model and the
    /// token and price settings of a provider the person already has. Where
    /// requests go and which key they carry (`kind`, `base_url`, `headers`,
    /// `api_key_env`, a provider of its own) are the person's alone; those
    /// are dropped and named in the second list (`[providers.x].base_url`).
    pub fn project_subset(
        &self,
        files: BTreeMap<String, ProviderFile>,
    ) -> (BTreeMap<String, ProviderFile>, Vec<String>) {
        let mut kept = BTreeMap::new();
        let mut ignored = Vec::new();
        for (id, f) in files {
            if !self.knows(&id) {
                ignored.push(format!("[providers.{id}] (a provider of its own)"));
                continue;
            }
            for (field, set) in [
                ("kind", f.kind.is_some()),
                ("base_url", f.base_url.is_some()),
                ("api_key_env", f.api_key_env.is_some()),
                ("headers", !f.headers.is_empty()),
            ] {
                if set {
                    ignored.push(format!("[providers.{id}].{field}"));
                }
            }
            kept.insert(
                id,
                ProviderFile {
                    kind: None,
                    base_url: None,
                    api_key_env: None,
                    headers: BTreeMap::new(),
                    ..f
                },
            );
        }
        (kept, ignored)
    }

    pub fn key_vars(&self) -> Vec<String> {
        self.defs
            .values()
            .filter_map(|d| d.api_key_env.clone())
            .collect()
    }

    fn no_provider_help(&self) -> String {
        let keys: Vec<String> = self
            .order
            .iter()
            .filter_map(|id| {
                let env = self.defs[id].api_key_env.as_ref()?;
                Some(format!("  export {env}=...    # {id}"))
            })
            .collect();
        format!(
            "no LLM provider is configured: no API key found in the environment.\n\
             Set one of these:\n{}\n\
             or use a local model with `--provider ollama`, or define your own in ~/.config/agent/config.toml:\n\
             \n  provider = \"mine\"\n  [providers.mine]\n  kind = \"openai\"          # or \"anthropic\"\n  \
             base_url = \"https://example.com/v1\"\n  api_key_env = \"MINE_API_KEY\"\n  model = \"model-name\"",
            keys.join("\n")
        )
    }
}

/// List prices (USD per million input, output, cache-read and cache-write
/// tokens) of the built-in providers' models, as published in 2026; the
/// `*_price` keys of `[providers.<id>]` override them. Checked against the
/// vendors' price pages on 2026-11-30.
fn known_prices(model: &str) -> Option<Prices> {
    let m = model.rsplit('/').next().unwrap_or(model);
    let p = |input, output, cache_read, cache_write| Prices {
        input,
        output,
        cache_read,
        cache_write,
    };
    Some(match m {
        _ if m.starts_with("claude-opus-4-5") => p(5.0, 25.0, 0.5, 6.25),
        _ if m.starts_with("claude-opus-4") => p(15.0, 75.0, 1.5, 18.75),
        _ if m.starts_with("claude-sonnet-4") => p(3.0, 15.0, 0.3, 3.75),
        _ if m.starts_with("claude-haiku-4") => p(1.0, 5.0, 0.1, 1.25),
        _ if m.starts_with("claude-3-5-haiku") => p(0.8, 4.0, 0.08, 1.0),
        "gpt-5" | "gpt-5.1" | "gpt-5-codex" | "gpt-5.1-codex" => p(1.25, 10.0, 0.125, 0.0),
        "gpt-5-mini" => p(0.25, 2.0, 0.025, 0.0),
        "gpt-5-nano" => p(0.05, 0.4, 0.005, 0.0),
        "gpt-4.1" => p(2.0, 8.0, 0.5, 0.0),
        "gpt-4.1-mini" => p(0.4, 1.6, 0.1, 0.0),
        "gpt-4o" => p(2.5, 10.0, 1.25, 0.0),
        "gpt-4o-mini" => p(0.15, 0.6, 0.075, 0.0),
        "o3" => p(2.0, 8.0, 0.5, 0.0),
        "o4-mini" => p(1.1, 4.4, 0.275, 0.0),
        "deepseek-chat" => p(0.28, 0.42, 0.028, 0.0),
        "deepseek-reasoner" => p(0.28, 0.42, 0.028, 0.0),
        _ => return None,
    })
}

/// Context windows (tokens) of well-known models.
fn known_window(model: &str) -> Option<u64> {
    let m = model.rsplit('/').next().unwrap_or(model);
    Some(match m {
        _ if m.starts_with("claude-") => 200_000,
        _ if m.starts_with("gpt-5") => 400_000,
        _ if m.starts_with("gpt-4.1") => 1_047_576,
        _ if m.starts_with("gpt-4o") => 128_000,
        _ if m.starts_with("o3") || m.starts_with("o4") => 200_000,
        _ if m.starts_with("deepseek") => 128_000,
        _ if m.starts_with("gemini") => 1_048_576,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigFile;

    fn env_with(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn first_provider_with_a_key_wins() {
        let t = ProviderTable::builtin();
        let p = t
            .resolve(
                None,
                &Overrides::default(),
                &env_with(&[("OPENAI_API_KEY", "k")]),
            )
            .unwrap();
        assert_eq!(p.id, "openai");
        assert_eq!(p.base_url, "https://api.openai.com/v1");
        assert_eq!(p.api_key.as_deref(), Some("k"));
    }

    #[test]
    fn no_key_explains_how_to_configure() {
        let t = ProviderTable::builtin();
        let e = t
            .resolve(None, &Overrides::default(), &env_with(&[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("export ANTHROPIC_API_KEY=..."), "{e}");
        assert!(e.contains("[providers.mine]"), "{e}");
    }

    #[test]
    fn chosen_provider_without_key_names_the_variable() {
        let t = ProviderTable::builtin();
        let e = t
            .resolve(
                Some("anthropic"),
                &Overrides::default(),
                &env_with(&[("OPENAI_API_KEY", "k")]),
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("export ANTHROPIC_API_KEY="), "{e}");
    }

    #[test]
    fn openais_responses_only_models_take_the_responses_api() {
        let t = ProviderTable::builtin();
        let kind = |model: &str| {
            let o = Overrides {
                model: Some(model.into()),
                ..Overrides::default()
            };
            t.resolve(Some("openai"), &o, &env_with(&[("OPENAI_API_KEY", "k")]))
                .unwrap()
                .kind
        };
        assert_eq!(kind("gpt-5-codex"), ProviderKind::OpenaiResponses);
        assert_eq!(kind("o3-pro"), ProviderKind::OpenaiResponses);
        assert_eq!(kind("gpt-5"), ProviderKind::Openai);
    }

    #[test]
    fn ollama_needs_no_key_and_flags_override() {
        let t = ProviderTable::builtin();
        let o = Overrides {
            model: Some("m".into()),
            base_url: Some("http://127.0.0.1:9/v1/".into()),
            ..Overrides::default()
        };
        let p = t.resolve(Some("ollama"), &o, &env_with(&[])).unwrap();
        assert_eq!(
            (p.model.as_str(), p.base_url.as_str()),
            ("m", "http://127.0.0.1:9/v1")
        );
        assert_eq!(p.api_key, None);
    }

    #[test]
    fn user_table_merges_over_builtin_and_defines_new() {
        let mut t = ProviderTable::builtin();
        let f = ConfigFile::parse(
            "[providers.openai]\nmodel = \"gpt-x\"\n[providers.mine]\nkind = \"anthropic\"\nbase_url = \"http://h\"\nmodel = \"c\"\n",
            Path::new("u.toml"),
        )
        .unwrap();
        t.apply(f.providers, Path::new("u.toml")).unwrap();
        let env = env_with(&[("OPENAI_API_KEY", "k")]);
        let p = t
            .resolve(Some("openai"), &Overrides::default(), &env)
            .unwrap();
        assert_eq!(
            (p.model.as_str(), p.base_url.as_str()),
            ("gpt-x", "https://api.openai.com/v1")
        );
        let mine = t
            .resolve(Some("mine"), &Overrides::default(), &env)
            .unwrap();
        assert_eq!(mine.kind, ProviderKind::Anthropic);
        let e = t
            .resolve(Some("nope"), &Overrides::default(), &env)
            .unwrap_err()
            .to_string();
        assert!(e.contains("mine") && e.contains("[providers.nope]"), "{e}");
    }

    #[test]
    fn bad_base_url_is_an_error() {
        let t = ProviderTable::builtin();
        let o = Overrides {
            base_url: Some("localhost:8080".into()),
            ..Overrides::default()
        };
        let e = t
            .resolve(Some("ollama"), &o, &env_with(&[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("localhost:8080"), "{e}");
    }
}
