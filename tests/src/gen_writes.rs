//! Commands that write files, for the oracle's write check (issue 14,
//! class 5): a `safe` command must not write a place that decides what
//! later commands run.
//!
//! Each writer puts a file at a target: a protected place (`.bashrc`,
//! `.git/hooks/pre-commit`, `.local/bin/ls`...) or a harmless name, reached
//! every way the programs offer: the target as an operand or an option's
//! argument in each spelling (`-o F`, `-oF`, `--output=F`, `--out F`,
//! `--o=F`), a directory to copy into (`-t DIR`, `--targ=DIR`, `cp
//! dotfiles/.bashrc ~`), a prefix and a suffix that complete the name
//! (`split ... .bashr`, `cp -S rc a.txt .bash`, `sed -irc`), a name
//! computed at run time (`"$(echo .bash)rc"`, `out/$n` with `n=../.bashrc`,
//! a name read from a file or stored in an archive), a `cd` into the
//! directory first, a symbolic link on the way. The scratch directory's
//! fixtures (`tests/src/oracle.rs`) give the sources these commands read.
//! Nothing here runs a program that is not provably local.

use super::{Choices, Gen};

/// Places outside the project's ordinary files: control places inside it
/// (git's files, a nested repository's, agent clients' files, hidden
/// names) and, through `~/` and `..` spellings (`spell`), the home
/// directory that holds the project.
pub(super) const PROTECTED: &[&str] = &[
    ".bashrc",
    ".bash_aliases",
    ".profile",
    ".git/hooks/pre-commit",
    ".git/config",
    ".local/bin/ls",
    ".envrc",
    ".git/commondir",
    ".git/config.worktree",
    "src/.git/config",
    "sub/.git",
    "CLAUDE.md",
    ".mcp.json",
    "../notes.txt",
    "/etc/ssl/openssl.cnf",
    "/usr/lib/python3/dist-packages/x.pth",
];

/// Names nothing reads as code or configuration.
const HARMLESS: &[&str] = &["out.txt", "build/x", "w.txt", "build/y.txt"];

/// Existing files and directories a mode change can touch.
const EXISTING_PROTECTED: &[&str] = &[
    ".git/hooks/pre-commit.sample",
    ".git/config",
    ".git/hooks",
    ".git",
];
const EXISTING_HARMLESS: &[&str] = &["a.txt", "b.txt", "build", "lines.txt"];

/// A fixture with the same base name as a target, to copy into the
/// target's directory: (target, source).
const SOURCES: &[(&str, &str)] = &[
    (".bashrc", "dotfiles/.bashrc"),
    (".profile", "dotfiles/.profile"),
    (".bash_aliases", "dotfiles/.bash_aliases"),
    (".envrc", "src/.envrc"),
    (".git/hooks/pre-commit", "src/.git/hooks/pre-commit"),
    (".local/bin/ls", "tools/ls"),
    ("build/a.txt", "a.txt"),
    ("out/b.txt", "b.txt"),
    ("build/ls", "tools/ls"),
];

/// Where a path's parent is, and its last component.
fn split_path(path: &str) -> (&str, &str) {
    match path.rsplit_once('/') {
        Some((dir, base)) => (dir, base),
        None => (".", path),
    }
}

/// `../` enough times to leave `dir` (relative, no `..` in it).
fn back_out(dir: &str) -> String {
    if dir == "." {
        return String::new();
    }
    "../".repeat(dir.split('/').count())
}

