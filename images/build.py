"""Rebuild the figures in images/ (``make images``).

* ``loop.svg``: queryLoop()'s flowchart, drawn by ``dreamloop.diagram`` (the
  live view lights its phases with the same code).
* ``read-sequence.svg``: the two-request Read sequence of the four-step loop,
  drawn here.
* ``loop.mmd`` / ``read-sequence.mmd`` are the same figures in Mermaid, for
  Markdown cells (JupyterLab renders them) and for GitHub.
* ``loop.zh.svg`` / ``read-sequence.zh.svg``: the two figures in Chinese, for
  the Chinese edition (``notebooks/zh/``), in the source texts' own words.
* ``nested-loop.svg`` / ``nested-loop.zh.svg``: chapter 12's loop inside the loop, an ``Agent`` call
  running a child ``query()`` against the same model, drawn as the Read sequence is.

Pure Python, deterministic: running it twice gives the same bytes.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from dreamloop.diagram import loop_flowchart_svg
from dreamloop.language import language

HERE = Path(__file__).resolve().parent

LANES = [("Agent loop", 120), ("Model (Messages API)", 400), ("Read tool", 640)]
STEPS = [
    # (from lane, to lane, label, dashed)
    (0, 1, "request 1: user message + tool definitions", False),
    (1, 0, "assistant: tool_use(Read, id=toolu_1)", True),
    (0, 2, "run Read(input)", False),
    (2, 0, "tool_result(tool_use_id=toolu_1)", True),
    (0, 1, "request 2: + that tool_use and its tool_result", False),
    (1, 0, "answer (or the next tool_use)", True),
]
LANES_ZH = [("执行循环", 120), ("模型（Messages API）", 400), ("Read 工具", 640)]
STEPS_ZH = [
    (0, 1, "第一次请求：用户消息与工具定义", False),
    (1, 0, "assistant：tool_use(Read, id=toolu_1)", True),
    (0, 2, "执行 Read(input)", False),
    (2, 0, "tool_result(tool_use_id=toolu_1)", True),
    (0, 1, "第二次请求：追加这个 tool_use 和对应的 tool_result", False),
    (1, 0, "回答（或提出下一次工具调用）", True),
]
"""The same sequence in the words of the source text's own diagram (four-step-loop)."""


NESTED_LANES = [("Parent loop: query()", 120), ("Model (one offline API)", 400), ("Agent: a child query()", 640)]
NESTED_STEPS = [
    (0, 1, "parent request 1: the prompt, tools with Agent", False),
    (1, 0, "tool_use(Agent, prompt = the task)", True),
    (0, 2, "run Agent: a new State, its own tools (no Agent)", False),
    (2, 1, "child request 1: the task, its only message", False),
    (1, 2, "tool_use(Glob): the child's own turn", True),
    (2, 1, "child request 2: + that tool_use and its tool_result", False),
    (1, 2, "the child's answer; its Terminal: completed", True),
    (2, 0, "tool_result = the child's final answer", True),
    (0, 1, "parent request 2: + tool_use(Agent) and its tool_result", False),
    (1, 0, "the parent's answer", True),
]
"""Chapter 12's figure: one ``Agent`` call, the child's requests between the parent's two."""
NESTED_LANES_ZH = [("父循环：query()", 120), ("模型（同一个离线 API）", 400), ("Agent：子 query()", 640)]
NESTED_STEPS_ZH = [
    (0, 1, "父循环第一次请求：提示词，工具里有 Agent", False),
    (1, 0, "tool_use(Agent, prompt = 任务)", True),
    (0, 2, "执行 Agent：新的 State，自己的工具（没有 Agent）", False),
    (2, 1, "子代理第一次请求：任务是它唯一的消息", False),
    (1, 2, "tool_use(Glob)：子代理自己的一轮", True),
    (2, 1, "子代理第二次请求：追加这个 tool_use 和它的 tool_result", False),
    (1, 2, "子代理的回答；它的终止原因：completed", True),
    (2, 0, "tool_result = 子代理的最终回答", True),
    (0, 1, "父循环第二次请求：追加 tool_use(Agent) 和它的 tool_result", False),
    (1, 0, "父循环的回答", True),
]


