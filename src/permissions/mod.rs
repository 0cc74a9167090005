//! Permission rules and modes of `docs/tools.md`: whether a tool call
//! runs, needs the user's approval, or is refused. Rules (`--allowed-tools`,
//! `--disallowed-tools`, settings `permissions.allow` / `permissions.deny`) are checked first,
//! deny before allow; edits of protected paths (`.git`, `.ling`, `.claude`, `LING_HOME`, and what
//! the run reads or runs outside the sandbox) and reads of hidden ones (`sandbox.denyRead`) ask
//! unless a rule names the path; the mode's column for the tool's kind decides the rest. Rules
//! on web hosts (`web_fetch(domain:...)`) are matched against the URL's host, and handed to the
//! fetch as [`crate::web::HostRules`] (`web_rules.rs`).

use serde_json::Value;
use std::path::Path;

use crate::config::{Access, Paths, PermissionMode};
use crate::tools::{Tool, ToolKind};

mod bash_glob;
mod bash_rules;
mod condition;
mod path_rules;
mod rules;
pub mod shell;
mod web_rules;

pub use condition::Condition;

use bash_rules::{BashPattern, Verdict};
use path_rules::{Protected, Scope, Target};
use rules::Rule;
use shell::Analysis;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PermissionError {
    #[error(
        "invalid permission rule {rule:?}: {reason}; rules look like `read_file`, `mcp__sqlite__*`, \
         `bash(git status*)` or `edit_file(src/**)`"
    )]
    InvalidRule { rule: String, reason: String },
}

/// The outcome of [`Permissions::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    Allow,
    /// The user must approve; in a non-interactive run this is a denial built from `suggestion`.
    Ask {
        suggestion: Suggestion,
    },
    Deny {
        reason: String,
    },
}

/// What would allow a call without asking: a rule for the REPL's "always" answer, the flag that
/// adds it, and for file edits the mode that allows them all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    /// e.g. `bash(git status*)`, `write_file` or `edit_file(.git/config)`.
    pub rule: String,
    /// e.g. `--allowed-tools 'bash(git status*)'`.
    pub flag: String,
    /// e.g. `--permission-mode accept-edits`, for ordinary file edits only.
    pub mode_hint: Option<String>,
    /// Why the call asks even though the mode or a rule would otherwise allow it.
    pub why: Option<String>,
}

/// Everything the dispatch step asks about one call, worked out from one parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    pub check: Check,
    /// The reason when a deny RULE (not the mode) matches: a hook's `allow` cannot override it.
    pub denied_by_rule: Option<String>,
    /// What an "always" answer records (see [`Permissions::session_rule_for`]).
    pub session_rule: String,
}

/// One call as the rules see it: the tool, the path it acts on and, for `bash`, the command
/// and what it runs. Worked out once per evaluation.
struct Call<'a> {
    tool: &'a dyn Tool,
    target: Option<Target>,
    command: Option<&'a str>,
    bash: Option<Analysis>,
    /// The host a `web_fetch` call fetches.
    host: Option<String>,
    /// What a `skill` or `task` call names: the skill, the agent type.
    named: Option<&'a str>,
}

impl Call<'_> {
    fn name(&self) -> &str {
        self.tool.name()
    }

    fn facts(&self) -> condition::CallFacts<'_> {
        condition::CallFacts {
            tool: self.name(),
            target: self.target.as_ref(),
            bash: self.bash.as_ref(),
            host: self.host.as_deref(),
            named: self.named,
        }
    }
}

#[derive(Clone)]
pub struct Permissions {
    mode: PermissionMode,
    /// The `bash` tool runs in the shell sandbox: it needs no question (and runs read-only in
    /// `plan` mode instead of being denied).
    sandboxed: bool,
    allow: Vec<(String, Rule)>,
    deny: Vec<(String, Rule)>,
    /// Settings `permissions.ask`: these calls always ask (deny rules still win).
    ask: Vec<(String, Rule)>,
    scope: Scope,
}

