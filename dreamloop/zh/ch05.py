"""Chinese for chapter 05's checks (``dreamloop/exercises/ch05.py``)."""

TEXTS = {
    "scenario {scenario} has no prediction yet: the exercise is not done yet.":
        "场景 {scenario} 还没有预测：这道练习还没有做。",
    "scenario {scenario}: {value} is not a list of groups (lists of names).":
        "场景 {scenario}：{value} 不是分组列表（由名字列表组成）。",
    "scenario {scenario}: your groups name {got}; every call of the scenario ({calls}) belongs to exactly one "
    "group.":
        "场景 {scenario}：你的分组里出现的是 {got}；这个场景的每个调用（{calls}）恰好属于一个分组。",
    'for each scenario, write a list of groups of call names, like [["x", "y"], ["z"]]: calls that run at the same '
    "time share a group. Draw each call on a line of ticks: it may start when its block is complete (its tick), if "
    "the ordering rule lets it.":
        '为每个场景写一个由调用名分组组成的列表，例如 [["x", "y"], ["z"]]：同时运行的调用放在同一组。'
        "把每个调用画在一条刻度线上：它的块完整时（它的那一刻）就可以开始，前提是顺序规则允许。",
    'expected a dict of scenarios ("A" ... "D"), got {kind}.': '需要一个以场景为键的字典（"A" ... "D"），收到的是 {kind}。',
    "{count} scenarios, the same groups as StreamingToolExecutor ran.":
        "{count} 个场景，分组与 StreamingToolExecutor 实际运行的相同。",
    "which calls run together": "哪些调用一起运行",
    "three reads that arrive while the others still run: safe calls start at once beside safe calls.":
        "三次读取，后到的在前面的仍在运行时到达：并发安全的调用会立刻在其他安全调用旁边开始。",
    "a call that finished before the next one arrived did not run beside it, even in the same batch.":
        "在下一个调用到达之前就已结束的调用，并没有和它一起运行，哪怕它们属于同一批次。",
    "a non-safe call (Edit) waits for the calls before it and holds back the calls after it.":
        "非并发安全的调用（Edit）要等它前面的调用结束，并拦住它后面的调用。",
    "nothing starts beside a running non-safe call; the reads that waited for it start together.":
        "非并发安全的调用在运行时，旁边什么也不会开始；等它的那些读取随后一起开始。",
    "return the names of the queued calls that may start now, walking the calls in order and applying the two "
    "halves of the ordering rule.":
        "按顺序走过这些调用，应用顺序规则的两半，返回现在可以开始的排队调用的名字。",
    "safe": "安全",
    "not safe": "非安全",
    "for [{calls}] you start {got}, not what the rule starts.": "对于 [{calls}]，你开始的是 {got}，与规则开始的调用不同。",
    "{count} situations, the same calls started as the package's ready_to_start.":
        "{count} 种情形，开始的调用与包里的 ready_to_start 相同。",
    "the ordering rule": "顺序规则",
    "a non-safe call never starts beside another call, whether it was running already or you just started it: a "
    "call you start counts as running for the calls after it.":
        "非并发安全的调用从不与其他调用同时开始，不管那个调用是早已在运行，还是你刚刚让它开始的："
        "对它后面的调用来说，你让它开始的调用就算在运行。",
    "a non-safe call that must wait holds back every call after it, even safe ones: the order of the calls is kept.":
        "必须等待的非并发安全调用会拦住它后面的每一个调用，安全的也一样：调用的顺序保持不变。",
    "a queued safe call starts at once beside other safe calls; only a running non-safe call keeps it waiting.":
        "排队的安全调用会立刻在其他安全调用旁边开始；只有正在运行的非安全调用才会让它等待。",
    "return one user message that answers every call of tool_uses in order: the result of a call that finished, "
    "and for the others an error result whose text says whether the call had started.":
        "返回一条用户消息，按顺序回应 tool_uses 里的每个调用：已完成的调用给出它的结果，"
        "其余的给出错误结果，文字说明这个调用是否已经开始。",
    "one finished, one running, one waiting": "一个已完成、一个运行中、一个在等待",
    "none had started": "一个都没开始",
    "all had started, the last finished first": "全部已经开始，最后一个最先完成",
    "all finished": "全部完成",
    "a call without a result gets an is_error result; one that has a result keeps it.":
        "没有结果的调用得到一个 is_error 结果；已有结果的调用保留它的结果。",
    "had started": "已经开始",
    "never started": "从未开始",
    "for '{case}' {id} {which}, and your result says {said!r}.": "对于“{case}”，{id} {which}，而你的结果写的是 {said!r}。",
    "the model must tell a call that may have had effects (it had started) from one that had none (it never "
    "started): use the package's two texts, one for each.":
        "模型必须能区分可能已经产生副作用的调用（已经开始）和毫无影响的调用（从未开始）：使用包里的两段文字，各用于一种情况。",
    "{count} cases: results in call order, 'while running' and 'never started' told apart.":
        "{count} 种情况：结果按调用顺序排列，“运行中被中断”和“从未开始”区分清楚。",
    "interrupted results": "中断后的结果",
    'scenario {scenario}: you predicted {got}, but the executor did not run these calls that way.':
        '场景 {scenario}：你预测的是 {got}，但执行器并不是这样运行这些调用的。',
    'tool_uses are the response\'s ToolUseBlock objects (as in response.content), not the dicts the chapter built by hand: read use.id and use.name, not use["id"]. results holds dicts.':
        'tool_uses 是响应里的 ToolUseBlock 对象（和 response.content 里的一样），不是本章手工构造的字典：读 use.id 和 use.name，不要写 use["id"]。results 里放的是字典。',
    # what the chapter's own cells print (notebooks/05_streaming_tools.ipynb, through tr)
    "switch {name}: {summary}": "开关{name}着：{summary}",
    "the turn went on {seconds:.1f} s after the stream ended": "流结束之后，这一轮又持续了 {seconds:.1f} 秒",
    "the same history, as the API receives it:": "API 收到的历史相同：",
    "the same second request:": "第二次请求相同：",
    "the order the small version predicts:": "与小版本预测的顺序相同：",
    "(nobody is watching: the cell presses Stop once the Edit's block is complete)":
        "（没有人在看：Edit 的块一完整，单元格就替你按下停止）",
    "notes.md exists:": "notes.md 存在：",
    "{name}: {tool} arrives at {at}, runs {ticks}": "{name}：{tool}，第 {at} 刻到达，运行 {ticks} 刻",
}
