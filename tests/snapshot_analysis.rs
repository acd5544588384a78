//! Peaks and attribution on a hand-built snapshot whose answer is known by construction
//! (torch-snapshot.md §7.2–7.7). No files: the model is built with `SnapshotBuilder`.

use proflens::analysis::snapshot::attribution::{Origin, SiteKind};
use proflens::analysis::snapshot::device::{analyze, AnalysisOptions, PointKind};
use proflens::model::snapshot::{BlockState, Snapshot, NO_STACK};
use proflens::model::snapshot_testing::SnapshotBuilder;

const TORCH: (&str, u32, &str) = (
    "/opt/py/lib/python3.11/site-packages/torch/nn/modules/module.py",
    1500,
    "_call_impl",
);

/// Weights (1000 B) live throughout; three training steps allocate activations
/// (500 + 500, 500 + 500, 500 + 500 + 200); an optimizer step allocates 990 B; a 1-byte
/// blip sits between step 1 and 2; the end state holds two older blocks (300 B with a
/// stack, 100 B without).
fn build() -> Snapshot {
    let mut b = SnapshotBuilder::new();
    let main = ("/proj/train.py", 1, "main");
    let w = b.stack(&[TORCH, ("/proj/model.py", 10, "init_weights"), main]);
    let act = b.stack(&[
        ("??", 0, "torch::unwind::unwind()"),
        TORCH,
        ("/proj/model.py", 20, "forward"),
        ("/proj/train.py", 5, "train_step"),
        main,
    ]);
    let opt = b.stack(&[
        ("/proj/optim.py", 30, "step"),
        ("/proj/train.py", 6, "train_step"),
        main,
    ]);
    let lib = b.stack(&[("/usr/lib/python3.10/x.py", 1, "f")]);
    b.alloc(0x1000, 1000, w) // 0
        .alloc(0xa1, 500, act) // 1
        .alloc(0xa2, 500, act) // 2: step 1 peak
        .free(0xa1, 500) // 3, 4
        .free(0xa2, 500) // 5, 6
        .alloc(0xb, 1, lib) // 7: blip
        .free(0xb, 1) // 8, 9
        .alloc(0xa1, 500, act) // 10
        .alloc(0xa2, 500, act) // 11: step 2 peak
        .free(0xa1, 500) // 12, 13
        .free(0xa2, 500) // 14, 15
        .alloc(0x0, 990, opt) // 16: optimizer peak
        .free(0x0, 990) // 17, 18
        .alloc(0xa1, 500, act) // 19
        .alloc(0xa2, 500, act) // 20
        .alloc(0xa3, 200, act) // 21: step 3, global peak
        .free(0xa1, 500) // 22, 23
        .free(0xa2, 500) // 24, 25
        .free(0xa3, 200); // 26, 27
    b.segment(
        0,
        0x1000,
        &[
            (1024, 1000, BlockState::ActiveAllocated, Some(w)),
            (512, 300, BlockState::ActiveAllocated, Some(lib)),
            (512, 100, BlockState::ActiveAllocated, None),
            (2048, 0, BlockState::Inactive, None),
        ],
    );
    b.finish()
}

#[test]
fn peaks_recurring_clusters_and_blips() {
    let snap = build();
    let a = analyze(&snap, &snap.devices[0], &AnalysisOptions::spec_defaults());
    assert_eq!(a.curves.baseline_active, 400);
    let pts: Vec<(PointKind, usize, i64)> = a
        .points
        .iter()
        .map(|p| (p.kind, p.index, p.height))
        .collect();
    assert_eq!(
        pts,
        vec![
            (PointKind::GlobalPeak, 21, 2600),
            (PointKind::Peak, 16, 2390),
            (PointKind::End, 27, 1400)
        ]
    );
    let g = &a.points[0];
    let r = g
        .recurring
        .as_ref()
        .expect("the three steps are one recurring peak");
    assert_eq!((r.count, r.min, r.median, r.max), (3, 2400, 2400, 2600));
    assert_eq!(r.indices, vec![2, 11, 21]);
    assert_eq!(g.prominence, Some(1200));
    assert_eq!(a.points[1].prominence, Some(990));
    assert!(a.points[1].recurring.is_none());
    // Candidates: step peaks, optimizer peak; the blip (prominence 1 B < 1% of 2600) is dropped.
    assert_eq!(a.n_candidates, 4);
    // Reserved at the end: Σ end segments = 4096; fragmentation = 4096 − 1400.
    let end = &a.points[2];
    assert_eq!((end.reserved, end.reserved - end.active), (4096, 2696));
    assert_eq!(end.largest_inactive_block, Some(2048));
}

