#!/usr/bin/env python3
"""The house's size figures, for refactoring reports (issue 30): functions over 100 and 150
lines, files over 600 lines (tests aside), and the count of `Result<_, String>`.

    scripts/house-metrics.py [--list]

A function is counted from its `fn` line to its closing brace (comments and blank lines
included, as a reader meets them); functions inside `#[cfg(test)]` modules and files that are
only tests (`tests.rs`, `*_tests.rs`, `properties.rs`) are left out. `--list` names each.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
TEST_FILE = re.compile(r"(^|/)(tests|[a-z_]+_tests|properties|output_properties)\.rs$")
FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+([a-zA-Z_0-9]+)")
RESULT_STRING = re.compile(r"Result<[^<>]*(<[^<>]*>)?[^<>]*,\s*String>")


def code_only(text):
    """`text` with string and char literals and comments blanked out (line breaks kept), so
    that braces in them do not count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            close = '"' + hashes
            j = text.find(close, i + 2 + len(hashes))
            j = n if j < 0 else j + len(close)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^'\\])'", text[i:])
            if m:
                out.append("''")
                i += m.end()
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, length) of each function outside `#[cfg(test)]` modules."""
    lines = code_only(open(path, encoding="utf-8").read()).split("\n")
    raw_lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    depth = 0
    test_depth = None  # the depth a #[cfg(test)] module's body opened at
    cfg_test = False
    stack = []  # (name, first line, depth outside its body)
    for number, line in enumerate(lines, 1):
        raw = raw_lines[number - 1] if number <= len(raw_lines) else ""
        if raw.strip().startswith("#[cfg(test)]"):
            cfg_test = True
            continue
        match = FN.match(line)
        if match and test_depth is None and not line.rstrip().endswith(";"):
            stack.append((match.group(6), number, depth))
        for ch in line:
            if ch == "{":
                if cfg_test and test_depth is None and re.match(r"\s*(pub\s+)?mod\b", line):
                    test_depth = depth
                depth += 1
            elif ch == "}":
                depth -= 1
                if stack and depth == stack[-1][2]:
                    name, first, _ = stack.pop()
                    out.append((name, first, number - first + 1))
                if test_depth is not None and depth == test_depth:
                    test_depth = None
        if line.strip():
            cfg_test = False
    return out


def main():
    listing = "--list" in sys.argv
    over100, over150, big_files, result_string = [], [], [], []
    for folder, _, files in os.walk(ROOT):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, os.path.join(ROOT, ".."))
            text = open(path, encoding="utf-8").read()
            if TEST_FILE.search(rel):
                continue
            count = text.count("\n")
            if count > 600:
                big_files.append((rel, count))
            body = text.split("#[cfg(test)]\nmod tests")[0]
            for m in RESULT_STRING.finditer(body):
                result_string.append(rel)
            for fn, start, length in functions(path):
                if length > 100:
                    over100.append((rel, fn, start, length))
                if length > 150:
                    over150.append((rel, fn, start, length))
    print(f"functions over 100 lines: {len(over100)}")
    print(f"functions over 150 lines: {len(over150)}")
    print(f"files over 600 lines (tests aside): {len(big_files)}")
    print(f"Result<_, String>: {len(result_string)}")
    if listing:
        for rel, fn, start, length in sorted(over100, key=lambda r: -r[3]):
            print(f"  fn {rel}:{start} {fn} {length}")
        for rel, count in sorted(big_files, key=lambda r: -r[1]):
            print(f"  file {rel} {count}")


if __name__ == "__main__":
    main()
