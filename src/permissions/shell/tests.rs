//! The parser and normaliser on raw command strings.

use super::parse::shielded;
use super::*;
use pretty_assertions::assert_eq;

/// Every command a text runs, each as its rendered words, wrapped commands after their wrapper.
pub(in crate::permissions) fn commands(text: &str) -> Vec<String> {
    fn add(command: &Command, out: &mut Vec<String>) {
        let mut words = command.assignments.clone();
        words.extend(command.words.iter().cloned());
        out.push(render_words(&words));
        for inner in &command.inner {
            add(&inner.command, out);
        }
    }
    let analysis = analyze(text);
    let mut out = Vec::new();
    for command in &analysis.commands {
        add(command, &mut out);
    }
    out
}

#[test]
fn quotes_escapes_blanks_and_paths_are_normalised() {
    for (text, expected) in [
        (r"\rm -rf x", vec!["rm -rf x"]),
        ("'rm' -rf x", vec!["rm -rf x"]),
        ("r''m -rf x", vec!["rm -rf x"]),
        (r#""rm" -rf x"#, vec!["rm -rf x"]),
        (r"$'\x72m' x", vec!["rm x"]),
        ("/bin/rm x", vec!["rm x"]),
        ("./rm x", vec!["rm x"]),
        ("git   push", vec!["git push"]),
        ("git \\\n push", vec!["git push"]),
        ("echo 'a b' \"c d\"", vec!["echo 'a b' 'c d'"]),
        (r#"echo "a\"b""#, vec![r#"echo 'a"b'"#]),
    ] {
        assert_eq!(commands(text), expected, "{text}");
    }
}

#[test]
fn every_simple_command_is_found_through_every_construct() {
    for (text, expected) in [
        ("ls; rm x", vec!["ls", "rm x"]),
        ("ls && rm x || echo no", vec!["ls", "rm x", "echo no"]),
        ("cat f | rm x |& wc", vec!["cat f", "rm x", "wc"]),
        ("(cd a && rm x)", vec!["cd a", "rm x"]),
        ("{ rm x; } > /dev/null", vec!["rm x"]),
        (
            "if true; then rm x; elif false; then ls; else pwd; fi",
            vec!["true", "rm x", "false", "ls", "pwd"],
        ),
        ("for f in $(ls); do rm $f; done", vec!["f=", "ls", "rm $f"]),
        ("while read l; do rm x; done < list", vec!["read l", "rm x"]),
        ("case $x in a) rm x;; esac", vec!["rm x"]),
        (
            "echo $(rm x) `rm y`",
            vec!["echo $(rm x) `rm y`", "rm x", "rm y"],
        ),
        (
            "diff <(rm x) >(rm y)",
            vec!["diff <(rm x) >(rm y)", "rm x", "rm y"],
        ),
        ("cat <<EOF\n$(rm x)\nEOF", vec!["cat", "rm x"]),
        ("! rm x", vec!["rm x"]),
        ("ls &\nrm x", vec!["ls", "rm x"]),
        ("[[ -f $(rm x) ]]", vec!["rm x"]),
        ("a=$(rm x)", vec!["'a=$(rm x)'", "rm x"]),
        ("FOO=1 BAR='x y' rm z", vec!["FOO=1 'BAR=x y' rm z"]),
        ("local v=$(rm x)", vec!["local 'v=$(rm x)'", "rm x"]),
        ("echo ${x:-$(rm x)}", vec!["echo ${x:-$(rm x)}", "rm x"]),
    ] {
        assert_eq!(commands(text), expected, "{text}");
    }
}

#[test]
fn wrappers_are_followed_with_their_own_options() {
    for (text, expected) in [
        ("timeout 5 rm x", vec!["timeout 5 rm x", "rm x"]),
        (
            "timeout -s KILL -k 2 5 rm x",
            vec!["timeout -s KILL -k 2 5 rm x", "rm x"],
        ),
        ("sudo -u root -- rm x", vec!["sudo -u root -- rm x", "rm x"]),
        (
            "sudo -E FOO=1 rm x",
            vec!["sudo -E FOO=1 rm x", "FOO=1 rm x"],
        ),
        ("doas -u root rm x", vec!["doas -u root rm x", "rm x"]),
        (
            "env -i PATH=/bin rm x",
            vec!["env -i PATH=/bin rm x", "PATH=/bin rm x"],
        ),
        ("env -S 'rm -rf x'", vec!["env -S 'rm -rf x'", "rm -rf x"]),
        (
            "env --split-string='A=1 rm x'",
            vec!["env '--split-string=A=1 rm x'", "A=1 rm x"],
        ),
        ("nice -n 5 rm x", vec!["nice -n 5 rm x", "rm x"]),
        ("nice -5 rm x", vec!["nice -5 rm x", "rm x"]),
        ("ionice -c 3 rm x", vec!["ionice -c 3 rm x", "rm x"]),
        ("setsid -f rm x", vec!["setsid -f rm x", "rm x"]),
        ("stdbuf -oL rm x", vec!["stdbuf -oL rm x", "rm x"]),
        ("nohup rm x", vec!["nohup rm x", "rm x"]),
        ("time -p rm x", vec!["time -p rm x", "rm x"]),
        ("command rm x", vec!["command rm x", "rm x"]),
        ("command -v rm", vec!["command -v rm"]),
        (
            "builtin exec rm x",
            vec!["builtin exec rm x", "exec rm x", "rm x"],
        ),
        ("exec -a name rm x", vec!["exec -a name rm x", "rm x"]),
        (
            "xargs -n1 -I{} rm {}",
            vec!["xargs -n1 -I{} rm {}", "rm {}"],
        ),
        (
            "find . -name '*.o' -exec rm {} \\;",
            vec!["find . -name *.o -exec rm {} ;", "rm {}"],
        ),
        (
            "find . -execdir rm -f {} + -ok ls ';'",
            vec!["find . -execdir rm -f {} + -ok ls ;", "rm -f {}", "ls"],
        ),
        ("watch -n 1 rm x", vec!["watch -n 1 rm x", "rm x"]),
        ("watch -x rm x", vec!["watch -x rm x", "rm x"]),
        ("flock /tmp/l rm x", vec!["flock /tmp/l rm x", "rm x"]),
        (
            "flock -w 5 /tmp/l -c 'rm x'",
            vec!["flock -w 5 /tmp/l -c 'rm x'", "rm x"],
        ),
        ("chroot /srv rm x", vec!["chroot /srv rm x", "rm x"]),
        ("nsenter -t 1 -m rm x", vec!["nsenter -t 1 -m rm x", "rm x"]),
        (
            "unshare -r --fork rm x",
            vec!["unshare -r --fork rm x", "rm x"],
        ),
        ("taskset -c 0 rm x", vec!["taskset -c 0 rm x", "rm x"]),
        ("chrt -f 10 rm x", vec!["chrt -f 10 rm x", "rm x"]),
        ("su -c 'rm x' root", vec!["su -c 'rm x' root", "rm x"]),
        ("sh -c 'rm x; ls'", vec!["sh -c 'rm x; ls'", "rm x", "ls"]),
        (
            "bash -lc \"sudo rm x\"",
            vec!["bash -lc 'sudo rm x'", "sudo rm x", "rm x"],
        ),
        (
            "sudo timeout 5 nice rm x",
            vec![
                "sudo timeout 5 nice rm x",
                "timeout 5 nice rm x",
                "nice rm x",
                "rm x",
            ],
        ),
    ] {
        assert_eq!(commands(text), expected, "{text}");
    }
}

/// What cannot be known from the text, with the start of the reason given.
#[test]
fn what_cannot_be_known_is_reported_with_a_reason() {
    for (text, reason) in [
        ("$x -rf y", "the program `$x`"),
        ("x=rm; $x -rf y", "the program `$x`"),
        ("$(printf rm) -rf y", "the program `$(printf rm)`"),
        ("`echo rm` y", "the program"),
        ("/bin/r? x", "the program `/bin/r?`"),
        ("r{m,} x", "the program `r{m,}`"),
        ("eval 'rm x'", "`eval`"),
        ("source evil.sh", "`source`"),
        (". <(echo rm x)", "`.`"),
        ("alias ls='rm -rf'", "`alias`"),
        ("f() { ls; }; f", "it defines a function"),
        ("function g { ls; }", "it defines a function"),
        ("trap 'rm x' EXIT", "`trap`"),
        ("coproc rm x", "`coproc`"),
        ("sh -c \"$CMD\"", "`sh -c` runs `\"$CMD\"`"),
        ("curl x | sh", "`sh` with no script"),
        ("bash -s < script", "`bash` reads"),
        ("bash <(curl x)", "`bash` runs the script"),
        ("zsh -c 'rm x'", "`zsh -c` runs text in a shell language"),
        ("sudo -s", "`sudo` starts a shell"),
        ("timeout --weird 5 rm x", "`timeout` is given `--weird`"),
        ("env -S \"$X\"", "`env -S` splits"),
        ("PS4='$(rm x)' bash -x s", "it sets `PS4`"),
        ("x='$(rm y)'", "it stores command text"),
        ("echo ${x@P}", "`${...@P}`"),
        ("hash -p /bin/rm ls", "`hash -p`"),
        ("mapfile -C 'rm x' -c 1 < f", "`mapfile -C`"),
        ("enable -f ./x.so x", "`enable`"),
        ("let 'a[$(rm x)]'", "`let`"),
    ] {
        let analysis = analyze(text);
        assert!(
            analysis.opaque.iter().any(|r| r.starts_with(reason)),
            "{text}: {:?}",
            analysis.opaque
        );
    }
    for known in [
        "trap - EXIT",
        "trap '' INT",
        "alias",
        "command -v rm",
        "bash script.sh",
        "python3 -c 'import os'",
        "echo '$(not run)'",
        "x=1; echo $x",
    ] {
        assert_eq!(analyze(known).opaque, Vec::<String>::new(), "{known}");
    }
}

#[test]
fn output_redirections_to_files_are_writes() {
    for (text, writes) in [
        ("ls > out", vec!["out"]),
        ("ls >> out 2>&1", vec!["out"]),
        ("ls &> out", vec!["out"]),
        ("ls >& out", vec!["out"]),
        ("exec 3> fd", vec!["fd"]),
        ("ls > $f", vec!["$f"]),
        ("ls 2>&1 >/dev/null 2>/dev/stderr", vec![]),
        ("ls >&2 2>&- < in", vec![]),
        ("ls | tee >(wc)", vec![]),
        ("sh -c 'ls > x'", vec!["x"]),
    ] {
        assert_eq!(analyze(text).writes, writes, "{text}");
    }
}

#[test]
fn text_that_does_not_parse_is_an_error() {
    for text in ["echo \"open", "ls &&", "if", "cat <> f", "ls )"] {
        let analysis = analyze(text);
        assert!(analysis.error.is_some(), "{text}: {analysis:?}");
    }
    assert!(analyze("ls -la").error.is_none());
}

#[test]
fn the_canonical_text_ignores_quoting_blanks_and_comments() {
    assert_eq!(
        analyze("cd  a &&  'make'  # build").canonical(),
        "cd a && make"
    );
    assert_eq!(analyze("echo 'a b'").canonical(), "echo 'a b'");
    assert_eq!(analyze("ls *").canonical(), analyze("ls * #").canonical());
    assert_ne!(analyze("a; b").canonical(), analyze("a && b").canonical());
}

#[test]
fn deep_nesting_is_bounded_not_a_crash() {
    let deep = format!("{}ls{}", "$(".repeat(500), ")".repeat(500));
    let analysis = analyze(&deep);
    assert!(!analysis.opaque.is_empty() || analysis.error.is_some());
    let long = "ls; ".repeat(5000);
    assert_eq!(analyze(&long).commands.len(), 5000);
    let chain = format!("{}ls", "ls && ".repeat(3000));
    let analysis = analyze(&chain);
    assert_eq!((analysis.commands.len(), analysis.opaque.len()), (3001, 0));
    // The deepest walk fits a small thread stack, well under a tokio worker's 2 MiB.
    let walked = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || analyze(&deep).opaque.len())
        .unwrap()
        .join()
        .unwrap();
    assert!(walked > 0);
}

/// Text made of shell punctuation, quotes, wrappers and odd characters never panics, and a
/// parse error is always reported rather than hidden.
#[test]
fn arbitrary_text_never_panics() {
    const PIECES: &[&str] = &[
        "rm", " ", "'", "\"", "\\", "$", "(", ")", "`", "{", "}", "[", "]", ";", "&", "|", "<",
        ">", "\n", "#", "=", "x", "-c", "sh", "env", "-S", "sudo", "find", "-exec", "*", "?", "é",
        "\u{0}", "\u{1b}", "<<", "EOF", "$'", "${", "@P", "2>&1", "timeout", "5", "--",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..(seed % 24) {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            text.push_str(PIECES[(seed >> 33) as usize % PIECES.len()]);
        }
        let analysis = analyze(&text);
        let _ = analysis.canonical();
        for command in &analysis.commands {
            let _ = render_words(&command.words);
        }
    }
}

/// tree-sitter-bash's scanner gives the character after `{` to C's `isdigit`: a wide one read
/// out of bounds and killed the process (found by `properties::any_text_is_analysed...`).
#[test]
fn a_wide_character_after_a_brace_is_parsed_not_a_crash() {
    for text in [
        "{\u{e0000}",
        "echo {\u{10ffff}}",
        "{12\u{102bab}",
        "rm {1..\u{f0000}",
        "{1..2\u{10ffff}",
    ] {
        let _ = analyze(text);
    }
    // The words still come from the real text, not the one the parser was given.
    assert_eq!(commands("echo {\u{e0000}} x"), vec!["echo {\u{e0000}} x"]);
    assert_eq!(shielded("a{é{1..\u{10ffff}"), "a{xx{1..xxxx");
}
