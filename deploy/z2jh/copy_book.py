#!/usr/bin/env python3
"""The book in each learner's home: copy every file the home lacks, never one it has.

    python deploy/z2jh/copy_book.py --from-repo . /opt/dreamloop/book   # the image build: the book from a checkout
    dreamloop-copy-book /opt/dreamloop/book ~/dreamloop                 # each server start (the chart's postStart)

The book is what a chapter reads when it runs, laid out as in the repository,
so the paths the chapters use (``../images/``, the ``conformance/`` and
``tests/fixtures/claude-code-sessions/`` they look for above their folder) work
in a learner's copy as in a checkout: ``BOOK`` below. The image holds one copy
(``/opt/dreamloop/book``, made at build time from ``BOOK``); at every start of a
learner's server the chart's ``postStart`` hook copies into ``~/dreamloop``
each file that is missing there. A file the learner has (edited, renamed to,
or left as it was) is never written; a file they deleted comes back at the
next start, which is how a learner gets a fresh copy of a chapter. A new
image's new files arrive; its changed files do not replace the learner's.

A copy is written to a hidden file beside its destination and linked into
place only if the destination still does not exist, so a pod stopped in the
middle leaves no half-written notebook. Copying into a home never fails (exit
status 0: a failed ``postStart`` hook stops the pod, and a server without the
book is better than none); what could not be copied is named on stderr.
Assembling the book from a checkout is strict: anything missing is an error
(exit status 1), so the image build stops.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

BOOK = {
    "notebooks": ("*.ipynb", "*.md"),                      # the chapters, zh/, solutions/, zh/solutions/
    "images": ("*.svg",),                                  # the figures the chapters show (../images/)
    "conformance": ("*.json",),                            # chapter 11 reads the recorded expectations
    "tests/fixtures/claude-code-sessions": ("*",),         # chapter 10b reads these sessions (SOURCES.md too)
}
"""The book's parts: a folder of the repository and the file patterns taken from it, recursively."""

PARTIAL_SUFFIX = ".dreamloop-copy.tmp"


def book_files(repo: Path) -> list[Path]:
    """The book's files in a checkout, relative to it, sorted; ``FileNotFoundError`` naming a missing part."""
    files: set[Path] = set()
    for folder, patterns in BOOK.items():
        root = repo / folder
        if not root.is_dir():
            raise FileNotFoundError(f"{root}: a part of the book is missing (is {repo} a dreamloop checkout?)")
        for pattern in patterns:
            files.update(path.relative_to(repo) for path in root.rglob(pattern)
                         if path.is_file() and not any(part.startswith(".") for part in path.relative_to(repo).parts))
    return sorted(files)


def copy_missing(source: Path, destination: Path, names: list[Path]) -> tuple[int, int, list[str]]:
    """Copy each of ``names`` (relative paths) from ``source`` to ``destination`` where it does not exist yet.

    Returns (copied, already there, problems): a problem is one line naming the
    file and why it was not copied; the other files are still copied."""
    copied, kept, problems = 0, 0, []
    for name in names:
        target = destination / name
        if target.exists() or target.is_symlink():
            kept += 1
            continue
        partial = target.with_name(f".{target.name}{PARTIAL_SUFFIX}")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / name, partial)   # the learner's own file mode (umask), not the image's
            try:
                os.link(partial, target)              # fails if the learner made the file meanwhile: theirs stays
            except FileExistsError:
                kept += 1
                continue
            except OSError:                           # a file system without hard links
                if target.exists():
                    kept += 1
                    continue
                os.replace(partial, target)
            copied += 1
        except OSError as error:
            problems.append(f"{target}: not copied ({error.strerror or error})")
        finally:
            try:
                partial.unlink(missing_ok=True)
            except OSError:
                pass
    return copied, kept, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dreamloop-copy-book", description=__doc__.split("\n\n")[0])
    parser.add_argument("--from-repo", action="store_true",
                        help="SOURCE is a dreamloop checkout: take the book's parts from it (strict: the image build)")
    parser.add_argument("source", type=Path, help="the book (or, with --from-repo, a checkout)")
    parser.add_argument("destination", type=Path, help="where the book goes (a learner's ~/dreamloop)")
    args = parser.parse_args(argv)
    if args.from_repo:
        try:
            names = book_files(args.source)
        except FileNotFoundError as error:
            print(f"dreamloop-copy-book: {error}", file=sys.stderr)
            return 1
    elif not args.source.is_dir():
        print(f"dreamloop-copy-book: {args.source}: no book there; nothing copied", file=sys.stderr)
        return 0
    else:
        names = sorted(path.relative_to(args.source) for path in args.source.rglob("*") if path.is_file())
    copied, kept, problems = copy_missing(args.source, args.destination, names)
    for line in problems:
        print(f"dreamloop-copy-book: {line}", file=sys.stderr)
    print(f"dreamloop-copy-book: {copied} file(s) copied into {args.destination}, {kept} already there"
          + (f", {len(problems)} not copied" if problems else ""))
    return 1 if args.from_repo and problems else 0


if __name__ == "__main__":
    sys.exit(main())
