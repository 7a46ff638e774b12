//! Reproducers found by the fuzz targets, the properties and the
//! differential oracle (see `fuzz/INBOX.md`, one test per entry, same name).
//! Each asserts the sound answer, so it fails until the bug is fixed.

use bashgate_analyzer::{analyze, Rule, Verdict};

/// bash runs a program here, and it is not a provably local one.
fn assert_not_safe(command: &str) {
    let a = analyze(command);
    assert_ne!(
        a.verdict,
        Verdict::Safe,
        "`{command}` runs a program the analyzer does not see; analysis: {a:#?}"
    );
}

#[test]
fn arithmetic_evaluates_variable_subscript() {
    for cmd in [
        "x='a[$(curl)]'; echo $((x))",
        "x='a[$(curl)]'; [[ x -eq 0 ]]",
        "x='a[$(curl)]'; (( x ))",
        "x='a[$(curl)]'; echo ${!x}",
        "x='a[$(curl)]'; echo ${s:x}",
        "x='a[$(curl)]'; let y=x",
        "x='a[$(curl)]'; declare -i y=x",
    ] {
        assert_not_safe(cmd);
    }
}

#[test]
fn prompt_expansion_runs_substitution() {
    assert_not_safe("x='$(curl)'; echo \"${x@P}\"");
}

#[test]
fn unset_function_then_call() {
    assert_not_safe("curl() { :; }; unset -f curl; curl x");
    assert_not_safe("curl() { :; }; unset curl; curl x");
}

#[test]
fn function_defined_in_background() {
    assert_not_safe("curl() { :; } & curl x");
}

#[test]
fn conditional_function_definition() {
    assert_not_safe("false && curl() { :; }; curl x");
    assert_not_safe("true || curl() { :; }; curl x");
}

#[test]
fn line_continuation_splits_word() {
    assert_not_safe("sh -c 'ls; '\\\n'curl'");
    assert_not_safe("echo x >/de\\\nv/tcp/127.0.0.1/9");
    assert_eq!(
        analyze("ls a\\\nb").invocations[0].args,
        vec![Some("ab".to_string())]
    );
}

#[test]
fn tilde_expansion_is_not_static() {
    assert_not_safe("OLDPWD=--pre=curl; rg x ~-");
    assert_not_safe("read HOME <<<--pre=curl; rg x ~");
    // `~-`, `~+` and `~user` are run-time values; a plain `~` stays as
    // written so path policies can expand it, because giving HOME a value
    // in the command is itself a finding.
    let a = analyze("ls ~-/x ~/y");
    assert_eq!(a.invocations[0].args, vec![None, Some("~/y".to_string())]);
}

#[test]
fn login_or_interactive_shell_runs_startup_files() {
    for cmd in [
        "bash -l -c ls",
        "bash --login -c ls",
        "bash -lc ls",
        "sh -l -c ls",
        "bash -i -c ls",
    ] {
        assert_not_safe(cmd);
    }
}

#[test]
fn escape_after_quotes_splits_word() {
    assert_not_safe("sh -c 'ls; '\\c'url'");
    assert_not_safe("sh -c \"ls; \"\\c\"url\"");
    assert_not_safe("sh -c $'ls; '\\c\\u\\r\\l");
    assert_eq!(
        analyze("ls 'a'\\b").invocations[0].args,
        vec![Some("ab".to_string())]
    );
}

#[test]
fn sh_scripts_are_not_bash() {
    assert_not_safe("sh -c \"echo \\$'\\\\'; curl x #'\"");
    assert_not_safe("dash -c \"echo \\$'\\\\'; curl x #'\"");
}

#[test]
fn non_ascii_option_cluster_panics() {
    for cmd in [
        "sed -é x",
        "awk -é x",
        "sed -ñe p a",
        "find . -exec sed -ï p {} +",
    ] {
        let a = analyze(cmd);
        assert!(a.findings.iter().all(|f| f.span.end <= cmd.len()), "{cmd}");
    }
    assert_not_safe("sed -ée 'e curl' a.txt");
}

#[test]
fn herestring_word_splits_at_escape() {
    assert_not_safe("bash -s <<<'ls; '\\c'url'");
    assert_not_safe("sh -s <<<\"ls; \"\\c\"url\"");
    assert!(analyze("cat <<<''\\f''").invocations[0].args.is_empty());
    assert_not_safe("bash -s <<<'ls; '\\\n'curl'");
    assert!(analyze("cp <<<o\\\nx").invocations[0].args.is_empty());
}

