"""Chinese for the checks of chapters 08 and 08b (``dreamloop/exercises/ch08.py``): the recovery branches.

Terms follow the source text: 提升输出 token 限制 (escalate), 输出截断恢复 (resume), 墓碑消息 (tombstone),
模型回退 (fallback), Token 预算续跑 (token budget continuation).
"""

TEXTS = {
    # exercise 1: after a max_tokens cut
    "the first cut of a turn": "本轮第一次截断",
    "cut again after the escalation": "提升上限后再次截断",
    "cut after one resume": "恢复一次后截断",
    "cut after two resumes": "恢复两次后截断",
    "cut after three resumes": "恢复三次后截断",
    "the first cut of turn 2 (next_turn reset the counters)": "第 2 轮的第一次截断（next_turn 重置了计数器）",
    "the same turn, cut again": "同一轮里再次截断",
    "the State's counters say which rung this turn is on: max_output_tokens_override is set once the turn has "
    "escalated, max_output_tokens_recovery_count counts its resumes. Take the rungs in order, each no more often "
    "than the exercise allows; past the last one, give up.":
        "State 的计数器说明这一轮走到了哪一级：本轮提升过输出上限后，max_output_tokens_override 就有了值；"
        "max_output_tokens_recovery_count 记录恢复了几次。按顺序走这几级，每一级不超过练习允许的次数；"
        "最后一级之后，就放弃。",
    "return dl.Continue(reason='max_output_tokens_escalate', max_tokens=64000), "
    "dl.Continue(reason='max_output_tokens_recovery', attempt=n) or None, from the State's counters.":
        "根据 State 的计数器，返回 dl.Continue(reason='max_output_tokens_escalate', max_tokens=64000)、"
        "dl.Continue(reason='max_output_tokens_recovery', attempt=n) 或 None。",
    "for '{case}' it returned {got}; expected a dl.Continue or None.":
        "对于“{case}”，它返回了 {got}；应当返回 dl.Continue 或 None。",
    " Three resumes are the bound: without it an always-truncating model is asked forever.":
        "三次恢复就是上限：没有它，一个总被截断的模型会被无休止地请求下去。",
    " The first cut of a turn escalates: more room may finish the answer in one piece.":
        "本轮第一次截断时提升输出上限：空间更大，回答也许能一次写完。",
    " The limit was already raised this turn: escalating again changes nothing.":
        "本轮已经提升过上限：再提升一次什么也不会改变。",
    "for '{case}' you said {got}, which is not what the loop does.": "对于“{case}”，你的答案是 {got}，循环不是这样做的。",
    "against a model that always hits max_tokens your rule goes round more than 8 times in one turn: an unbounded "
    "resume loop.":
        "面对一个总是触到 max_tokens 的模型，你的规则在一轮里转了 8 次以上：这是一个没有上限的恢复循环。",
    "against an always-truncating model your rule made {passes} recovery passes; the loop makes 4 (one escalation, "
    "three resumes), so 5 requests.":
        "面对一个总被截断的模型，你的规则做了 {passes} 次恢复；循环做 4 次（一次提升上限、三次截断恢复），"
        "也就是 5 次请求。",
    "six States decided as the loop does; an always-truncating model gets 5 requests, then the run ends.":
        "六个 State 的判断都与循环一致；总被截断的模型收到 5 次请求，然后运行结束。",
    "recovery after a max_tokens cut": "max_tokens 截断后的恢复",
    # exercise 2: what a failed attempt withdraws
    "an overload after some text": "输出了一些文本后过载",
    "an overload after a call had started (streaming tool execution)": "一个调用已经开始后过载（流式工具执行）",
    "an HTTP 529, nothing shown": "HTTP 529，什么都还没显示",
    "a tombstone withdraws what the person was shown and the loop does not keep: the partial response (which event "
    "carried its id?), if one began. A call that had started is never withdrawn. Stream events themselves are not "
    "messages; nothing is withdrawn twice.":
        "墓碑消息撤回已经展示给人看、而循环不保留的东西：部分响应（如果开始了的话；它的 id 是哪个事件带来的？）。"
        "已经开始的调用从不被撤回。流式事件本身不是消息；同一条东西不会被撤回两次。",
    "for '{case}' you withdraw {extra}, the progress of a call that had started. Such a call is never withdrawn: it "
    "runs once, to its end, and the model reads its result.":
        "对于“{case}”，你撤回了 {extra}，这是一个已经开始的调用的进度消息。这样的调用从不被撤回：它只执行一次、"
        "执行到底，模型会读到它的结果。",
    "for '{case}' you withdraw {twice} more than once; each shown message is withdrawn once.":
        "对于“{case}”，你把 {twice} 撤回了不止一次；每条展示过的消息只撤回一次。",
    "for '{case}' you withdraw the right ids in another order, {got}; the loop withdraws them in the order "
    "they were shown.":
        "对于“{case}”，你撤回的 id 对了，但顺序不同：{got}；循环按它们展示的顺序撤回。",
    "return the ids to withdraw, in order: the partial response's id (from message_start), if one began.":
        "按顺序返回要撤回的 id：如果部分响应开始了，就是它的 id（来自 message_start）。",
    "for '{case}' it returned {got}; expected a list of ids.": "对于“{case}”，它返回了 {got}；应当返回一个 id 列表。",
    "for '{case}' you withdraw nothing: the failed attempt's partial text stays on screen as if it were the answer, "
    "beside the fallback model's.":
        "对于“{case}”，你什么都没有撤回：失败那次尝试的部分文本会留在屏幕上，像是回答的一部分，"
        "和回退模型的回答并排出现。",
    "for '{case}' you withdraw {extra}, which the attempt never showed as a message.":
        "对于“{case}”，你撤回了 {extra}，但这次尝试从未把它们作为消息展示过。",
    "for '{case}' you withdraw {got}; {count} more of what the attempt showed stay on screen ({kinds}).":
        "对于“{case}”，你撤回了 {got}；这次尝试展示过的内容还有 {count} 项留在屏幕上（{kinds}）。",
    "three failed attempts: the partial response withdrawn by its message_start id, a call that had started kept, "
    "nothing withdrawn when nothing was shown.":
        "三次失败的尝试：部分响应按它的 message_start id 撤回，已经开始的调用被保留，什么都没显示时什么也不撤回。",
    "what a failed attempt withdraws": "失败的尝试要撤回什么",
    # exercise 3: the token budget
    "a first answer of 300 tokens, budget 10,000": "第一次回答用了 300 个 token，预算 10,000",
    "at 8,999 of 10,000": "已用 10,000 中的 8,999",
    "at 9,000 of 10,000": "已用 10,000 中的 9,000",
    "three continuations, +120 after +80": "续跑三次，+80 之后 +120",
    "three continuations, +120 after +900": "续跑三次，+900 之后 +120",
    "three continuations, +700 after +80": "续跑三次，+80 之后 +700",
    "two continuations, +120 after +80": "续跑两次，+80 之后 +120",
    "four continuations, +10 after +10": "续跑四次，+10 之后 +10",
    "a model that answers in 40 tokens": "每次只回答 40 个 token 的模型",
    "two questions, both about the whole run: is it still under the completion threshold of its budget, and have "
    "returns diminished (enough continuations made, and the last two steps each small)? This step is what was "
    "added since tracking.tokens; the one before it is tracking.last_delta.":
        "两个问题，都针对整次运行：用量是否仍低于预算的完成阈值？收益是否已经递减（续跑次数够了，且最近两步都很小）？"
        "这一步是自 tracking.tokens 以来新增的量；上一步是 tracking.last_delta。",
    "return True to go on (a continuation), False to stop, from the tokens used and the tracking so far.":
        "根据已用的 token 和目前的追踪记录，返回 True 表示继续（续跑），False 表示停止。",
    "for '{case}' it returned {got}; expected True or False.": "对于“{case}”，它返回了 {got}；应当返回 True 或 False。",
    "for '{case}' you would go on; the loop stops.": "对于“{case}”，你会继续；循环会停止。",
    "for '{case}' you would stop; the loop goes on.": "对于“{case}”，你会停止；循环会继续。",
    "a model that adds 40 tokens a turn kept going more than 12 times under your rule: returns diminish and the "
    "budget never fills, so it would run on and on.":
        "一个每轮只多写 40 个 token 的模型，在你的规则下续跑了 12 次以上：收益递减而预算永远用不完，"
        "它会一直跑下去。",
    "eight cases decided as the loop does; a 40-token model stops after {passes} continuations.":
        "八种情况的判断都与循环一致；每次 40 个 token 的模型在续跑 {passes} 次后停止。",
    "token budget continuation": "Token 预算续跑",
    " The attempt is off: it numbers this turn's resumes, this one included.": "attempt 不对：它给本轮的恢复编号，这一次也算在内。",
    " The escalated limit is the one the exercise gives.": "提升后的上限就是练习里给出的那个数。",
    " This turn has a rung left to try: giving up now ends a run that could still finish.":
        "本轮还有一级可以尝试：现在放弃，会结束一次本来还能完成的运行。",
    "the partial response": "部分响应",
    "{count} progress message(s)": "{count} 条进度消息",
    # what chapter 08b's own cells print (notebooks/08b_fallbacks.ipynb, through tr)
    "summarise": "写摘要",
    "the error in an assistant or user message:": "错误是否出现在助手消息或用户消息里：",
    "models asked:": "问过的模型：",
    "the same messages each time:": "每次的消息都相同：",
    "{count:2} requests, {reason}": "{count:2} 次请求，{reason}",
    "requests (streamed, max_tokens):": "请求（是否流式，max_tokens）：",
    "the second request adds:": "第二次请求新增的：",
    "runs:": "运行的调用：",
    "streamed {streamed:>7,}   sent again without streaming {again:>7,}":
        "流式 {streamed:>7,}   改为非流式重发 {again:>7,}",
    "nudge:": "续跑提示：",
    # what chapter 08's own cells print (notebooks/08_recovery.ipynb, through tr)
    "withdrawn:": "撤回：",
    "max_tokens per request:": "每次请求的 max_tokens：",
    "Write ever ran:": "Write 运行过吗：",
    "the second request is the first one again:": "第二次请求就是第一次请求：",
    "requests:": "请求：",
    "the note starts:": "那段说明的开头：",
    "signature sent back unchanged:": "signature 原样发回：",
    "the recovery message:": "恢复消息：",
}
