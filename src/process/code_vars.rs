//! The environment variables that make a program load code, or run another program, from where
//! they say: the one list Ling keeps of them. The trust question flags them wherever a project
//! sets them (`trust::code`); those the dynamic loader and the C library act on in every program
//! ([`read_at_start`]) are never given to Ling's trampoline or its helpers, only handed to the
//! program the trampoline starts, after the sandbox is applied ([`super::exec`]).

/// Variables that make a program load code, or run another program, from where they say.
pub fn loads_code(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "PATH",
        "NODE_OPTIONS",
        "NODE_PATH",
        "BASH_ENV",
        "ENV",
        "PS4",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "ZDOTDIR",
        "HOME",
        "XDG_CONFIG_HOME",
        "CLASSPATH",
        "GEM_HOME",
        "GEM_PATH",
        "BUNDLE_GEMFILE",
        "PHPRC",
        "PHP_INI_SCAN_DIR",
        "TCLLIBPATH",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "LESSOPEN",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "RUSTC_WRAPPER",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
    ];
    const PREFIXES: &[&str] = &[
        "PYTHON",
        "PERL",
        "RUBY",
        "LUA_",
        "GIT_",
        "NPM_CONFIG_",
        "npm_config_",
        "BASH_FUNC_",
        "R_PROFILE",
        "R_ENVIRON",
        "CARGO_",
        "UV_",
        "PIP_",
    ];
    read_at_start(name) || NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Variables that the dynamic loader or the C library act on in every program as it starts,
/// before its own code runs: `LD_*` (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`...), macOS's
/// `DYLD_*`, and glibc's `GCONV_PATH`, `GLIBC_TUNABLES`, `LOCPATH` and `NLSPATH` (the ones
/// glibc itself drops for a setuid program and that name files). No program can refuse them, so
/// Ling's trampoline never starts with them.
pub fn read_at_start(name: &str) -> bool {
    name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || matches!(
            name,
            "GCONV_PATH" | "GLIBC_TUNABLES" | "LOCPATH" | "NLSPATH"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loaders_variables_are_code_and_read_at_start() {
        for name in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "LD_AUDIT",
            "GCONV_PATH",
            "DYLD_INSERT_LIBRARIES",
        ] {
            assert!(read_at_start(name) && loads_code(name), "{name}");
        }
        for name in [
            "PATH",
            "NODE_OPTIONS",
            "PYTHONPATH",
            "BASH_ENV",
            "ENV",
            "PERL5OPT",
            "RUBYOPT",
            "GIT_SSH_COMMAND",
        ] {
            assert!(loads_code(name) && !read_at_start(name), "{name}");
        }
        for name in ["RUST_LOG", "TERM", "LANG", "OLD_PATH"] {
            assert!(!loads_code(name), "{name}");
        }
    }
}
