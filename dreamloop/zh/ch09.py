"""Chinese for chapter 09's checks (``dreamloop/exercises/ch09.py``): every ending and every transition.

Terms follow the source text: 终止原因 (Terminal reason), 转换路径 (transition), 阶段 (phase), 开关 (switch).
"""

TEXTS = {
    "an API error response ends the run where the stream ended, or after recovery declined it, or at the stop "
    "checks when max_tokens cuts outlasted the resumes.":
        "API 错误响应在流结束的地方结束运行，或在恢复分支放弃之后，或在停止检查处（max_tokens 截断次数超过了续写上限时）。",
    "a response without tool_use goes to the stop checks; there the loop sees that stop_reason said tool_use.":
        "没有 tool_use 的响应进入停止检查；循环在那里发现 stop_reason 写的是 tool_use。",
    "the stream broke part-way: phase 3 decides what to keep and asks again.":
        "流在中途断开：由阶段 3 决定保留什么，并再次请求。",
    # exercise 1: where each reason is decided
    "a hook said continue: false while the tools ran; the loop ends after the tools, before the next State (the "
    "stop hooks are another event).":
        "工具执行期间有 hook 说了 continue: false；循环在工具之后、下一个 State 之前结束（停止 hook 是另一个事件）。",
    "max_turns is checked at phase 5, after the tools ran and before the next request.":
        "max_turns 在阶段 5 检查：工具执行之后、下一次请求之前。",
    "the blocking limit is the pipeline's last stage: nothing is sent, so the stream never starts.":
        "阻断上限是压缩管线的最后一步：什么都不发送，所以流式响应根本不会开始。",
    "the budget is checked with the stop checks, when a turn asks for no tool.":
        "预算和停止检查一起检查，发生在某一轮没有请求工具的时候。",
    "the stop hooks run at phase 4 when the model asked for no tool.": "模型没有请求工具时，停止 hook 在阶段 4 运行。",
    "the abort signal fired while the model streamed: the run ends where the stream ended.":
        "中止信号在模型流式输出时触发：运行在流结束的地方结束。",
    "the abort signal fired while the tools ran: the run ends after their results are answered.":
        "中止信号在工具运行时触发：给它们补上结果后，运行结束。",
    "an error the stream returned ends the run right after the stream, when no recovery pass takes it.":
        "流返回的错误如果没有任何恢复分支接手，就在流结束后立即结束运行。",
    "the API's 400 comes back from the stream; the drain and the compaction are tried first, right after it.":
        "API 的 400 从流里返回；紧接着先尝试折叠溢出恢复和响应式压缩。",
    "the API's 400 about media comes back from the stream and no recovery pass takes it.":
        "关于图片或文档的 400 从流里返回，没有任何恢复分支接手。",
    "a response cut at max_tokens is seen when the stream ends; recovery decides.":
        "在 max_tokens 处被截断的响应在流结束时被发现；由恢复分支决定。",
    "the 400 (prompt is too long) is withheld when the stream ends; recovery decides.":
        "400（prompt is too long）在流结束时被暂扣；由恢复分支决定。",
    "tool results are handed on at phase 5, where the next State is built.":
        "工具结果在阶段 5 交回，下一个 State 也在那里建立。",
    "a response without tool_use goes to the stop checks; when nothing sends it back, the run ends.":
        "没有 tool_use 的响应进入停止检查；没有任何东西把它送回循环时，运行结束。",
    "follow _query_loop top to bottom: phase 2 may end the run before any request; after the stream come recovery's "
    "passes; phase 4 is the tools or, without tool_use, the stop checks; phase 5 builds the next State after the "
    "max_turns check.":
        "从上到下读一遍 _query_loop：阶段 2 可能在任何请求之前就结束运行；流式响应之后是恢复分支；"
        "阶段 4 是工具，没有 tool_use 时则是停止检查；阶段 5 在检查 max_turns 之后建立下一个 State。",
    "return one of {phases} for each reason.": "为每个原因返回 {phases} 之一。",
    "for {reason!r} it returned {got}; expected one of {phases}.": "对于 {reason!r}，它返回了 {got}；应当是 {phases} 之一。",
    "all {count} reasons placed where the loop decides them.": "全部 {count} 个原因都放在了循环决定它们的地方。",
    "where each reason is decided": "每个原因在哪里决定",
    # exercise 2: transitions on purpose
    "with the script run out (the model was asked once more than it has turns)":
        "脚本用完了（请求模型的次数比脚本的轮数多了一次）",
    "recovery acts on a response cut at max_tokens that asks for no tool, and the rungs come in order within a "
    "turn; only tool results handed on start the next turn; a response without tool_use, not cut, ends the run.":
        "恢复分支处理的是在 max_tokens 处被截断、且没有请求工具的响应，同一轮里各级按顺序出现；"
        "只有交出工具结果才会开始下一轮；一个没有 tool_use、也没被截断的响应会结束运行。",
    "return a list of dl.reply(...) turns; stop_reason='max_tokens' makes a response cut.":
        "返回一个由 dl.reply(...) 组成的轮次列表；stop_reason='max_tokens' 会让响应被截断。",
    "script() returned {got}; expected a list of dl.Turn (dl.reply(...)).":
        "script() 返回了 {got}；应当返回一个 dl.Turn 列表（dl.reply(...)）。",
    "escalate, resume, next_turn, completed: {requests} requests, all on purpose.":
        "提升上限、截断恢复、next_turn、completed：共 {requests} 次请求，每一次都在意料之中。",
    "the run went through {wanted} and then {then!r}; it should end completed right after next_turn.":
        "运行经过了 {wanted}，然后是 {then!r}；它应当在 next_turn 之后直接以 completed 结束。",
    "your script's transitions were {reasons} and it ended {ending!r}; wanted {wanted} then completed.":
        "你的脚本经过的转换路径是 {reasons}，结束于 {ending!r}；应当是 {wanted}，然后 completed。",
    "transitions on purpose": "有意触发的转换路径",
    # exercise 3: the switchboard's rule
    "read dl.QueryParams.model_fields: a switch's field has json_schema_extra {'switch': True, 'chapter': 'NN'} (a "
    "string); a chapter may turn on what it or an earlier chapter explained. Other fields (max_turns, tools, ...) "
    "are not switches.":
        "读 dl.QueryParams.model_fields：开关字段的 json_schema_extra 是 {'switch': True, 'chapter': 'NN'}"
        "（章号是字符串）；一章可以打开它自己或之前各章讲过的开关。其他字段（max_turns、tools 等）不是开关。",
    "return the set of switch names with a chapter number at most the given one.":
        "返回章号不大于给定章号的开关名集合。",
    "switches_by({chapter}) returned {got}; expected a set of names.": "switches_by({chapter}) 返回了 {got}；应当返回一个名字集合。",
    " {extra} is not a switch by chapter {chapter}.": "到第 {chapter} 章为止，{extra} 还不是开关。",
    " {extra} are not a switch by chapter {chapter}.": "到第 {chapter} 章为止，{extra} 还不是开关。",
    "the switchboard's rule": "开关面板的规则",
    "{reason!r} is not decided in '{got}'. ":
        "{reason!r} 不是在 '{got}' 决定的。",
    ' It leaves out {count} switch a chapter up to {chapter} explained.':
        ' 它漏掉了 {count} 个第 {chapter} 章及之前讲过的开关。',
    ' It leaves out {count} switches chapters up to {chapter} explained.':
        ' 它漏掉了 {count} 个第 {chapter} 章及之前讲过的开关。',
    'switches_by({chapter}) = {got}.':
        'switches_by({chapter}) = {got}。',
    'with one more switch in dl.QueryParams (as a later version of the kit might add), switches_by({chapter}) = {got}: it does not follow the fields.':
        '当 dl.QueryParams 多了一个开关（工具包的后续版本可能会加），switches_by({chapter}) = {got}：它没有跟着字段走。',
    "read the switches from dl.QueryParams.model_fields each time, not from a list you write by hand: a field is a switch when its json_schema_extra says 'switch': True.":
        "每次都从 dl.QueryParams.model_fields 读出开关，而不是用一份你手写的清单：一个字段的 json_schema_extra 写着 'switch': True 时，它才是开关。",
    'chapters 4 to 10, and a QueryParams with one more switch: each chapter may turn on what it and the chapters before it explained.':
        '第 4 到第 10 章，再加上一个多了一个开关的 QueryParams：每一章都可以打开它自己和之前各章讲过的开关。',
    # what the chapter's own cells print (notebooks/09_every_ending.ipynb, through tr)
    "passes: {path} → Terminal {reason} (turn_count={turn_count})": "各趟：{path} → Terminal {reason}（turn_count={turn_count}）",
    "nothing": "什么也没有",
    "ended:  the last pass added [{said}]": "结束：最后一趟新增了 [{said}]",
    "reason                       kind      chapter  requests  checkpoints  switches on":
        "原因                         种类      章节       请求数     检查点数  开着的开关",
    "every reason shown:": "每个原因都演示过了：",
    "exit status:": "退出状态：",
    "(every branch off: the four-step loop of chapter 03)": "（所有分支都关着：第 03 章的四步循环）",
}
