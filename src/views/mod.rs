//! UI-ready plain data computed in the worker (downsampled curves, table
//! pages, display formatting); natively tested, no browser types.
