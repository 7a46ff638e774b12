//! Shell-style glob matching of a whole string: the one matcher for
//! patterns, whether a command holds them (a word's shape, where every part
//! known only at run time is `*`) or a list does (the catalog's places, the
//! gate's protected files).

/// Whether `pattern` (`*` any run of characters, `?` one, `[...]` a class)
/// matches all of `text`.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // dp[j]: pattern[..i] matches text[..j].
    let mut dp = vec![false; t.len() + 1];
    dp[0] = true;
    let mut i = 0;
    while i < p.len() {
        let mut next = vec![false; t.len() + 1];
        match p[i] {
            '*' => {
                let mut any = false;
                for j in 0..=t.len() {
                    any |= dp[j];
                    next[j] = any;
                }
                i += 1;
            }
            '[' => {
                let close = p[i + 1..].iter().position(|&c| c == ']').map(|k| i + 1 + k);
                match close {
                    Some(end) if end > i + 1 => {
                        let class = &p[i + 1..end];
                        let (neg, class) = match class.first() {
                            Some('!' | '^') => (true, &class[1..]),
                            _ => (false, class),
                        };
                        for j in 0..t.len() {
                            if dp[j] && in_class(class, t[j]) != neg {
                                next[j + 1] = true;
                            }
                        }
                        i = end + 1;
                    }
                    _ => {
                        for j in 0..t.len() {
                            next[j + 1] = dp[j] && t[j] == '[';
                        }
                        i += 1;
                    }
                }
            }
            c => {
                for j in 0..t.len() {
                    next[j + 1] = dp[j] && (c == '?' || t[j] == c);
                }
                i += 1;
            }
        }
        dp = next;
    }
    dp[t.len()]
}

fn in_class(class: &[char], c: char) -> bool {
    let mut k = 0;
    while k < class.len() {
        if k + 2 < class.len() && class[k + 1] == '-' {
            if class[k] <= c && c <= class[k + 2] {
                return true;
            }
            k += 3;
        } else {
            if class[k] == c {
                return true;
            }
            k += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs_match_as_bash_would_at_least() {
        assert!(glob_match(
            "/p/.agent/setting?.json",
            "/p/.agent/settings.json"
        ));
        assert!(glob_match("/p/.ag*", "/p/.agent"));
        assert!(glob_match("/p/*", "/p/.agent/settings.json"));
        assert!(glob_match("/p/[.]agent/*.json", "/p/.agent/settings.json"));
        assert!(glob_match("/p/[!x]agent", "/p/.agent"));
        assert!(!glob_match("/p/*.o", "/p/.agent/settings.json"));
        assert!(!glob_match("/p/build/*", "/p/.agent"));
        assert!(!glob_match("/p/[a-c]gent", "/p/.agent"));
    }
}
