//! A counter of names with a deterministic "most common" order.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally(BTreeMap<String, usize>);

impl Tally {
    pub fn add(&mut self, key: &str) {
        self.add_n(key, 1);
    }

    pub fn add_n(&mut self, key: &str, n: usize) {
        *self.0.entry(key.to_string()).or_default() += n;
    }

    pub fn get(&self, key: &str) -> usize {
        self.0.get(key).copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `n` most common keys, by count then name.
    pub fn top(&self, n: usize) -> Vec<(&str, usize)> {
        let mut v: Vec<(&str, usize)> = self.0.iter().map(|(k, c)| (k.as_str(), *c)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v.truncate(n);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_orders_by_count_then_name() {
        let mut t = Tally::default();
        for k in ["b", "a", "c", "c", "b"] {
            t.add(k);
        }
        assert_eq!(t.top(2), vec![("b", 2), ("c", 2)]);
        assert_eq!(t.get("a"), 1);
        assert_eq!(t.get("z"), 0);
    }
}
