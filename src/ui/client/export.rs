//! Exports from the pool: written by the worker that holds the results, or
//! gathered over the workers that each hold some rank folders ([`Request::ExportPart`] rounds,
//! then [`Request::ExportJoin`]); the parts are `ArrayBuffer`s this client passes along without
//! applying any rule. No export reads a file.

use futures::channel::oneshot;
use js_sys::Array;
use wasm_bindgen::JsCast;

use super::{EngineClient, ExportAcc};
use crate::protocol::{AnalysisKind, ExportRequest, Request, Response};

impl EngineClient {
    /// Writes an export and downloads it, always the CLI's bytes, and reads no file. Memory
    /// and anomaly exports cover every rank folder: when one pool worker holds all of them
    /// (the analysis of every rank folder ran there), it writes the export from its results;
    /// when they are spread over the pool, each holder writes its part of every round of
    /// [`ExportRequest::part_rounds`] (the buffers of a round go beside the next round's
    /// requests) and the first holder joins the last round's parts ([`Self::gather`]).
    /// A snapshot export is written by the worker that holds the snapshot (its settings).
    pub async fn export(&self, req: ExportRequest) -> Result<String, String> {
        if let ExportRequest::Snapshot { target, .. } = req {
            return self.export_from(AnalysisKind::Snapshot, target, req).await;
        }
        if let ExportRequest::Compare(_) = req {
            let Some(slot) = self.inner.borrow().compare_slot else {
                return Err("nothing is compared: use Compare with… first".into());
            };
            return self.export_on(slot, Request::Export(req), None).await;
        }
        if let ExportRequest::Comm(_) = req {
            let Some(slot) = self.inner.borrow().comm_slot else {
                return Err("the communication tables are not joined yet".into());
            };
            return self.export_on(slot, Request::Export(req), None).await;
        }
        if self.inner.borrow().files.is_empty() {
            return Err("nothing loaded".into());
        }
        let analysis = match req {
            ExportRequest::Memory(_) => AnalysisKind::Memory,
            _ => AnalysisKind::Anomaly,
        };
        if let Some(target) = self.sole_holder(analysis) {
            return self.export_from(analysis, target, req).await;
        }
        self.gather(analysis, req).await
    }

    /// The export over the pool workers that ran `analysis` ([`Request::ExportPart`] rounds,
    /// then [`Request::ExportJoin`] on the first of them). The parts stay `ArrayBuffer`s here.
    async fn gather(&self, analysis: AnalysisKind, req: ExportRequest) -> Result<String, String> {
        let holders: Vec<usize> = {
            let inner = self.inner.borrow();
            let mut v: Vec<usize> = inner
                .owner
                .iter()
                .filter(|((a, _), _)| *a == analysis)
                .map(|(_, &slot)| slot)
                .collect();
            v.sort_unstable();
            v.dedup();
            if v.iter()
                .any(|&k| !inner.slots.get(k).is_some_and(|s| s.alive))
            {
                return Err("a worker stopped, so its rank folders' results are gone; drop the folder again to export".into());
            }
            v
        };
        let Some(&joiner) = holders.first() else {
            return Err(format!("no rank folder has the {analysis:?} analysis"));
        };
        let mut parts = Array::new();
        for round in 0..req.part_rounds() {
            let waits: Vec<(u32, oneshot::Receiver<Response>)> = holders
                .iter()
                .map(|&slot| {
                    let body = Request::ExportPart {
                        what: req.clone(),
                        round,
                    };
                    let seq = self.post_with(slot, body, None, Some(parts.clone()), false);
                    (seq, self.wait(seq))
                })
                .collect();
            let next = Array::new();
            for (seq, rx) in waits {
                match rx.await {
                    Ok(Response::ExportPart { .. }) => {
                        let buf = self.inner.borrow_mut().beside.remove(&seq);
                        next.push(&buf.ok_or("an export part arrived without its bytes")?);
                    }
                    Ok(Response::Failed(f)) => return Err(f.message),
                    Ok(other) => {
                        return Err(format!(
                            "unexpected reply to an export part: {}",
                            super::reply_name(&other)
                        ))
                    }
                    Err(_) => return Err("the worker stopped (cancelled or reloaded)".into()),
                }
            }
            parts = next;
        }
        self.export_on(joiner, Request::ExportJoin(req), Some(parts))
            .await
    }

