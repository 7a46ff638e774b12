//! Arguments as a resolved program sees them.

use crate::span::Span;
use crate::word::{Value, Word};

/// What a word's run-time parts can carry into its value: the output of a
/// program that reaches the network, or decoded data. Code made of either
/// is remote or obfuscated code, however it reaches the program that runs
/// it (`sh -c "$(curl ...)"`, `bash <(curl ...)`, `eval "$x"` after
/// `x=$(curl ...)`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Carries {
    pub network: bool,
    pub decoded: bool,
}

impl Carries {
    pub fn any(self) -> bool {
        self.network || self.decoded
    }

    pub fn or(self, other: Carries) -> Carries {
        Carries {
            network: self.network || other.network,
            decoded: self.decoded || other.decoded,
        }
    }
}

/// One argument: its value where known, and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub value: Value,
    pub span: Span,
    /// Offset of the value's first byte in the analyzed text, when the
    /// value maps onto it byte for byte.
    pub origin: Option<usize>,
    /// The literal text with `*` for run-time parts (see `Word::shape`).
    pub shape: String,
    /// Expansion may turn it into several words.
    pub splits: bool,
    /// What its run-time parts carry (set by the resolver).
    pub carries: Carries,
}

impl Arg {
    pub fn from_word(w: &Word) -> Arg {
        Arg {
            value: w.value(),
            span: w.span,
            origin: w.origin,
            shape: w.shape(),
            splits: w.can_split(),
            carries: Carries::default(),
        }
    }

    /// An argument made by the analyzer (a wrapper's option value, find's
    /// `{}`): its shape follows from its value.
    pub fn new(value: Value, span: Span, origin: Option<usize>) -> Arg {
        let shape = match &value {
            Value::Static(s) | Value::Glob(s) => s.clone(),
            Value::Dynamic => "*".into(),
        };
        let splits = !matches!(value, Value::Static(_));
        Arg {
            value,
            span,
            origin,
            shape,
            splits,
            carries: Carries::default(),
        }
    }

    pub fn dynamic(span: Span) -> Arg {
        Arg::new(Value::Dynamic, span, None)
    }

    pub fn literal(text: &str, span: Span) -> Arg {
        Arg::new(Value::Static(text.to_string()), span, None)
    }

    /// The value when fully static.
    pub fn text(&self) -> Option<&str> {
        match &self.value {
            Value::Static(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_static(&self) -> bool {
        matches!(self.value, Value::Static(_))
    }

    /// The value as the program sees it, for the report: `None` if unknown.
    pub fn shown(&self) -> Option<String> {
        self.text().map(str::to_string)
    }
}