#[test]
fn escaped_space_after_quotes_splits_word() {
    assert_not_safe("sh -c 'ls;'\\ curl");
    assert_not_safe("sh -c 'ls'\\ '; curl x'");
    assert_not_safe("sh -c \"ls\"\\ \"; curl x\"");
    assert_eq!(
        analyze("ls 'a'\\ b").invocations[0].args,
        vec![Some("a b".to_string())]
    );
}

#[test]
fn quoted_test_v_subscript() {
    assert_not_safe("[ -v \"_a[\\$(s''cp)]\" ] |& _x+=`cp\ntr &>/dev/null` | ls; ls; ls");
    assert_not_safe("[ -v \"_a[\\$(scp)]\" ]");
}

#[test]
fn redirect_variable_drops_following_words() {
    assert_not_safe("find . {fd}>o -exec curl \\;");
    assert_not_safe("rg x {fd}>o --pre=curl");
    assert_not_safe("sort {fd}>o --compress-program=curl a");
    assert_eq!(
        analyze("ls {fd}>out.txt x").invocations[0].args,
        vec![Some("x".to_string())]
    );
}

#[test]
fn newline_then_escape_joins_commands() {
    assert_not_safe("ls a\n\\curl x");
    assert_not_safe("ls \n\\curl x");
    assert_not_safe("ls 'a'\n\\curl x");
    assert_not_safe("echo '' \n\\c\\u\\r\\l");
    assert_not_safe("echo >(test\n\\curl x)");
    let a = analyze("ls a\n\\cat b");
    let programs: Vec<_> = a.invocations.iter().map(|i| i.program.clone()).collect();
    assert_eq!(
        programs,
        vec![Some("ls".to_string()), Some("cat".to_string())]
    );
}

#[test]
fn arithmetic_reread_as_substitution() {
    assert_not_safe("echo $(( $(case a in a) echo curl;; esac) + 1 ))");
    assert_not_safe("case $(( $(case a in a) echo curl;; esac) )) in x) ;; esac");
}

#[test]
fn arithmetic_on_substitution_output() {
    assert_not_safe("echo $(( $(echo 'a[$(curl)]') ))");
    assert_not_safe("echo $(( $(cat a.txt) + 1 ))");
}

#[test]
fn pipeline_newline_read_as_blank() {
    assert_not_safe("ls | cat | head\nA=1 curl x 2>/dev/null");
    let a = analyze("ls | cat | head\nls -l 2>/dev/null");
    let programs: Vec<_> = a.invocations.iter().map(|i| i.program.clone()).collect();
    assert_eq!(
        programs,
        ["ls", "cat", "head", "ls"].map(|p| Some(p.to_string()))
    );
    assert_eq!(a.verdict, Verdict::Safe);
}

#[test]
fn partly_quoted_heredoc_delimiter() {
    assert_not_safe("split <<E'OF1' >|out.txt\nit's\nEOF1\nfor i in \"it's\"; do curl x; done");
    assert_not_safe("cat <<E\"O\"F\ntext\nEOF\ncurl x");
    // The body of a quoted delimiter is text, however it is quoted.
    assert_eq!(
        analyze("cat <<E'OF'\n$(curl x)\nEOF").verdict,
        Verdict::Safe
    );
    assert_not_safe("cat <<E$'OF'\ntext\nEOF\ncurl x");
}

#[test]
fn heredoc_delimiter_touching_operator() {
    assert_not_safe("false <<EOF1; cp x\nline $( mkdir ) end\nEOF1\n");
    assert_not_safe("cat <<EOF; curl x\ntext\nEOF");
    assert_not_safe("cat <<EOF|sh\ncurl x\nEOF");
}

#[test]
fn heredoc_in_substitution_drops_semicolon() {
    assert_not_safe("x=$( cat <<E\nE\necho a; echo b )");
    assert_not_safe("x=$( while true\ncat <<'E'\nE\ndo echo a; break; done )");
    assert_not_safe("x=$( cat <<E; echo a; echo b\nE\n)");
    // A here-document that ends the substitution reads the same everywhere.
    assert_eq!(
        analyze("x=\"$(cat <<'EOF'\nmsg\nEOF\n)\"; echo \"$x\"").verdict,
        Verdict::Safe
    );
}

