//! The REPL's slash commands as one parse: a typed line becomes a [`Slash`], which `mod.rs`
//! carries out with one call each (most of them one `session::Command`). A new command is one
//! more row of [`COMMANDS`], one more variant and one more arm.

use crate::config::ThemeSetting;

/// The slash commands and their one-line help, in `/help`'s order.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "show this help"),
    (
        "/agents",
        "the sub-agent types, and those running now (/agents stop ID)",
    ),
    ("/skills", "list the skills the model can load"),
    ("/tools", "list the tools the model can call"),
    ("/hooks", "list the loaded hooks"),
    (
        "/mcp",
        "MCP server status; /mcp reconnect NAME restarts one, /mcp login NAME logs in (OAuth), /mcp enable|disable NAME switches one on or off here",
    ),
    ("/expand", "print the last tool output whole"),
    (
        "/status",
        "model, base URL, mode, sandbox, context, MCP servers, session, log",
    ),
    ("/diff", "what this session changed in files, as a diff"),
    (
        "/tasks",
        "the background commands: their state and last line",
    ),
    (
        "/goal",
        "after each answer run CMD until it passes (/goal CMD), show it (/goal), or stop (/goal off)",
    ),
    (
        "/init",
        "have the model write or improve AGENTS.md (you approve the write)",
    ),
    (
        "/cost",
        "tokens this session, and their cost when settings give prices",
    ),
    (
        "/mode",
        "show the permission mode, or set it with /mode NAME (Shift-Tab cycles)",
    ),
    (
        "/permissions",
        "list the rules and where they came from; /permissions allow|deny|remove RULE",
    ),
    ("/clear", "forget the conversation and start a new session"),
    ("/model", "show the model, or switch with /model NAME"),
    (
        "/compact",
        "summarise the conversation to free context; /compact INSTRUCTIONS says what to keep",
    ),
    ("/context", "how full the model's context is, by part"),
    ("/todos", "the model's to-do list for this session"),
    (
        "/resume",
        "continue another session of this project (a picker), or /resume ID",
    ),
    (
        "/rewind",
        "go back to before a message: code, conversation or both (a picker; also Esc Esc), or /rewind N [code|conversation]",
    ),
    (
        "/fork",
        "go on in a new session with this conversation; this one is left as it is",
    ),
    (
        "/theme",
        "show the colours of code, or set them with /theme dark|light|auto",
    ),
    ("/exit", "leave Ling (also Ctrl-D)"),
    ("/quit", "same as /exit"),
];

