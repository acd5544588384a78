//! The worker ↔ UI API boundary: one closed vocabulary of plain-data messages.
