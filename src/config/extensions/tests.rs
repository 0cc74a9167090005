use super::*;
use pretty_assertions::assert_eq;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

struct Dirs {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let top = std::fs::canonicalize(tmp.path()).unwrap();
    let (root, home) = (top.join("p"), top.join("h"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    Dirs {
        _tmp: tmp,
        root,
        home,
    }
}

fn load(d: &Dirs, trust: bool) -> Extensions {
    let paths = Paths::with_home(d.root.clone(), d.home.clone());
    let mut project = ProjectFiles::read(&paths).unwrap();
    project.set_trusted(trust);
    Extensions::load(&paths, &project)
}

#[test]
fn commands_skills_and_agents_load_with_their_front_matter() {
    let d = dirs();
    write(
        &d.root,
        ".ling/commands/frontend/review.md",
        "---\ndescription: Review a component\nargument-hint: FILE\nallowed-tools: Read, Grep\n\
         model: haiku\n---\nReview $ARGUMENTS\n",
    );
    write(
        &d.root,
        ".claude/commands/fix.md",
        "# Fix the build\nFix it.\n",
    );
    write(
        &d.root,
        ".claude/skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms\n---\nUse scripts/fill.py\n",
    );
    write(
        &d.root,
        ".claude/agents/reviewer.md",
        "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep\nmodel: sonnet\n---\n\
         You review.\n",
    );
    write(&d.home, "commands/mine.md", "Mine\n");
    let ext = load(&d, true);
    assert!(ext.warnings.is_empty(), "{:?}", ext.warnings);
    let review = ext.command("frontend:review").unwrap();
    assert_eq!(review.description, "Review a component");
    assert_eq!(review.argument_hint.as_deref(), Some("FILE"));
    assert_eq!(
        review.allowed_tools,
        Some(vec!["Read".to_string(), "Grep".into()])
    );
    assert_eq!(review.model.as_deref(), Some("haiku"));
    assert_eq!(review.body, "Review $ARGUMENTS\n");
    assert_eq!(review.scope, Scope::Project);
    assert_eq!(ext.command("fix").unwrap().description, "Fix the build");
    assert_eq!(ext.command("mine").unwrap().scope, Scope::User);
    let skill = ext.skill("pdf").unwrap();
    assert_eq!(skill.description, "Fill PDF forms");
    assert_eq!(skill.dir, d.root.join(".claude/skills/pdf"));
    let agent = ext.agent("reviewer").unwrap();
    assert_eq!(agent.tools, Some(vec!["Read".to_string(), "Grep".into()]));
    assert_eq!(agent.model.as_deref(), Some("sonnet"));
    assert_eq!(agent.prompt, "You review.");
}

#[test]
fn an_untrusted_project_brings_none_and_the_user_s_still_load() {
    let d = dirs();
    write(&d.root, ".ling/commands/deploy.md", "!git push\n");
    write(
        &d.root,
        ".ling/skills/s/SKILL.md",
        "---\ndescription: d\n---\n",
    );
    write(&d.root, ".ling/agents/a.md", "---\ndescription: d\n---\n");
    write(&d.home, "agents/mine.md", "---\ndescription: mine\n---\n");
    let ext = load(&d, false);
    assert!(ext.commands.is_empty() && ext.skills.is_empty());
    assert_eq!(
        ext.agents
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>(),
        ["mine"]
    );
    // Trusted, they load.
    let ext = load(&d, true);
    assert!(ext.command("deploy").is_some() && ext.skill("s").is_some());
}

#[test]
fn a_builtin_name_is_never_taken_and_ling_wins_over_claude() {
    let d = dirs();
    write(&d.root, ".ling/commands/help.md", "mine\n");
    write(&d.root, ".ling/commands/x.md", "from ling\n");
    write(&d.root, ".claude/commands/x.md", "from claude\n");
    let ext = load(&d, true);
    assert!(ext.command("help").is_none());
    assert_eq!(ext.command("x").unwrap().body, "from ling\n");
    assert_eq!(ext.warnings.len(), 2, "{:?}", ext.warnings);
    assert!(ext.warnings[0].contains("one of Ling's own commands"));
}

#[test]
fn a_file_leading_out_of_the_project_is_skipped() {
    let d = dirs();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.md", "SECRET");
    write(&d.root, ".ling/commands/ok.md", "fine\n");
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        d.root.join(".ling/commands/leak.md"),
    )
    .unwrap();
    let ext = load(&d, true);
    assert!(ext.command("leak").is_none() && ext.command("ok").is_some());
    assert!(ext.warnings[0].contains("outside"), "{:?}", ext.warnings);
}

#[test]
fn the_manifest_covers_every_project_file_and_describes_them() {
    let d = dirs();
    assert_eq!(project_manifest(&d.root, true), None);
    write(
        &d.root,
        ".claude/commands/ship.md",
        "---\ndescription: Ship it\n---\n!git push\n",
    );
    write(
        &d.root,
        ".ling/agents/a.md",
        "---\ndescription: An agent\ntools: Read\n---\nP\n",
    );
    let manifest = project_manifest(&d.root, true).unwrap();
    let described = describe_manifest(&manifest).unwrap();
    assert_eq!(
        described,
        vec![
            (
                "agent",
                "a".to_string(),
                "An agent; tools: Read (.ling/agents/a.md)".to_string()
            ),
            (
                "command",
                "/ship".to_string(),
                "Ship it; when you type it, runs `git push` (through the bash tool's checks) \
                 (.claude/commands/ship.md)"
                    .to_string()
            ),
        ]
    );
    // Without Claude Code's files, only Ling's.
    let ling_only = project_manifest(&d.root, false).unwrap();
    assert!(!ling_only.contains("ship.md"));
}

#[test]
fn shell_lines_are_whole_lines_and_inline_spans() {
    assert_eq!(
        shell_lines("Status: !`git status`\n! ls -la\nno ! here\n!`cat x`\n"),
        ["git status", "ls -la", "cat x"]
    );
}