def read_sequence_svg(lanes: list[tuple[str, int]] = LANES, steps: list[tuple[int, int, str, bool]] = STEPS,
                      label: str = "Two requests around one Read tool call") -> str:
    """The two-request sequence of one Read, as SVG (``lanes`` / ``steps``: the labels, English by default;
    ``label``: the figure's accessible name). Chapter 12's nested loop is drawn with it too."""
    LANES, STEPS = lanes, steps  # noqa: N806 - the drawing below reads them under these names
    height = 70 + 52 * len(STEPS)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="760" height="{height}" viewBox="0 0 760 {height}" '
        f'role="img" aria-label="{escape(label)}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#5a6478"/></marker></defs>',
        f'<rect width="760" height="{height}" fill="white"/>',
    ]
    for name, x in LANES:
        parts.append(f'<rect x="{x - 85}" y="16" width="170" height="34" rx="6" fill="#f4f6fb" stroke="#5a6478"/>')
        parts.append(f'<text x="{x}" y="38" text-anchor="middle" font-family="sans-serif" font-size="13">'
                     f'{escape(name)}</text>')
        parts.append(f'<line x1="{x}" y1="50" x2="{x}" y2="{height - 20}" stroke="#c5cad6" stroke-dasharray="4 4"/>')
    for i, (src, dst, label, dashed) in enumerate(STEPS):
        y = 90 + 52 * i
        x1, x2 = LANES[src][1], LANES[dst][1]
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        parts.append(f'<line x1="{x1}" y1="{y}" x2="{x2 + (-6 if x2 > x1 else 6)}" y2="{y}" stroke="#5a6478" '
                     f'stroke-width="1.5"{dash} marker-end="url(#arrow)"/>')
        parts.append(f'<text x="{(x1 + x2) // 2}" y="{y - 8}" text-anchor="middle" font-family="sans-serif" '
                     f'font-size="11" fill="#1d2433">{escape(label)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


LOOP_MMD = """flowchart TD
    A[1. take the current State] --> B[2. build messages_for_query]
    B --> C[3. call the model, stream the response]
    C --> D{tool_use received?}
    D -- no --> E[stop checks] --> F[Terminal]
    E -- a stop hook blocks --> A
    D -- yes --> G[4. run tools, collect tool_result]
    G --> H{abort, hook stop or max_turns?}
    H -- yes --> F
    H -- no --> I[5. new State: messages, turn_count + 1]
    I --> A
"""

SEQUENCE_MMD = """sequenceDiagram
    participant L as Agent loop
    participant M as Model
    participant T as Read tool
    L->>M: request 1: user message + tool definitions
    M-->>L: assistant: tool_use(Read, id=toolu_1)
    L->>T: run Read(input)
    T-->>L: tool_result(tool_use_id=toolu_1)
    L->>M: request 2: + tool_use and its tool_result
    M-->>L: answer, or the next tool_use
"""


def main() -> None:
    language("en")
    outputs = {
        "loop.svg": loop_flowchart_svg(),
        "read-sequence.svg": read_sequence_svg(),
        "read-sequence.zh.svg": read_sequence_svg(LANES_ZH, STEPS_ZH),
        "nested-loop.svg": read_sequence_svg(NESTED_LANES, NESTED_STEPS,
                                             "An Agent call runs a child loop against the same model"),
        "nested-loop.zh.svg": read_sequence_svg(NESTED_LANES_ZH, NESTED_STEPS_ZH, "一次 Agent 调用在同一个模型上运行子循环"),
        "loop.mmd": LOOP_MMD,
        "read-sequence.mmd": SEQUENCE_MMD,
    }
    language("zh")
    outputs["loop.zh.svg"] = loop_flowchart_svg()
    language("en")
    for name, text in outputs.items():
        (HERE / name).write_text(text + ("" if text.endswith("\n") else "\n"), encoding="utf-8")
        print(f"wrote images/{name}")


if __name__ == "__main__":
    main()
