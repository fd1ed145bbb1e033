#!/usr/bin/env python3
"""Checks every relative link of the project's Markdown files: the file it
names exists, and so does the heading its #anchor names (GitHub's anchors).
Prints 'links: N passed, N failed'; exits 1 on a broken link.

Usage: python3 Scripts/check-links.py
"""
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
skip = {".build", ".git", "node_modules", "ci-artifacts"}


def markdown_files():
    for directory, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f not in skip and not f.startswith(".build")]
        for name in files:
            if name.endswith(".md"):
                yield os.path.join(directory, name)


def anchors(path):
    found = set()
    fence = False
    counts = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            if fence or not line.startswith("#"):
                continue
            text = line.lstrip("#").strip().lower()
            slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
            n = counts.get(slug, 0)
            counts[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    return found


link = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
passed = failed = 0
cache = {}
for path in markdown_files():
    fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                fence = not fence
            if fence:
                continue
            for target in link.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"^[a-z]+:", target):
                    continue
                file_part, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                problem = None
                if not os.path.exists(resolved):
                    problem = "no such file"
                elif anchor and resolved.endswith(".md"):
                    if resolved not in cache:
                        cache[resolved] = anchors(resolved)
                    if anchor not in cache[resolved]:
                        problem = f"no heading #{anchor}"
                if problem:
                    failed += 1
                    print(f"{os.path.relpath(path, root)}:{number}: {target}: {problem}")
                else:
                    passed += 1
print(f"links: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
