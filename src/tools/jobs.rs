//! Background jobs: commands that outlived `background_after` or were
//! started with `run_in_background`, and the `job_output` / `job_kill`
//! tools. All jobs are stopped when the session ends (the table's drop).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, Tool, ToolContext, ToolError, render};
use crate::shell::run::Process;

pub const MAX_WAIT_SECS: u64 = 600;

pub struct Job {
    pub command: String,
    pub process: Process,
    pub started: Instant,
}

#[derive(Default)]
pub struct Jobs {
    table: Mutex<(u32, BTreeMap<u32, Arc<Job>>)>,
}

impl Jobs {
    fn lock(&self) -> MutexGuard<'_, (u32, BTreeMap<u32, Arc<Job>>)> {
        // Inserts and removals cannot leave the map half-changed.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn add(&self, command: &str, process: Process, started: Instant) -> u32 {
        let mut t = self.lock();
        t.0 += 1;
        let id = t.0;
        t.1.insert(
            id,
            Arc::new(Job {
                command: command.to_string(),
                process,
                started,
            }),
        );
        id
    }

    fn get(&self, id: u32) -> Result<Arc<Job>, ToolError> {
        let t = self.lock();
        t.1.get(&id).cloned().ok_or_else(|| {
            let ids: Vec<String> = t.1.keys().map(|k| k.to_string()).collect();
            ToolError::new(format!(
                "there is no job {id}; {}",
                if ids.is_empty() {
                    "no jobs are running".to_string()
                } else {
                    format!("running jobs: {}", ids.join(", "))
                }
            ))
        })
    }

    fn remove(&self, id: u32) {
        self.lock().1.remove(&id);
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        // Each job's `Process` kills its group when dropped; drop them now.
        self.lock().1.clear();
    }
}

fn report(id: u32, job: &Job, output: String) -> String {
    let status = match job.process.exit() {
        Some(exit) => format!("Job {id} finished ({exit})."),
        None => format!(
            "Job {id} is still running ({} s).",
            job.started.elapsed().as_secs()
        ),
    };
    let output = if output.is_empty() {
        "(no new output)".to_string()
    } else {
        output
    };
    format!("{status}\n{output}")
}

pub struct JobOutput;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct JobOutputArgs {
    /// The job id from `bash`.
    id: u32,
    /// Seconds to wait for the job to finish before answering. Default 0.
    wait: Option<u64>,
}

impl Tool for JobOutput {
    type Args = JobOutputArgs;
    const NAME: &'static str = "job_output";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(
            include_str!("../../templates/job_output.md"),
            &[("max_wait", MAX_WAIT_SECS.to_string())],
        )
    }

    fn effect(&self) -> Effect {
        // A finished job is forgotten once its output was read.
        Effect::Session
    }

    fn paths(_: &JobOutputArgs) -> Vec<&str> {
        Vec::new()
    }

    async fn run(&self, args: JobOutputArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let job = ctx.jobs.get(args.id)?;
        let wait = Duration::from_secs(args.wait.unwrap_or(0).min(MAX_WAIT_SECS));
        if !wait.is_zero() {
            tokio::select! {
                _ = job.process.wait(Some(wait)) => {}
                _ = ctx.cancel.cancelled() => {}
            }
        }
        if job.process.exit().is_some() {
            // Drain what is left and stop anything it left running.
            job.process.wait(None).await;
        }
        let text = report(args.id, &job, job.process.take_output());
        if job.process.exit().is_some() {
            ctx.jobs.remove(args.id);
        }
        Ok(text)
    }
}

pub struct JobKill;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct JobKillArgs {
    /// The job id from `bash`.
    id: u32,
}

impl Tool for JobKill {
    type Args = JobKillArgs;
    const NAME: &'static str = "job_kill";

    fn description(&self, _ctx: &ToolContext) -> String {
        render(include_str!("../../templates/job_kill.md"), &[])
    }

    fn effect(&self) -> Effect {
        // Stopping the session's own job needs no approval.
        Effect::Session
    }

    fn paths(_: &JobKillArgs) -> Vec<&str> {
        Vec::new()
    }

    async fn run(&self, args: JobKillArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let job = ctx.jobs.get(args.id)?;
        let was_running = job.process.exit().is_none();
        let stopped = job.process.kill().await;
        job.process.wait(Some(Duration::from_secs(2))).await;
        ctx.jobs.remove(args.id);
        let output = job.process.take_output();
        let what = if was_running {
            stopped.describe()
        } else {
            "it had already finished"
        };
        Ok(format!(
            "Job {} ({}): {what}.\n{}",
            args.id,
            job.command,
            if output.is_empty() {
                "(no new output)".into()
            } else {
                output
            }
        ))
    }
}
