//! Phase classification of a role and per-phase statistics (ascend-memory.md §9.7).

/// Coarse class of a role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Training keywords matched first.
    Training,
    /// Inference keywords.
    Inference,
    /// Neither.
    Unknown,
}

impl Phase {
    /// `Training` / `Inference` / `Unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Training => "Training",
            Phase::Inference => "Inference",
            Phase::Unknown => "Unknown",
        }
    }
}

const TRAINING: [&str; 7] = [
    "update",
    "train",
    "backward",
    "optimizer",
    "optim_step",
    "step",
    "grad",
];
const INFERENCE: [&str; 10] = [
    "rollout",
    "generate",
    "compute_log_prob",
    "log_prob",
    "infer",
    "ref_",
    "reference",
    "forward",
    "sample",
    "decode",
];

/// §9.7: case-insensitive substring match, training keywords first.
pub fn classify(role: &str) -> Phase {
    let r = role.to_lowercase();
    if TRAINING.iter().any(|k| r.contains(k)) {
        Phase::Training
    } else if INFERENCE.iter().any(|k| r.contains(k)) {
        Phase::Inference
    } else {
        Phase::Unknown
    }
}

/// One row of the §9.7 per-phase table (values not yet rounded).
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseStats {
    /// The phase.
    pub phase: Phase,
    /// Sorted distinct roles.
    pub roles: Vec<String>,
    /// Rows.
    pub event_count: u64,
    /// Rows with `size_kb > 0`.
    pub alloc_count: u64,
    /// Rows with `size_kb < 0`.
    pub dealloc_count: u64,
    /// Σ positive sizes, KB.
    pub alloc_kb: f64,
    /// Σ |negative sizes|, KB.
    pub dealloc_kb: f64,
    /// Max `total_allocated_mb`.
    pub peak_allocated_mb: f64,
    /// Max `total_active_mb`.
    pub peak_active_mb: f64,
    /// Min `start_time_ms`.
    pub t_start_ms: f64,
    /// Max `start_time_ms + duration_ms`.
    pub t_end_ms: f64,
}

impl PhaseStats {
    fn new(phase: Phase) -> Self {
        PhaseStats {
            phase,
            roles: Vec::new(),
            event_count: 0,
            alloc_count: 0,
            dealloc_count: 0,
            alloc_kb: 0.0,
            dealloc_kb: 0.0,
            peak_allocated_mb: f64::NEG_INFINITY,
            peak_active_mb: f64::NEG_INFINITY,
            t_start_ms: f64::INFINITY,
            t_end_ms: f64::NEG_INFINITY,
        }
    }
    /// `alloc_kb − dealloc_kb`.
    pub fn net_kb(&self) -> f64 {
        self.alloc_kb - self.dealloc_kb
    }
    /// `alloc_kb / 1024`.
    pub fn alloc_mb(&self) -> f64 {
        self.alloc_kb / 1024.0
    }
}

/// One row's inputs to the phase table.
#[derive(Clone, Copy, Debug)]
pub struct PhaseRow<'a> {
    /// Role of the row.
    pub role: &'a str,
    /// `size_kb`.
    pub size_kb: f64,
    /// `start_time_ms`.
    pub start_time_ms: f64,
    /// `duration_ms`.
    pub duration_ms: f64,
    /// `total_allocated_mb`.
    pub total_allocated_mb: f64,
    /// `total_active_mb`.
    pub total_active_mb: f64,
}

/// The §9.7 table over `rows`: Training, Inference, Unknown order, empty phases omitted.
pub fn phase_table<'a>(rows: impl Iterator<Item = PhaseRow<'a>>) -> Vec<PhaseStats> {
    let mut v = [
        PhaseStats::new(Phase::Training),
        PhaseStats::new(Phase::Inference),
        PhaseStats::new(Phase::Unknown),
    ];
    for r in rows {
        let s = &mut v[classify(r.role) as usize];
        if !s.roles.iter().any(|x| x == r.role) {
            s.roles.push(r.role.to_string());
        }
        s.event_count += 1;
        if r.size_kb > 0.0 {
            s.alloc_count += 1;
            s.alloc_kb += r.size_kb;
        } else if r.size_kb < 0.0 {
            s.dealloc_count += 1;
            s.dealloc_kb += -r.size_kb;
        }
        s.peak_allocated_mb = s.peak_allocated_mb.max(r.total_allocated_mb);
        s.peak_active_mb = s.peak_active_mb.max(r.total_active_mb);
        s.t_start_ms = s.t_start_ms.min(r.start_time_ms);
        s.t_end_ms = s.t_end_ms.max(r.start_time_ms + r.duration_ms);
    }
    v.into_iter()
        .filter(|s| s.event_count > 0)
        .map(|mut s| {
            crate::base::sort::sort(&mut s.roles);
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_training_first() {
        assert_eq!(classify("actor_update"), Phase::Training);
        assert_eq!(classify("agent_loop_rollout_replica_0"), Phase::Inference);
        assert_eq!(classify("actor_compute_log_prob"), Phase::Inference);
        assert_eq!(classify("ref_compute_log_prob"), Phase::Inference);
        assert_eq!(classify("Forward_Backward"), Phase::Training);
        assert_eq!(classify("memory_data"), Phase::Unknown);
        assert_eq!(classify("level1"), Phase::Unknown);
    }

    #[test]
    fn table() {
        let rows = [
            PhaseRow {
                role: "actor_update",
                size_kb: 4.0,
                start_time_ms: 1.0,
                duration_ms: 2.0,
                total_allocated_mb: 5.0,
                total_active_mb: 6.0,
            },
            PhaseRow {
                role: "actor_update",
                size_kb: -1.0,
                start_time_ms: 0.5,
                duration_ms: 0.0,
                total_allocated_mb: 4.0,
                total_active_mb: 7.0,
            },
            PhaseRow {
                role: "rollout",
                size_kb: 2.0,
                start_time_ms: 3.0,
                duration_ms: 1.0,
                total_allocated_mb: 1.0,
                total_active_mb: 1.0,
            },
        ];
        let t = phase_table(rows.into_iter());
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].phase, Phase::Training);
        assert_eq!(
            (t[0].alloc_count, t[0].dealloc_count, t[0].net_kb()),
            (1, 1, 3.0)
        );
        assert_eq!(
            (t[0].t_start_ms, t[0].t_end_ms, t[0].peak_active_mb),
            (0.5, 3.0, 7.0)
        );
        assert_eq!(t[1].roles, vec!["rollout".to_string()]);
    }
}
