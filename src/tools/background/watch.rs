//! The task that follows one background command: its output into the ring and the spill file,
//! its supervisor's report into its state, and a `kill_shell` (or the session's end) into the
//! end of its process group. The group stays armed for the session's whole life: what the
//! command left running after its shell exited still ends with it.

use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;

use nix::sys::signal::Signal;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Shell, TaskState};
use crate::process::supervise::Report;
use crate::tools::bash_start::Started;

/// Follows `started` until it ended and its output ran out, or it is killed. Spawned: it must
/// not hold the tool call.
pub(super) fn watch(started: Started, shell: Arc<Shell>, file: std::fs::File) {
    tokio::spawn(follow(started, shell, file));
}

async fn follow(started: Started, shell: Arc<Shell>, file: std::fs::File) {
    let Started {
        mut child,
        output: mut reader,
        report: mut report_pipe,
        mut group,
    } = started;
    // Unbuffered: what the ring holds is in the file too, for a reader of either.
    let mut file = tokio::fs::File::from_std(file);
    let mut spill_ok = true;
    let mut buf = vec![0u8; 64 * 1024];
    let mut report_text = Vec::new();
    let mut report_buf = [0u8; 1024];
    let mut ended = false;
    let mut reaped = false;
    let mut eof = false;
    loop {
        tokio::select! {
            biased;
            () = shell.kill.cancelled() => {
                group.terminate((!reaped).then_some(&mut child)).await;
                let mut output = shell.lock();
                if output.state == TaskState::Running {
                    output.state = TaskState::Killed("SIGTERM".into());
                }
                break;
            }
            read = reader.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => {
                    shell.lock().ring.push(&buf[..n]);
                    // A full disk stops the spill, never the command.
                    if spill_ok && file.write_all(&buf[..n]).await.is_err() {
                        spill_ok = false;
                    }
                }
            },
            read = read_report(report_pipe.as_mut(), &mut report_buf), if report_pipe.is_some() && !ended => {
                match read {
                    Ok(n) if n > 0 => report_text.extend_from_slice(&report_buf[..n]),
                    _ => {
                        report_pipe = None;
                        ended = true;
                        let state = match Report::parse(&String::from_utf8_lossy(&report_text)).status {
                            Some(Ok(code)) => TaskState::Exited(code),
                            Some(Err(signal)) => TaskState::Killed(signal_name(signal)),
                            // It said nothing: it failed before the shell ran.
                            None => {
                                reaped = true;
                                child.wait().await.map_or(TaskState::Exited(-1), state_of)
                            }
                        };
                        shell.lock().state = state;
                    }
                }
            }
            waited = child.wait(), if !ended && report_pipe.is_none() => {
                reaped = true;
                ended = true;
                shell.lock().state = waited.map_or(TaskState::Exited(-1), state_of);
            }
        }
        if ended && eof {
            break;
        }
    }
    let _ = file.flush().await;
    drop(file);
    if !shell.kill.is_cancelled() {
        // Its shell ended and its output ran out, but what it left running (with its output
        // sent elsewhere) belongs to it still: ended by `kill_shell` or the session's end
        // (dropping this task at Ling's exit drops the armed group, which ends it too).
        shell.kill.cancelled().await;
        group.terminate(None).await;
    }
    shell.done.cancel();
}

async fn read_report(
    pipe: Option<&mut tokio::net::unix::pipe::Receiver>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

fn state_of(status: std::process::ExitStatus) -> TaskState {
    match (status.code(), status.signal()) {
        (Some(code), _) => TaskState::Exited(code),
        (None, Some(signal)) => TaskState::Killed(signal_name(signal)),
        (None, None) => TaskState::Exited(-1),
    }
}

fn signal_name(signal: i32) -> String {
    Signal::try_from(signal).map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_string())
}
