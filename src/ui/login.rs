//! The user's side of an OAuth login to an MCP server (`ling mcp login NAME`, `/mcp login NAME`):
//! the authorization URL is always printed, and opened in the browser when there is one
//! (`open` on macOS, `xdg-open` under a graphical session elsewhere), unless `--no-browser` or
//! `LING_NO_BROWSER` say not to. Ling then waits for the redirect on its loopback listener.

use std::process::Stdio;
use std::sync::Arc;

use crate::mcp::auth::{LOGIN_TIMEOUT, Login};
use crate::process::ChildEnv;
use crate::ui::output::stdout_line;

/// Set (to anything) to only print the login URL, never open a browser.
pub const NO_BROWSER_VAR: &str = "LING_NO_BROWSER";

/// A login through the browser for server `server`.
pub fn browser_login(server: &str, no_browser: bool, child_env: ChildEnv) -> Login {
    let open = !no_browser && std::env::var_os(NO_BROWSER_VAR).is_none();
    let server = server.to_string();
    let show = move |url: &str| {
        stdout_line(format!(
            "To log in to MCP server {server:?}, open this URL in a browser:"
        ));
        // The URL is the user's to open: printed whole (it carries no secret, only the
        // login's state and PKCE challenge).
        stdout_line(format!("  {url}"));
        if open && let Some(opened) = open_browser(url, &child_env) {
            stdout_line(format!("(opened with {opened})"));
        }
        stdout_line("Waiting for the browser to come back to Ling...");
    };
    Login::Browser {
        show: Arc::new(show),
        timeout: LOGIN_TIMEOUT,
    }
}

/// Starts the system's URL opener, if there is one; its name.
fn open_browser(url: &str, child_env: &ChildEnv) -> Option<&'static str> {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        "xdg-open"
    } else {
        return None;
    };
    let mut child = child_env
        .helper_command(program.as_ref())
        .ok()?
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Reaped in the background: the opener exits once it handed the URL over.
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    Some(program)
}
