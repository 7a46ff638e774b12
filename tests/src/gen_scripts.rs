//! Generated sed scripts and awk programs, for the script oracle: each is
//! put in a command line (`sed -n -e SCRIPT a.txt`, `gawk PROG a.txt`...)
//! that the oracle runs in real sed and awk implementations. Scripts are
//! built from pieces where the readers have been wrong before, or where
//! implementations differ: labels followed by more text, `a`/`i`/`c` text
//! with backslashes at line ends, `e` and `s///e`, `w`/`W` and `s///w`
//! targets inside and outside the work, `r`/`R`, several `-e` scripts that
//! GNU sed joins; awk's `/` after operands (division or regex), strings
//! holding slashes, line continuations, `system`, pipes, `getline`, and
//! `print >` to files. Programs that run something run `touch`, whose
//! shim logs it; writes are seen by the harness. Most combinations are
//! not valid scripts: the implementations reject those and nothing runs,
//! which is a fine outcome too.

use crate::choices::Choices;

fn pick<'a>(c: &mut impl Choices, from: &[&'a str]) -> &'a str {
    from[c.below(from.len())]
}

/// Quotes `s` for bash as one word.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

const SED_ADDRESSES: &[&str] = &[
    "", "", "", "1", "$", "/a/", "\\,b,", "1,2", "2~1", "0,/b/", "/a/I", "$!", "1!", "/a/,+1",
];

const SED_COMMANDS: &[&str] = &[
    "p",
    "d",
    "=",
    "s/a/X/",
    "s/a/X/g",
    "s/a/touch s1/e",
    "s/.*/touch s2/e",
    "s,a,b,w out.txt",
    "s/a/b/w ../s3.txt",
    "s/a/b/w .git/s4",
    "w out.txt",
    "w sub/w.txt",
    "w ../w1.txt",
    "w .hidden",
    "W /tmp/w2.txt",
    "y/ab/ba/",
    "a text",
    "a\\\ntext",
    "a foo\\\\",
    "a foo\\",
    "a\\",
    "i\\\\",
    "i\\",
    "c\\",
    "c bar\\\\\\\\",
    ":l",
    ":l ",
    ": l",
    "b l",
    "bl",
    "t l",
    "T l",
    "b",
    "b end",
    ":end",
    "e touch e1",
    "e",
    "v",
    "v 4.2",
    "r b.txt",
    "R b.txt",
    "q",
    "Q",
    "l",
    "l 5",
    "n",
    "N",
    "{",
    "}",
    "#c",
    "#e touch e2",
    "F",
    "z",
    "x",
    "h",
    "G",
    "s/a\\/b/c/",
    "s/[/]/x/",
    "s/x/\\\n/",
];

const SED_SEPARATORS: &[&str] = &[";", "\n", " ", "\t", ";\n", "", "}", "\\\n", " ; "];

const SED_PROGRAMS: &[&str] = &["sed", "sed", "sed", "busybox sed"];

const SED_OPTIONS: &[&str] = &["-n", "-n", "", "-E", "-s", "--posix", "-z", "-n --debug"];

fn sed_script(c: &mut impl Choices) -> String {
    let mut s = String::new();
    for i in 0..1 + c.below(5) {
        if i > 0 {
            s.push_str(pick(c, SED_SEPARATORS));
        }
        s.push_str(pick(c, SED_ADDRESSES));
        s.push_str(pick(c, SED_COMMANDS));
    }
    s
}

/// A sed command line: one script, or several `-e` scripts.
pub fn sed_command(c: &mut impl Choices) -> String {
    let program = pick(c, SED_PROGRAMS);
    let options = pick(c, SED_OPTIONS);
    let mut cmd = format!("{program} {options}");
    if c.below(3) == 0 {
        for _ in 0..2 + c.below(2) {
            cmd.push_str(" -e ");
            cmd.push_str(&quote(&sed_script(c)));
        }
    } else {
        cmd.push(' ');
        cmd.push_str(&quote(&sed_script(c)));
    }
    cmd.push_str(" a.txt");
    cmd
}

const AWK_PATTERNS: &[&str] = &[
    "",
    "",
    "",
    "/a/ ",
    "NR==1 ",
    "$1 ~ /a|b/ ",
    "BEGIN ",
    "END ",
    "n++ / 2 ",
    "x = 1 / 2 / ",
    "$0 / 1 ",
    "!/b/ ",
    "/[/]/ ",
    "/[]/]/ ",
    "/[[:alpha:]/]/ ",
    "/a[/]b/ ",
];

const AWK_STATEMENTS: &[&str] = &[
    "print",
    "print $1",
    "n++",
    "n--",
    "x = n++ / 2",
    "x = n-- /2",
    "x = (n) / 2",
    "x = a[1] / 2",
    "x = 4 / 2",
    "x = \"/\"",
    "x = \"\\\"/\"",
    "x = y \\\n / 2",
    "system(\"touch a1\")",
    "print | \"touch a2\"",
    "\"touch a3\" | getline d",
    "print |& \"touch a4\"",
    "print > \"out.txt\"",
    "print > \"../a5.txt\"",
    "print > \".git/a6\"",
    "print >> \"sub/a7.txt\"",
    "printf \"%s\\n\", $0 > \"o.txt\"",
    "getline line < \"b.txt\"",
    "close(\"x\")",
    "print (1 > 2)",
    "if (n > 1) print",
    "x = /a/",
    "x = $1 ~ /b/",
    "x = /[/]/",
    "x = \"[/]\" /",
];

const AWK_JOINERS: &[&str] = &["; ", "\n", " ", "", "/", "} {", "# / \n"];

const AWK_PROGRAMS: &[&str] = &["gawk", "mawk", "awk", "nawk", "busybox awk"];

fn awk_program(c: &mut impl Choices) -> String {
    let mut s = String::new();
    for i in 0..1 + c.below(3) {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(pick(c, AWK_PATTERNS));
        s.push_str("{ ");
        for j in 0..1 + c.below(4) {
            if j > 0 {
                s.push_str(pick(c, AWK_JOINERS));
            }
            s.push_str(pick(c, AWK_STATEMENTS));
        }
        s.push_str(" }");
    }
    s
}

/// An awk command line.
pub fn awk_command(c: &mut impl Choices) -> String {
    let program = pick(c, AWK_PROGRAMS);
    format!("{program} {} a.txt", quote(&awk_program(c)))
}

/// One generated command: sed or awk, about half each.
pub fn script_command(c: &mut impl Choices) -> String {
    if c.below(2) == 0 {
        sed_command(c)
    } else {
        awk_command(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choices::Rng;
    use bashgate_analyzer::{analyze, Verdict};

    /// The generator makes commands the analyzer proves and commands it
    /// refuses; an oracle run with only one kind would check nothing.
    #[test]
    fn generated_scripts_are_both_safe_and_not() {
        let mut rng = Rng::new(1);
        let verdicts: Vec<Verdict> = (0..400)
            .map(|_| analyze(&script_command(&mut rng)).verdict)
            .collect();
        let safe = verdicts.iter().filter(|v| **v == Verdict::Safe).count();
        assert!(safe > 40 && safe < 360, "{safe} of 400 safe");
    }

    #[test]
    fn quoting_keeps_the_script_one_word() {
        let a = bashgate_analyzer::analyze(&format!("sed {} a.txt", quote("s/'/x/")));
        assert_eq!(a.invocations[0].args.len(), 2);
    }
}
