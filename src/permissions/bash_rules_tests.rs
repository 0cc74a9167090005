//! Bash rules on raw command strings: every bypass form of issue 8 denied, every legitimate
//! form still allowed, and what "always" records.

use super::*;
use pretty_assertions::assert_eq;

fn pattern(rule: &str) -> BashPattern {
    match rule.strip_suffix('*') {
        Some(prefix) => BashPattern::new(prefix, false),
        None => BashPattern::new(rule, true),
    }
}

fn deny(rule: &str, command: &str) -> Verdict {
    let analysis = shell::analyze(command);
    deny_verdict(&pattern(rule), &analysis, &deny_forms_of(&analysis)).0
}

/// Denied as the engine denies: a match, or anything unknowable while the rule is set.
fn denied(rule: &str, command: &str) -> bool {
    let analysis = shell::analyze(command);
    deny_verdict(&pattern(rule), &analysis, &deny_forms_of(&analysis)).0 != Verdict::NoMatch
        || analysis.error.is_some()
        || !analysis.opaque.is_empty()
}

fn allows(rules: &[&str], command: &str) -> bool {
    let patterns: Vec<BashPattern> = rules.iter().map(|r| pattern(r)).collect();
    let refs: Vec<&BashPattern> = patterns.iter().collect();
    allowed(&refs, &shell::analyze(command))
}

#[test]
fn every_bypass_form_of_rm_is_denied_by_bash_rm() {
    for command in [
        "rm -rf x",
        r"\rm -rf x",
        "'rm' -rf x",
        "r''m -rf x",
        "\"rm\" -rf x",
        "/bin/rm -rf x",
        "$(printf rm) -rf x",
        "`printf rm` -rf x",
        "x=rm; $x -rf y",
        "alias r=rm; r -rf x",
        "f() { rm -rf x; }; f",
        "trap 'rm -rf x' EXIT",
        "env -S 'rm -rf x'",
        "env -i PATH=/bin rm x",
        "setsid rm x",
        "ionice -c3 rm x",
        "stdbuf -o0 rm x",
        "coproc rm x",
        "find . -exec rm {} +",
        "find . -execdir /bin/rm -f {} \\;",
        ". <(echo rm -rf x)",
        "source <(echo rm -rf x)",
        "timeout 5 rm x",
        "nice -n 19 rm x",
        "nohup rm x &",
        "time rm x",
        "command rm x",
        "builtin command rm x",
        "exec rm x",
        "xargs rm < list",
        "ls | xargs -I{} {} -rf",
        "watch -n1 rm x",
        "flock /tmp/l rm x",
        "sudo -u root rm x",
        "doas rm x",
        "chroot / rm x",
        "nsenter -t 1 rm x",
        "unshare -r rm x",
        "taskset -c 0 rm x",
        "chrt -o 0 rm x",
        "su -c 'rm x'",
        "sh -c 'rm -rf x'",
        "bash -c \"cd / && rm -rf x\"",
        "sh -c \"$(echo rm)\"",
        "echo rm -rf x | sh",
        "eval rm x",
        "$'\\x72m' x",
        "/bin/r? x",
        "r{m,} x",
        "ls; rm x",
        "echo $(rm x)",
        "if true; then rm x; fi",
        "cat <<EOF\n$(rm x)\nEOF",
        "rm\\\n -rf x",
    ] {
        assert!(
            denied("rm*", command),
            "`{command}` was not denied by bash(rm*)"
        );
    }
}

#[test]
fn every_bypass_form_of_git_push_is_denied() {
    for command in [
        "git push",
        "git  push",
        "git -C . push",
        "git -C. push",
        "git -c k=v push",
        "git --no-pager push",
        "git --git-dir=.git push -f",
        "'git' push",
        "/usr/bin/git push",
        "g''it pu''sh",
        "git $cmd",
        "git --unknown-option push",
        "sudo git push",
        "LC_ALL=C git push",
    ] {
        assert!(
            denied("git push*", command),
            "`{command}` was not denied by bash(git push*)"
        );
    }
    for fine in [
        "git status",
        "git -C sub log",
        "git pull",
        "echo git push",
        "ls git",
    ] {
        assert!(
            !denied("git push*", fine),
            "`{fine}` was denied by bash(git push*)"
        );
    }
}

