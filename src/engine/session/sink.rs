//! Where a session's responses go: the [`Sink`] the worker posts through (and [`Collected`], the
//! one tests and tools read), and the export chunking every analysis' exports share
//! ([`ChunkWriter`], [`send_export`]).

use std::io::{self, Write};

use crate::protocol::Response;

/// Bytes per export chunk posted to the UI (8 MiB).
pub const EXPORT_CHUNK: usize = 8 << 20;

/// Where responses go (the worker posts them; tests collect them).
pub trait Sink {
    /// Sends one response for request `seq`.
    fn send(&mut self, seq: u32, response: Response);
    /// Sends one response with bytes beside it (export chunks).
    fn send_bytes(&mut self, seq: u32, response: Response, bytes: &[u8]);
}

/// A [`Sink`] that keeps everything it is sent (native tests and tools; the worker edge
/// posts instead): each response with its request's `seq`, in order, the bytes of every
/// export chunk joined in order, and every other buffer sent beside a response.
#[derive(Debug, Default)]
pub struct Collected {
    /// Responses in the order sent, each with its `seq`.
    pub out: Vec<(u32, Response)>,
    /// Bytes sent beside [`Response::ExportChunk`]s, concatenated.
    pub bytes: Vec<u8>,
    /// Buffers sent beside other responses (the side-file bundle beside
    /// [`Response::Inventory`], a part beside [`Response::ExportPart`]), in order.
    pub beside: Vec<Vec<u8>>,
}

impl Sink for Collected {
    fn send(&mut self, seq: u32, response: Response) {
        self.out.push((seq, response));
    }
    fn send_bytes(&mut self, seq: u32, response: Response, bytes: &[u8]) {
        if matches!(response, Response::ExportChunk { .. }) {
            self.bytes.extend_from_slice(bytes);
        } else {
            self.beside.push(bytes.to_vec());
        }
        self.out.push((seq, response));
    }
}

/// Writes into 8 MiB chunks posted as [`Response::ExportChunk`]s (every analysis' exports).
pub struct ChunkWriter<'a> {
    seq: u32,
    buf: Vec<u8>,
    out: &'a mut dyn Sink,
}

impl<'a> ChunkWriter<'a> {
    /// A writer posting chunks for request `seq` to `out`; call `flush` at the end.
    pub fn new(seq: u32, out: &'a mut dyn Sink) -> Self {
        ChunkWriter {
            seq,
            buf: Vec::with_capacity(1 << 20),
            out,
        }
    }
}

impl<'a> ChunkWriter<'a> {
    /// The sink, for the replies after the last chunk (call `flush` first).
    pub fn into_sink(self) -> &'a mut dyn Sink {
        self.out
    }

    /// Flushes the export's last chunk and sends `ExportDone` with `res`'s file name and MIME
    /// type, or `Failed` with the reason (`what`: the request, named in the message).
    pub fn finish(
        mut self,
        what: &crate::protocol::ExportRequest,
        res: io::Result<(String, String)>,
    ) {
        let flushed = self.flush();
        let seq = self.seq;
        let out = self.into_sink();
        match res.and_then(|x| flushed.map(|_| x)) {
            Ok((file_name, mime)) => out.send(seq, Response::ExportDone { file_name, mime }),
            Err(e) => out.send(
                seq,
                Response::Failed(crate::protocol::Failure {
                    message: format!("export {what:?} failed: {e}"),
                }),
            ),
        }
    }
}

impl Write for ChunkWriter<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= EXPORT_CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let bytes = self.buf.len() as u64;
            self.out
                .send_bytes(self.seq, Response::ExportChunk { bytes }, &self.buf);
            self.buf.clear();
        }
        Ok(())
    }
}

/// Sends an export written in memory: its bytes in [`EXPORT_CHUNK`] chunks, then `ExportDone`.
pub fn send_export(seq: u32, file_name: String, mime: &str, bytes: &[u8], out: &mut dyn Sink) {
    for chunk in bytes.chunks(EXPORT_CHUNK) {
        let n = chunk.len() as u64;
        out.send_bytes(seq, Response::ExportChunk { bytes: n }, chunk);
    }
    out.send(
        seq,
        Response::ExportDone {
            file_name,
            mime: mime.to_string(),
        },
    );
}
