//! Agent integrations. Each adapter decodes its host's event, asks the
//! engine, and answers in its host's format within its host's budget.

pub mod claude;