#[test]
fn deny_rules_leave_unrelated_commands_alone() {
    for fine in [
        "echo rm",
        "ls -la $HOME",
        "cat \"$f\"",
        "for f in *.rs; do rustfmt $f; done",
        "FORM=1 ls",
        "cargo test 2>&1 | tail",
        "bash script.sh",
        "python3 -c 'import os; os.remove(\"x\")'",
        "command -v rm",
    ] {
        assert!(!denied("rm*", fine), "`{fine}` was denied by bash(rm*)");
    }
    assert_eq!(deny("rm *", "rmdir x"), Verdict::NoMatch);
    assert_eq!(deny("rm*", "rmdir x"), Verdict::Match);
    assert_eq!(deny("rm -rf*", "rm $flags x"), Verdict::Unknown);
    assert_eq!(deny("rm -rf /", "rm  -rf  '/'"), Verdict::Match);
    assert_eq!(deny("rm -rf /", "rm -rf /tmp"), Verdict::NoMatch);
    assert_eq!(deny("cd a && make", "cd  a  &&  make"), Verdict::Match);
    assert_eq!(deny("sudo rm*", "sudo -u root rm x"), Verdict::Match);
}

#[test]
fn legitimate_forms_stay_allowed_by_their_rules() {
    for (rules, command) in [
        (&["git status*"][..], "git status -s"),
        (&["git status*"], "git  status"),
        (&["git status*"], "'git' status"),
        (&["git status*"], "git -C sub status"),
        (&["git status*"], "git --no-pager status"),
        (&["git status*"], "LC_ALL=C git status"),
        (&["git status*"], "env LC_ALL=C git status"),
        (&["git status*"], "git status 2>/dev/null"),
        (&["cargo test*"], "cargo test --lib 2>&1"),
        (&["cargo test*"], "cargo +nightly test"),
        (&["cargo test*"], "timeout 600 cargo test"),
        (&["cargo test*"], "nice cargo test -- --nocapture"),
        (&["cargo test*"], "cargo test $ARGS"),
        (&["npm test*"], "npm --prefix web test"),
        (&["ls*"], "/bin/ls -la"),
        (&["ls*"], "ls *.rs"),
        (&["cat*", "wc*"], "cat a | wc -l"),
        (&["cd*", "make*"], "cd sub && make -j4"),
        (&["echo*", "git rev-parse*"], "echo $(git rev-parse HEAD)"),
        (&["sudo apt install*"], "sudo apt install -y jq"),
        (&["sudo*", "apt*"], "sudo apt update"),
        (&["timeout 5 cargo test*"], "timeout 5 cargo test"),
        (&["find*", "rm*"], "find . -name '*.o' -exec rm {} +"),
        (&["sh -c*", "ls*"], "sh -c 'ls -la'"),
        (&["cargo test 2>&1"], "cargo  test 2>&1"),
        (&["cd a && make"], "cd a &&  make"),
        (&["echo a,b > comma.txt"], "echo a,b > comma.txt"),
        (&["FOO=1 make*"], "FOO=1 make all"),
        (&["*"], "anything --at all"),
        (&["x=1 #"], "x=1"),
    ] {
        assert!(
            allows(rules, command),
            "`{command}` was not allowed by {rules:?}"
        );
    }
}

#[test]
fn allow_rules_never_stretch_to_more_than_they_name() {
    for (rules, command) in [
        (&["git status*"][..], "git status; rm -rf ~"),
        (&["git status*"], "git status && rm x"),
        (&["git status*"], "git status $(rm x)"),
        (&["git status*"], "git status > .git/config"),
        (&["git status*"], "git status >> out.txt"),
        (&["git status*"], "git -c core.fsmonitor='rm x' status"),
        (&["git status*"], "GIT_DIR=/tmp/x git status"),
        (&["git status*"], "PAGER='rm x' git status"),
        (&["git status*"], "env GIT_CONFIG_COUNT=1 git status"),
        (&["git status*"], "sudo git status"),
        (&["git status*"], "git $sub"),
        (&["git status*"], "$prog status"),
        (&["git status*"], "git status\nrm x"),
        (&["git status*"], "git status \"unterminated"),
        (&["git status*"], "f() { git status; }; f"),
        (&["git status*"], "export PATH=/tmp/evil; git status"),
        (&["git status*"], "PATH=/tmp/evil; git status"),
        (
            &["cargo test*"],
            "cargo --config build.rustc-wrapper=x test",
        ),
        (&["find*"], "find . -exec rm {} +"),
        (&["xargs*"], "xargs rm"),
        (&["sudo*"], "sudo rm x"),
        (&["sh*"], "sh -c 'rm x'"),
        (&["ls*"], "ls | sh"),
        (&["ls*"], "eval ls"),
        (&["cd a && make"], "cd a && make; rm x"),
        (&["cd a && make*"], "cd a && make; rm x"),
        (&["cargo test 2>&1"], "cargo test --lib"),
        (&["echo*"], "echo hi > file"),
    ] {
        assert!(
            !allows(rules, command),
            "`{command}` was allowed by {rules:?}"
        );
    }
}