#[test]
fn assignment_value_runs_into_command_name() {
    assert_not_safe("X=''\\l\\s curl x");
    assert_not_safe("X=\"a\"\\l\\s curl x");
    assert_not_safe("trap 'LC_ALL=$'\\''b'\\''\" mk\"\\d\\i\\r date' EXIT");
    // A plain assignment and a redirect that touches it are fine.
    assert_eq!(analyze("LC_ALL='a' ls").verdict, Verdict::Safe);
    assert_eq!(analyze("LC_ALL=1>o ls").verdict, Verdict::Safe);
}

#[test]
fn posix_shell_evals_what_bash_would_read_differently() {
    assert_not_safe("sh -c 'eval \\$\\'\\\\x63url\\'\\ x'");
    assert_not_safe("sh -s <<<\"trap \\\\\\$\\\\'\\\\\\\\x63url\\\\' 0\"");
    // The same under bash reads the same way everywhere.
    assert_eq!(
        analyze("bash -c \"eval \\$'\\\\x6cs'\"").verdict,
        Verdict::Safe
    );
}

#[test]
fn heredoc_in_process_substitution_drops_semicolon() {
    assert_not_safe("cat <( while true <<'E'\nE\ndo sort a; break; done )");
}

#[test]
fn backquotes_end_where_bash_ends_them() {
    // Bash ends backquotes at the first unescaped backquote, whatever
    // quotes or `$( )` lie between; the grammar sometimes reads on.
    assert_not_safe("echo `echo \"$( echo '\\`' )\"` `curl x`");
    assert_not_safe("test `date \"${HOME//a/$( uniq '\\`nc'\\\\\\` )}\"` `curl x`");
    // Escaped backquotes the grammar reads as bash does stay provable.
    assert_eq!(analyze("echo `echo \\`date\\``").verdict, Verdict::Safe);
}

#[test]
fn ansi_c_quotes_end_where_bash_ends_them() {
    // The oracle's command: the grammar's `$'...'` takes `\\''` as
    // its end, bash the first quote; bash ran uniq, basename and tee.
    assert_not_safe(
        r#"! [ -n "$( trap -- 'for ((_i = 0; _i < 1; _i++)); do A="-n" uniq '\''`seq'\'''\''`'\'' "<(s"$'\''oc\141t'\''\) || ls '\''$(sleep x)'\'' date &&
basename & wait; t'$'\x22"ee\040$\'\142as\x68\\x\0620-\\x63\'$\'\x20dir\'\042name\x22\040\x7c\x20pr\x69\x6e\164\146 -\x6c \\\044\\\x28\\\x72\\m\\ \\x\\'') $'\''\055\154'\''; do'\n\e EXIT )" ]"#,
    );
    assert_eq!(analyze("echo $'it\\'s'").verdict, Verdict::Safe);
}

#[test]
fn backslash_newline_inside_backquotes_joins_even_in_quotes() {
    // In backquotes bash joins `\⏎` before parsing, inside quotes too:
    // `-ex'\⏎'ec` is `-exec`.
    assert_not_safe("echo `find . -ex'\\\n'ec curl x \\\\;`");
    assert_not_safe("echo `id /dev/null -ex\\\\\ne\"\"c x; cu'\\\n'rl x`");
}

#[test]
fn redirects_after_a_negation_or_pipeline_belong_to_its_last_command() {
    // The grammar hangs `<<EOF` on `! cmd` or `a | cmd` as a whole; in
    // bash it is cmd's last stdin redirect, so the heredoc is the script.
    assert_not_safe("! bash -s <<<ls <<EOF\ncurl x\nEOF");
    assert_not_safe("true | bash -s <<<ls <<EOF\ncurl x\nEOF");
    assert_eq!(
        analyze("! bash -s <<<'curl x' <<EOF\nls\nEOF").verdict,
        Verdict::Safe
    );
    // The `{fd}` of a moved redirect still names a descriptor, not an
    // argument (the first fix listed `mkdir {fd}`; bash runs `mkdir`).
    let a = analyze("echo | mkdir >out.txt {fd}>out.txt");
    let mkdir = a
        .invocations
        .iter()
        .find(|i| i.program.as_deref() == Some("mkdir"));
    assert_eq!(mkdir.map(|i| i.args.len()), Some(0), "{:?}", a.invocations);
}

