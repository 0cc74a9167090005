//! The `checkpoints` settings: whether Ling records the writable folders before each turn and
//! each tool call that can write (`docs/cli.md`, "Checkpoints and /rewind"), the size bounds of
//! what it keeps, and how much of `LING_HOME` the records may take.

use schemars::JsonSchema;
use serde::Deserialize;

/// The default `checkpoints.maxFileSize`: 50 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 50 << 20;
/// The default `checkpoints.maxFiles`: entries of one writable folder.
pub const DEFAULT_MAX_FILES: usize = 200_000;
/// The default `checkpoints.maxStorage`: 4 GiB.
pub const DEFAULT_MAX_STORAGE: u64 = 4 << 30;

/// `checkpoints` of `settings.json` as written: `false` turns them off, an object says more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "Checkpoints")]
pub enum RawCheckpoints {
    /// `true` (the default): checkpoints of every turn; `false`: none (`/rewind` can then only
    /// rewind the conversation).
    Switch(bool),
    /// The bounds, each optional.
    Options(RawCheckpointOptions),
}

/// `checkpoints` as an object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "CheckpointOptions")]
pub struct RawCheckpointOptions {
    /// Record checkpoints. Default true.
    pub enabled: Option<bool>,
    /// A file larger than this many bytes is recorded by its size only: a rewind cannot put
    /// it back, and says so. Default 52428800 (50 MiB).
    #[schemars(range(min = 0), extend("default" = DEFAULT_MAX_FILE_SIZE))]
    pub max_file_size: Option<u64>,
    /// A writable folder holding more entries than this is not recorded at all (said at the
    /// first turn). Default 200000.
    #[schemars(range(min = 1), extend("default" = DEFAULT_MAX_FILES))]
    pub max_files: Option<usize>,
    /// The bytes the checkpoints of all sessions may take in `LING_HOME/checkpoints`; past it the
    /// oldest sessions' checkpoints are pruned (their conversations stay). Default 4294967296
    /// (4 GiB).
    #[schemars(range(min = 0), extend("default" = DEFAULT_MAX_STORAGE))]
    pub max_storage: Option<u64>,
}

/// Resolved `checkpoints`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointSettings {
    pub enabled: bool,
    pub max_file_size: u64,
    pub max_files: usize,
    pub max_storage: u64,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            max_files: DEFAULT_MAX_FILES,
            max_storage: DEFAULT_MAX_STORAGE,
        }
    }
}

impl CheckpointSettings {
    /// Each key from the first layer that says it (`--settings`, the project's, the user's),
    /// else the default.
    pub fn resolve(layers: &[Option<&RawCheckpoints>]) -> Result<Self, String> {
        let mut resolved = Self::default();
        let options = |raw: &RawCheckpoints| match raw {
            RawCheckpoints::Switch(on) => RawCheckpointOptions {
                enabled: Some(*on),
                ..RawCheckpointOptions::default()
            },
            RawCheckpoints::Options(options) => *options,
        };
        let layers: Vec<RawCheckpointOptions> =
            layers.iter().flatten().map(|r| options(r)).collect();
        let pick = |f: &dyn Fn(&RawCheckpointOptions) -> Option<u64>| layers.iter().find_map(f);
        if let Some(enabled) = layers.iter().find_map(|l| l.enabled) {
            resolved.enabled = enabled;
        }
        if let Some(size) = pick(&|l| l.max_file_size) {
            resolved.max_file_size = size;
        }
        if let Some(files) = layers.iter().find_map(|l| l.max_files) {
            if files == 0 {
                return Err(
                    "checkpoints.maxFiles is 0, which would record nothing; set it to \
                            how many entries a writable folder may hold (default 200000), or \
                            set checkpoints to false"
                        .into(),
                );
            }
            resolved.max_files = files;
        }
        if let Some(storage) = pick(&|l| l.max_storage) {
            resolved.max_storage = storage;
        }
        Ok(resolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_layer_that_says_a_key_wins_and_false_turns_them_off() {
        let off = RawCheckpoints::Switch(false);
        let bounds = RawCheckpoints::Options(RawCheckpointOptions {
            max_file_size: Some(10),
            enabled: Some(true),
            ..RawCheckpointOptions::default()
        });
        let got = CheckpointSettings::resolve(&[Some(&off), Some(&bounds)]).unwrap();
        assert!(!got.enabled);
        assert_eq!(got.max_file_size, 10);
        assert_eq!(got.max_storage, DEFAULT_MAX_STORAGE);
        assert_eq!(
            CheckpointSettings::resolve(&[None]).unwrap(),
            CheckpointSettings::default()
        );
        let zero = RawCheckpoints::Options(RawCheckpointOptions {
            max_files: Some(0),
            ..RawCheckpointOptions::default()
        });
        assert!(
            CheckpointSettings::resolve(&[Some(&zero)])
                .unwrap_err()
                .contains("maxFiles is 0")
        );
    }
}
