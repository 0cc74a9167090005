//! The REPL's answer to a spent budget (`maxBudgetUsd`): the turn stopped before a request that
//! would pass it, so the user is asked whether to raise it, and by how much; the conversation
//! goes on at their next message.

use crate::session::{Command, Host, Io, NonInteractive};
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

/// Says why the turn stopped and asks for a new cap: `y` doubles it, a number sets it, anything
/// else keeps it.
pub(super) async fn reached(host: &mut Host, style: Style, reason: &str) {
    stdout_line(term![style.yellow("budget reached:"), " ", reason]);
    let (spent, cap) = host.spending();
    let Some(cap) = cap else { return };
    let doubled = (cap * 2.0).max(spent + cap);
    let answer = super::rewind::read(format!(
        "raise the budget to ${doubled:.2}? [y/N, or a new cap in US dollars] "
    ))
    .await;
    let Some(new) = raised(answer.trim(), doubled, spent) else {
        stdout_line(style.dim(&format!("the budget stays ${cap:.2}")));
        return;
    };
    let quiet = tokio_util::sync::CancellationToken::new();
    let io = Io {
        sink: &|_| {},
        approver: &NonInteractive,
        cancel: &quiet,
        trust: None,
    };
    if host
        .submit(Command::SetBudget(Some(new)), &io)
        .await
        .is_ok()
    {
        stdout_line(style.dim(&format!(
            "budget raised to ${new:.2}; send a message to go on"
        )));
    }
}

/// The new cap the answer asks for: `y` the doubled one, a number over what was spent itself.
fn raised(answer: &str, doubled: f64, spent: f64) -> Option<f64> {
    match answer {
        "y" | "Y" | "yes" => Some(doubled),
        number => number
            .trim_start_matches('$')
            .parse::<f64>()
            .ok()
            .filter(|usd| usd.is_finite() && *usd > spent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yes_doubles_a_number_sets_and_anything_else_keeps() {
        assert_eq!(raised("y", 2.0, 0.5), Some(2.0));
        assert_eq!(raised("$3.5", 2.0, 0.5), Some(3.5));
        assert_eq!(raised("0.1", 2.0, 0.5), None, "below what was spent");
        assert_eq!(raised("", 2.0, 0.5), None);
        assert_eq!(raised("n", 2.0, 0.5), None);
    }
}
