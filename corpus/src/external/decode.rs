//! Undoing the encodings some injection payloads carry.

/// Decodes `%XX` escapes (`+` stays `+`); invalid escapes are kept as
/// written; the bytes are read as UTF-8 with replacement characters.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Decodes the HTML character references payloads use: the named ones for
/// `< > & " '` and numeric `&#NN;` / `&#xHH;`. Others are kept as written.
pub fn html_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        match entity(tail) {
            Some((c, len)) => {
                out.push(c);
                rest = &tail[len..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character an entity at the start of `s` stands for, and its length.
fn entity(s: &str) -> Option<(char, usize)> {
    let end = s.get(..12).unwrap_or(s).find(';')?;
    let name = &s[1..end];
    let c = match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(h) => u32::from_str_radix(h, 16).ok()?,
                None => num.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((c, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent() {
        assert_eq!(percent_decode("cat%20/etc/passwd"), "cat /etc/passwd");
        assert_eq!(percent_decode("%0a%3Bid"), "\n;id");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }

    #[test]
    fn html() {
        assert_eq!(
            html_unescape("&lt;!--#exec cmd=&quot;id&quot;--&gt;"),
            "<!--#exec cmd=\"id\"-->"
        );
        assert_eq!(html_unescape("a &#59; b &#x7c; c"), "a ; b | c");
        assert_eq!(html_unescape("&bogus; & &"), "&bogus; & &");
    }
}
