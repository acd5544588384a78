//! Wasm edge: the Web Worker message loop and the `FileReaderSync` opener.
