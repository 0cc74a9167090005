//! Images in a REPL prompt: `@shot.png` (a project file, as `@path` mentions are) and a pasted
//! image path (what a terminal types when a file is dropped on it: an absolute, relative or
//! `~/` path, or a `file://` URL, quoted or with its spaces escaped by backslashes). Each names
//! an image file to attach to the prompt instead of inlining it as text. A pasted path is
//! replaced in the prompt by `[image: NAME]` (the model gets the picture, not a path on the
//! user's disk to open); an `@` mention stays as typed. A word that names no image is left to
//! the prompt as it is: an image `@` mention or a prompt that is only a path which names no
//! file is an error instead, so that nothing is sent without the picture the user meant.

use std::path::{Path, PathBuf};

use crate::media::has_image_extension;
use crate::session::Host;
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

/// What may follow a path in a sentence without being part of it.
const SENTENCE_END: [char; 7] = [',', '.', ';', ':', ')', '!', '?'];

/// What the image words of a prompt name.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Found {
    /// The prompt with each pasted path replaced by `[image: NAME]`.
    pub prompt: String,
    /// The image files to attach, each once, in the order written.
    pub files: Vec<PathBuf>,
    /// Why the prompt cannot go as typed (an image that is not there); nothing is sent then.
    pub errors: Vec<String>,
}

/// Whether a line that starts with `/` is a pasted absolute path rather than a slash command:
/// its first word has another `/` (no command does).
pub(super) fn starts_with_path(line: &str) -> bool {
    line.strip_prefix('/')
        .and_then(|rest| rest.split_whitespace().next())
        .is_some_and(|first| first.contains('/'))
}

/// The images `prompt` names: `@` mentions under `root`, other paths from `cwd` (`~/` from
/// `home`).
pub(super) fn find_images(prompt: &str, root: &Path, cwd: &Path, home: Option<&Path>) -> Found {
    let mut found = Found::default();
    let words = words(prompt);
    let alone = words.len() == 1;
    let mut kept = 0;
    let mut out = String::new();
    for word in &words {
        if let Some(mention) = word.text.strip_prefix('@').filter(|_| !word.quoted_start) {
            let mention = mention.trim_end_matches(SENTENCE_END);
            if has_image_extension(Path::new(mention)) {
                match mentioned(root, mention) {
                    Ok(path) => push_once(&mut found.files, path),
                    Err(why) => found.errors.push(why),
                }
            }
            continue;
        }
        // `see /tmp/a.png.`: punctuation after a path is the sentence's (not inside quotes).
        let raw = &prompt[word.start..word.end];
        let cut = raw.len() - raw.trim_end_matches(SENTENCE_END).len();
        let text = &word.text[..word.text.len().saturating_sub(cut)];
        let end = word.end - cut;
        let Some((path, url)) = pasted_path(text, cwd, home) else {
            continue;
        };
        if !has_image_extension(&path) || !(alone || url || text.contains('/')) {
            continue;
        }
        if path.is_file() {
            let name = path
                .file_name()
                .map_or_else(|| "image".into(), |n| n.to_string_lossy().into_owned());
            out.push_str(&prompt[kept..word.start]);
            out.push_str(&format!("[image: {name}]"));
            kept = end;
            push_once(&mut found.files, path);
        } else if alone || url {
            // A path alone on the line (or a file URL) was pasted to be attached, not talked of.
            found.errors.push(format!(
                "{} is not an image file that exists; nothing was sent",
                path.display()
            ));
        }
    }
    out.push_str(&prompt[kept..]);
    found.prompt = out;
    found
}

/// Attaches the images `found` names to the next prompt, each said as `[image: NAME]`;
/// `false` (said, and none attached) when one cannot be read or is not an image.
pub(super) fn attach(host: &mut Host, found: &Found, style: Style) -> bool {
    for path in &found.files {
        match host.attach_image(path) {
            Ok(image) => {
                let name = image.name.unwrap_or_else(|| path.display().to_string());
                stdout_line(style.dim(&format!("[image: {name}]")));
            }
            Err(e) => {
                host.drop_attached_images();
                stdout_line(term![
                    style.red("error:"),
                    " ",
                    format!("{e}; nothing was sent")
                ]);
                return false;
            }
        }
    }
    true
}

fn push_once(files: &mut Vec<PathBuf>, path: PathBuf) {
    if !files.contains(&path) {
        files.push(path);
    }
}

/// The image file `@mention` names: inside the project, as `@path` mentions are.
fn mentioned(root: &Path, mention: &str) -> Result<PathBuf, String> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let path = std::fs::canonicalize(root.join(mention)).map_err(|e| {
        format!("@{mention}: there is no such image in the project ({e}); nothing was sent")
    })?;
    if !path.starts_with(&root) {
        return Err(format!(
            "@{mention} is outside the project root; paste its full path to attach it"
        ));
    }
    if !path.is_file() {
        return Err(format!("@{mention} is not a file; nothing was sent"));
    }
    Ok(path)
}

/// The file a pasted word names, and whether it was a `file://` URL.
fn pasted_path(text: &str, cwd: &Path, home: Option<&Path>) -> Option<(PathBuf, bool)> {
    if let Some(rest) = text.strip_prefix("file://") {
        // `file:///a/b` or `file://localhost/a/b`.
        let path = rest.strip_prefix("localhost").unwrap_or(rest);
        return path
            .starts_with('/')
            .then(|| (PathBuf::from(percent_decoded(path)), true));
    }
    if text.contains("://") {
        return None;
    }
    let path = match (text.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        (Some(_), None) => return None,
        _ => cwd.join(text),
    };
    Some((path, false))
}

