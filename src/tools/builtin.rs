//! Registration of the builtin tools of `docs/tools.md` (the six file and shell tools, and the
//! two handles on background commands).

use std::sync::Arc;

use super::ToolRegistry;
use super::background::{BashOutput, KillShell};
use super::write_file::WriteFile;
use super::{bash::Bash, edit_file::EditFile, glob::Glob, grep::Grep, read_file::ReadFile};

pub(super) fn register_all(registry: &mut ToolRegistry) {
    registry.register(Arc::new(ReadFile));
    registry.register(Arc::new(WriteFile));
    registry.register(Arc::new(EditFile));
    registry.register(Arc::new(Bash));
    registry.register(Arc::new(Grep));
    registry.register(Arc::new(Glob));
    registry.register(Arc::new(BashOutput));
    registry.register(Arc::new(KillShell));
}
