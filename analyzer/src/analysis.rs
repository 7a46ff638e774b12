//! What an analysis returns: the verdict, what would run, and why.

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::rules::Rule;
use crate::span::Span;
use crate::verdict::Verdict;

/// One reason behind a verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: Rule,
    pub span: Span,
    pub message: String,
}

impl Finding {
    pub fn verdict(&self) -> Verdict {
        self.rule.verdict()
    }
}

impl Serialize for Finding {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Finding", 4)?;
        st.serialize_field("rule", self.rule.id())?;
        st.serialize_field("verdict", &self.verdict())?;
        st.serialize_field("span", &self.span)?;
        st.serialize_field("message", &self.message)?;
        st.end()
    }
}

/// A program that would run, as the analyzer resolved it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invocation {
    /// The program after quote removal and unwrapping (`"cu"rl` is `curl`,
    /// `/usr/bin/curl` is `curl`); `None` when the name is dynamic.
    pub program: Option<String>,
    /// The arguments as the program would see them; `None` where a word's
    /// value is only known at run time (a variable, a glob, a substitution).
    pub args: Vec<Option<String>>,
    /// Each argument's shape: its literal text with `*` for every part
    /// known only at run time (`"$HOME"/.ssh` is `*/.ssh`, `build/*` stays
    /// `build/*`), for policies that need to see what a dynamic argument
    /// can still be.
    #[serde(skip)]
    pub shapes: Vec<String>,
    /// The files it writes, as shapes, from the catalog's write model
    /// (`cp a b` writes `b`, `tee x y` both, `dd of=z` `z`, `sed -i` its
    /// files). Programs the catalog does not model write nothing here,
    /// which is not a proof that they write nothing.
    #[serde(skip)]
    pub writes: Vec<String>,
    /// The files it deletes or moves away, as shapes (`rm`'s operands,
    /// `mv`'s sources, the starting points of `find -delete`).
    #[serde(skip)]
    pub removes: Vec<String>,
    /// The text a here-document or here-string gives it on its standard
    /// input, when static (`python3 <<EOF ... EOF`: the program itself).
    #[serde(skip)]
    pub stdin: Option<String>,
    /// Where in the command the invocation is written.
    pub span: Span,
    /// Wrappers and embeddings it was found through, outermost first
    /// (`sudo`, `bash -c`, `find -exec`...).
    pub via: Vec<String>,
    /// Its own contribution to the verdict.
    pub verdict: Verdict,
}

/// A file redirect anywhere in the command (embedded scripts included), for
/// path policies and taint: `cat < .env`, `bash -c 'ls > out'`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RedirectUse {
    /// The operator as written: `>`, `>>`, `<`, `&>`, `>&`, `<>`...
    pub op: String,
    /// The file descriptor written before the operator, if any.
    pub fd: Option<String>,
    /// The target after quote removal; `None` when only known at run time.
    pub target: Option<String>,
    /// The target is a process substitution (`> >(tee log)`): a pipe to a
    /// command the invocations already list, not a file.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub to_process: bool,
    pub span: Span,
    pub via: Vec<String>,
}

impl RedirectUse {
    /// `>&2`, `2>&1`, `<&0`, `>&-`: a descriptor copied or closed, no file.
    pub fn duplicates_fd(&self) -> bool {
        (self.op.ends_with('&') || self.op == ">&" || self.op == "<&")
            && self.target.as_deref().is_some_and(|t| {
                t == "-" || (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            })
    }

    /// Whether it names a file (not a copied descriptor or a process).
    pub fn is_file(&self) -> bool {
        !self.to_process && !self.duplicates_fd()
    }

    /// Whether the file is opened for reading (`<`, `<>`).
    pub fn reads(&self) -> bool {
        self.is_file() && self.op.starts_with('<') && !self.op.starts_with("<<")
    }

    /// Whether the file is opened for writing (`>`, `>>`, `&>`, `>|`, `<>`).
    pub fn writes(&self) -> bool {
        self.is_file() && self.op.contains('>')
    }
}

/// The result of analyzing one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Analysis {
    pub verdict: Verdict,
    pub invocations: Vec<Invocation>,
    pub findings: Vec<Finding>,
    /// Every file redirect, in the order met.
    pub redirects: Vec<RedirectUse>,
    /// Where the command may move its working directory: each directory a
    /// `cd`, `pushd` or `env -C` names, as written (`~` for `cd` alone),
    /// in any order (a branch may skip one, a loop repeat it).
    #[serde(skip)]
    pub working_dirs: Vec<String>,
    /// Whether it may also move somewhere no argument shows (`cd "$d"`,
    /// `cd -`, `popd`, `find -execdir`).
    #[serde(skip)]
    pub working_dir_unknown: bool,
}

impl Analysis {
    /// Builds an analysis whose verdict is the worst of its findings:
    /// one place decides, so a verdict can never disagree with its reasons.
    pub fn new(
        invocations: Vec<Invocation>,
        mut findings: Vec<Finding>,
        redirects: Vec<RedirectUse>,
    ) -> Analysis {
        findings.sort_by(|a, b| {
            (a.span.start, a.rule, a.span.end).cmp(&(b.span.start, b.rule, b.span.end))
        });
        findings.dedup();
        let verdict = findings
            .iter()
            .map(Finding::verdict)
            .max()
            .unwrap_or(Verdict::Safe);
        Analysis {
            verdict,
            invocations,
            findings,
            redirects,
            working_dirs: Vec::new(),
            working_dir_unknown: false,
        }
    }

    /// Findings that push the verdict above `safe`.
    pub fn reasons(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.verdict() > Verdict::Safe)
    }

    pub fn has_rule(&self, rule: Rule) -> bool {
        self.findings.iter().any(|f| f.rule == rule)
    }
}