impl Permissions {
    /// Bad rule syntax is an error naming the rule. Path rules and protected paths resolve
    /// against `paths` (the project root and `LING_HOME`).
    pub fn new(
        mode: PermissionMode,
        allow: &[String],
        deny: &[String],
        paths: &Paths,
    ) -> Result<Self, PermissionError> {
        let mut scope = Scope::new(&paths.project_root, &paths.home);
        scope.protect_areas(&paths.add_dirs);
        let parse = |rules: &[String]| -> Result<Vec<(String, Rule)>, PermissionError> {
            rules
                .iter()
                .map(|r| Ok((r.trim().to_string(), Rule::parse(r, &scope)?)))
                .collect()
        };
        Ok(Self {
            mode,
            sandboxed: false,
            allow: parse(allow)?,
            deny: parse(deny)?,
            ask: Vec::new(),
            scope,
        })
    }

    /// Whether a deny rule names `tool` whatever its input (`Bash`, `mcp__db`, `Write`): the
    /// tool is not offered to the model at all.
    pub fn removes(&self, tool: &str) -> bool {
        self.deny.iter().any(|(_, rule)| rule.names_tool(tool))
    }

    /// Adds `ask` rules: a call one matches asks in every mode (plan mode still denies what it
    /// denies), even when an allow rule or the mode would allow it; deny rules still win.
    pub fn with_ask_rules(mut self, ask: &[String]) -> Result<Self, PermissionError> {
        for rule in ask {
            self.ask
                .push((rule.trim().to_string(), Rule::parse(rule, &self.scope)?));
        }
        Ok(self)
    }

