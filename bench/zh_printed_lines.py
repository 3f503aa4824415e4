"""The share of printed lines a Chinese reader sees in Chinese (issue 40, item 2).

Reads the stored outputs of the Chinese chapters (``notebooks/zh/[0-9]*.ipynb``, not the solutions): the
``stream`` outputs (what ``print()`` wrote) of code cells, line by line, blank lines left out. Rule:

* a line is **Chinese** if it has a CJK character (U+3400-U+9FFF);
* a line is **data** if it has no English prose: no two plain words in a row (two runs of 2+ ASCII letters
  separated only by spaces, neither part of an identifier, path or call: ``tool_use``, ``a/b.py``, ``x(``
  don't count). Numbers, names, ``Terminal(reason='completed')``, JSON and tables of values are data;
* every other line is **English**.

The share is (Chinese + data) / all lines: what a Chinese reader can read without English. Prints one line
per chapter and the total. ``python bench/zh_printed_lines.py [--english]`` (``--english`` also lists the
English lines).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ZH = Path(__file__).resolve().parent.parent / "notebooks" / "zh"
CJK = re.compile(r"[\u3400-\u9fff]")
WORD = r"(?<![\w./\\=-])[A-Za-z]{2,}(?![\w./\\(=-])"
PROSE = re.compile(WORD + r"[ ]+" + WORD)


def kind(line: str) -> str:
    if CJK.search(line):
        return "chinese"
    if PROSE.search(line):
        return "english"
    return "data"


def printed_lines(path: Path) -> list[str]:
    lines = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                text = "".join(output["text"]) if isinstance(output["text"], list) else output["text"]
                lines += [line for line in text.splitlines() if line.strip()]
    return lines


def main(argv: list[str]) -> None:
    total = {"chinese": 0, "data": 0, "english": 0}
    for path in sorted(ZH.glob("[0-9]*_*.ipynb")):
        count = {"chinese": 0, "data": 0, "english": 0}
        english = []
        for line in printed_lines(path):
            k = kind(line)
            count[k] += 1
            if k == "english":
                english.append(line)
        for k in total:
            total[k] += count[k]
        n = sum(count.values())
        share = (count["chinese"] + count["data"]) / n if n else 1.0
        print(f"{path.name:36} {n:5} lines  chinese {count['chinese']:4}  data {count['data']:4}  "
              f"english {count['english']:4}  share {share:6.1%}")
        if "--english" in argv:
            for line in english:
                print("    EN|", line[:140])
    n = sum(total.values())
    share = (total["chinese"] + total["data"]) / n if n else 1.0
    print(f"{'all zh chapters':36} {n:5} lines  chinese {total['chinese']:4}  data {total['data']:4}  "
          f"english {total['english']:4}  share {share:6.1%}")


if __name__ == "__main__":
    main(sys.argv[1:])
