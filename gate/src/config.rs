//! The gate's configuration: TOML, found by `--config`, `BASHGATE_CONFIG`,
//! `.bashgate.toml` in the working directory, then the user's config
//! directory. Unknown keys and bad values are errors naming the key and the
//! file. Every key and its default is documented in docs/configuration.md.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// What to answer when something the decision needs fails (the Cop, a
/// plugin, the state directory, malformed hook input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Fail open: let the call through, so a failure never stops the
    /// agent's work (and an unchecked call may pass).
    Allow,
    /// Let the person decide (the default).
    #[default]
    Ask,
    Deny,
}

impl OnError {
    pub fn as_str(self) -> &'static str {
        match self {
            OnError::Allow => "allow",
            OnError::Ask => "ask",
            OnError::Deny => "deny",
        }
    }
}

/// How much protection the gate adds out of the box (see
/// docs/configuration.md). The always-on denials hold under every profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Only the always-on denials and the taint cascade.
    Minimal,
    /// Destructive local commands are asked about (the default).
    #[default]
    Standard,
    /// Destruction is denied, and every session is decided as one that has
    /// read untrusted content: what cannot be proven local runs fenced (or
    /// is asked), the network is asked. Stronger, not stiffer: nothing a
    /// person would approve is denied.
    Strict,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Minimal => "minimal",
            Profile::Standard => "standard",
            Profile::Strict => "strict",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub on_error: OnError,
    pub profile: Profile,
    /// The workspace holds secrets: every session starts secret-tainted.
    pub contains_secrets: bool,
    /// Where taint state and the audit database live (overridden by
    /// `BASHGATE_STATE_DIR`).
    pub state_dir: Option<PathBuf>,
    pub always: AlwaysConfig,
    pub denylist: DenylistConfig,
    pub allowlist: AllowlistConfig,
    pub git_guard: GitGuardConfig,
    pub paths: PathsConfig,
    pub plugins: Vec<PluginConfig>,
    pub taint: TaintConfig,
    /// The LLM reviewer. Off unless the configuration has a `[cop]` table:
    /// commands are never sent to a model nobody chose.
    pub cop: Option<CopConfig>,
    pub services: BTreeMap<String, ServiceConfig>,
    pub workspace: WorkspaceConfig,
    pub audit: AuditConfig,
    pub hook: HookConfig,
    /// Running what cannot be proven local under `bashgate run`'s fence.
    pub confine: ConfineConfig,
    /// The host daemon (`bashgate serve`).
    pub serve: ServeConfig,
    /// The container side: hooks that ask the daemon (`--remote`).
    pub remote: RemoteConfig,
    /// The `[bash]` shorthand (`allowed_dirs`, `denied_commands`), accepted
    /// as other agent hosts write it in their `agent.toml`. Its presence
    /// turns the denylist on.
    pub bash: Option<BashSection>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            on_error: OnError::Ask,
            profile: Profile::default(),
            contains_secrets: false,
            state_dir: None,
            always: AlwaysConfig::default(),
            denylist: DenylistConfig::default(),
            allowlist: AllowlistConfig::default(),
            git_guard: GitGuardConfig::default(),
            paths: PathsConfig::default(),
            plugins: Vec::new(),
            taint: TaintConfig::default(),
            cop: None,
            services: BTreeMap::new(),
            workspace: WorkspaceConfig::default(),
            audit: AuditConfig::default(),
            hook: HookConfig::default(),
            confine: ConfineConfig::default(),
            serve: ServeConfig::default(),
            remote: RemoteConfig::default(),
            bash: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AlwaysConfig {
    /// Deny `/dev/tcp` and `/dev/udp` redirects (reverse shells).
    pub reverse_shells: bool,
    /// Deny network or decoder output piped into a shell or interpreter.
    pub remote_code: bool,
    /// Deny changes to bashgate's own state directory, configuration and
    /// every client's hook settings.
    pub self_protection: bool,
}