#[test]
fn attribution_sites_chains_pre_buckets_tree_and_leaks() {
    let snap = build();
    let a = analyze(&snap, &snap.devices[0], &AnalysisOptions::spec_defaults());
    let g = &a.points[0];
    assert_eq!((g.live_bytes, g.live_tensors), (2600, 6));
    let text = |f| {
        let (file, line, name) = snap.pools.frame_text(f);
        format!("{name}@{file}:{line}")
    };
    let rows: Vec<(String, u64, u64, Origin, SiteKind)> = g
        .contributors
        .iter()
        .map(|c| {
            (
                c.site.map(text).unwrap_or("<no stack>".into()),
                c.bytes,
                c.tensors,
                c.origin,
                c.kind,
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                "forward@/proj/model.py:20".into(),
                1200,
                3,
                Origin::InWindow,
                SiteKind::Project
            ),
            (
                "init_weights@/proj/model.py:10".into(),
                1000,
                1,
                Origin::InWindow,
                SiteKind::Project
            ),
            (
                "f@/usr/lib/python3.10/x.py:1".into(),
                300,
                1,
                Origin::PreKnownStack,
                SiteKind::Python
            ),
            (
                "<no stack>".into(),
                100,
                1,
                Origin::PreNoStack,
                SiteKind::NoStack
            ),
        ]
    );
    let chain: Vec<String> = g.contributors[0].chain.iter().map(|f| text(*f)).collect();
    assert_eq!(
        chain,
        vec![
            "forward@/proj/model.py:20",
            "train_step@/proj/train.py:5",
            "main@/proj/train.py:1"
        ]
    );
    assert_eq!(g.contributors[0].first_alloc_idx, Some(19));
    // Largest tensor first.
    assert_eq!(
        (g.top_tensors[0].bytes, g.top_tensors[0].addr),
        (1000, 0x1000)
    );
    // Prefix tree: root 2600; main() holds weights + activations; <non-python> the no-stack block.
    let root = &g.tree[0];
    assert_eq!(root.bytes, 2600);
    let child = |frame_name: Option<&str>| {
        g.tree
            .iter()
            .find(|n| n.depth == 1 && n.frame.map(|f| snap.pools.frame_text(f).2) == frame_name)
            .map(|n| n.bytes)
    };
    assert_eq!(child(Some("main")), Some(2200));
    assert_eq!(child(Some("f")), Some(300));
    assert_eq!(child(None), Some(100));
    // Leaks: only the weights were allocated in the window and never freed.
    let leaks: Vec<(String, u64)> = a
        .leaks
        .iter()
        .map(|c| (text(c.site.unwrap()), c.bytes))
        .collect();
    assert_eq!(
        leaks,
        vec![("init_weights@/proj/model.py:10".to_string(), 1000)]
    );
}

#[test]
fn k_frame_chains_and_project_root_override() {
    let snap = build();
    let mut o = AnalysisOptions::spec_defaults();
    o.frame_depth = 2;
    let a = analyze(&snap, &snap.devices[0], &o);
    let key: Vec<u32> = a.points[0].contributors[0]
        .key
        .iter()
        .map(|f| snap.pools.frame_text(*f).1)
        .collect();
    assert_eq!(key, vec![20, 5]);
    // Declaring the stdlib folder a project root makes x.py a project site.
    let mut o = AnalysisOptions::spec_defaults();
    o.rule.include_prefixes.push("/usr/lib/python3.10/".into());
    let a = analyze(&snap, &snap.devices[0], &o);
    let lib = a.points[0]
        .contributors
        .iter()
        .find(|c| c.bytes == 300)
        .unwrap();
    assert_eq!(lib.kind, SiteKind::Project);
    let _ = NO_STACK;
}

