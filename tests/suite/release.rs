//! The release archive and `scripts/install.sh`, which installs one: an archive shaped as
//! `scripts/dist.sh` makes it (built here from this build's `ling` and `ling-exec`, so the test
//! needs no release build) served from a `file://` folder; the script checks the SHA-256 before
//! it installs anything.

use std::path::Path;
use std::process::Command;

use crate::support::peers::require_program;

/// This machine's archive name, as install.sh derives it from `uname`.
fn target() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x86_64",
        "aarch64" => "aarch64",
        other => panic!("no release target for {other}"),
    };
    format!("{arch}-unknown-linux-musl")
}

/// Makes `dir/ling-TARGET.tar.gz` and its `.sha256` as scripts/dist.sh does; returns the archive.
fn make_release(dir: &Path) -> std::path::PathBuf {
    let name = format!("ling-{}", target());
    let stage = dir.join("stage").join(&name);
    std::fs::create_dir_all(&stage).unwrap();
    for (bin, from) in [
        ("ling", env!("CARGO_BIN_EXE_ling")),
        ("ling-exec", env!("CARGO_BIN_EXE_ling-exec")),
    ] {
        std::fs::copy(from, stage.join(bin)).unwrap();
    }
    std::fs::write(stage.join("VERSION"), env!("CARGO_PKG_VERSION")).unwrap();
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    let archive = site.join(format!("{name}.tar.gz"));
    let status = Command::new("tar")
        .arg("-C")
        .arg(dir.join("stage"))
        .arg("-czf")
        .arg(&archive)
        .arg(&name)
        .status()
        .unwrap();
    assert!(status.success());
    let sum = Command::new("sha256sum")
        .arg(format!("{name}.tar.gz"))
        .current_dir(&site)
        .output()
        .unwrap();
    assert!(sum.status.success());
    std::fs::write(site.join(format!("{name}.tar.gz.sha256")), &sum.stdout).unwrap();
    archive
}

fn install(site: &Path, dest: &Path) -> std::process::Output {
    Command::new("sh")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install.sh"))
        .env("LING_DOWNLOAD_URL", format!("file://{}", site.display()))
        .env("LING_INSTALL_DIR", dest)
        .env_remove("LING_REPO")
        .output()
        .unwrap()
}

#[test]
fn install_sh_installs_both_binaries_and_refuses_a_bad_checksum() {
    require_program("curl");
    require_program("sha256sum");
    let dir = tempfile::tempdir().unwrap();
    let archive = make_release(dir.path());
    let site = archive.parent().unwrap();

    let dest = dir.path().join("bin");
    let out = install(site, &dest);
    assert!(out.status.success(), "{out:?}");
    let version = Command::new(dest.join("ling"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(version.status.success());
    assert!(
        String::from_utf8_lossy(&version.stdout).contains(env!("CARGO_PKG_VERSION")),
        "{version:?}"
    );
    assert!(dest.join("ling-exec").is_file());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("is not on your PATH"), "{said}");

    // The same archive with one byte changed: nothing is installed.
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&archive, bytes).unwrap();
    let other = dir.path().join("other");
    let out = install(site, &other);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("checksum mismatch"), "{said}");
    assert!(
        !other.join("ling").exists(),
        "installed despite the mismatch"
    );
}

#[test]
fn install_sh_without_a_source_says_what_to_set() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install.sh"))
        .env_remove("LING_DOWNLOAD_URL")
        .env_remove("LING_REPO")
        .env("LING_INSTALL_DIR", dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("LING_REPO=OWNER/NAME"), "{said}");
}