#[test]
fn always_records_the_command_that_runs_never_a_wrapper_or_interpreter() {
    for (command, rule) in [
        ("git status -s", "bash(git status*)"),
        ("git -C sub status", "bash(git status*)"),
        ("ls -la", "bash(ls*)"),
        ("cargo -V", "bash(cargo*)"),
        ("env LC_ALL=C ls", "bash(ls*)"),
        ("LC_ALL=C ls -l", "bash(ls*)"),
        ("timeout 60 cargo test --lib", "bash(cargo test*)"),
        ("nice -n 5 make all", "bash(make all*)"),
        ("/usr/bin/git log", "bash(git log*)"),
        ("cargo test 2>&1", "bash(cargo test*)"),
        ("sudo apt install jq", "bash(sudo apt install jq)"),
        ("env FOO=1 ls", "bash(env FOO=1 ls)"),
        ("python3 script.py", "bash(python3 script.py)"),
        ("node -e 'x'", "bash(node -e 'x')"),
        ("sh -c 'ls'", "bash(sh -c 'ls')"),
        ("ls | xargs grep x", "bash(ls | xargs grep x)"),
        ("xargs rm", "bash(rm*)"),
        ("find . -name x", "bash(find . -name x)"),
        ("cd a && make", "bash(cd a && make)"),
        ("eval ls", "bash(eval ls)"),
        ("ls > out", "bash(ls > out)"),
        ("ls *", "bash(ls*)"),
        ("cd a && ls *", "bash(cd a && ls * #)"),
        ("echo a\necho b", "bash(echo a\necho b)"),
    ] {
        assert_eq!(
            session_rule(command, &shell::analyze(command)),
            rule,
            "{command}"
        );
        let recorded = rule
            .strip_prefix("bash(")
            .and_then(|r| r.strip_suffix(')'))
            .unwrap();
        assert!(
            allows(&[recorded], command),
            "`{rule}` does not allow `{command}` again"
        );
    }
    assert!(!allows(&["cd a && ls * #"], "cd a && ls -R /"));
}

/// Matching and "always" never panic on arbitrary text, and what "always" records for it
/// is a rule that parses and allows that very text again (or, for text that cannot be
/// allowed, at least never a bare prefix of a wrapper).
#[test]
fn arbitrary_text_matches_without_panics() {
    const PIECES: &[&str] = &[
        "rm", " ", "'", "\"", "\\", "$x", "(", ")", "`", "{}", ";", "&&", "|", ">", "\n", "#",
        "A=1", "-c", "sh", "env", "-S", "sudo", "find", "-exec", "*", "git", "-C", ".", "push",
        "timeout", "5", "--", "ls",
    ];
    let rules = ["rm*", "git push*", "ls*", "cd a && make"].map(pattern);
    let refs: Vec<&BashPattern> = rules.iter().collect();
    let mut seed: u64 = 42;
    for _ in 0..3000 {
        let mut text = String::new();
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        for _ in 0..(seed >> 60) + 1 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            text.push_str(PIECES[(seed >> 33) as usize % PIECES.len()]);
        }
        let analysis = shell::analyze(&text);
        let forms = deny_forms_of(&analysis);
        for rule in &rules {
            let _ = deny_verdict(rule, &analysis, &forms);
        }
        let _ = allowed(&refs, &analysis);
        let rule = session_rule(&text, &analysis);
        assert!(
            !matches!(
                rule.as_str(),
                "bash(env*)" | "bash(sudo*)" | "bash(sh*)" | "bash(timeout*)"
            ),
            "{text:?}: {rule}"
        );
    }
}