impl<C: Choices> Gen<'_, C> {
    /// One command that writes a file; several words long, so it is a
    /// group or a subshell when it needs a set-up step.
    pub(super) fn writer(&mut self) -> String {
        let protected = self.below(5) < 3;
        let target = if protected {
            self.pick(PROTECTED)
        } else {
            self.pick(HARMLESS)
        };
        let (mut prelude, body) = match self.below(16) {
            0..=5 => {
                let (pre, body) = self.write_to(target);
                (pre, format!("{}{body}", self.write_wrapper()))
            }
            6 | 7 => self.complete_name(target),
            8 | 9 => self.copy_into(protected),
            10 => self.after_cd(target),
            11 => self.through_link(target),
            12 | 13 => (String::new(), self.named_at_run_time()),
            14 => self.change_mode(protected),
            _ => self.redirect_to(target),
        };
        if target.starts_with(".local/") && self.rare(2) {
            prelude.insert_str(0, "mkdir -p .local/bin; ");
        }
        // One command wherever it is put: in a pipeline, after `&&`.
        let several = [";", "&&", "|"].iter().any(|op| body.contains(op));
        if prelude.is_empty() && (!several || body.starts_with("( ")) {
            return body;
        }
        match self.below(3) {
            0 => format!("( {prelude}{body} )"),
            _ => format!("{{ {prelude}{body}; }}"),
        }
    }

    /// Now and then a wrapper the analyzer sees through.
    fn write_wrapper(&mut self) -> &'static str {
        if !self.rare(6) {
            return "";
        }
        self.pick(&[
            "env ",
            "timeout 5 ",
            "nice ",
            "command ",
            "nohup ",
            "stdbuf -o0 ",
        ])
    }

    /// A word that bash turns into `path`, and the assignments it needs
    /// first (ending in `; `).
    fn spell(&mut self, path: &str) -> (String, String) {
        let n = self.fresh();
        let var = format!("_w{n}");
        let (dir, base) = split_path(path);
        // Where the name can be cut in two, both halves non-empty.
        let cut = 1 + self.below(path.len().max(2) - 1);
        let (stem, tail) = path.split_at(cut.min(path.len()));
        match self.below(16) {
            0..=4 => (String::new(), self.quote(path)),
            5 => (
                String::new(),
                format!("\"$(echo {})\"{}", self.quote(stem), self.quote(tail)),
            ),
            6 => (
                String::new(),
                format!("$(printf %s%s {} {})", self.quote(stem), self.quote(tail)),
            ),
            7 => {
                let word = self.pick(&["\"$V\"", "$V", "\"${V}\""]).replace('V', &var);
                (format!("{var}={}; ", self.quote(path)), word)
            }
            8 => {
                // `out/../.bashrc`, the `..` coming from a variable.
                let word = self.pick(&["out/$V", "\"out/$V\"", "out/\"$V\""]);
                (
                    format!("{var}={}; ", self.quote(&format!("../{path}"))),
                    word.replace('V', &var),
                )
            }
            9 => (
                format!("{var}={}; ", self.quote(dir)),
                format!("\"${var}\"/{}", self.quote(base)),
            ),
            10 => {
                let home =
                    self.pick(&["~/", "\"$HOME\"/", "${HOME}/", "\"$PWD\"/", "./", "sub/../"]);
                (String::new(), format!("{home}{}", self.quote(path)))
            }
            11 => (
                format!("{var}={}; ", self.quote(stem)),
                format!("\"${{{var}}}\"{}", self.quote(tail)),
            ),
            12 => (String::new(), format!("\"${{_u{n}:-{path}}}\"")),
            13 if path == ".bashrc" => (
                String::new(),
                self.pick(&["\"$(<name.txt)\"", "$(<name.txt)", "`<name.txt`"])
                    .to_string(),
            ),
            13 if path.starts_with('.') => (
                String::new(),
                format!("\"$(printf '\\x2e%s' {})\"", self.quote(&path[1..])),
            ),
            14 if dir != "." => (
                String::new(),
                format!("\"$(cd {} && pwd)\"/{}", self.quote(dir), self.quote(base)),
            ),
            _ => {
                let word = format!("{var}[1]");
                (
                    format!("{var}=(x {}); ", self.quote(path)),
                    format!("\"${{{word}}}\""),
                )
            }
        }
    }

    /// A program given the target as an operand or an option's argument.
    fn write_to(&mut self, target: &str) -> (String, String) {
        let (prelude, w) = self.spell(target);
        let body = match self.below(22) {
            0 => format!(
                "cp {}a.txt {w}",
                self.pick(&["", "-f ", "-T ", "--no-target-directory ", "-- "])
            ),
            1 => format!("mv {}b.txt {w}", self.pick(&["", "-f ", "-T ", "-- "])),
            2 => format!(
                "ln {}a.txt {w}",
                self.pick(&["-s ", "-sf ", "", "-f ", "-sT ", "--symbolic "])
            ),
            3 => format!(
                "install {}a.txt {w}",
                self.pick(&["", "-m 755 ", "-D ", "-Dm755 ", "--mode=755 "])
            ),
            4 => {
                let opt = self.pick(&["", "-a ", "--append ", "-p ", "--app "]);
                match self.below(2) {
                    0 => format!("tee {opt}{w} <a.txt"),
                    _ => format!("echo x | tee {opt}{w}"),
                }
            }
            5 => format!(
                "touch {}{w}",
                self.pick(&["", "-- ", "-r a.txt ", "-d @0 ", "-m ", "--date=@1 "])
            ),
            6 => format!(
                "mkdir {}{w}",
                self.pick(&["-p ", "", "--parents ", "-m 700 "])
            ),
            7 => format!(
                "truncate {}{w}",
                self.pick(&[
                    "-s 0 ",
                    "-s0 ",
                    "--size=0 ",
                    "--size 0 ",
                    "--si=0 ",
                    "-r a.txt "
                ])
            ),
            8 => {
                let (opt, glued) = self.output_option(&["-u", "-n", "-r"]);
                let out = if glued {
                    format!("{opt}{w}")
                } else {
                    format!("{opt} {w}")
                };
                match self.below(5) {
                    0 => format!("sort a.txt {out}"),
                    // Enough lines for a 1 KiB buffer to spill to
                    // temporary files, which the program compresses.
                    1 => format!(
                        "printf '%s\\n' {{1..400}} | sort -S 1 {} {out}",
                        self.pick(&["--compress=gzip", "--compress-program=gzip", "--comp gzip"])
                    ),
                    _ => format!("sort {out} a.txt"),
                }
            }
            9 => {
                let (opt, glued) = self.output_option(&["-z"]);
                let out = if glued {
                    format!("{opt}{w}")
                } else {
                    format!("{opt} {w}")
                };
                match self.below(3) {
                    0 => format!("shuf -e x {out}"),
                    _ => format!("shuf {out} a.txt"),
                }
            }
            10 => {
                let (opt, glued) = self.output_option(&["-c"]);
                let out = if glued {
                    format!("{opt}{w}")
                } else {
                    format!("{opt} {w}")
                };
                format!("iconv -f utf-8 -t ascii {out} a.txt")
            }
            11 => format!("uniq {}a.txt {w}", self.pick(&["", "-c ", "-- ", "-u "])),
            12 => {
                let sed = self.pick(&["sed", "sed -n"]);
                match self.below(5) {
                    0 => format!("{sed} 'w '{w} a.txt"),
                    1 => format!("{sed} 's/a/b/w '{w} a.txt"),
                    2 => format!("{sed} -e '1W '{w} a.txt"),
                    3 => format!("sed -i s/a/b/ {w}"),
                    _ => format!("sed --in-place -e 1d {w}"),
                }
            }
            13 => {
                let awk = self.pick(&["awk", "gawk", "mawk"]);
                match self.below(5) {
                    0 => format!("{awk} -v f={w} '{{print > f}}' a.txt"),
                    1 => format!("{awk} '{{print >> f}}' f={w} a.txt"),
                    2 => format!("{awk} 'BEGIN {{ print 1 > ARGV[1] }}' {w}"),
                    3 => format!("{awk} -v f={w} 'BEGIN {{ printf \"x\" > f }}'"),
                    _ => {
                        let opt =
                            self.pick(&["-o", "--pretty-print=", "--pre=", "-p", "--profile="]);
                        format!("gawk {opt}{w} 'BEGIN {{ x = 1 }}'")
                    }
                }
            }
            14 => {
                let rest = self.pick(&[
                    "if=a.txt of=W",
                    "of=W <a.txt",
                    "if=a.txt of=W status=none",
                    "if=a.txt of=W conv=notrunc oflag=append",
                    "if=a.txt bs=1 of=W",
                ]);
                format!("dd {}", rest.replace('W', &w))
            }
            15 => format!(
                "xxd {}",
                self.pick(&[
                    "a.txt W",
                    "-r -p hex.txt W",
                    "-p a.txt W",
                    "-i a.txt W",
                    "-r -p - W <hex.txt"
                ])
                .replace('W', &w)
            ),
            16 => format!(
                "{} {w}",
                self.pick(&["gzip -c a.txt >", "gunzip -c n.gz >", "gzip -dc n.gz >"])
            ),
            17 => format!(
                "tar {}",
                self.pick(&[
                    "-cf W a.txt",
                    "cf W a.txt",
                    "-c -f W a.txt",
                    "--file=W -c a.txt",
                    "-cfW a.txt",
                    "--create --file W a.txt",
                    "-I gzip -cf W a.txt",
                    "--use=gzip -cf W a.txt",
                    "-cf W --use-compress-program gzip a.txt",
                ])
                .replace('W', &w)
            ),
            18 => format!(
                "find . -maxdepth 0 {}",
                self.pick(&[
                    "-fprint W",
                    "-fprintf W '%p\\n'",
                    "-fls W",
                    "-fprint0 W",
                    // The primary known only at run time (F38).
                    "\"$(echo -fprint)\" W",
                    "-name \"$(echo x)\" -o \"$(echo -fprint)\" W",
                ])
                .replace('W', &w)
            ),
            19 => format!(
                "strace {}true",
                self.pick(&["-o W ", "-oW ", "--output=W ", "-qq -o W "])
                    .replace('W', &w)
            ),
            20 => self
                .pick(&[
                    "script -qc true W",
                    "script -q -c true W",
                    "flock W true",
                    "flock -n W true",
                ])
                .replace('W', &w),
            _ => format!(
                "{} a.txt {w}",
                self.pick(&["cp --backup=numbered", "cp -b", "install -b", "ln -sb"])
            ),
        };
        (prelude, body)
    }

    /// An output option of sort, shuf or iconv in one of its spellings,
    /// and whether the file name is glued to it. `flags` are short options
    /// that can go before `-o` in one word.
    fn output_option(&mut self, flags: &[&str]) -> (String, bool) {
        match self.below(9) {
            0 => ("-o".into(), false),
            1 => ("-o".into(), true),
            // The option known only at run time (F39).
            7 => ("\"$(echo -o)\"".into(), false),
            8 => ("\"$(echo -o)\"".into(), true),
            2 => {
                let f = self.pick(flags);
                (format!("{f}o"), false)
            }
            3 => ("--output=".into(), true),
            4 => ("--out".into(), false),
            5 => ("--o=".into(), true),
            _ => ("--output".into(), false),
        }
    }

    /// A program that makes the target's name from a prefix and a suffix
    /// it is given apart: split's and csplit's generated suffixes, backup
    /// suffixes (`cp -S`, `sed -i`), gzip's `-S`.
    fn complete_name(&mut self, target: &str) -> (String, String) {
        let cut = 1 + self.below(target.len().max(2) - 1);
        let (stem, tail) = target.split_at(cut.min(target.len()));
        let (pre, stem_w) = self.spell(stem);
        let tail_q = self.quote(tail);
        let body = match self.below(7) {
            0 => {
                // split -a1 names its pieces STEM + a..e (lines.txt has 5
                // lines), then the additional suffix.
                let Some(i) = target.rfind(|c: char| ('a'..='e').contains(&c)) else {
                    return self.write_to(target);
                };
                let (stem, rest) = target.split_at(i);
                let add = &rest[1..];
                let len = self.pick(&["-a1", "-a 1", "--suffix-length=1", "--suf=1"]);
                let lines = self.pick(&["-l1", "-l 1", "--lines=1", "-n l/5"]);
                let add = if add.is_empty() {
                    String::new()
                } else {
                    let opt = self.pick(&["--additional-suffix=", "--additional-suffix ", "--ad="]);
                    format!("{opt}{} ", self.quote(add))
                };
                let (p, stem) = self.spell(if stem.is_empty() { "./" } else { stem });
                return (p, format!("split {len} {lines} {add}lines.txt {stem}"));
            }
            1 => {
                let prefix = self.pick(&["-f ", "-f", "--prefix=", "--prefix "]);
                let suffix = self.pick(&["-b ", "--suffix-format=", "--suf="]);
                format!(
                    "csplit -s {prefix}{stem_w} {suffix}{} a.txt 2",
                    self.quote(&format!("{tail}%.0d"))
                )
            }
            2 => {
                let prog = self.pick(&["cp", "mv", "ln -f", "install"]);
                let opt = self.pick(&[
                    "-S ",
                    "-S",
                    "--suffix=",
                    "--suffix ",
                    "--suf=",
                    "-b --suffix=",
                ]);
                let src = if prog == "mv" { "b.txt" } else { "a.txt" };
                format!(": >{stem_w}; {prog} {opt}{tail_q} {src} {stem_w}")
            }
            3 => {
                let opt = self.pick(&["-S ", "--suffix=", "--suffix ", "--suf=", "-kS "]);
                format!("cp a.txt {stem_w} && gzip {opt}{tail_q} {stem_w}")
            }
            4 => {
                // sed's backup suffix: glued to -i, or `*` standing for the
                // file's name.
                let i = match self.below(4) {
                    0 => format!("-i{tail_q}"),
                    1 => format!("--in-place={tail_q}"),
                    2 => format!("-i'*'{tail_q}"),
                    _ => format!("-s -i{tail_q}"),
                };
                format!("cp a.txt {stem_w}; sed {i} s/a/b/ {stem_w}")
            }
            5 => {
                // `-i'DIR/*'`: the backup goes to DIR under the file's name.
                let (dir, base) = split_path(target);
                let base_q = self.quote(base);
                let dir_q = self.quote(&format!("{dir}/*"));
                format!("cp a.txt {base_q}; sed -i{dir_q} s/a/b/ {base_q}")
            }
            _ => format!("touch {stem_w}{{{tail_q},}} 2>/dev/null"),
        };
        (pre, body)
    }

    /// Copies a fixture into the target's directory, which is the
    /// argument: as an operand, or the target-directory option.
    fn copy_into(&mut self, protected: bool) -> (String, String) {
        let choices: Vec<(&str, &str)> = SOURCES
            .iter()
            .copied()
            .filter(|(t, _)| PROTECTED.contains(t) == protected)
            .collect();
        let (target, source) = self.pick(&choices);
        let (dir, _) = split_path(target);
        if self.rare(4) {
            // Whole trees.
            let body = if protected {
                self.pick(&[
                    "cp -r src/. .",
                    "cp -a dotfiles/. ~",
                    "cp -rT src .",
                    "cp -R dotfiles/. \"$HOME\"",
                    "shopt -s dotglob; cp -r dotfiles/* .",
                    "cp dotfiles/.[!.]* ~",
                    "tar -cf - -C src . | tar -xf -",
                    "cp -r src/. ./",
                    "cp -r dotfiles/. ..",
                    "cp -a tools ~/",
                    "mv out ~/moved",
                ])
            } else {
                // `src` holds `.git/hooks/pre-commit` and `.envrc`: copied
                // under build/, they are protected places all the same
                // (fuzz/INBOX.md, F33).
                self.pick(&[
                    "cp -r src/ build",
                    "cp -r tools/. build",
                    "cp -r build/. out",
                ])
            };
            return (String::new(), body.to_string());
        }
        let (pre, d) = if dir == "." {
            let home = self.pick(&[".", "~", "\"$HOME\"", "./", "\"$PWD\"", "sub/..", "~/"]);
            (String::new(), home.to_string())
        } else {
            self.spell(dir)
        };
        let mkdir = if dir.starts_with(".local") {
            "mkdir -p .local/bin && "
        } else {
            ""
        };
        let prog = self.pick(&["cp", "cp", "mv", "ln", "ln -s", "install"]);
        // A symbolic link's target is read from the link's directory.
        let source = if prog == "ln -s" {
            format!("\"$PWD\"/{source}")
        } else {
            source.to_string()
        };
        let body = match self.below(9) {
            0 | 1 => format!("{prog} {source} {d}"),
            2 => format!("{prog} -t {d} {source}"),
            3 => format!("{prog} -t{d} {source}"),
            4 => format!("{prog} -vt {d} {source}"),
            5 => format!("{prog} --target-directory={d} {source}"),
            6 => format!("{prog} --target {d} {source}"),
            7 => format!("{prog} --targ={d} {source}"),
            _ => format!("{prog} {source} --t={d}"),
        };
        (pre, format!("{mkdir}{body}"))
    }

    /// `cd` into the target's directory first, then write its base name.
    fn after_cd(&mut self, target: &str) -> (String, String) {
        let (dir, base) = split_path(target);
        let (pre, d) = if dir == "." {
            (
                String::new(),
                self.pick(&["~", "\"$HOME\"", "."]).to_string(),
            )
        } else {
            self.spell(dir)
        };
        let b = self.quote(base);
        let back = back_out(dir);
        let mkdir = if dir.starts_with(".local") {
            "mkdir -p .local/bin && "
        } else {
            ""
        };
        let write = match self.below(4) {
            0 => format!("cp {back}a.txt {b}"),
            1 => format!("cp ~/a.txt {b}"),
            2 => format!("touch {b}"),
            _ => format!("echo x > {b}"),
        };
        let body = match self.below(5) {
            0 if dir == ".git/hooks" => format!("CDPATH=.git cd hooks >/dev/null && {write}"),
            1 => format!("pushd {d} >/dev/null && {write}"),
            2 => format!("env -C {d} cp {back}a.txt {b}"),
            _ => format!("cd {d} && {write}"),
        };
        // In a subshell: the rest of the command keeps its directory.
        (String::new(), format!("( {pre}{mkdir}{body} )"))
    }

    /// A symbolic link to the target or its directory, written through.
    fn through_link(&mut self, target: &str) -> (String, String) {
        let link = format!("lnk{}", self.fresh());
        let (dir, base) = split_path(target);
        if dir != "." && self.rare(2) {
            let (pre, d) = self.spell(dir);
            let b = self.quote(base);
            let write = self.pick(&["cp a.txt L/B", "touch L/B", "echo x >L/B", "tee L/B <a.txt"]);
            let mkdir = if dir.starts_with(".local") {
                "mkdir -p .local/bin; "
            } else {
                ""
            };
            return (
                pre,
                format!(
                    "{mkdir}ln -s {d} {link}; {}",
                    write.replace('L', &link).replace('B', &b)
                ),
            );
        }
        let (pre, t) = self.spell(target);
        let write = self.pick(&[
            "cp a.txt L",
            "echo x >L",
            "echo x >>L",
            "sort -o L a.txt",
            "dd if=a.txt of=L",
            "tee L <a.txt",
            "cat a.txt >|L",
        ]);
        (
            pre,
            format!("ln -s {t} {link}; {}", write.replace('L', &link)),
        )
    }

    /// A name the command never shows: read from a file, stored in an
    /// archive or a gzip header, or copied with its directory.
    fn named_at_run_time(&mut self) -> String {
        self.pick(&[
            "xargs touch <name.txt",
            "xargs cp a.txt <name.txt",
            "xargs -a name.txt touch",
            "xargs -I{} cp a.txt {} <name.txt",
            "read -r _n <name.txt; touch \"$_n\"",
            "_n=$(<name.txt); cp a.txt \"$_n\"",
            "mapfile -t _m <name.txt; cp a.txt \"${_m[0]}\"",
            "while read -r _n; do echo x >\"$_n\"; done <name.txt",
            "tar -xf pack.tar",
            "tar xf pack.tar",
            "tar -x -f pack.tar -C ~",
            "tar --extract --file=pack.tar",
            "tar -xf pack.tar --wildcards '*rc'",
            "tar -cf t.tar a.txt && tar -xf t.tar --transform='s,a.txt,.envrc,'",
            "gunzip -N n.gz",
            "gzip -dN n.gz",
            "gunzip --name n.gz",
            "gzip -d --na n.gz",
            "gunzip n.gz",
            "awk '{print > $0}' name.txt",
            "awk 'NR == 1 { print \"x\" > $1 }' name.txt",
            "awk 'BEGIN { f = \".bash\" \"rc\"; print 1 > f }'",
            "sed -n 's/^/w /p' name.txt | sed -f - a.txt",
            // The program runs in each found file's directory.
            "find . -maxdepth 2 -name hooks -execdir touch hooks/post-merge ';'",
            "find . -maxdepth 2 -name config -execdir cp ../a.txt config.worktree ';'",
            "find . -maxdepth 1 -name .git -execdir sh -c 'echo x > .git/commondir' ';'",
        ])
        .to_string()
    }

    /// A mode change: an executable hook, a readable config.
    fn change_mode(&mut self, protected: bool) -> (String, String) {
        let path = if protected {
            self.pick(EXISTING_PROTECTED)
        } else {
            self.pick(EXISTING_HARMLESS)
        };
        let (pre, w) = self.spell(path);
        let mode = self.pick(&[
            "+x",
            "755",
            "u+x",
            "-R u+w",
            "--reference=a.txt",
            "a+rwx",
            "-v 700",
        ]);
        (pre, format!("chmod {mode} {w}"))
    }

    /// bash itself writing the target: a redirect.
    fn redirect_to(&mut self, target: &str) -> (String, String) {
        let (pre, w) = self.spell(target);
        let body = self
            .pick(&[
                "echo x >W",
                ": >>W",
                "printf %s x >|W",
                "true &>W",
                "echo x 2>W",
                "exec 3>W",
                "cat a.txt 1<>W",
                "{ echo x; } >W",
            ])
            .replace('W', &w);
        (pre, body)
    }
}
