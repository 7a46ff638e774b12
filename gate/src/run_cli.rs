//! `bashgate run` and `bashgate doctor`: the command line of the fence
//! (`bashgate::confine`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bashgate::config::{self, Config};
use bashgate::confine::{self, FenceSpec, Profile, RunError};

/// Printed once, after a command that failed under the fence.
pub const FAILURE_NOTE: &str =
    "bashgate: ran confined (no network; protected files read-only): a failure above may be the fence";

/// Exit status when the fence could not be set up (nothing ran).
pub const EXIT_CANNOT_CONFINE: u8 = 126;

/// The project root for `cwd`: `$CLAUDE_PROJECT_DIR` or
/// `$BASHGATE_PROJECT_DIR` when `cwd` is inside it, else the nearest
/// ancestor holding `.git`, else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    for var in ["CLAUDE_PROJECT_DIR", "BASHGATE_PROJECT_DIR"] {
        if let Some(d) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let d = PathBuf::from(d);
            if cwd.starts_with(&d) {
                return d;
            }
        }
    }
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// The fence for `command` as this process sees the world.
pub fn spec(
    config_flag: Option<&Path>,
    profile: Option<&str>,
    cwd_file: Option<PathBuf>,
    command: &str,
) -> Result<FenceSpec, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
    // A broken configuration still gets confined, with the defaults.
    let config = config::load(&config::discover(config_flag, &cwd)).unwrap_or_else(|e| {
        eprintln!("bashgate run: {e}; confining with the default settings");
        Config::default()
    });
    let profile = Profile::named(profile.unwrap_or(&config.confine.profile))?;
    let state_dir = config.state_dir();
    // Made now so it is mounted read-only, not watched and quarantined when
    // a bashgate outside the fence creates it during a long run.
    let _ = std::fs::create_dir_all(&state_dir);
    let mut extra = config.confine.protect.clone();
    if let Some(v) = std::env::var_os("BASHGATE_PROTECT").filter(|v| !v.is_empty()) {
        extra.extend(std::env::split_paths(&v));
    }
    let home = dirs::home_dir();
    let protect = confine::default_protected(
        home.as_deref(),
        &project_root(&cwd),
        &cwd,
        &state_dir,
        &extra,
    );
    Ok(FenceSpec {
        protect,
        profile,
        command: command.to_string(),
        cwd_file,
    })
}

/// `bashgate run`: the command's exit status; 126 when the fence could not
/// be set up.
pub fn run(
    config_flag: Option<&Path>,
    profile: Option<&str>,
    cwd_file: Option<PathBuf>,
    command: &str,
) -> ExitCode {
    let spec = match spec(config_flag, profile, cwd_file, command) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bashgate run: cannot confine: {e}");
            return ExitCode::from(EXIT_CANNOT_CONFINE);
        }
    };
    match confine::run(&spec) {
        Ok(out) => {
            for line in &out.quarantined {
                eprintln!("{line}");
            }
            if std::env::var_os("BASHGATE_RUN_LAYERS").is_some_and(|v| v == "1") {
                eprintln!("bashgate run: layers: {}", out.layers);
            }
            if out.status != 0 {
                eprintln!("{FAILURE_NOTE}");
            }
            ExitCode::from(out.status.clamp(0, 255) as u8)
        }
        Err(RunError::CannotConfine(e)) => {
            eprintln!("bashgate run: cannot confine: {e}");
            ExitCode::from(EXIT_CANNOT_CONFINE)
        }
        Err(RunError::CannotExec(e)) => {
            eprintln!("bashgate run: {e}");
            ExitCode::from(127)
        }
    }
}

/// `bashgate doctor`: one line per layer, then whether `bashgate run` can
/// confine with `profile`; exit 0 if it can.
pub fn doctor(profile: &str) -> ExitCode {
    let probe = confine::probe();
    println!("{}", probe.summary());
    if profile != "default" {
        match probe.can_run(profile) {
            Ok(()) => println!("bashgate run can confine commands here (profile {profile})"),
            Err(e) => {
                println!("bashgate run cannot confine commands here with profile {profile}: {e}")
            }
        }
    }
    println!("(probe took {:.1} ms)", probe.took.as_secs_f64() * 1000.0);
    if probe.can_run(profile).is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
