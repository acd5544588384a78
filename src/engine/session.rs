//! `Session`: the state of one worker's loaded inputs and the handler of every
//! [`Request`] (house-style §8.8: `Engine::handle(request, opener, emit)`). A plain
//! function of the core, natively tested with a `MemOpener`; the `worker` edge only moves
//! bytes and `File` handles in and [`Response`]s out.

use crate::ingest::Opener;
use crate::protocol::{Envelope, Failure, Request, Response};

/// Where responses go (the worker posts them; tests collect them).
pub trait Sink {
    /// Sends one response for request `seq`.
    fn send(&mut self, seq: u32, response: Response);
    /// Sends one response with bytes beside it (export chunks).
    fn send_bytes(&mut self, seq: u32, response: Response, bytes: &[u8]);
}

/// The loaded inputs of one worker and the analysis results it holds.
#[derive(Default)]
pub struct Session {}

impl Session {
    /// An empty session.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves one request; every reply goes to `out` with the request's `seq`.
    pub fn handle(&mut self, env: Envelope<Request>, _opener: &dyn Opener, out: &mut dyn Sink) {
        out.send(
            env.seq,
            Response::Failed(Failure {
                message: "not wired yet".into(),
            }),
        );
    }
}
