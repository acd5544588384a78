//! gzip inflated as a stream (Kineto traces are usually `.json.gz`): flate2 over
//! its pure-Rust miniz_oxide backend, so the same code runs natively and in the wasm worker.
//! Nothing is inflated whole: the decoder hands out what it has inflated, chunk by chunk, to
//! the caller's [`super::ChunkReader`].
//!
//! [`maybe_gunzip`] sniffs the two magic bytes (`1F 8B`), whatever the file name says.
//! [`Inflated::compressed`] counts the **compressed** bytes taken from the file, so progress
//! bars move with the file's size. A stream cut short or corrupt is an `io::Error` whose text
//! says so with the compressed byte offset; whatever was inflated before it was delivered.

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;

use flate2::read::MultiGzDecoder;

/// A file's bytes, inflated when it was gzip.
pub struct Inflated<'a> {
    /// The (inflated) bytes.
    pub reader: Box<dyn Read + 'a>,
    /// Compressed bytes read from the file so far; `None` when the file is not gzip.
    pub compressed: Option<Rc<Cell<u64>>>,
}

/// Counts the bytes read from the underlying file.
struct Counting<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// The decoder with its errors put in words (compressed offset, what happened).
struct Gunzip<R: Read> {
    dec: MultiGzDecoder<Counting<R>>,
    count: Rc<Cell<u64>>,
    total: Option<u64>,
}

impl<R: Read> Read for Gunzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.dec.read(buf).map_err(|e| {
            let of = match self.total {
                Some(t) => format!(" of {t}"),
                None => String::new(),
            };
            let what = if e.kind() == io::ErrorKind::UnexpectedEof {
                "the gzip stream is cut short (the file ends before the compressed data does)"
                    .to_string()
            } else {
                format!("the gzip data is corrupt ({e})")
            };
            io::Error::new(
                e.kind(),
                format!("{what}, after {} compressed bytes{of}", self.count.get()),
            )
        })
    }
}

/// `src` as is, or inflated when its first two bytes are the gzip magic `1F 8B`.
/// `total` is the file's (compressed) size, used in error messages.
///
/// Errors: those of reading the first two bytes.
pub fn maybe_gunzip<'a>(
    mut src: Box<dyn Read + 'a>,
    total: Option<u64>,
) -> io::Result<Inflated<'a>> {
    let mut head = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        match src.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    let chained: Box<dyn Read + 'a> = Box::new(io::Cursor::new(head[..got].to_vec()).chain(src));
    if got == 2 && head == [0x1F, 0x8B] {
        let count = Rc::new(Cell::new(0));
        let counting = Counting {
            inner: chained,
            count: count.clone(),
        };
        Ok(Inflated {
            reader: Box::new(Gunzip {
                dec: MultiGzDecoder::new(counting),
                count: count.clone(),
                total,
            }),
            compressed: Some(count),
        })
    } else {
        Ok(Inflated {
            reader: chained,
            compressed: None,
        })
    }
}

/// True when `name` ends in `.gz` (any case).
pub fn is_gz_name(name: &str) -> bool {
    name.len() >= 3 && name[name.len() - 3..].eq_ignore_ascii_case(".gz")
}

#[cfg(test)]
pub(crate) fn gzip_bytes(data: &[u8]) -> Vec<u8> {
    use flate2::write::GzEncoder;
    use std::io::Write;
    let mut e = GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(mut r: Box<dyn Read + '_>) -> (Vec<u8>, Option<io::Error>) {
        let mut out = Vec::new();
        let mut buf = [0u8; 7];
        loop {
            match r.read(&mut buf) {
                Ok(0) => return (out, None),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    #[test]
    fn plain_bytes_pass_through_and_gzip_is_inflated_with_compressed_progress() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("{i},").into_bytes())
            .collect();
        let plain = maybe_gunzip(Box::new(&text[..]), None).unwrap();
        assert!(plain.compressed.is_none());
        assert_eq!(read_all(plain.reader).0, text);
        let gz = gzip_bytes(&text);
        let z = maybe_gunzip(Box::new(&gz[..]), Some(gz.len() as u64)).unwrap();
        let count = z.compressed.clone().unwrap();
        let (out, err) = read_all(z.reader);
        assert!(err.is_none());
        assert_eq!(out, text);
        assert_eq!(count.get(), gz.len() as u64);
        // one byte files and empty files are not gzip
        assert_eq!(
            read_all(maybe_gunzip(Box::new(&b"x"[..]), None).unwrap().reader).0,
            b"x"
        );
        assert!(
            read_all(maybe_gunzip(Box::new(&b""[..]), None).unwrap().reader)
                .0
                .is_empty()
        );
    }

    #[test]
    fn a_cut_stream_keeps_what_was_inflated_and_says_where() {
        let text: Vec<u8> = (0..50_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let gz = gzip_bytes(&text);
        let cut = &gz[..gz.len() / 2];
        let z = maybe_gunzip(Box::new(cut), Some(cut.len() as u64)).unwrap();
        let (out, err) = read_all(z.reader);
        let err = err.expect("a cut stream is an error");
        assert!(!out.is_empty() && out.len() < text.len());
        assert_eq!(&text[..out.len()], &out[..]);
        let msg = err.to_string();
        assert!(msg.starts_with("the gzip stream is cut short"), "{msg}");
        assert!(msg.contains(&format!("of {}", cut.len())), "{msg}");
        assert!(is_gz_name("a.JSON.GZ") && !is_gz_name("gz"));
    }
}
