//! The first *user* frame of a call stack (ascend-memory.md §6.2–6.3, §9.2).
//!
//! Stacks are innermost-first in real data, so the scan starts at frame 0 and
//! returns the first frame that is the user's own code: a `.py` file that is
//! not a pseudo-frame (`<string>`), not in site-/dist-packages, not torch or
//! torch_npu, not the Python standard library. The same rule (with the same
//! overrides) is the snapshot *project rule* (torch-snapshot.md §7.5).

use crate::model::stacks::{parse_frame, StackId, StackPool};

/// The §6.3 rule with its user overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserFrameRule {
    /// Project roots: a frame under one of these counts as user code even if rules 3–5 exclude it.
    pub include_prefixes: Vec<String>,
    /// Extra library roots: a frame under one of these is never user code (applied after rules 1–5).
    pub exclude_prefixes: Vec<String>,
}

/// Outcome for one row (§8.2 `user_frame_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserFrameStatus {
    /// A user frame was found.
    Ok,
    /// The stack has frames but none is a user frame.
    NoUserFrame,
    /// The row has no stack.
    NoStack,
}

impl UserFrameStatus {
    /// The §8.2 spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            UserFrameStatus::Ok => "ok",
            UserFrameStatus::NoUserFrame => "no_user_frame",
            UserFrameStatus::NoStack => "no_stack",
        }
    }
}

fn in_stdlib(path: &str) -> bool {
    // (^|/)lib/python\d+(\.\d+)?/  and a /Lib/ component (Windows)
    if path.contains("/Lib/") || path.starts_with("Lib/") {
        return true;
    }
    let mut from = 0;
    while let Some(p) = path[from..].find("lib/python") {
        let at = from + p;
        from = at + 1;
        if at > 0 && path.as_bytes()[at - 1] != b'/' {
            continue;
        }
        let rest = &path.as_bytes()[at + "lib/python".len()..];
        let mut i = 0;
        while i < rest.len() && rest[i].is_ascii_digit() {
            i += 1;
        }
        if i == 0 {
            continue;
        }
        if i < rest.len() && rest[i] == b'.' {
            let mut j = i + 1;
            while j < rest.len() && rest[j].is_ascii_digit() {
                j += 1;
            }
            if j > i + 1 {
                i = j;
            }
        }
        if i < rest.len() && rest[i] == b'/' {
            return true;
        }
    }
    false
}

impl UserFrameRule {
    /// True when the frame piece `<path>(<line>): <function>` is user code (§6.3 rules 1–6).
    pub fn is_user_frame(&self, piece: &str) -> bool {
        self.is_user_path(parse_frame(piece).path)
    }

    /// True when a frame with this source `path` is user code (§6.3 rules 1–6); also the
    /// snapshot project rule on a frame's `filename` (torch-snapshot.md §7.5).
    pub fn is_user_path(&self, path: &str) -> bool {
        let path = path.replace('\\', "/");
        if !path.to_ascii_lowercase().ends_with(".py") || path.starts_with('<') {
            return false;
        }
        if self
            .include_prefixes
            .iter()
            .any(|p| !p.is_empty() && path.starts_with(p.as_str()))
        {
            return true;
        }
        let library = path.contains("/site-packages/")
            || path.contains("/dist-packages/")
            || path.starts_with("site-packages/")
            || path.contains("/torch/")
            || path.contains("/torch_npu/")
            || path.starts_with("torch/")
            || path.starts_with("torch_npu/")
            || in_stdlib(&path);
        if library {
            return false;
        }
        !self
            .exclude_prefixes
            .iter()
            .any(|p| !p.is_empty() && path.starts_with(p.as_str()))
    }

    /// Position (from 0 = innermost) of the first user frame of `stack`, if any.
    pub fn first_user_frame(&self, pool: &StackPool, stack: StackId) -> Option<usize> {
        pool.frames(stack).position(|f| self.is_user_frame(f))
    }
}

