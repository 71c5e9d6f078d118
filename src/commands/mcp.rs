//! `agent mcp list`.

use crate::config::Config;
use crate::mcp::McpManager;

/// `agent mcp list`: every configured server started (each waited for up
/// to its startup timeout), its state and tools; then all stopped.
pub async fn list(config: &Config) -> String {
    let mut out = String::new();
    if config.mcp_servers.is_empty() {
        out.push_str(&format!(
            "No MCP servers are configured. Add a [mcp.<name>] table to {} (see README.md).\n",
            config.paths.user_config.display()
        ));
    } else {
        let manager = McpManager::new(
            &config.mcp_servers,
            &config.workspace,
            &config.paths.data_dir,
        );
        manager.start_and_wait().await;
        out.push_str(&manager.report());
        manager.shutdown().await;
    }
    for (name, file) in &config.mcp_ignored {
        out.push_str(&format!(
            "{name}  ignored: defined in {}, and this project is not trusted (`agent trust` shows what it asks for; `agent trust --yes` trusts it)\n",
            file.display(),
        ));
    }
    out
}
