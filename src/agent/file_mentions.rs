//! `@path` mentions in a REPL prompt: each names a project file whose text is attached to the
//! prompt, so the model reads it without a tool call. The same protections as the project
//! instructions: only a regular file, only inside the project root (symlinks resolved first),
//! and only its first [`ATTACH_LIMIT`] bytes. A word that names no such file is left as typed
//! (it may be an `@server:uri` MCP mention, or an address). An image file (`@shot.png`) is
//! not text: it is left to the front end, which attaches it as an image.

use std::path::Path;

use crate::config::bounded_read::{lossy_text, read_regular};

/// The most of one file attached.
pub const ATTACH_LIMIT: usize = 256 * 1024;

/// What the mentions of a prompt attached.
#[derive(Debug, Default, PartialEq)]
pub struct Attached {
    /// The prompt with each file's text after it.
    pub prompt: String,
    /// The files attached, as mentioned, with their line counts.
    pub files: Vec<(String, usize)>,
    /// Why a mentioned file was not attached (outside the root, not a regular file, cut).
    pub warnings: Vec<String>,
}

/// `prompt` with the text of every `@path` it mentions under `root` appended, each once.
pub fn attach_files(root: &Path, prompt: &str) -> Attached {
    let mut attached = Attached {
        prompt: prompt.to_string(),
        ..Attached::default()
    };
    let Ok(root) = std::fs::canonicalize(root) else {
        return attached;
    };
    for word in prompt.split_whitespace() {
        let Some(raw) = word.strip_prefix('@') else {
            continue;
        };
        // `@src/main.rs,` or `(@a.txt)`: punctuation after the path is the sentence's.
        let raw = raw.trim_end_matches([',', '.', ';', ':', ')', '!', '?', '"', '\'']);
        if raw.is_empty() || attached.files.iter().any(|(f, _)| f == raw) {
            continue;
        }
        // A picture goes to the model as an image (the REPL attaches it), never as its bytes.
        if crate::media::has_image_extension(Path::new(raw)) {
            continue;
        }
        let Ok(resolved) = std::fs::canonicalize(root.join(raw)) else {
            // A word that looks like a path (not `@server:uri`, not `@someone`) is said.
            if raw.contains(['.', '/']) && !raw.contains(':') {
                attached.warnings.push(format!(
                    "@{raw} was not attached: there is no such file in the project (sent as typed)"
                ));
            }
            continue;
        };
        if !resolved.starts_with(&root) {
            attached.warnings.push(format!(
                "@{raw} was not attached: it is outside the project root"
            ));
            continue;
        }
        match read_regular(&resolved, ATTACH_LIMIT) {
            Ok(Some(read)) => {
                if read.cut {
                    attached.warnings.push(format!(
                        "@{raw} is larger than {} KiB; only its start was attached",
                        ATTACH_LIMIT / 1024
                    ));
                }
                let text = lossy_text(&read.bytes, read.cut);
                attached.prompt.push_str(&format!(
                    "\n\n<file path=\"{raw}\">\n{}\n</file>",
                    text.trim_end()
                ));
                attached.files.push((raw.to_string(), text.lines().count()));
            }
            Ok(None) => {}
            Err(e) => attached
                .warnings
                .push(format!("@{raw} was not attached: {e}")),
        }
    }
    attached
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_mentioned_file_is_attached_once_and_other_words_are_left() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(dir.path().join("shot.png"), b"\x89PNG\r\n\x1a\n").unwrap();
        let out = attach_files(
            dir.path(),
            "read @a.txt, then @a.txt and @srv:res://x @missing @shot.png",
        );
        assert_eq!(
            out.prompt,
            "read @a.txt, then @a.txt and @srv:res://x @missing @shot.png\n\n<file path=\"a.txt\">\none\ntwo\n</file>"
        );
        assert_eq!(out.files, vec![("a.txt".to_string(), 2)]);
        assert!(out.warnings.is_empty());
    }

    #[test]
    fn files_outside_the_root_directories_and_big_files_are_refused_or_cut() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("big"), "x".repeat(ATTACH_LIMIT + 10)).unwrap();
        let out = attach_files(dir.path(), "@link @sub @big");
        assert!(
            !out.prompt.contains("<file path=\"link\""),
            "{}",
            out.prompt
        );
        assert!(!out.prompt.contains("<file path=\"sub\""));
        assert_eq!(out.files.len(), 1);
        assert!(
            out.warnings[0].contains("outside the project root"),
            "{:?}",
            out.warnings
        );
        assert!(
            out.warnings
                .iter()
                .any(|w| w.contains("not a regular file")),
            "{:?}",
            out.warnings
        );
        assert!(
            out.warnings.iter().any(|w| w.contains("only its start")),
            "{:?}",
            out.warnings
        );
    }
}