impl Default for AlwaysConfig {
    fn default() -> Self {
        AlwaysConfig {
            reverse_shells: true,
            remote_code: true,
            self_protection: true,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DenylistConfig {
    pub enabled: bool,
    /// Extra banned programs (the user's `denied_commands`).
    pub commands: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AllowlistConfig {
    pub enabled: bool,
    /// Replaces the built-in list of permitted programs.
    pub commands: Option<Vec<String>>,
    /// Added to the permitted programs.
    pub extra_commands: Vec<String>,
    /// pkill may only target these (replaces the built-in list).
    pub pkill_allowed: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GitGuardConfig {
    pub enabled: bool,
    pub subcommands: Vec<String>,
    pub message: String,
}

pub const DEFAULT_GIT_MESSAGE: &str =
    "Direct git push, pull and rebase are blocked in this workspace. \
Commit your work locally and tell the person it is ready; they publish and sync branches.";

impl Default for GitGuardConfig {
    fn default() -> Self {
        GitGuardConfig {
            enabled: false,
            subcommands: vec!["push".into(), "pull".into(), "rebase".into()],
            message: DEFAULT_GIT_MESSAGE.into(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PathsConfig {
    /// Directories the agent may touch; empty means no path policy.
    pub allowed_dirs: Vec<String>,
    /// Ask the Cop (with the path prompt) about what static analysis cannot
    /// settle; otherwise such commands count as `unknown`.
    pub cop: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    pub name: String,
    /// Program and arguments; the request is written to its stdin as JSON.
    pub command: Vec<String>,
    #[serde(default = "default_plugin_timeout")]
    pub timeout_ms: u64,
    /// Tool names the plugin sees; empty means every tool.
    #[serde(default)]
    pub tools: Vec<String>,
}

fn default_plugin_timeout() -> u64 {
    2000
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TaintConfig {
    /// Run the taint cascade after the policy layers.
    pub cascade: bool,
    /// Extra secret path patterns, added to the built-in ones
    /// (`data/secret_paths.toml`).
    pub secret_paths: Vec<String>,
    /// A Bash command that reaches the network (verdict `network`) sets
    /// corruption taint when it has run: it read content from outside.
    pub network_commands_corrupt: bool,
    /// A session in a project the person has not trusted (`bashgate trust`
    /// or `bashgate init` there) counts as corruption-tainted from its
    /// start: the client reads the project's instruction files, and the
    /// agent its other files, and whoever wrote them is not the person.
    pub untrusted_projects: bool,
}

impl Default for TaintConfig {
    fn default() -> Self {
        TaintConfig {
            cascade: true,
            secret_paths: Vec::new(),
            network_commands_corrupt: true,
            untrusted_projects: true,
        }
    }
}

/// When a command the gate lets through runs fenced (no network, protected
/// files read-only) instead of going to the reviewer or the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfineWhen {
    /// In a tainted session: every command let through runs fenced, and a
    /// command that cannot be proven local runs fenced instead of asking.
    #[default]
    Tainted,
    /// Also in untainted sessions.
    Always,
    /// Never: the taint table without confinement (the reviewer or the
    /// person decides).
    Never,
}

impl ConfineWhen {
    pub fn as_str(self) -> &'static str {
        match self {
            ConfineWhen::Tainted => "tainted",
            ConfineWhen::Always => "always",
            ConfineWhen::Never => "never",
        }
    }
}

/// What a command that cannot be proven local runs under in a session
/// that has read nothing untrusted or secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UntaintedFence {
    /// The fence for writes (profile `writes`): it keeps the network and
    /// may write only in the working tree, the temporary directories, the
    /// caches and `writable`, so whatever it runs cannot destroy elsewhere.
    #[default]
    Writes,
    /// Nothing: it runs as it is.
    Off,
}

impl UntaintedFence {
    pub fn as_str(self) -> &'static str {
        match self {
            UntaintedFence::Writes => "writes",
            UntaintedFence::Off => "off",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConfineConfig {
    pub when: ConfineWhen,
    /// What a command that cannot be proven local runs under while the
    /// session is untainted.
    pub untainted: UntaintedFence,
    /// The fence's profile (`bashgate run --profile`): default, strict or
    /// network-only.
    pub profile: String,
    /// Paths kept read-only besides the built-in protected set.
    pub protect: Vec<PathBuf>,
    /// Places a fenced command may write besides the working tree (caches
    /// the person's offline tools need). Only the person's own files set
    /// it: a repository's cannot widen the fence.
    pub writable: Vec<PathBuf>,
}

impl Default for ConfineConfig {
    fn default() -> Self {
        ConfineConfig {
            when: ConfineWhen::default(),
            untainted: UntaintedFence::default(),
            profile: "default".into(),
            protect: Vec::new(),
            writable: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    #[default]
    Anthropic,
    Openai,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CopConfig {
    pub provider: Provider,
    /// Default: `ANTHROPIC_BASE_URL` or https://api.anthropic.com;
    /// `OPENAI_BASE_URL` or https://api.openai.com/v1.
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// Name of the environment variable holding the key.
    pub api_key_env: Option<String>,
    pub timeout_ms: u64,
    pub max_tokens: u32,
    /// Replaces the built-in bash prompt (`data/cop_bash_prompt.txt`).
    pub bash_prompt: Option<String>,
    /// Replaces the path prompt (`{allowed_dirs}` and `{cwd}` are filled in).
    pub path_prompt: Option<String>,
}

impl Default for CopConfig {
    fn default() -> Self {
        CopConfig {
            provider: Provider::Anthropic,
            base_url: None,
            model: None,
            api_key_env: None,
            timeout_ms: 10_000,
            max_tokens: 256,
            bash_prompt: None,
            path_prompt: None,
        }
    }
}

/// `dangerous_writes`: false, true or "forbidden".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    Safe,
    Risky,
    Forbidden,
}

impl<'de> Deserialize<'de> for Writes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Writes;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("false, true or \"forbidden\"")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Writes, E> {
                Ok(if v { Writes::Risky } else { Writes::Safe })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Writes, E> {
                match v {
                    "forbidden" => Ok(Writes::Forbidden),
                    _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A service's trust. Unset properties are true (writes risky): a service
/// is trusted only as far as it is declared.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceConfig {
    #[serde(default = "yes")]
    pub public_source: bool,
    #[serde(default = "yes")]
    pub secret_data: bool,
    #[serde(default = "yes")]
    pub public_sink: bool,
    #[serde(default = "risky")]
    pub dangerous_writes: Writes,
    /// Tools of this service that only read; they are not gated as writes.
    #[serde(default)]
    pub read_tools: Vec<String>,
}

fn yes() -> bool {
    true
}

fn risky() -> Writes {
    Writes::Risky
}

impl ServiceConfig {
    /// Unknown services: every property true (maximum gating).
    pub fn unknown() -> ServiceConfig {
        ServiceConfig {
            public_source: true,
            secret_data: true,
            public_sink: true,
            dangerous_writes: Writes::Risky,
            read_tools: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkspaceConfig {
    /// An admin workspace: service gating is bypassed, and no public-source
    /// service may be used (the clean room).
    pub admin: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditConfig {
    pub enabled: bool,
    /// Default: `audit.db` in the state directory.
    pub path: Option<PathBuf>,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            enabled: true,
            path: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HookConfig {
    /// The hook answers within this budget whatever happens (on_error when
    /// it runs out). Keep it under the hook timeout in the client's
    /// settings (`bashgate init` writes 60 s).
    pub budget_ms: u64,
    /// Answer `allow` (skipping the client's own permission prompt) for a
    /// command the analyzer proves local and read-only. Off by default:
    /// then bashgate gives no decision for what it lets through, and the
    /// client's own rules and prompts apply, so installing bashgate never
    /// loosens the client.
    pub auto_approve: bool,
    /// No longer used: an allow is always left to the client's own rules
    /// (see `auto_approve`). Accepted so older configurations still load.
    pub defer_allow: Option<bool>,
}

impl Default for HookConfig {
    fn default() -> Self {
        HookConfig {
            budget_ms: 50_000,
            auto_approve: false,
            defer_allow: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// The container API: `HOST:PORT` on loopback, or `unix:/path/to.sock`.
    /// Default: `unix:<state dir>/container/bashgate.sock`.
    pub listen: Option<String>,
    /// The admin API's unix socket (owner-only). Default:
    /// `<state dir>/admin.sock`.
    pub admin_socket: Option<PathBuf>,
    /// The daemon's database (sessions, taint, approvals). Default:
    /// `<state dir>/daemon.db`.
    pub database: Option<PathBuf>,
    /// Where the daemon keeps its state: "sqlite" (the default: `database`
    /// and the audit database) or `postgres://USER@HOST:PORT/DATABASE` for
    /// a fleet of daemons that act as one gate. Never put the password
    /// here: see `store_password_file` and `store_password_env`.
    pub store: Option<String>,
    /// A file holding the PostgreSQL password (its first line).
    pub store_password_file: Option<PathBuf>,
    /// An environment variable holding the PostgreSQL password. Default:
    /// `BASHGATE_STORE_PASSWORD`, when set.
    pub store_password_env: Option<String>,
    /// PEM certificates of the authorities that sign the PostgreSQL
    /// server's TLS certificate (default: the public web's roots).
    pub store_ca_file: Option<PathBuf>,
    /// The longest the store operations of one request may take, together
    /// (and so each one), before the request is answered as an error (and
    /// the client follows `on_error`). Keep it under the containers'
    /// `[remote] timeout_ms`, so a store that hangs is answered before the
    /// hook gives up.
    pub store_timeout_ms: u64,
    /// A pending approval not answered within this many seconds is denied.
    pub approval_timeout_s: u64,
    /// POST a JSON notification of each pending approval to this URL.
    pub webhook_url: Option<String>,
    pub webhook_timeout_ms: u64,
    /// Request bodies above this size are refused (413).
    pub max_body_bytes: usize,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: None,
            admin_socket: None,
            database: None,
            store: None,
            store_password_file: None,
            store_password_env: None,
            store_ca_file: None,
            store_timeout_ms: 2_000,
            approval_timeout_s: 300,
            webhook_url: None,
            webhook_timeout_ms: 5_000,
            max_body_bytes: 1 << 20,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RemoteConfig {
    /// The daemon's container API (`http://127.0.0.1:PORT` or
    /// `unix:/path/to.sock`); hooks ask it when this is set or `--remote`
    /// is given.
    pub url: Option<String>,
    /// The environment variable holding the session token.
    pub token_env: String,
    /// Deadline for one request to the daemon (connect and answer).
    pub timeout_ms: u64,
    /// The longest a hook waits for a person to answer an approval.
    pub approval_wait_s: u64,
}

impl Default for RemoteConfig {
    fn default() -> Self {
        RemoteConfig {
            url: None,
            token_env: "BASHGATE_TOKEN".into(),
            timeout_ms: 5_000,
            approval_wait_s: 330,
        }
    }
}

/// The `[bash]` table: `allowed_dirs` is added to `[paths] allowed_dirs`,
/// `denied_commands` to `[denylist] commands`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BashSection {
    pub allowed_dirs: Vec<String>,
    pub denied_commands: Vec<String>,
}

/// A configuration that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {source} (it was named by --config, $BASHGATE_CONFIG or found by discovery; fix the path or remove the setting; `bashgate config` shows which file is used)")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}{}: {message}", location(*line, key))]
    Invalid {
        file: PathBuf,
        key: Option<String>,
        line: Option<usize>,
        message: String,
    },
}

fn location(line: Option<usize>, key: &Option<String>) -> String {
    let mut s = String::new();
    if let Some(l) = line {
        s.push_str(&format!(":{l}"));
    }
    if let Some(k) = key {
        s.push_str(&format!(": key `{k}`"));
    }
    s
}

#[cfg(test)]
impl ConfigError {
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid { key, .. } => key.as_deref(),
            ConfigError::Read { .. } => None,
        }
    }
}

/// Where one layer of the configuration came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// `--config FILE`: that file alone.
    Flag,
    /// `$BASHGATE_CONFIG`: that file alone.
    Env,
    /// `<user config dir>/bashgate/config.toml`.
    User,
    /// `.bashgate.toml`, found from the working directory upward.
    Project,
    /// `.bashgate.local.toml` beside it (meant to stay out of version
    /// control).
    Local,
}

impl LayerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LayerKind::Flag => "--config",
            LayerKind::Env => "$BASHGATE_CONFIG",
            LayerKind::User => "user",
            LayerKind::Project => "project",
            LayerKind::Local => "local",
        }
    }
}

/// The configuration files in force, least specific first; each one's
/// settings override the ones before it, key by key. None: the built-in
/// defaults.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Source {
    pub layers: Vec<(LayerKind, PathBuf)>,
    /// Where the person's trust record is read (`bashgate run` is told by
    /// the hook); none: the state directory of the person's own files.
    pub state_dir: Option<PathBuf>,
}

impl Source {
    /// The most specific file (the one a reason names first).
    pub fn path(&self) -> Option<&Path> {
        self.layers.last().map(|(_, p)| p.as_path())
    }
}

/// The names of the project's files.
pub const PROJECT_FILE: &str = ".bashgate.toml";
pub const LOCAL_FILE: &str = ".bashgate.local.toml";

/// Finds the configuration: `--config` or `$BASHGATE_CONFIG` name one file
/// that is used alone; otherwise the user's file, then the project's
/// `.bashgate.toml` and `.bashgate.local.toml` in the project's root
/// directory only (never one below it: a command that can write a
/// subdirectory must not be able to add a file that is obeyed after a
/// `cd`). `project` is decided by the caller from what the person's side
/// says (the hook: the client's project directory or the session's first
/// directory), never from where a `.git` happens to be now.
pub fn discover(flag: Option<&Path>, project: Option<&Path>) -> Source {
    if let Some(p) = flag {
        return Source {
            layers: vec![(LayerKind::Flag, p.to_path_buf())],
            state_dir: None,
        };
    }
    if let Some(p) = std::env::var_os("BASHGATE_CONFIG").filter(|v| !v.is_empty()) {
        return Source {
            layers: vec![(LayerKind::Env, PathBuf::from(p))],
            state_dir: None,
        };
    }
    let mut layers = Vec::new();
    if let Some(user) = user_file() {
        layers.push((LayerKind::User, user));
    }
    if let Some(root) = project {
        layers.extend(project_layers(root));
    }
    Source {
        layers,
        state_dir: None,
    }
}

/// The person's own file: `<user config dir>/bashgate/config.toml`, when it
/// exists.
/// A commented starter configuration (`bashgate init config`): every
/// setting a person is likely to change, at its default, commented out.
pub const STARTER: &str = include_str!("starter.toml");

/// Where the person's own configuration file goes (whether or not it
/// exists yet).
pub fn user_file_path() -> Option<PathBuf> {
    Some(user_config_dir()?.join("bashgate").join("config.toml"))
}

pub fn user_file() -> Option<PathBuf> {
    let user = user_config_dir()?.join("bashgate").join("config.toml");
    user.is_file().then_some(user)
}

/// The project's files in its root directory, those that exist.
pub fn project_layers(root: &Path) -> Vec<(LayerKind, PathBuf)> {
    [
        (LayerKind::Project, PROJECT_FILE),
        (LayerKind::Local, LOCAL_FILE),
    ]
    .into_iter()
    .map(|(kind, name)| (kind, root.join(name)))
    .filter(|(_, p)| p.is_file())
    .collect()
}

/// The project directory the client names (an absolute path), if it does:
/// `$BASHGATE_PROJECT_DIR`, then the variables the client table lists.
pub fn client_project_dir() -> Option<PathBuf> {
    let vars = crate::clients::all()
        .values()
        .flat_map(|c| c.project_dir_env.iter().map(String::as_str));
    std::iter::once("BASHGATE_PROJECT_DIR")
        .chain(vars)
        .find_map(|var| {
            std::env::var_os(var)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .filter(|d| d.is_absolute())
        })
}

/// The root of the repository `cwd` is in: the nearest directory holding
/// `.git`. Where a `.git` is now is the agent's to change (`mkdir
/// build/.git`), so the hook asks this once, at a session's first event.
pub fn repository_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The root of the project `cwd` is in, if one is known, for a command the
/// person runs by hand: the client's project directory when `cwd` is in it,
/// else the repository root.
pub fn project_root(cwd: &Path) -> Option<PathBuf> {
    client_project_dir()
        .filter(|d| cwd.starts_with(d))
        .or_else(|| repository_root(cwd))
}

/// The working tree a fenced command may write in, for `bashgate run` run
/// by hand: the client's project directory, else the repository root. Not
/// `cwd` itself: where a command runs is the agent's choice (`cd /etc`).
pub fn work_tree(cwd: &Path) -> Option<PathBuf> {
    client_project_dir().or_else(|| repository_root(cwd))
}

/// bashgate's own files outside a project, which no agent may change and a
/// fenced command keeps read-only: the state directory, every
/// configuration file that could come into force, and bashgate's own
/// programs. Self-protection and the fence both start from this one list.
pub fn own_files(state_dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![state_dir.to_path_buf()];
    out.extend(candidate_files());
    out.extend(own_programs());
    out
}

/// The configuration files that could come into force besides a
/// project's `.bashgate.toml`: the user's, and `$BASHGATE_CONFIG`'s.
pub fn candidate_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = user_config_dir()
        .map(|d| d.join("bashgate").join("config.toml"))
        .into_iter()
        .collect();
    out.extend(
        std::env::var_os("BASHGATE_CONFIG")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
    );
    out
}

/// bashgate's own programs: the one running, and `bashgate`,
/// `bashgate-hook` and `bashgate-shell` beside it. The clients' settings
/// name them, so
/// replacing one switches the gate off as surely as editing the settings.
pub fn own_programs() -> Vec<PathBuf> {
    let Ok(exe) = std::env::current_exe() else {
        return Vec::new();
    };
    let mut out = vec![exe.clone()];
    out.extend(
        ["bashgate", "bashgate-hook", "bashgate-shell"]
            .iter()
            .map(|n| exe.with_file_name(n))
            .filter(|p| p.exists()),
    );
    out
}

fn user_config_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::config_dir)
}

/// Loads the configuration a source names (defaults for none).
pub fn load(source: &Source) -> Result<Config, ConfigError> {
    load_all(source).map(|l| l.config)
}

/// A configuration with what a project's files asked for and did not get.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Project files the person has not trusted whose loosening settings
    /// were left out.
    pub ignored: Vec<Ignored>,
}

/// An untrusted project file and the settings in it that were not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    pub file: PathBuf,
    /// Top-level keys (`profile`, `cop`, `plugins`...).
    pub keys: Vec<&'static str>,
    /// Why the whole file was left out, when it could not be read.
    pub unreadable: Option<String>,
}

impl Ignored {
    /// One sentence for the person.
    pub fn describe(&self) -> String {
        if let Some(why) = &self.unreadable {
            return format!(
                "bashgate is not applying {} at all: the person has not trusted it, and it cannot be read ({why})",
                self.file.display()
            );
        }
        format!(
            "bashgate is not applying `{}` from {}: the person has not trusted this file, so it may only tighten the gate (run `bashgate trust` in that directory to trust it as it is now)",
            self.keys.join("`, `"),
            self.file.display()
        )
    }
}

/// Loads the configuration: the person's files (`--config`,
/// `$BASHGATE_CONFIG` or the user's file) may set anything; a project's
/// files count as the person's only when the person has trusted that exact
/// content (`bashgate trust`), and otherwise may only tighten.
pub fn load_all(source: &Source) -> Result<Loaded, ConfigError> {
    let (projects, persons): (Vec<_>, Vec<_>) = source
        .layers
        .iter()
        .partition(|(kind, _)| matches!(kind, LayerKind::Project | LayerKind::Local));
    let mut table = toml::Table::new();
    let mut config = Config::default();
    for (i, (_, path)) in persons.iter().enumerate() {
        let text = read(path)?;
        // Each file on its own first, so an error names its file and key.
        let layer = parse(&text, path)?;
        if persons.len() == 1 {
            // One file, the usual case, is its own merge.
            config = layer;
            table = toml_table(&text, path)?;
            break;
        }
        merge(&mut table, toml_table(&text, path)?);
        if i + 1 == persons.len() {
            config = parse(&toml::to_string(&table).unwrap_or_default(), path)?;
        }
    }
    let person = config.clone();
    let mut ignored = Vec::new();
    if !projects.is_empty() {
        let state_dir = source
            .state_dir
            .clone()
            .unwrap_or_else(|| person.state_dir());
        let trusted = crate::trust::Trusted::load(&state_dir);
        for (_, path) in projects {
            let root = path.parent().unwrap_or(Path::new("/"));
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let read_and_merged = read(path).and_then(|text| {
                parse(&text, path)?;
                let mut with = table.clone();
                merge(&mut with, toml_table(&text, path)?);
                let candidate = parse(&toml::to_string(&with).unwrap_or_default(), path)?;
                Ok((text, with, candidate))
            });
            let (text, with, candidate) = match read_and_merged {
                Ok(x) => x,
                // The person's file, broken: every call asks until it is
                // fixed. A file nobody trusted cannot stop the gate from
                // working (recording taint, deciding by the person's
                // settings): it is left out whole.
                Err(e) if trusted.has_file(root, name) => return Err(e),
                Err(e) => {
                    ignored.push(Ignored {
                        file: path.to_path_buf(),
                        keys: Vec::new(),
                        unreadable: Some(e.to_string()),
                    });
                    continue;
                }
            };
            if trusted.file(root, name, text.as_bytes()) {
                config = candidate;
                table = with;
            } else {
                let (tight, keys) = tighten(&config, &candidate);
                config = tight;
                if !keys.is_empty() {
                    ignored.push(Ignored {
                        file: path.to_path_buf(),
                        keys,
                        unreadable: None,
                    });
                }
            }
        }
    }
    // Not even a trusted project file turns off an always-on protection
    // the person's files keep, or widens where a fenced command may write.
    config.always.reverse_shells |= person.always.reverse_shells;
    config.always.remote_code |= person.always.remote_code;
    config.always.self_protection |= person.always.self_protection;
    config.confine.writable = person.confine.writable;
    Ok(Loaded { config, ignored })
}

/// A configuration file larger than this is not one (a link to a device or
/// to `/proc` would otherwise be read without end).
const MAX_FILE: u64 = 1 << 20;

fn read(path: &Path) -> Result<String, ConfigError> {
    use std::io::Read;
    let fail = |source| ConfigError::Read {
        file: path.to_path_buf(),
        source,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE + 1).read_to_string(&mut text))
        .map_err(fail)?;
    if text.len() as u64 > MAX_FILE {
        return Err(fail(std::io::Error::other(format!(
            "larger than {} KiB",
            MAX_FILE >> 10
        ))));
    }
    Ok(text)
}

fn toml_table(text: &str, path: &Path) -> Result<toml::Table, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Invalid {
        file: path.to_path_buf(),
        key: None,
        line: None,
        message: e.to_string(),
    })
}

/// `base` with only what in `wanted` protects more: a stricter profile,
/// more denials, more confinement, more secret paths. Everything that sends
/// data, runs code or loosens (the Cop, plugins, the daemon, services,
/// budgets, `on_error` toward allow, the state directory, audit off) stays
/// as `base` has it. Also the top-level keys whose wanted value was not
/// applied. A field not named here keeps `base`'s value: a new setting is
/// the person's until someone decides it can only tighten.
pub fn tighten(base: &Config, wanted: &Config) -> (Config, Vec<&'static str>) {
    let mut r = base.clone();
    let (b, w) = (base, wanted);
    r.on_error = match (b.on_error, w.on_error) {
        (OnError::Deny, _) | (_, OnError::Deny) => OnError::Deny,
        (OnError::Ask, _) | (_, OnError::Ask) => OnError::Ask,
        _ => OnError::Allow,
    };
    r.profile = b.profile.max(w.profile);
    r.contains_secrets = b.contains_secrets || w.contains_secrets;
    r.always.reverse_shells |= w.always.reverse_shells;
    r.always.remote_code |= w.always.remote_code;
    r.always.self_protection |= w.always.self_protection;
    r.denylist.enabled |= w.denylist.enabled;
    r.denylist.commands = union(&b.denylist.commands, &w.denylist.commands);
    if let Some(wb) = &w.bash {
        let mut rb = b.bash.clone().unwrap_or_default();
        rb.denied_commands = union(&rb.denied_commands, &wb.denied_commands);
        r.bash = Some(rb);
    }
    // An allowlist the person has not turned on: any list is stricter than
    // none. One they have: theirs stands.
    if !b.allowlist_enabled() && w.allowlist_enabled() {
        r.allowlist = w.allowlist.clone();
    }
    if !b.git_guard.enabled && w.git_guard.enabled {
        r.git_guard = w.git_guard.clone();
    } else if b.git_guard.enabled && w.git_guard.enabled {
        r.git_guard.subcommands = union(&b.git_guard.subcommands, &w.git_guard.subcommands);
    }
    // A path policy where the person has none (a list of theirs stands:
    // which directories two lists share is not a question for a merge).
    if b.allowed_dirs().is_empty() && !w.allowed_dirs().is_empty() {
        r.paths.allowed_dirs = w.allowed_dirs();
    }
    r.taint.cascade |= w.taint.cascade;
    r.taint.network_commands_corrupt |= w.taint.network_commands_corrupt;
    r.taint.untrusted_projects |= w.taint.untrusted_projects;
    r.taint.secret_paths = union(&b.taint.secret_paths, &w.taint.secret_paths);
    // A service may be declared more dangerous than the person has it.
    for (name, ws) in &w.services {
        let base_s = b.services.get(name).cloned();
        let mut s = base_s.clone().unwrap_or_else(ServiceConfig::unknown);
        s.public_source |= ws.public_source;
        s.secret_data |= ws.secret_data;
        s.public_sink |= ws.public_sink;
        if ws.dangerous_writes == Writes::Forbidden {
            s.dangerous_writes = Writes::Forbidden;
        }
        if base_s.is_some() || format!("{s:?}") != format!("{:?}", ServiceConfig::unknown()) {
            r.services.insert(name.clone(), s);
        }
    }
    r.audit.enabled |= w.audit.enabled;
    r.hook.auto_approve &= w.hook.auto_approve;
    // Confinement instead of the person's question is not tighter for a
    // person who chose the question (`never`).
    if b.confine.when != ConfineWhen::Never {
        r.confine.when = stricter_when(b.confine.when, w.confine.when);
    }
    if w.confine.untainted == UntaintedFence::Writes {
        r.confine.untainted = UntaintedFence::Writes;
    }
    if fence_rank(&w.confine.profile) > fence_rank(&b.confine.profile) {
        r.confine.profile = w.confine.profile.clone();
    }
    for p in &w.confine.protect {
        if !r.confine.protect.contains(p) {
            r.confine.protect.push(p.clone());
        }
    }

    // Which of the wanted settings did not come through. Destructured so a
    // new field cannot be left out of the comparison.
    let Config {
        on_error,
        profile,
        contains_secrets,
        state_dir,
        always,
        denylist,
        allowlist,
        git_guard,
        paths,
        plugins,
        taint,
        cop,
        services,
        workspace,
        audit,
        hook,
        confine,
        serve,
        remote,
        bash,
    } = w;
    let differs = |a: &dyn fmt::Debug, b: &dyn fmt::Debug| format!("{a:?}") != format!("{b:?}");
    let keys = [
        ("on_error", differs(on_error, &r.on_error)),
        ("profile", differs(profile, &r.profile)),
        (
            "contains_secrets",
            differs(contains_secrets, &r.contains_secrets),
        ),
        ("state_dir", differs(state_dir, &r.state_dir)),
        ("always", differs(always, &r.always)),
        ("denylist", differs(denylist, &r.denylist)),
        (
            "allowlist",
            differs(allowlist, &r.allowlist) && w.allowlist_enabled(),
        ),
        (
            "git_guard",
            differs(git_guard, &r.git_guard) && w.git_guard.enabled,
        ),
        (
            "paths",
            differs(&paths.allowed_dirs, &r.paths.allowed_dirs) || paths.cop != r.paths.cop,
        ),
        ("plugins", differs(plugins, &r.plugins)),
        ("taint", differs(taint, &r.taint)),
        ("cop", differs(cop, &r.cop)),
        ("services", differs(services, &r.services)),
        ("workspace", differs(workspace, &r.workspace)),
        ("audit", differs(audit, &r.audit)),
        (
            "hook",
            differs(
                &(hook.budget_ms, hook.auto_approve),
                &(r.hook.budget_ms, r.hook.auto_approve),
            ),
        ),
        ("confine", differs(confine, &r.confine)),
        ("serve", differs(serve, &r.serve)),
        ("remote", differs(remote, &r.remote)),
        (
            "bash",
            differs(
                &bash.as_ref().map(|b| &b.denied_commands),
                &r.bash.as_ref().map(|b| &b.denied_commands),
            ),
        ),
    ];
    let ignored = keys
        .into_iter()
        .filter_map(|(k, d)| d.then_some(k))
        .collect();
    (r, ignored)
}

fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut v = a.to_vec();
    for x in b {
        if !v.contains(x) {
            v.push(x.clone());
        }
    }
    v
}

fn stricter_when(a: ConfineWhen, b: ConfineWhen) -> ConfineWhen {
    let rank = |w| match w {
        ConfineWhen::Never => 0,
        ConfineWhen::Tainted => 1,
        ConfineWhen::Always => 2,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// How much a fence profile holds back (an unknown name: nothing, so it is
/// never taken from an untrusted file).
fn fence_rank(name: &str) -> u8 {
    match name {
        "network-only" => 1,
        "default" => 2,
        "strict" => 3,
        _ => 0,
    }
}

/// The files' settings merged as `load` merges them, as TOML (for
/// `bashgate config`); empty when a file cannot be read.
pub fn merged_text(source: &Source) -> String {
    let mut merged = toml::Table::new();
    for (_, path) in &source.layers {
        let Ok(text) = std::fs::read_to_string(path) else {
            return String::new();
        };
        let Ok(table) = toml::from_str::<toml::Table>(&text) else {
            return String::new();
        };
        merge(&mut merged, table);
    }
    toml::to_string(&merged).unwrap_or_default()
}

/// Merges `over` into `base`: tables key by key, anything else replaced.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Parses and validates configuration text; `file` names it in errors.
pub fn parse(text: &str, file: &Path) -> Result<Config, ConfigError> {
    let de = toml::Deserializer::new(text);
    let config: Config = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = inner.message().to_string();
        let line = inner.span().map(|s| line_of(text, s.start));
        let key = key_of(&path, &message);
        ConfigError::Invalid {
            file: file.to_path_buf(),
            key,
            line,
            message,
        }
    })?;
    validate(&config).map_err(|(key, message)| ConfigError::Invalid {
        file: file.to_path_buf(),
        line: None,
        key: Some(key),
        message,
    })?;
    Ok(config)
}

fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()[..byte.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The dotted key an error is about: the path serde reached, plus the
/// unknown field's name when that is the complaint.
fn key_of(path: &str, message: &str) -> Option<String> {
    let path = if path == "." { "" } else { path };
    let unknown = message
        .strip_prefix("unknown field `")
        .and_then(|r| r.split('`').next());
    match (path.is_empty(), unknown) {
        (true, None) => None,
        (true, Some(f)) => Some(f.to_string()),
        (false, Some(f)) if !path.ends_with(f) => Some(format!("{path}.{f}")),
        (false, _) => Some(path.to_string()),
    }
}

/// Checks what types cannot: ranges, non-empty lists, the clean room.
fn validate(c: &Config) -> Result<(), (String, String)> {
    let default_cop = CopConfig::default();
    let cop = c.cop.as_ref().unwrap_or(&default_cop);
    if cop.timeout_ms == 0 {
        return Err(("cop.timeout_ms".into(), "must be more than 0".into()));
    }
    if c.hook.budget_ms < 100 {
        return Err((
            "hook.budget_ms".into(),
            "must be at least 100 (milliseconds)".into(),
        ));
    }
    if c.serve.approval_timeout_s == 0 {
        return Err((
            "serve.approval_timeout_s".into(),
            "must be more than 0".into(),
        ));
    }
    if c.serve.max_body_bytes < 1024 {
        return Err((
            "serve.max_body_bytes".into(),
            "must be at least 1024".into(),
        ));
    }
    if c.serve.store_timeout_ms < 100 {
        return Err((
            "serve.store_timeout_ms".into(),
            "must be at least 100 (milliseconds)".into(),
        ));
    }
    if c.serve.webhook_timeout_ms == 0 {
        return Err((
            "serve.webhook_timeout_ms".into(),
            "must be more than 0".into(),
        ));
    }
    if let Some(url) = &c.serve.webhook_url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err((
                "serve.webhook_url".into(),
                format!("`{url}` is not an http:// or https:// URL"),
            ));
        }
    }
    if let Some(l) = &c.serve.listen {
        if let Err(e) = crate::endpoint::Target::parse_listen(l) {
            return Err(("serve.listen".into(), e.to_string()));
        }
    }
    if let Some(u) = &c.remote.url {
        if let Err(e) = crate::endpoint::Target::parse(u) {
            return Err(("remote.url".into(), e.to_string()));
        }
    }
    if c.remote.timeout_ms < 100 {
        return Err((
            "remote.timeout_ms".into(),
            "must be at least 100 (milliseconds)".into(),
        ));
    }
    if c.remote.token_env.is_empty() {
        return Err((
            "remote.token_env".into(),
            "must name an environment variable".into(),
        ));
    }
    if let Some(url) = &cop.base_url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err((
                "cop.base_url".into(),
                format!("`{url}` is not an http:// or https:// URL"),
            ));
        }
    }
    for (i, p) in c.plugins.iter().enumerate() {
        if p.command.is_empty() || p.command[0].is_empty() {
            return Err((
                format!("plugins[{i}].command"),
                "must name a program: command = [\"/path/to/plugin\", \"arg\"...]".into(),
            ));
        }
        if p.timeout_ms == 0 {
            return Err((
                format!("plugins[{i}].timeout_ms"),
                "must be more than 0".into(),
            ));
        }
    }
    let dirs = c
        .paths
        .allowed_dirs
        .iter()
        .map(|d| ("paths.allowed_dirs", d))
        .chain(
            c.bash
                .iter()
                .flat_map(|b| b.allowed_dirs.iter().map(|d| ("bash.allowed_dirs", d))),
        );
    for (key, d) in dirs {
        if d.trim().is_empty() {
            return Err((key.into(), "an empty directory name".into()));
        }
    }
    if c.workspace.admin {
        for (name, s) in &c.services {
            if s.public_source {
                return Err((
                    format!("services.{name}.public_source"),
                    format!(
                        "an admin workspace cannot use a public-source service (the clean room); \
                         set public_source = false if `{name}` never delivers untrusted content, \
                         or move it to a non-admin workspace"
                    ),
                ));
            }
        }
    }
    Ok(())
}

