"""Fail when a commit made since the subject rule began has a subject over 72 characters.

A subject says what changed in one line that `git log --oneline` shows whole; the detail goes in
the body. Commits before ``RULE_SINCE`` keep their long subjects (history is not rewritten). In a
shallow clone that lacks that commit, the commits the clone has are checked.
"""

from __future__ import annotations

import subprocess
import sys

RULE_SINCE = "302d4aa"
"""The last commit before the rule; every commit after it is checked."""
LIMIT = 72


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def main() -> int:
    known = subprocess.run(["git", "cat-file", "-e", f"{RULE_SINCE}^{{commit}}"], check=False)
    span = f"{RULE_SINCE}..HEAD" if known.returncode == 0 else "HEAD"
    long = [
        line
        for line in git("log", "--no-merges", "--format=%h %s", span).splitlines()
        if len(line.split(" ", 1)[1]) > LIMIT
    ]
    for line in long:
        sha, subject = line.split(" ", 1)
        print(f"{sha}: subject of {len(subject)} characters (at most {LIMIT}): {subject}")
    if long:
        print("Put the detail in the commit body (git commit --amend / rebase -i to reword).")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
