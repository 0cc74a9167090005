//! `/tasks` (the session's background commands, each with its state and last line) and
//! `/goal` (the check each answer is followed by until it passes), as the REPL shows them.

use super::submit;
use super::view::ReplUi;
use crate::session::{Command, GoalOutcome, Host};
use crate::term;
use crate::tools::TaskState;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

pub(super) fn print_tasks(host: &Host, style: Style) {
    let tasks = host.background_tasks();
    if tasks.is_empty() {
        stdout_line("no background commands (the model starts them with bash's run_in_background)");
        return;
    }
    for task in tasks {
        let state = match &task.state {
            TaskState::Running => style.green("running"),
            other => style.dim(&other.to_string()),
        };
        let command: String = task.command.chars().take(60).collect();
        stdout_line(term![
            "  ",
            style.bold(&task.id),
            "  ",
            state,
            "  ",
            command
        ]);
        if !task.last_line.is_empty() {
            stdout_line(term!["      ", style.dim(&task.last_line)]);
        }
        stdout_line(style.dim(&format!(
            "      {} bytes, all in {}",
            task.bytes,
            task.output_file.display()
        )));
    }
}

/// `/goal`: shows the goal, sets it, or (`Some("")`) drops it.
pub(super) async fn goal(host: &mut Host, goal: Option<String>, style: Style, ui: &ReplUi) {
    let Some(goal) = goal else {
        stdout_line(match host.goal() {
            Some(command) => format!("goal: after each answer, `{command}` runs until it passes"),
            None => "no goal; /goal CMD runs CMD after each answer until it passes".to_string(),
        });
        return;
    };
    let off = goal.is_empty();
    submit(host, Command::SetGoal(Some(goal.clone())), ui).await;
    stdout_line(if off {
        style.dim("goal dropped")
    } else {
        style.dim(&format!(
            "goal set: after each answer `{goal}` runs, and while it fails its output goes back to \
             the model"
        ))
    });
}

/// The line after a turn with a goal.
pub(super) fn goal_line(goal: &GoalOutcome, style: Style) -> crate::ui::term::Term {
    let rounds = match goal.rounds {
        1 => "1 round".to_string(),
        n => format!("{n} rounds"),
    };
    if goal.passed {
        style.green(&format!("goal: `{}` passed after {rounds}", goal.command))
    } else {
        style.yellow(&format!("goal: `{}` did not pass ({rounds})", goal.command))
    }
}