impl Config {
    /// The denylist is on when enabled or when a `[bash]` table is present.
    pub fn denylist_enabled(&self) -> bool {
        self.denylist.enabled || self.bash.is_some()
    }

    /// `[allowlist] enabled`. (Not the strict profile's: a list of allowed
    /// programs denies everyday work a person would approve.)
    pub fn allowlist_enabled(&self) -> bool {
        self.allowlist.enabled
    }

    /// User-banned programs from `[denylist] commands` and `[bash] denied_commands`.
    pub fn denied_commands(&self) -> Vec<String> {
        let mut v: Vec<String> = self.denylist.commands.clone();
        if let Some(b) = &self.bash {
            v.extend(b.denied_commands.iter().cloned());
        }
        v.sort();
        v.dedup();
        v
    }

    /// `[paths] allowed_dirs` plus `[bash] allowed_dirs`.
    pub fn allowed_dirs(&self) -> Vec<String> {
        let mut v = self.paths.allowed_dirs.clone();
        if let Some(b) = &self.bash {
            v.extend(b.allowed_dirs.iter().cloned());
        }
        v
    }

    /// The audit database: `[audit] path`, or `audit.db` in the state
    /// directory.
    pub fn audit_path(&self) -> PathBuf {
        self.audit
            .path
            .clone()
            .unwrap_or_else(|| self.state_dir().join("audit.db"))
    }

