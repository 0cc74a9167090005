//! Which background the REPL paints code for (settings `theme`, `/theme`): `dark`, `light`, or
//! `auto`, which reads `COLORFGBG` (set by rxvt, Konsole and others: `15;0` is light text on
//! black) or else asks the terminal its background colour (OSC 11), waiting at most
//! [`QUERY_TIMEOUT`] for the answer; a terminal that does not answer is taken as dark.

use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::termios::{
    FlushArg, LocalFlags, SetArg, SpecialCharacterIndices, tcflush, tcgetattr, tcsetattr,
};

use crate::config::ThemeSetting;
use crate::ui::markdown::Theme;
use crate::ui::output::stdout_is_terminal;
use crate::ui::term::Term;

/// How long the terminal may take to say its background.
pub const QUERY_TIMEOUT: Duration = Duration::from_millis(100);

/// The theme for `setting`: asked of the environment and the terminal when `auto`.
pub fn resolve(setting: ThemeSetting) -> Theme {
    match setting {
        ThemeSetting::Dark => Theme::Dark,
        ThemeSetting::Light => Theme::Light,
        ThemeSetting::Auto => std::env::var("COLORFGBG")
            .ok()
            .and_then(|v| from_colorfgbg(&v))
            .or_else(|| query_background(QUERY_TIMEOUT))
            .unwrap_or(Theme::Dark),
    }
}

/// `COLORFGBG`'s last field is the background's colour number: 7 and 9-15 are light.
pub fn from_colorfgbg(value: &str) -> Option<Theme> {
    let background: u8 = value.rsplit(';').next()?.trim().parse().ok()?;
    Some(if background == 7 || (9..=15).contains(&background) {
        Theme::Light
    } else {
        Theme::Dark
    })
}

/// The theme of an OSC 11 answer (`ESC ] 11 ; rgb:RRRR/GGGG/BBBB` then BEL or ST).
pub fn from_osc11(answer: &[u8]) -> Option<Theme> {
    let text = String::from_utf8_lossy(answer);
    let rgb = text.split("rgb:").nth(1)?;
    let rgb: String = rgb
        .chars()
        .take_while(|c| c.is_ascii_hexdigit() || *c == '/')
        .collect();
    let mut parts = rgb.split('/').map(|p| {
        let value = u32::from_str_radix(p, 16).ok()?;
        let max = (1u32 << (4 * p.len().clamp(1, 4))) - 1;
        Some(f64::from(value) / f64::from(max))
    });
    let (r, g, b) = (parts.next()??, parts.next()??, parts.next()??);
    let luminance = 0.299 * r + 0.587 * g + 0.114 * b;
    Some(if luminance > 0.5 {
        Theme::Light
    } else {
        Theme::Dark
    })
}

/// Asks the terminal its background (OSC 11), with the terminal quiet meanwhile; `None` when it
/// does not answer within `timeout` (what came late is dropped, not typed into the prompt).
fn query_background(timeout: Duration) -> Option<Theme> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() || !stdout_is_terminal() {
        return None;
    }
    let saved = tcgetattr(stdin.as_fd()).ok()?;
    let mut quiet = saved.clone();
    quiet
        .local_flags
        .remove(LocalFlags::ECHO | LocalFlags::ICANON);
    quiet.control_chars[SpecialCharacterIndices::VMIN as usize] = 0;
    quiet.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &quiet).ok()?;
    crate::ui::output::stdout(Term::background_query());
    let deadline = Instant::now() + timeout;
    let mut answer = Vec::new();
    let mut buf = [0u8; 64];
    while Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        let wait = PollTimeout::try_from(left).unwrap_or(PollTimeout::ZERO);
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
        if !matches!(poll(&mut fds, wait), Ok(n) if n > 0) {
            break;
        }
        match nix::unistd::read(stdin.as_fd(), &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
        }
        if answer.contains(&0x07) || answer.windows(2).any(|w| w == b"\x1b\\") {
            break;
        }
    }
    let _ = tcflush(stdin.as_fd(), FlushArg::TCIFLUSH);
    let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &saved);
    from_osc11(&answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colorfgbg_names_the_background() {
        assert_eq!(from_colorfgbg("15;0"), Some(Theme::Dark));
        assert_eq!(from_colorfgbg("0;15"), Some(Theme::Light));
        assert_eq!(from_colorfgbg("0;default;7"), Some(Theme::Light));
        assert_eq!(from_colorfgbg("x"), None);
    }

    #[test]
    fn an_osc_11_answer_gives_the_background() {
        assert_eq!(
            from_osc11(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\"),
            Some(Theme::Light)
        );
        assert_eq!(
            from_osc11(b"\x1b]11;rgb:1c1c/1c1c/1c1c\x07"),
            Some(Theme::Dark)
        );
        assert_eq!(from_osc11(b"\x1b]11;rgb:fd/f6/e3\x07"), Some(Theme::Light));
        assert_eq!(from_osc11(b""), None);
        assert_eq!(from_osc11(b"\x1b]11;rgb:zz\x07"), None);
    }
}