/// `%20` and the like as the bytes they stand for (a malformed escape is kept as written).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One word of the prompt as a shell reads it: where it is, and its text unquoted.
#[derive(Debug, PartialEq)]
struct Word {
    start: usize,
    end: usize,
    text: String,
    /// It opens with a quote (`'@x'` is no mention).
    quoted_start: bool,
}

/// The words of `line`: split at whitespace, except inside quotes or after a backslash, which
/// are dropped from the text (`'/a b.png'`, `/a\ b.png`). A quote left open is taken as a
/// character.
fn words(line: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut chars = line.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut text = String::new();
        let mut end = start;
        let quoted_start = c == '\'' || c == '"';
        while let Some(&(at, c)) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            end = at + c.len_utf8();
            match c {
                '\\' => match chars.next() {
                    Some((at, next)) => {
                        text.push(next);
                        end = at + next.len_utf8();
                    }
                    None => text.push('\\'),
                },
                '\'' | '"' if line[end..].contains(c) => {
                    for (at, inner) in chars.by_ref() {
                        end = at + inner.len_utf8();
                        if inner == c {
                            break;
                        }
                        text.push(inner);
                    }
                }
                _ => text.push(c),
            }
        }
        words.push(Word {
            start,
            end,
            text,
            quoted_start,
        });
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Only whether the file is there counts here, not its bytes.
    fn png() -> Vec<u8> {
        b"\x89PNG\r\n\x1a\n".to_vec()
    }

    #[test]
    fn words_are_split_as_a_terminal_pastes_them() {
        let texts: Vec<String> = words(r#"see '/a b.png' and /c\ d.png "e f" it's"#)
            .into_iter()
            .map(|w| w.text)
            .collect();
        assert_eq!(texts, ["see", "/a b.png", "and", "/c d.png", "e f", "it's"]);
        let word = &words("x '/a b.png'")[1];
        assert_eq!((word.start, word.end), (2, 12));
    }

    #[test]
    fn pasted_paths_of_images_are_attached_and_replaced_and_other_words_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("shots")).unwrap();
        std::fs::write(root.join("shots/Screen Shot.png"), png()).unwrap();
        std::fs::write(root.join("ui.jpg"), png()).unwrap();
        std::fs::write(root.join("notes.txt"), "text").unwrap();
        let shot = root.join("shots/Screen Shot.png");
        let escaped = shot.display().to_string().replace(' ', "\\ ");
        let url = format!("file://{}", shot.display().to_string().replace(' ', "%20"));
        let prompt = format!(
            "why is {escaped} odd, see '{}' and {url}; notes.txt ./notes.txt ui.jpg.",
            shot.display()
        );
        let found = find_images(&prompt, root, root, None);
        assert_eq!(found.files, vec![shot.clone()]);
        assert_eq!(
            found.prompt,
            "why is [image: Screen Shot.png] odd, see [image: Screen Shot.png] and \
             [image: Screen Shot.png]; notes.txt ./notes.txt ui.jpg."
        );
        assert!(found.errors.is_empty(), "{:?}", found.errors);
        // A bare name alone on the line is a paste; `~/` is the home's.
        let alone = find_images("ui.jpg", root, root, None);
        assert_eq!(alone.files, vec![root.join("ui.jpg")]);
        let home = find_images("~/ui.jpg", root, Path::new("/"), Some(root));
        assert_eq!(home.files, vec![root.join("ui.jpg")]);
    }

    #[test]
    fn image_mentions_attach_project_images_and_missing_ones_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("shot.png"), png()).unwrap();
        std::fs::write(dir.path().join("out.png"), png()).unwrap();
        let found = find_images("look at @shot.png, and @notes.md", &root, &root, None);
        assert_eq!(
            found.files,
            vec![std::fs::canonicalize(root.join("shot.png")).unwrap()]
        );
        assert_eq!(found.prompt, "look at @shot.png, and @notes.md");
        assert!(found.errors.is_empty());
        let missing = find_images("@gone.png", &root, &root, None);
        assert!(missing.files.is_empty());
        assert!(missing.errors[0].contains("no such image"), "{missing:?}");
        let outside = find_images("@../out.png", &root, &root, None);
        assert!(outside.errors[0].contains("outside the project root"));
        // A path alone that names nothing is an error; the same in a sentence is prose.
        let pasted = find_images("/no/such/shot.png", &root, &root, None);
        assert!(pasted.errors[0].contains("not an image file that exists"));
        let prose = find_images("rename /no/such/a.png to b.png", &root, &root, None);
        assert_eq!(prose.errors, Vec::<String>::new());
        assert_eq!(prose.prompt, "rename /no/such/a.png to b.png");
    }

    #[test]
    fn an_absolute_path_is_no_slash_command() {
        assert!(starts_with_path("/Users/me/shot.png"));
        assert!(starts_with_path("/tmp/Screen\\ Shot.png what is it"));
        assert!(!starts_with_path("/status"));
        assert!(!starts_with_path("/model gpt-4/mini"));
    }

    #[test]
    fn percent_escapes_are_decoded() {
        assert_eq!(percent_decoded("/a%20b%zz%2"), "/a b%zz%2");
    }
}