    /// Edits of these files and folders (what the run reads or runs outside the sandbox, each
    /// with what it is: `trust::surface`) ask in every mode but `bypass`, like `.git` and
    /// `.ling`.
    pub fn protect_outside(&mut self, paths: &[(std::path::PathBuf, &'static str)]) {
        self.scope.protect_outside(paths);
    }

    /// Reads of these paths (what sandboxed commands cannot read: `sandbox.denyRead` and its
    /// defaults) by the file tools and `skill` ask in every mode but `bypass`.
    pub fn hide(&mut self, paths: &[std::path::PathBuf]) {
        self.scope.hide(paths);
    }

    /// The rules accepted only to be ignored, because they name a Claude Code tool Ling does
    /// not have (`WebFetch(domain:example.com)`), one sentence each for a warning.
    pub fn ignored_rules(&self) -> Vec<String> {
        self.allow
            .iter()
            .chain(&self.deny)
            .chain(&self.ask)
            .filter(|(_, rule)| rule.is_ignored())
            .map(|(text, _)| {
                format!(
                    "permission rule `{text}` names a Claude Code tool Ling does not have; it is \
                     ignored"
                )
            })
            .collect()
    }

    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    pub fn set_mode(&mut self, mode: PermissionMode) {
        self.mode = mode;
    }

    /// Whether `bash` commands run in the shell sandbox (see [`Permissions::check`]).
    pub fn set_sandboxed(&mut self, sandboxed: bool) {
        self.sandboxed = sandboxed;
    }

    pub fn sandboxed(&self) -> bool {
        self.sandboxed
    }

    /// The same permissions for an agent whose project root is `root` (a sub-agent in a
    /// worktree of its own): file tools stay inside it; path rules keep the paths they named.
    pub fn rooted_at(mut self, root: &Path) -> Self {
        self.scope.moved_to(root);
        self
    }

    /// File tools stay inside the project root in every mode but `bypass`.
    pub fn confine_to_root(&self) -> bool {
        self.mode.meaning().guards_paths
    }

    fn call<'a>(&self, tool: &'a dyn Tool, input: &'a Value) -> Call<'a> {
        let command = bash_command(tool.name(), input);
        let target = self.scope.target(tool.name(), input).or_else(|| {
            let read = tool.reads_file(input)?;
            Some(self.scope.target_of(read))
        });
        Call {
            tool,
            target,
            command,
            bash: command.map(shell::analyze),
            host: web_rules::fetch_host(tool.name(), input),
            named: rules::named_in(tool.name(), input),
        }
    }

    /// [`Permissions::check`], [`Permissions::denied_by_rule`] and
    /// [`Permissions::session_rule_for`] at once, parsing a bash command only once.
    pub fn evaluate(&self, tool: &dyn Tool, input: &Value) -> Evaluation {
        let call = self.call(tool, input);
        let denied_by_rule = self.denial(&call);
        Evaluation {
            check: self.check_call(&call, denied_by_rule.clone()),
            denied_by_rule,
            session_rule: self.session_rule(&call),
        }
    }

    /// Rules first (deny wins over allow), then protected paths, then the mode's column for the
    /// tool's kind.
    pub fn check(&self, tool: &dyn Tool, input: &Value) -> Check {
        let call = self.call(tool, input);
        let denial = self.denial(&call);
        self.check_call(&call, denial)
    }

    fn check_call(&self, call: &Call, denial: Option<String>) -> Check {
        let tool = call.tool;
        if let Some(reason) = denial {
            return Check::Deny { reason };
        }
        if tool.name() == "bash" && call.bash.is_none() {
            return Check::Deny {
                reason: "the bash call has no `command` string; call bash with \
                         {\"command\": \"...\"}"
                    .into(),
            };
        }
        // What the mode refuses outright is not asked about, whatever rule or path would ask.
        let refused = matches!(self.access(tool, false), Access::Deny(_));
        if let Some(rule) = self.asked(call)
            && !refused
        {
            let mut suggestion = self.suggestion(call);
            suggestion.why = Some(format!(
                "the ask rule `{rule}` (settings permissions.ask) asks for every such call, \
                 whatever allow rules and the mode say"
            ));
            return Check::Ask { suggestion };
        }
        let protected = self.protected(call);
        if self.allowed(call, protected.as_ref()) {
            return Check::Allow;
        }
        if let (Some(protected), Some(target)) = (protected, &call.target)
            && !refused
        {
            return Check::Ask {
                suggestion: self.protected_suggestion(tool.name(), target, &protected),
            };
        }
        // Contained by the kernel: no question, in plan mode too (where it runs read-only).
        if self.sandboxed && tool.name() == "bash" {
            return Check::Allow;
        }
        let ask = || Check::Ask {
            suggestion: self.suggestion(call),
        };
        match self.access(tool, tool.read_only_hint()) {
            Access::Allow => Check::Allow,
            Access::Ask => ask(),
            Access::Deny(why) => Check::Deny {
                reason: format!("{} mode: {} {why}", self.mode.as_str(), tool.name()),
            },
        }
    }

    /// What the mode does with a call of `tool` ([`crate::config::MODES`]); `read_only`: an
    /// MCP tool its server marks read-only.
    fn access(&self, tool: &dyn Tool, read_only: bool) -> Access {
        let meaning = self.mode.meaning();
        match tool.kind() {
            ToolKind::Read => meaning.reads,
            ToolKind::Edit => meaning.edits,
            ToolKind::Execute if read_only => meaning.read_only_runs,
            ToolKind::Execute => meaning.runs,
            ToolKind::Web => meaning.web,
        }
    }

    /// Whether an edit (or a read of a hidden path) must be asked for whatever the mode and
    /// bare rules say.
    fn protected(&self, call: &Call) -> Option<Protected> {
        if !self.mode.meaning().guards_paths {
            return None;
        }
        let target = call.target.as_ref()?;
        match call.tool.kind() {
            _ if matches!(call.name(), "write_file" | "edit_file") => self.scope.protected(target),
            ToolKind::Read => self.scope.hidden(target),
            _ => None,
        }
    }

    /// Whether an allow rule allows the call. A protected path is allowed only by a path rule
    /// that names it; a bash command only when every command in it is allowed.
    fn allowed(&self, call: &Call, protected: Option<&Protected>) -> bool {
        let mut bash_patterns: Vec<&BashPattern> = Vec::new();
        for (_, rule) in &self.allow {
            match rule {
                Rule::Bash(pattern) => bash_patterns.push(pattern),
                Rule::Domain(_) | Rule::Named { .. }
                    if condition::matches_call(rule, &call.facts(), &mut None) =>
                {
                    return true;
                }
                Rule::Path { tools, pattern } => {
                    let Some(target) = &call.target else { continue };
                    if tools.contains(&call.name())
                        && pattern.matches(target)
                        && protected.is_none_or(|p| pattern.names(p, &self.scope))
                    {
                        return true;
                    }
                }
                _ if rule.names_tool(call.name()) && protected.is_none() => return true,
                _ => {}
            }
        }
        match &call.bash {
            Some(analysis) => bash_rules::allowed(&bash_patterns, analysis),
            None => false,
        }
    }

    /// The first ask rule that matches the call. A bash rule matches when any command in the
    /// text matches it, or when what the text runs cannot be known (asking is the safe side).
    fn asked(&self, call: &Call) -> Option<&str> {
        let mut forms = None;
        self.ask
            .iter()
            .find(|(_, rule)| condition::matches_call(rule, &call.facts(), &mut forms))
            .map(|(text, _)| text.as_str())
    }

    /// Adds an allow rule for the rest of the session ("always" in the REPL prompt). The rule
    /// comes from [`Permissions::session_rule_for`]; one that does not parse matches nothing and
    /// is dropped.
    pub fn allow_for_session(&mut self, rule: String) {
        if let Ok(parsed) = Rule::parse(&rule, &self.scope) {
            self.allow.push((rule, parsed));
        }
    }

    /// The rules in force, allow rules first: (`true` for allow, the rule as written).
    pub fn rules(&self) -> Vec<(bool, String)> {
        let allow = self.allow.iter().map(|(text, _)| (true, text.clone()));
        allow
            .chain(self.deny.iter().map(|(text, _)| (false, text.clone())))
            .collect()
    }

    /// Adds an allow (or deny) rule for the rest of the session; bad syntax is an error.
    pub fn add_rule(&mut self, allow: bool, rule: &str) -> Result<(), PermissionError> {
        let parsed = Rule::parse(rule, &self.scope)?;
        let list = if allow {
            &mut self.allow
        } else {
            &mut self.deny
        };
        list.push((rule.trim().to_string(), parsed));
        Ok(())
    }

    /// Removes every rule written `rule` (allow or deny) for the rest of the session; says
    /// whether there was one.
    pub fn remove_rule(&mut self, rule: &str) -> bool {
        let before = self.allow.len() + self.deny.len();
        self.allow.retain(|(text, _)| text != rule.trim());
        self.deny.retain(|(text, _)| text != rule.trim());
        before != self.allow.len() + self.deny.len()
    }

    /// Whether a deny RULE (not the mode) matches: a hook's `allow` cannot override this.
    pub fn denied_by_rule(&self, tool: &dyn Tool, input: &Value) -> Option<String> {
        self.denial(&self.call(tool, input))
    }

    fn denial(&self, call: &Call) -> Option<String> {
        let denied = |text: &str, runs: Option<&str>| {
            let runs = runs
                .map(|r| format!(" (it runs `{r}`)"))
                .unwrap_or_default();
            format!(
                "the permission rule `{text}` (--disallowed-tools or settings permissions.deny) \
                 denies this {} call{runs}; do it another way or ask the user",
                call.name()
            )
        };
        let mut bash_rules: Vec<&str> = Vec::new();
        let mut unknown: Option<(&str, String)> = None;
        let mut forms = None;
        for (text, rule) in &self.deny {
            match rule {
                Rule::Bash(pattern) => {
                    let Some(analysis) = &call.bash else { continue };
                    bash_rules.push(text);
                    let forms = forms.get_or_insert_with(|| bash_rules::deny_forms_of(analysis));
                    match bash_rules::deny_verdict(pattern, analysis, forms) {
                        (Verdict::Match, runs) => return Some(denied(text, Some(&runs))),
                        (Verdict::Unknown, runs) if unknown.is_none() => {
                            unknown = Some((text, runs));
                        }
                        _ => {}
                    }
                }
                Rule::Path { tools, pattern }
                    if tools.contains(&call.name())
                        && call.target.as_ref().is_some_and(|t| pattern.matches(t)) =>
                {
                    return Some(denied(text, None));
                }
                Rule::Path { .. } => {}
                Rule::Domain(_) | Rule::Named { .. }
                    if condition::matches_call(rule, &call.facts(), &mut None) =>
                {
                    return Some(denied(text, None));
                }
                _ if rule.names_tool(call.name()) => return Some(denied(text, None)),
                _ => {}
            }
        }
        let analysis = call.bash.as_ref()?;
        if bash_rules.is_empty() {
            return None;
        }
        let why = if let Some(error) = &analysis.error {
            error.clone()
        } else if let Some(reason) = analysis.opaque.first() {
            reason.clone()
        } else if let Some((rule, runs)) = unknown {
            format!(
                "`{runs}` has a word only known when the command runs where the rule `{rule}` \
                 needs one"
            )
        } else {
            return None;
        };
        let rules = bash_rules
            .iter()
            .map(|r| format!("`{r}`"))
            .collect::<Vec<_>>()
            .join(", ");
        Some(format!(
            "this bash call cannot be checked against the deny rule(s) {rules}: {why}. While a \
             bash deny rule is set, a command whose programs cannot all be known from its text is \
             denied; write the commands out plainly (no eval, source, aliases, functions, `$VAR` \
             or `$(...)` as a program) or ask the user"
        ))
    }

    /// The rule that would allow this call from now on: for bash the prefix of the command that
    /// really runs (`bash(git status*)` for `git -C sub status -s`, `bash(ls*)` for `env
    /// LC_ALL=C ls`), never a wrapper or an interpreter, else the exact command; for an edit of a
    /// protected path the path rule; otherwise the tool's name.
    pub fn session_rule_for(&self, tool: &dyn Tool, input: &Value) -> String {
        self.session_rule(&self.call(tool, input))
    }

    fn session_rule(&self, call: &Call) -> String {
        if let (Some(command), Some(analysis)) = (call.command, &call.bash) {
            return bash_rules::session_rule(command, analysis);
        }
        if call.name() == "bash" {
            // No command to name: a rule that parses to nothing, never the bare `bash`.
            return "bash()".to_string();
        }
        if let Some(host) = &call.host {
            return format!("web_fetch(domain:{host})");
        }
        if self.protected(call).is_some()
            && let Some(target) = &call.target
        {
            return self.scope.rule_for(call.name(), target);
        }
        call.name().to_string()
    }

    fn suggestion(&self, call: &Call) -> Suggestion {
        let rule = self.session_rule(call);
        Suggestion {
            flag: format!("--allowed-tools {}", shell_quote(&rule)),
            rule,
            mode_hint: (call.tool.kind() == ToolKind::Edit)
                .then(|| "--permission-mode accept-edits".to_string()),
            why: None,
        }
    }

    fn protected_suggestion(
        &self,
        tool: &str,
        target: &Target,
        protected: &Protected,
    ) -> Suggestion {
        let rule = self.scope.rule_for(tool, target);
        let place = match protected {
            Protected::Dir(dir) => format!("inside `{dir}`"),
            Protected::Home => "inside LING_HOME".to_string(),
            Protected::Outside(what) => (*what).to_string(),
            Protected::Hidden => {
                return Suggestion {
                    flag: format!("--allowed-tools {}", shell_quote(&rule)),
                    why: Some(format!(
                        "{} is hidden from sandboxed commands (sandbox.denyRead: a credential \
                         store or secret), and reading it sends it to the model: it asks in every \
                         mode but bypass, and only a rule naming the path allows it",
                        self.scope.shown(target)
                    )),
                    rule,
                    mode_hint: None,
                };
            }
        };
        Suggestion {
            flag: format!("--allowed-tools {}", shell_quote(&rule)),
            why: Some(format!(
                "{} is a protected path ({place}): it asks in every mode but bypass, and only a \
                 rule naming the path allows it",
                self.scope.shown(target)
            )),
            rule,
            mode_hint: None,
        }
    }
}

fn bash_command<'a>(tool: &str, input: &'a Value) -> Option<&'a str> {
    (tool == "bash").then(|| input.get("command")?.as_str())?
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

#[cfg(test)]
#[path = "properties.rs"]
mod properties;

#[cfg(test)]
#[path = "claude_syntax_tests.rs"]
mod claude_syntax_tests;