#[test]
fn brace_expansion_with_escaped_letters() {
    // The grammar splits `.env{\r\c,}` into two words; bash reads one word
    // and expands it (`.envrc .env`), so the line is not understood.
    assert_not_safe("touch .env{\\r\\c,}");
    assert_not_safe("touch \".bas\"{\\h\\r\\c,}");
    assert_not_safe("find . -maxdepth 0 {\\-\\e\\x\\e\\c,} curl x \\;");
    assert_eq!(analyze("echo a{b,c}d").verdict, Verdict::Safe);
    assert_eq!(analyze("echo x>y").verdict, Verdict::Safe);
}

#[test]
fn env_chdir_moves_relative_writes() {
    assert_not_safe("env -C .git cp ../a.txt config");
    assert_not_safe("env --chdir=.git/hooks touch pre-commit");
    assert_not_safe(
        "( env -C $(printf %s%s .gi\\t'/h' 'ooks') cp ../../a.txt \"pre-c\"\\o\\m\\m\\i\\t )",
    );
    assert_eq!(analyze("env -C build touch out.txt").verdict, Verdict::Safe);
}

#[test]
fn mkdir_of_a_name_known_only_at_run_time() {
    assert_not_safe("mkdir --parents \"$(echo .loc)\"al/bin/ls");
    assert_not_safe("mkdir --parents \"${_u1:-.bash_aliases}\"");
    assert_not_safe("mkdir $(<name.txt)");
    assert_eq!(analyze("mkdir -p build/out").verdict, Verdict::Safe);
}

#[test]
fn tree_copied_into_a_subdirectory() {
    // By design (docs/analyzer.md): a tree copied or extracted into a
    // directory other than the working one or home is proven to land
    // there, not to hold no protected names; into the working directory
    // or home, or under a protected name, it is not proven.
    assert_eq!(analyze("cp -r src/ build").verdict, Verdict::Safe);
    assert_not_safe("cp -r src/. .");
    assert_not_safe("cp -r /tmp/evil/.git .");
}

#[test]
fn attached_output_name_with_run_time_prefix() {
    assert_not_safe("( _w1=.git/hooks/pre-co; shuf -o\"${_w1}\"mmit a.txt )");
    assert_not_safe("shuf --output=\"$x\"x a.txt");
    assert_not_safe("iconv -o\"$x\"x a.txt");
}

#[test]
fn flock_creates_its_lock_file() {
    // The 50,000-command campaign (seed 5000): flock creates its lock
    // file when missing, an empty file where a hook or startup file goes.
    assert_not_safe("command flock .git/hooks/pre-commit true && split -l 1 a.txt");
    assert_not_safe("flock -n .git/hooks/pre-commit true");
    assert_not_safe("timeout 5 flock -n .bash_aliases true");
    assert_not_safe("flock \"$f\" true");
    assert_eq!(
        analyze("flock -w 5 /tmp/build.lock true").verdict,
        Verdict::Safe
    );
}

#[test]
fn line_continuation_inside_a_word() {
    // CI's oracle run (seed 0x62617368, command 9059): in a trap string,
    // `touch ou{t\⏎.txt,}`; bash removes `\⏎` before splitting words, so
    // this is one word, `ou{t.txt,}`, expanded to `out.txt ou`; the
    // grammar reads two.
    assert_not_safe("touch ou{t\\\n.txt,}");
    assert_not_safe("trap 'touch ou{t\\\n.txt,}' 0");
    assert_eq!(analyze("ls -la \\\n  src").verdict, Verdict::Safe);
}

#[test]
fn dynamic_word_turns_on_a_shell_option() {
    // Review (F37): `set "$1"` given `-k` is `set -k`, and
    // `LD_PRELOAD=./x.so` then goes into the environment of `ls`.
    assert_not_safe("set \"$1\"; ls LD_PRELOAD=./x.so");
    assert_not_safe("x=$(cat f); set -e$x; ls LD_PRELOAD=./x.so");
    assert_not_safe("read x; set $x; ls");
    assert_not_safe("set -* ; ls");
    assert_not_safe("shopt -o \"$1\" keyword; ls LD_PRELOAD=./x.so");
    assert_not_safe("shopt $x; ls");
    assert_not_safe("shopt \"$x\" \"$y\"; ls LD_PRELOAD=./x.so");
    assert_not_safe("shopt -s \"$y\"; ls");
    // Options end at `--` or the first operand; a query turns nothing on.
    assert_eq!(analyze("set -- \"$1\"; ls").verdict, Verdict::Safe);
    assert_eq!(analyze("set x \"$1\"; ls").verdict, Verdict::Safe);
    assert_eq!(analyze("set -euo pipefail; ls").verdict, Verdict::Safe);
    assert_eq!(analyze("shopt -o keyword").verdict, Verdict::Safe);
    assert_eq!(analyze("shopt extglob \"$x\"; ls").verdict, Verdict::Safe);
    // One quoted word can only be an option cluster: nullglob stays harmless.
    assert_eq!(analyze("shopt \"$g\" nullglob; ls").verdict, Verdict::Safe);
}