/// The user frame of every distinct stack of a pool, computed once per stack.
#[derive(Clone, Debug, Default)]
pub struct UserFrames {
    pos: Vec<u32>,
}

impl UserFrames {
    /// Applies `rule` to every stack of `pool`.
    pub fn compute(rule: &UserFrameRule, pool: &StackPool) -> UserFrames {
        let pos = (0..pool.len())
            .map(|i| {
                rule.first_user_frame(pool, StackId::from_index(i as u32))
                    .map(|p| p as u32)
                    .unwrap_or(u32::MAX)
            })
            .collect();
        UserFrames { pos }
    }

    /// The user frame text of `stack` and the §8.2 status; `stack = None` is `no_stack`.
    pub fn of<'p>(
        &self,
        pool: &'p StackPool,
        stack: Option<StackId>,
    ) -> (&'p str, UserFrameStatus) {
        let Some(s) = stack else {
            return ("", UserFrameStatus::NoStack);
        };
        match self.pos.get(s.index()).copied().filter(|p| *p != u32::MAX) {
            Some(p) => (
                pool.frames(s).nth(p as usize).unwrap_or(""),
                UserFrameStatus::Ok,
            ),
            None if pool.frame_count(s) == 0 => ("", UserFrameStatus::NoStack),
            None => ("", UserFrameStatus::NoUserFrame),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_one_to_five() {
        let r = UserFrameRule::default();
        assert!(r.is_user_frame("/home/u/imagenet_script/main.py(354): train"));
        assert!(r.is_user_frame("rl_insight/train.py(42): train_step"));
        assert!(!r.is_user_frame("aten::add(0): kernel_launch"));
        assert!(!r.is_user_frame("<string>(1): <module>"));
        assert!(!r.is_user_frame("<frozen importlib._bootstrap>(1): x"));
        assert!(!r.is_user_frame(
            "/u/.local/lib/python3.9/site-packages/torch/optim/sgd.py(293): _multi_tensor_sgd"
        ));
        assert!(!r.is_user_frame("/usr/lib/python3/dist-packages/x.py(1): f"));
        assert!(!r.is_user_frame("torch/nn/modules/module.py(150): forward"));
        assert!(!r.is_user_frame("/opt/torch_npu/utils.py(3): f"));
        assert!(!r
            .is_user_frame("/home/u/miniconda3/lib/python3.9/multiprocessing/queues.py(122): get"));
        assert!(!r.is_user_frame("C:\\Python39\\Lib\\threading.py(9): run"));
        assert!(r.is_user_frame("/home/u/mylib/python3/x.py(1): f"));
        assert!(r.is_user_frame("/home/u/app/Main.PY(1): f"));
    }

    #[test]
    fn overrides_and_first_frame_innermost() {
        let r = UserFrameRule {
            include_prefixes: vec!["/u/site-packages/myproj/".into()],
            exclude_prefixes: vec!["/home/u/vendored/".into()],
        };
        assert!(r.is_user_frame("/u/site-packages/myproj/a.py(1): f"));
        assert!(!r.is_user_frame("/home/u/vendored/b.py(2): g"));
        let mut pool = StackPool::new();
        let s = pool.intern(
            "/x/site-packages/torch/_utils.py(180): _rebuild;\r\n/home/u/main.py(354): train;\r\n/home/u/main.py(600): main;\r\n<string>(1): <module>",
        );
        let none = pool.intern("torch/a.py(1): f");
        let uf = UserFrames::compute(&UserFrameRule::default(), &pool);
        assert_eq!(
            uf.of(&pool, Some(s)),
            ("/home/u/main.py(354): train", UserFrameStatus::Ok)
        );
        assert_eq!(uf.of(&pool, Some(none)), ("", UserFrameStatus::NoUserFrame));
        assert_eq!(uf.of(&pool, None), ("", UserFrameStatus::NoStack));
        assert_eq!(
            uf.of(&pool, Some(StackId::EMPTY)),
            ("", UserFrameStatus::NoStack)
        );
    }
}
