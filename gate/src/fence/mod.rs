//! What the gate fences: which commands may run confined instead of going
//! to the reviewer or the person ([`confinable`]), and which places a
//! fenced command must not change or may write ([`protected`]). The kernel
//! side (namespaces, mounts, Landlock, seccomp) is the `bashgate-fence`
//! crate, which is told these lists and knows nothing of the policy.

pub mod protected;

/// Whether every network finding of `analysis` only says a program *can*
/// reach the network (`confinable_network` in gate/data/fence.toml): then
/// the command can run fenced instead of going to the Cop or the person.
pub fn confinable(analysis: &bashgate_analyzer::Analysis) -> bool {
    let table = &protected::TABLE.confinable_network;
    analysis
        .findings
        .iter()
        .filter(|f| f.verdict() == bashgate_analyzer::Verdict::Network)
        .all(|f| table.iter().any(|id| id == f.rule.id()))
}