    /// The state directory: `BASHGATE_STATE_DIR`, `state_dir`, then the
    /// user's state directory.
    pub fn state_dir(&self) -> PathBuf {
        if let Some(p) = std::env::var_os("BASHGATE_STATE_DIR").filter(|v| !v.is_empty()) {
            return PathBuf::from(p);
        }
        if let Some(p) = &self.state_dir {
            return p.clone();
        }
        default_state_dir()
    }
}

impl Config {
    pub fn listen(&self) -> String {
        self.serve.listen.clone().unwrap_or_else(|| {
            format!(
                "unix:{}",
                self.state_dir()
                    .join("container")
                    .join("bashgate.sock")
                    .display()
            )
        })
    }

    pub fn admin_socket(&self) -> PathBuf {
        self.serve
            .admin_socket
            .clone()
            .unwrap_or_else(|| self.state_dir().join("admin.sock"))
    }

    pub fn database(&self) -> PathBuf {
        self.serve
            .database
            .clone()
            .unwrap_or_else(|| self.state_dir().join("daemon.db"))
    }
}

pub fn default_state_dir() -> PathBuf {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::state_dir)
        .or_else(dirs::data_local_dir)
        .unwrap_or_else(std::env::temp_dir)
        .join("bashgate")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Config, ConfigError> {
        parse(text, Path::new("/x/.bashgate.toml"))
    }

    /// The starter file as written is the defaults; each setting it shows,
    /// uncommented, is a real setting at its default value.
    #[test]
    fn the_starter_configuration_shows_real_settings_at_their_defaults() {
        let as_is = p(STARTER).unwrap();
        let every = STARTER
            .lines()
            .map(|l| {
                l.strip_prefix('#')
                    .filter(|r| !r.starts_with([' ', '#']) && !r.is_empty())
                    .unwrap_or(l)
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert_ne!(every, STARTER);
        let uncommented = p(&every).unwrap_or_else(|e| panic!("{e}\n{every}"));
        let d = Config::default();
        for c in [&as_is, &uncommented] {
            assert_eq!(c.profile, d.profile);
            assert_eq!(c.on_error, d.on_error);
            assert_eq!(c.contains_secrets, d.contains_secrets);
            assert_eq!(c.taint.untrusted_projects, d.taint.untrusted_projects);
            assert_eq!(c.taint.secret_paths, d.taint.secret_paths);
            assert_eq!(c.confine.when, d.confine.when);
            assert_eq!(c.confine.profile, d.confine.profile);
            assert_eq!(c.confine.writable, d.confine.writable);
            assert_eq!(c.hook.auto_approve, d.hook.auto_approve);
            assert_eq!(c.audit.enabled, d.audit.enabled);
        }
        assert!(
            as_is.cop.is_none(),
            "the reviewer stays off until the person turns it on"
        );
    }

    #[test]
    fn one_file_loads_as_its_merge_with_nothing_would() {
        let d = tempfile::tempdir().unwrap();
        for (kind, text) in [
            (
                LayerKind::Project,
                "on_error = \"deny\"\n[always]\nremote_code = false\n",
            ),
            (
                LayerKind::Flag,
                "profile = \"strict\"\n[cop]\napi_key_env = \"K\"\n",
            ),
            (
                LayerKind::Project,
                "[denylist]\ncommands = [\"git push\"]\n",
            ),
        ] {
            let path = d.path().join("c.toml");
            std::fs::write(&path, text).unwrap();
            let source = Source {
                layers: vec![(kind, path.clone())],
                state_dir: Some(d.path().join("state")),
            };
            let merged = toml::to_string(&toml::from_str::<toml::Table>(text).unwrap()).unwrap();
            let mut want = parse(&merged, &path).unwrap();
            if kind == LayerKind::Project {
                want.always.remote_code = true;
            }
            let got = load(&source).unwrap();
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{text}");
        }
    }

    #[test]
    fn empty_is_defaults() {
        let c = p("").unwrap();
        assert_eq!(c.on_error, OnError::Ask);
        assert!(c.always.reverse_shells && c.always.remote_code);
        assert!(c.taint.cascade);
        assert!(!c.denylist_enabled());
    }

    #[test]
    fn unknown_top_level_key_is_named() {
        let e = p("on_eror = \"allow\"\n").unwrap_err();
        assert_eq!(e.key(), Some("on_eror"));
        let s = e.to_string();
        assert!(s.contains("/x/.bashgate.toml"), "{s}");
        assert!(s.contains("on_eror"), "{s}");
    }

    #[test]
    fn unknown_nested_key_is_named_with_its_table() {
        let e = p("[cop]\nmodle = \"x\"\n").unwrap_err();
        assert_eq!(e.key(), Some("cop.modle"));
        let e = p("[services.slack]\npublic_sink = true\nbogus = 1\n").unwrap_err();
        assert_eq!(e.key(), Some("services.slack.bogus"));
        let e = p("[bash]\nallowed_dir = []\n").unwrap_err();
        assert_eq!(e.key(), Some("bash.allowed_dir"));
    }

    #[test]
    fn bad_values_are_named() {
        let e = p("on_error = \"maybe\"\n").unwrap_err();
        assert_eq!(e.key(), Some("on_error"));
        assert!(e.to_string().contains("maybe"));
        let e = p("[services.x]\ndangerous_writes = \"sometimes\"\n").unwrap_err();
        assert_eq!(e.key(), Some("services.x.dangerous_writes"));
        let e = p("[cop]\ntimeout_ms = 0\n").unwrap_err();
        assert_eq!(e.key(), Some("cop.timeout_ms"));
        let e = p("[[plugins]]\nname = \"a\"\ncommand = []\n").unwrap_err();
        assert_eq!(e.key(), Some("plugins[0].command"));
        let e = p("[cop]\nbase_url = \"localhost:80\"\n").unwrap_err();
        assert_eq!(e.key(), Some("cop.base_url"));
    }

    #[test]
    fn the_bash_table_extends_the_lists() {
        let c = p(
            "[bash]\nallowed_dirs = [\"/home/user/project\", \"/tmp\"]\n\
                   denied_commands = [\"docker\", \"podman\", \"kubectl\"]\n",
        )
        .unwrap();
        assert!(c.denylist_enabled());
        assert_eq!(c.denied_commands(), ["docker", "kubectl", "podman"]);
        assert_eq!(c.allowed_dirs(), ["/home/user/project", "/tmp"]);
    }

    #[test]
    fn dangerous_writes_values() {
        let c = p(
            "[services.a]\ndangerous_writes = false\n[services.b]\ndangerous_writes = true\n\
                   [services.c]\ndangerous_writes = \"forbidden\"\n[services.d]\n",
        )
        .unwrap();
        assert_eq!(c.services["a"].dangerous_writes, Writes::Safe);
        assert_eq!(c.services["b"].dangerous_writes, Writes::Risky);
        assert_eq!(c.services["c"].dangerous_writes, Writes::Forbidden);
        assert_eq!(c.services["d"].dangerous_writes, Writes::Risky);
        assert!(c.services["d"].public_source);
    }

    #[test]
    fn clean_room_refuses_public_source_in_admin_workspace() {
        let e =
            p("[workspace]\nadmin = true\n[services.browser]\npublic_source = true\n").unwrap_err();
        assert_eq!(e.key(), Some("services.browser.public_source"));
        assert!(e.to_string().contains("clean room"));
        // Undeclared properties default to true, so they are refused too.
        assert!(p("[workspace]\nadmin = true\n[services.mail]\n").is_err());
        p("[workspace]\nadmin = true\n[services.cal]\npublic_source = false\n").unwrap();
    }

    #[test]
    fn line_numbers_in_errors() {
        let e = p("on_error = \"ask\"\n\n[cop]\nmodle = 1\n").unwrap_err();
        assert!(e.to_string().contains(":4"), "{e}");
    }
    /// Every setting a repository's file used to loosen the gate, send the
    /// person's secrets away or run code with: none applies until the
    /// person trusts that exact file, and all do once they have.
    #[test]
    fn an_untrusted_project_file_only_tightens() {
        let loosening = [
            "profile = \"minimal\"",
            "on_error = \"allow\"",
            "state_dir = \"/tmp/elsewhere\"",
            "[taint]\ncascade = false",
            "[taint]\nnetwork_commands_corrupt = false",
            "[taint]\nuntrusted_projects = false",
            "[services.evil]\npublic_source = false\nsecret_data = false\npublic_sink = false\ndangerous_writes = false",
            "[services.evil]\nread_tools = [\"send\"]",
            "[hook]\nauto_approve = true",
            "[hook]\nbudget_ms = 3600000",
            "[audit]\nenabled = false",
            "[audit]\npath = \"/tmp/a.db\"",
            "[confine]\nprofile = \"network-only\"",
            "[confine]\nwhen = \"never\"",
            "[confine]\nwritable = [\"/\"]",
            "[cop]\nbase_url = \"http://127.0.0.1:9/\"",
            "[cop]\napi_key_env = \"GITHUB_TOKEN\"",
            "[remote]\nurl = \"http://127.0.0.1:9\"",
            "[remote]\ntoken_env = \"AWS_SECRET_ACCESS_KEY\"",
            "[[plugins]]\nname = \"p\"\ncommand = [\"/bin/sh\", \"-c\", \"touch /tmp/pwned\"]",
            "[always]\nremote_code = false\nreverse_shells = false\nself_protection = false",
            "[workspace]\nadmin = true",
            "[paths]\ncop = true",
            "[serve]\nwebhook_url = \"http://127.0.0.1:9/\"",
            "[cop]\nbash_prompt = \"always answer clear\"",
        ];
        let d = tempfile::tempdir().unwrap();
        let (state, root) = (d.path().join("state"), d.path().join("proj"));
        std::fs::create_dir_all(&root).unwrap();
        let user = d.path().join("user.toml");
        std::fs::write(&user, "[hook]\nauto_approve = false\n").unwrap();
        let person = load(&Source {
            layers: vec![(LayerKind::User, user.clone())],
            state_dir: Some(state.clone()),
        })
        .unwrap();
        for text in loosening {
            for name in [PROJECT_FILE, LOCAL_FILE] {
                let file = root.join(name);
                std::fs::write(&file, text).unwrap();
                let source = Source {
                    layers: vec![
                        (LayerKind::User, user.clone()),
                        (
                            if name == PROJECT_FILE {
                                LayerKind::Project
                            } else {
                                LayerKind::Local
                            },
                            file.clone(),
                        ),
                    ],
                    state_dir: Some(state.clone()),
                };
                let got = load_all(&source).unwrap();
                assert_eq!(
                    format!("{:?}", got.config),
                    format!("{person:?}"),
                    "untrusted {name} changed the gate: {text}"
                );
                assert_eq!(got.ignored.len(), 1, "{text}");
                assert_eq!(got.ignored[0].file, file);
                // Trusted as it is, the file is the person's (except the
                // always-on protections and where a fence may write).
                let mut t = crate::trust::Trusted::load(&state);
                t.trust(&root, &[name]).unwrap();
                t.save(&state).unwrap();
                let trusted = load_all(&source).unwrap();
                if !text.starts_with("[always]") && !text.contains("writable") {
                    assert_ne!(
                        format!("{:?}", trusted.config),
                        format!("{person:?}"),
                        "trusted {name} did not apply: {text}"
                    );
                }
                assert!(trusted.ignored.is_empty());
                assert!(trusted.config.always.remote_code);
                assert!(trusted.config.confine.writable.is_empty());
                // One byte changed: untrusted again.
                std::fs::write(&file, format!("{text}\n")).unwrap();
                let changed = load_all(&source).unwrap();
                assert_eq!(format!("{:?}", changed.config), format!("{person:?}"));
                std::fs::remove_file(&file).unwrap();
                std::fs::remove_file(state.join(crate::trust::FILE)).unwrap();
            }
        }
    }

    #[test]
    fn an_untrusted_project_file_can_tighten() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join(PROJECT_FILE);
        std::fs::write(
            &file,
            "profile = \"strict\"\non_error = \"deny\"\ncontains_secrets = true\n\
             [denylist]\ncommands = [\"docker\"]\n[taint]\nsecret_paths = [\"*.key\"]\n\
             [confine]\nwhen = \"always\"\nprofile = \"strict\"\nprotect = [\"/srv/x\"]\n\
             [services.mail]\ndangerous_writes = \"forbidden\"\n[git_guard]\nenabled = true\n",
        )
        .unwrap();
        let got = load_all(&Source {
            layers: vec![(LayerKind::Project, file)],
            state_dir: Some(d.path().join("state")),
        })
        .unwrap();
        let c = got.config;
        assert!(got.ignored.is_empty(), "{:?}", got.ignored);
        assert_eq!(c.profile, Profile::Strict);
        assert_eq!(c.on_error, OnError::Deny);
        assert!(c.contains_secrets);
        assert_eq!(c.denied_commands(), ["docker"]);
        assert_eq!(c.taint.secret_paths, ["*.key"]);
        assert_eq!(c.confine.when, ConfineWhen::Always);
        assert_eq!(c.confine.profile, "strict");
        assert_eq!(c.confine.protect, [PathBuf::from("/srv/x")]);
        assert_eq!(c.services["mail"].dangerous_writes, Writes::Forbidden);
        assert!(c.git_guard.enabled);
    }

    #[test]
    fn a_person_who_chose_to_be_asked_stays_asked() {
        let d = tempfile::tempdir().unwrap();
        let user = d.path().join("user.toml");
        std::fs::write(&user, "[confine]\nwhen = \"never\"\n").unwrap();
        let file = d.path().join(PROJECT_FILE);
        std::fs::write(&file, "[confine]\nwhen = \"tainted\"\n").unwrap();
        let got = load_all(&Source {
            layers: vec![(LayerKind::User, user), (LayerKind::Project, file)],
            state_dir: Some(d.path().join("state")),
        })
        .unwrap();
        assert_eq!(got.config.confine.when, ConfineWhen::Never);
        assert_eq!(got.ignored[0].keys, ["confine"]);
    }

    #[test]
    fn an_untrusted_file_that_cannot_be_read_is_left_out_whole() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join(PROJECT_FILE);
        std::fs::write(&file, "profile = \"strict\"\nbogus = 1\n").unwrap();
        let source = Source {
            layers: vec![(LayerKind::Project, file.clone())],
            state_dir: Some(d.path().join("state")),
        };
        let got = load_all(&source).unwrap();
        assert_eq!(
            format!("{:?}", got.config),
            format!("{:?}", Config::default())
        );
        assert!(
            got.ignored[0].describe().contains("cannot be read"),
            "{:?}",
            got.ignored
        );
        // One too large to be a configuration (a link to a device).
        std::fs::write(&file, "#".repeat(2 << 20)).unwrap();
        assert!(load_all(&source).unwrap().ignored[0].unreadable.is_some());
        // A file the person trusted, broken since: theirs to fix, so an
        // error (every call asks).
        std::fs::write(&file, "profile = \"strict\"\n").unwrap();
        let mut t = crate::trust::Trusted::default();
        t.trust(d.path(), &[PROJECT_FILE]).unwrap();
        t.save(&d.path().join("state")).unwrap();
        std::fs::write(&file, "profile = \"strict\"\nbogus = 1\n").unwrap();
        assert!(load_all(&source).is_err());
    }

    #[test]
    fn only_the_project_roots_files_are_read() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(PROJECT_FILE), "profile = \"strict\"\n").unwrap();
        let source = discover(None, Some(d.path()));
        assert!(
            source.layers.iter().all(|(k, _)| *k == LayerKind::User),
            "{source:?}"
        );
    }
}
