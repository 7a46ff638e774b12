//! The gate's own rule ids (`BG4xx`, reserved by the analyzer for the
//! policy layers). Ids never change meaning; `bashgate explain` shows them.

pub struct GateRule {
    pub id: &'static str,
    pub name: &'static str,
    pub summary: &'static str,
}

macro_rules! gate_rules {
    ($($konst:ident $id:literal $name:literal $summary:literal;)*) => {
        $(pub const $konst: &str = $id;)*
        pub const GATE_RULES: &[GateRule] = &[
            $(GateRule { id: $id, name: $name, summary: $summary },)*
        ];
    };
}

gate_rules! {
    BANNED_COMMAND "BG401" "banned-command" "The denylist bans this program (seed 002 or the user's denied_commands).";
    BANNED_SUBCOMMAND "BG402" "banned-subcommand" "The denylist bans this use of an allowed program (npm install -g, git config --global...).";
    DANGEROUS_PIPE "BG403" "dangerous-pipe" "Code from a pipe, a decoder or a file is fed to a shell (denylist).";
    NOT_ALLOWLISTED "BG404" "not-allowlisted" "The allowlist does not permit this program (seed 003).";
    VALIDATOR "BG405" "validator-failed" "pkill, chmod, rm or init.sh was used outside what its validator permits.";
    UNPARSEABLE "BG406" "unparseable" "The allowlist cannot check a command it cannot fully read.";
    GIT_GUARD "BG407" "git-guard" "git push, pull or rebase is blocked in this workspace.";
    PATH_OUTSIDE "BG408" "path-outside" "A path argument or redirect target lies outside allowed_dirs.";
    PLUGIN_DENY "BG409" "plugin-deny" "A plugin hook denied the call.";
    COP_FLAGGED "BG410" "cop-flagged" "The LLM reviewer flagged the call while the session is tainted.";
    NEEDS_HUMAN "BG411" "needs-human" "The call needs the person's approval (both taints, or the Cop flagged with both).";
    SERVICE_FORBIDDEN "BG412" "service-forbidden" "The service's dangerous_writes is \"forbidden\".";
    SERVICE_APPROVAL "BG413" "service-approval" "A write to this service needs the person's approval.";
    SECRET_IN_PAYLOAD "BG414" "secret-in-payload" "An outbound payload contains something that looks like a credential.";
    CLEAN_ROOM "BG415" "clean-room" "An admin workspace may not use a public-source service.";
    GATE_ERROR "BG416" "gate-error" "Something the decision needed failed; on_error decided.";
    REVERSE_SHELL "BG417" "reverse-shell" "A /dev/tcp or /dev/udp redirect (always denied).";
    REMOTE_CODE "BG418" "remote-code" "Network or decoded output fed to a shell or interpreter (always denied).";
    COP_UNAVAILABLE "BG419" "cop-unavailable" "A decision needed the Cop and no Cop key is configured.";
    SELF_PROTECTION "BG420" "self-protection" "The call would change bashgate's own state, configuration or hook settings.";
}

pub fn lookup(key: &str) -> Option<&'static GateRule> {
    GATE_RULES
        .iter()
        .find(|r| r.id.eq_ignore_ascii_case(key) || r.name.eq_ignore_ascii_case(key))
}