#[test]
fn the_new_bypass_forms_are_denied() {
    for command in [
        "env - rm x",
        "env - PATH=/bin rm x",
        "script -qc 'rm -rf x' /dev/null",
        "script --command='rm x'",
        "find . -name '*.o' -delete",
        "unlink x",
        "shred -u x",
    ] {
        assert!(
            denied("rm*", command),
            "`{command}` was not denied by bash(rm*)"
        );
    }
    assert!(denied("rm -rf*", "find build -delete"));
    for command in [
        "git -c alias.x=push x",
        "git -c alias.x='push --force' x origin",
        "git -calias.x=push x",
        "git -c 'alias.x=!git push' x",
        "git -c 'alias.x=!sh -c \"git push\"' x",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0=push git x",
        "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0=push git x",
        "GIT_CONFIG_PARAMETERS=\"'alias.x'='push'\" git x",
        "git x",
        "git send-pack origin main",
        "git http-push https://example.com/repo main",
        "/usr/lib/git-core/git-push origin",
        "git-push origin",
        "/usr/lib/git-core/git-send-pack origin main",
        "git lfs push origin",
    ] {
        assert!(
            denied("git push*", command),
            "`{command}` was not denied by bash(git push*)"
        );
    }
    // Builtins that are not push stay clear; an alias of another builtin is that builtin.
    for fine in [
        "git status",
        "git log --oneline",
        "git -c alias.st=status st",
        "git -c color.ui=never diff",
    ] {
        assert!(!denied("git push*", fine), "`{fine}` was denied");
    }
}

#[test]
fn reading_rules_do_not_allow_the_options_that_write_or_run() {
    for (rule, command) in [
        ("git diff*", "git diff --output=/etc/cron.d/x"),
        ("git diff*", "git diff --output /tmp/x HEAD"),
        ("git log*", "git log --output=/tmp/x"),
        ("git show*", "git show --output=x HEAD"),
        ("git format-patch*", "git format-patch -o /tmp/out HEAD~1"),
        ("git grep*", "git grep -Orm x"),
        ("git grep*", "git grep --open-files-in-pager='rm x' y"),
        (
            "git fetch*",
            "git fetch --upload-pack='touch /tmp/x' origin",
        ),
        ("git ls-remote*", "git ls-remote -u 'sh -c x' origin"),
        ("find*", "find . -fprint /tmp/x"),
        ("find*", "find . -fprintf /tmp/x '%p'"),
        ("find*", "find . -fls /tmp/x"),
        ("find*", "find . -name x -delete"),
        ("sort*", "sort -o /etc/passwd in"),
        ("sort*", "sort --output=/tmp/x in"),
        ("sort*", "sort -uo /tmp/x in"),
        ("sort*", "sort --compress-program=sh in"),
        ("sed*", "sed 'w /tmp/x' in"),
        ("sed*", "sed -n 's/a/b/w /tmp/x' in"),
        ("sed*", "sed -i 's/a/b/' in"),
        ("sed*", "sed --in-place=.bak 's/a/b/' in"),
        ("sed*", "sed -e 1e\\ id in"),
        ("sed*", "sed -f script.sed in"),
        ("sed*", "sed \"$SCRIPT\" in"),
        ("sed -n*", "sed -n 'w /tmp/x' in"),
        ("curl*", "curl -o /tmp/x https://example.com"),
        ("curl*", "curl -sSLo /tmp/x https://example.com"),
        ("curl*", "curl --output=/tmp/x https://example.com"),
        ("curl*", "curl -K cfg https://example.com"),
        ("rg*", "rg --pre ./evil pattern"),
        ("fd*", "fd -x rm"),
        ("less*", "less '+!rm x' file"),
        ("man*", "man -P 'sh -c x' ls"),
        ("tar*", "tar -tf a.tar --to-command='sh -c x'"),
        ("sqlite3*", "sqlite3 db '.shell rm x'"),
    ] {
        assert!(
            !allows(&[rule], command),
            "`{command}` was allowed by bash({rule})"
        );
    }
    // The same programs reading, and the options when the rule names them.
    for (rule, command) in [
        ("git diff*", "git diff HEAD~1 -- src"),
        ("git log*", "git log --oneline -5"),
        ("find*", "find . -name '*.rs' -print"),
        ("sort*", "sort -u in"),
        ("sed*", "sed -n '1,5p' in"),
        ("sed*", "sed 's/a/b/g' in"),
        ("sed -i*", "sed -i 's/a/b/' in"),
        ("curl*", "curl -sSL https://example.com"),
        ("git diff --output*", "git diff --output=patch.diff"),
        ("rg*", "rg --pre-glob '*.gz' x"),
    ] {
        assert!(
            allows(&[rule], command),
            "`{command}` was not allowed by bash({rule})"
        );
    }
}