/// Stacks of C++ frames only (`stacks="all"`: the autograd engine's thread records no Python
/// frame) are attributed to the autograd node, else the ATen operator, never to the caching
/// allocator that every such stack starts with (torch-snapshot.md §7.5, stacks with no Python frame).
#[test]
fn native_only_stacks_go_to_the_autograd_node_or_the_aten_op() {
    const MALLOC: (&str, u32, &str) = (
        "CUDACachingAllocator.cpp",
        0,
        "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)",
    );
    const ALLOCATE: (&str, u32, &str) = (
        "",
        0,
        "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)",
    );
    const EMPTY: (&str, u32, &str) = (
        "??",
        0,
        "at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)",
    );
    const ENGINE: (&str, u32, &str) = (
        "??",
        0,
        "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)",
    );
    let mut b = SnapshotBuilder::new();
    let unwind = ("??", 0, "torch::unwind::unwind()");
    // Backward: div inside MeanBackward0 (the node wins over both ATen ops).
    let mean_bw = b.stack(&[
        unwind,
        MALLOC,
        ALLOCATE,
        EMPTY,
        ("??", 0, "at::_ops::div_Tensor::call(at::Tensor const&, at::Tensor const&)"),
        ("??", 0, "at::_ops::div_Scalar::call(at::Tensor const&, c10::Scalar const&)"),
        ("??", 0, "torch::autograd::generated::MeanBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"),
        ENGINE,
    ]);
    // No node: the innermost ATen operator.
    let bmm = b.stack(&[
        MALLOC,
        ALLOCATE,
        EMPTY,
        (
            "RegisterCUDA.cpp",
            0,
            "at::(anonymous namespace)::wrapper_CUDA_bmm(at::Tensor const&, at::Tensor const&)",
        ),
        (
            "??",
            0,
            "at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)",
        ),
        (
            "??",
            0,
            "at::_ops::matmul::call(at::Tensor const&, at::Tensor const&)",
        ),
    ]);
    // Neither: the first frame outside the allocator (the cuBLAS workspace).
    let ws = b.stack(&[
        MALLOC,
        ALLOCATE,
        ("", 0, "at::cuda::getNewWorkspace()"),
        ENGINE,
    ]);
    // Only allocator frames: the first of them.
    let bare = b.stack(&[MALLOC, ALLOCATE]);
    b.alloc(0x100, 4000, mean_bw)
        .alloc(0x200, 3000, bmm)
        .alloc(0x300, 2000, ws)
        .alloc(0x400, 1000, bare);
    let snap = b.finish();
    let a = analyze(&snap, &snap.devices[0], &AnalysisOptions::spec_defaults());
    let g = &a.points[0];
    assert_eq!(
        (g.kind, g.live_bytes, g.live_tensors),
        (PointKind::GlobalPeak, 10_000, 4)
    );
    let rows: Vec<(String, u64, SiteKind)> = g
        .contributors
        .iter()
        .map(|c| {
            let (_, _, name) = snap.pools.frame_text(c.site.unwrap());
            (name.split('(').next().unwrap().to_string(), c.bytes, c.kind)
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                "torch::autograd::generated::MeanBackward0::apply".into(),
                4000,
                SiteKind::Named
            ),
            ("at::_ops::bmm::call".into(), 3000, SiteKind::Named),
            ("at::cuda::getNewWorkspace".into(), 2000, SiteKind::Named),
            (
                "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc".into(),
                1000,
                SiteKind::Named
            ),
        ]
    );
}