    /// When one pool worker ran `analysis` on every rank folder it runs on: one of those
    /// targets (the export is routed to its worker like a query). `None` when no rank folder
    /// has it or several workers share them.
    fn sole_holder(&self, analysis: AnalysisKind) -> Option<u32> {
        let inner = self.inner.borrow();
        let mut held = inner
            .owner
            .iter()
            .filter(|((a, _), _)| *a == analysis)
            .map(|(&(_, t), &slot)| (slot, t));
        let (slot, target) = held.next()?;
        held.all(|(s, _)| s == slot).then_some(target)
    }

    /// Starts collecting export chunks; the receiver gets the download's outcome.
    fn begin_export(&self) -> Result<oneshot::Receiver<Result<String, String>>, String> {
        let (tx, rx) = oneshot::channel();
        let mut inner = self.inner.borrow_mut();
        if inner.export_done.is_some() {
            return Err("an export is already running".into());
        }
        inner.export = Some(ExportAcc {
            parts: Array::new(),
        });
        inner.export_done = Some(tx);
        Ok(rx)
    }

    /// Asks the worker that ran `analysis` on `target` for an export it writes from the
    /// results it holds, and downloads it.
    async fn export_from(
        &self,
        analysis: AnalysisKind,
        target: u32,
        req: ExportRequest,
    ) -> Result<String, String> {
        let slot = self.inner.borrow().owner.get(&(analysis, target)).copied();
        let Some(slot) = slot else {
            return Err(format!("{analysis:?} target {target} is not loaded"));
        };
        self.export_on(slot, Request::Export(req), None).await
    }

    /// Posts an export request (`Export` or `ExportJoin`, with `bufs` beside) to `slot`,
    /// collects its chunks and downloads them.
    async fn export_on(
        &self,
        slot: usize,
        body: Request,
        bufs: Option<Array>,
    ) -> Result<String, String> {
        let rx = self.begin_export()?;
        // The join's parts are not used again here: moved, not copied.
        let seq = self.post_with(slot, body, None, bufs, true);
        // A `Failed` reply arrives through the request's own pending entry.
        let failed = self.wait(seq);
        match futures::future::select(rx, failed).await {
            futures::future::Either::Left((res, _)) => {
                self.inner.borrow_mut().pending.remove(&seq);
                res.unwrap_or_else(|_| Err("export interrupted".into()))
            }
            futures::future::Either::Right((reply, _)) => {
                let mut inner = self.inner.borrow_mut();
                inner.export = None;
                inner.export_done = None;
                match reply {
                    Ok(Response::Failed(f)) => Err(f.message),
                    Ok(other) => Err(format!(
                        "unexpected reply to the export: {}",
                        super::reply_name(&other)
                    )),
                    Err(_) => Err("the worker stopped (cancelled or reloaded)".into()),
                }
            }
        }
    }
}

/// Joins `parts` into a `Blob` and starts a download named `file_name`; returns the status
/// line to show ([`crate::views::notices::export_status`]: whether the browser keeps the file is the browser's).
pub(super) fn download(parts: &Array, file_name: &str, mime: &str) -> Result<String, String> {
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_buffer_source_sequence_and_options(parts, &opts)
        .map_err(|e| format!("cannot build the download: {e:?}"))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)
        .map_err(|e| format!("cannot build the download: {e:?}"))?;
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc
        .create_element("a")
        .map_err(|e| format!("{e:?}"))?
        .unchecked_into();
    a.set_href(&url);
    a.set_download(file_name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(crate::views::notices::export_status(
        file_name,
        blob.size() as u64,
    ))
}