#[test]
fn find_primary_known_only_at_run_time() {
    // Review (F38): given `-fprint`, `find . "$x" .bashrc` writes .bashrc;
    // given `-delete`, `find "$d" -name x` deletes the working directory's
    // tree (a start point that begins with `-` starts the expression).
    assert_not_safe("find . \"$x\" .bashrc");
    assert_not_safe("find . \"$x\" .git/hooks/pre-commit");
    assert_not_safe("find . \"$x\" \"$y\"");
    // `-fprint` shifts which later word is a value: "$b" can be -fprint too.
    assert_not_safe("find \"$a\" -name \"$b\" .bashrc");
    let removes = |cmd: &str| -> Vec<String> {
        analyze(cmd)
            .invocations
            .iter()
            .flat_map(|inv| inv.removes.clone())
            .collect()
    };
    let r = removes("find \"$d\" -name x");
    assert!(r.iter().any(|p| p == "."), "{r:?}");
    assert!(!removes("find . -type f \"$action\"").is_empty());
    // Values of primaries, `./`-prefixed start points and -exec's words
    // are not primaries.
    assert!(removes("find . -name \"$x\" -print").is_empty());
    assert!(removes("find \"./$d\" -name x").is_empty());
    assert!(removes("find . -maxdepth \"$n\" -newermt \"$t\"").is_empty());
    assert_eq!(analyze("find . -name \"$x\" -print").verdict, Verdict::Safe);
    assert_eq!(analyze("find \"./$d\" -name x").verdict, Verdict::Safe);
}

#[test]
fn output_option_known_only_at_run_time() {
    // Review (F39): given `-o`, `iconv "$x" .bashrc` writes .bashrc.
    assert_not_safe("iconv \"$x\" .bashrc");
    assert_not_safe("shuf \"$x\" .bashrc");
    assert_not_safe("iconv -f utf8 -t ascii \"$f\"");
    assert_not_safe("iconv *");
    // A value that can split can hold more words: `1 --filter=sh`.
    assert_not_safe("split --lines $n big.txt");
    assert_not_safe("tar -tf $archive");
    // One word that is an option's value is data.
    assert_eq!(analyze("sort -S \"$n\" data.txt").verdict, Verdict::Safe);
    assert_eq!(analyze("sort -k \"$key\" data.txt").verdict, Verdict::Safe);
    // ... unless an escape looks for text anywhere in it (tar's `host:`).
    assert_not_safe("tar -tf \"$archive\"");
    assert_eq!(
        analyze("iconv -f utf8 -t ascii \"./$f\"").verdict,
        Verdict::Safe
    );
    assert_eq!(analyze("pstree -p $$").verdict, Verdict::Safe);
}

#[test]
fn unnamed_tokens_are_arguments() {
    // Review (F40): tree-sitter-bash leaves a bare `$` and the `==` and
    // `=~` of `[[ ]]` unnamed even where they are a command's arguments.
    // Lowering dropped them, so every later word moved one place:
    // `xargs -I == curl` took `curl` for the replace string and was safe,
    // where bash runs curl (real bash: `echo x | xargs -I == echo RAN ==`
    // prints `RAN x`).
    for c in [
        "xargs -I == curl x",
        "xargs -I =~ curl",
        "xargs -I $ curl",
        "echo x | xargs -E == curl",
    ] {
        assert_eq!(analyze(c).verdict, Verdict::Network, "{c}");
    }
    // The replace string inside a script makes the script dynamic.
    assert_not_safe("echo x | xargs -I $ sh -c 'curl $'");
    let a = analyze("printf %s == =~ $ a$");
    assert_eq!(a.verdict, Verdict::Safe);
    let args: Vec<&str> = a.invocations[0]
        .args
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    assert_eq!(args, ["%s", "==", "=~", "$", "a$"]);
}

