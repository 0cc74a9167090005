#!/usr/bin/env bash
# Regenerates the man pages in docs/man/ from the clap definition (the test that checks them
# writes them with LING_UPDATE_MAN set). Read one with `man -l docs/man/ling.1`.
set -euo pipefail
cd "$(dirname "$0")/.."
LING_UPDATE_MAN=1 cargo test --lib --quiet cli::man_tests -- --exact \
  cli::man_tests::the_man_pages_are_generated_from_the_command_line
ls docs/man