/// A typed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    Exit,
    Help,
    /// `/agents`, or `/agents stop ID`.
    Agents(Option<String>),
    Skills,
    Tools,
    Hooks,
    Mcp(McpSlash),
    Expand,
    Status,
    Todos,
    Diff,
    Tasks,
    /// `/goal` (`None`: show it), `/goal off` (`Some("")`), or `/goal CMD`.
    Goal(Option<String>),
    Init,
    Cost,
    /// `/mode` (`None`: show it) or `/mode NAME`.
    Mode(Option<String>),
    Permissions(PermissionsSlash),
    Clear,
    Model(Option<String>),
    Compact(String),
    Context,
    /// `/resume` (the picker: empty) or `/resume ID`.
    Resume(String),
    /// `/rewind` (the picker: empty) or `/rewind N [code|conversation] [--force]`.
    Rewind(String),
    Fork,
    /// `/theme` (`None`: show it), or the setting asked for.
    Theme(Option<ThemeSetting>),
    /// `/theme` with a word it does not know.
    ThemeUsage,
    /// `/mcp__server__prompt ARGS`: an MCP prompt, the whole line.
    McpPrompt(String),
    /// A custom command's `/name args`: sent as the prompt, expanded by the session.
    Custom(String),
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpSlash {
    Status,
    Reconnect(String),
    Login(String),
    Enable(String),
    Disable(String),
    Usage,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionsSlash {
    List,
    Add { allow: bool, rule: String },
    Remove(String),
    Usage,
}

/// `line` (starting with `/`) as a command; `custom` tells whether the session has a custom
/// command of that name.
pub fn parse(line: &str, custom: impl Fn(&str) -> bool) -> Slash {
    let (command, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    let word = |rest: &str| (!rest.is_empty()).then(|| rest.to_string());
    match command {
        "/exit" | "/quit" => Slash::Exit,
        "/help" => Slash::Help,
        "/agents" => Slash::Agents(
            rest.strip_prefix("stop")
                .map(|id| id.trim().to_string())
                .filter(|id| !id.is_empty()),
        ),
        "/skills" => Slash::Skills,
        "/tools" => Slash::Tools,
        "/hooks" => Slash::Hooks,
        "/mcp" => Slash::Mcp(mcp(rest)),
        "/expand" => Slash::Expand,
        "/status" => Slash::Status,
        "/diff" => Slash::Diff,
        "/tasks" => Slash::Tasks,
        "/goal" => Slash::Goal(match rest {
            "" => None,
            "off" | "clear" => Some(String::new()),
            command => Some(command.to_string()),
        }),
        "/init" => Slash::Init,
        "/cost" => Slash::Cost,
        "/mode" => Slash::Mode(word(rest)),
        "/permissions" => Slash::Permissions(permissions(rest)),
        "/clear" => Slash::Clear,
        "/model" => Slash::Model(word(rest)),
        "/compact" => Slash::Compact(rest.to_string()),
        "/context" => Slash::Context,
        "/todos" => Slash::Todos,
        "/resume" => Slash::Resume(rest.to_string()),
        "/rewind" => Slash::Rewind(rest.to_string()),
        "/fork" => Slash::Fork,
        "/theme" => match ThemeSetting::parse(rest) {
            Some(setting) => Slash::Theme(Some(setting)),
            None if rest.is_empty() => Slash::Theme(None),
            None => Slash::ThemeUsage,
        },
        other if other.starts_with("/mcp__") => Slash::McpPrompt(line.to_string()),
        _ if custom(line) => Slash::Custom(line.to_string()),
        other => Slash::Unknown(other.to_string()),
    }
}

fn mcp(rest: &str) -> McpSlash {
    let (verb, name) = rest
        .split_once(' ')
        .map_or((rest, ""), |(a, b)| (a, b.trim()));
    let name = name.to_string();
    match verb {
        "" => McpSlash::Status,
        _ if name.is_empty() => McpSlash::Usage,
        "reconnect" => McpSlash::Reconnect(name),
        "login" => McpSlash::Login(name),
        "enable" => McpSlash::Enable(name),
        "disable" => McpSlash::Disable(name),
        _ => McpSlash::Usage,
    }
}

fn permissions(rest: &str) -> PermissionsSlash {
    let (verb, rule) = rest
        .split_once(' ')
        .map_or((rest, ""), |(v, r)| (v, r.trim()));
    let rule = rule.to_string();
    match verb {
        "" => PermissionsSlash::List,
        _ if rule.is_empty() => PermissionsSlash::Usage,
        "allow" | "deny" => PermissionsSlash::Add {
            allow: verb == "allow",
            rule,
        },
        "remove" => PermissionsSlash::Remove(rule),
        _ => PermissionsSlash::Usage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn lines_parse_into_commands() {
        let none = |_: &str| false;
        assert_eq!(parse("/quit", none), Slash::Exit);
        assert_eq!(parse("/mode", none), Slash::Mode(None));
        assert_eq!(
            parse("/mode  plan ", none),
            Slash::Mode(Some("plan".into()))
        );
        assert_eq!(
            parse("/mcp reconnect db", none),
            Slash::Mcp(McpSlash::Reconnect("db".into()))
        );
        assert_eq!(parse("/mcp login", none), Slash::Mcp(McpSlash::Usage));
        assert_eq!(
            parse("/permissions deny bash(rm*)", none),
            Slash::Permissions(PermissionsSlash::Add {
                allow: false,
                rule: "bash(rm*)".into()
            })
        );
        assert_eq!(parse("/theme blue", none), Slash::ThemeUsage);
        assert_eq!(
            parse("/mcp__db__q x", none),
            Slash::McpPrompt("/mcp__db__q x".into())
        );
        assert_eq!(
            parse("/review a.rs", |l| l.starts_with("/review")),
            Slash::Custom("/review a.rs".into())
        );
        assert_eq!(parse("/nope", none), Slash::Unknown("/nope".into()));
        assert_eq!(
            parse("/goal cargo test -q", none),
            Slash::Goal(Some("cargo test -q".into()))
        );
        assert_eq!(parse("/goal off", none), Slash::Goal(Some(String::new())));
        assert_eq!(parse("/goal", none), Slash::Goal(None));
    }
}