#[test]
fn pattern_after_an_equals_argument() {
    // Oracle (F41): inside `"$(...)"` the grammar took everything after an
    // `=~` argument for a `[[ ]]` pattern, pipe and all, and lowering
    // dropped the pattern: `echo "$(xargs -I =~ bash -c x | mkdir)"` ran
    // bash and mkdir in real bash and was safe.
    for c in [
        "echo \"$(xargs -I =~ bash -c x | mkdir)\"",
        "echo \"$(xargs -I == curl x | wc)\"",
    ] {
        let a = analyze(c);
        assert_not_safe(c);
        assert!(a.findings.iter().any(|f| f.rule == Rule::ParseError), "{c}");
    }
    assert_eq!(analyze("[[ $x =~ ^a.*$ ]] && ls").verdict, Verdict::Safe);
}

#[test]
fn words_folded_into_a_commandless_redirect() {
    // Prop (F42): with no command word before the redirects, the grammar
    // folds a quoted program name and its arguments into a redirect as
    // extra destinations (`2>&1 >&2 'curl' x 2>&1`), and lowering gave
    // those words to the command only when there was a command node:
    // the line was safe and ran nothing, where bash runs curl (real bash:
    // `2>&1 >&2 'echo' RAN x 2>&1` prints `RAN x`).
    for c in [
        "2>&1 >&2 'curl' x 2>&1",
        "2>&1 2>&1 'curl' example.com 2>&1",
        ">/dev/null 2>&1 \"wget\" x 2>&1",
    ] {
        assert_eq!(analyze(c).verdict, Verdict::Network, "{c}");
    }
    let a = analyze("2>&1 >&2 'echo' RAN x 2>&1");
    assert_eq!(a.verdict, Verdict::Safe);
    assert_eq!(a.invocations.len(), 1);
    assert_eq!(a.invocations[0].program.as_deref(), Some("echo"));
}

#[test]
fn words_after_a_heredoc_delimiter_are_arguments() {
    // Oracle (F43, seed 0x2328): the grammar puts the words after a
    // heredoc's delimiter on its line inside the heredoc redirect, and
    // lowering kept them as opaque text: `time <<'EOF1' id` was safe and
    // listed only `time`, where bash runs id (real bash: `nice <<EOF echo
    // RAN` prints RAN). They are the command's arguments.
    for c in [
        "time <<'EOF1' curl x\nbody\nEOF1\n",
        "nice <<EOF curl example.com\nx\nEOF\n",
        "env <<\"E\" 'wget' x\nx\nE\n",
    ] {
        assert_eq!(analyze(c).verdict, Verdict::Network, "{c}");
    }
    let a = analyze("time <<'EOF1' id\n-n\nEOF1\n");
    let programs: Vec<_> = a
        .invocations
        .iter()
        .filter_map(|i| i.program.as_deref())
        .collect();
    assert!(programs.contains(&"id"), "{programs:?}");
    let a = analyze("cat <<EOF notes.txt\nx\nEOF\n");
    assert_eq!(a.verdict, Verdict::Safe);
    assert_eq!(a.invocations[0].args, [Some("notes.txt".to_string())]);
}

#[test]
fn words_after_closing_a_descriptor_are_arguments() {
    // Oracle (F44, CI's default run at 6ece7ed): closing a descriptor
    // (`2>&-`, `<&-`) takes no word, but the grammar makes the next word
    // the redirect's target: `time -p 2>&- 'diff'` was safe and listed only
    // `time`, where bash runs diff (real bash: `nice 2>&- echo RAN` prints
    // RAN). Every word after it is the command's.
    for c in ["time -p 2>&- 'curl' x", "nice 2>&- 'curl'"] {
        assert_eq!(analyze(c).verdict, Verdict::Network, "{c}");
    }
    // Unquoted, the grammar reports an error there: never safe.
    for c in ["nice 2>&- curl example.com", "env <&- wget x"] {
        assert_ne!(analyze(c).verdict, Verdict::Safe, "{c}");
    }
    let a = analyze("ls 2>&- 'notes.txt'");
    assert_eq!(a.verdict, Verdict::Safe);
    assert_eq!(a.invocations[0].args, [Some("notes.txt".to_string())]);
}
