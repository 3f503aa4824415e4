"""Chinese for chapter 11's checks (``dreamloop/exercises/ch11.py``): the real loop, Claude Code beside dreamloop.

Terms: 场景 (scenario), 请求 (request), 提醒块 (reminder block), 录制的预期 (the recorded expectations),
结束方式 (ending, ``terminal_reason``).
"""

TEXTS = {
    # exercise 1: predict Claude Code
    "a cut that never heals: how many times does Claude Code resume before it gives up, and what does its result "
    "line call that ending?":
        "一直被截断、永远好不了：Claude Code 续写几次之后放弃？它的结果行又把这种结束叫作什么？",
    "a dropped connection is not an error event in the stream: compare how Claude Code handled the HTTP 500 and "
    "the error event, and count what the script plays after the failure.":
        "连接断开不是流里的错误事件：对比 Claude Code 怎样处理 HTTP 500 和错误事件，再数一数失败之后脚本还会放出哪些轮次。",
    "every attempt answers 529; dreamloop compare bounds Claude Code's retries (CLAUDE_CODE_MAX_RETRIES=2) and "
    "there is no fallback model. How does its result line name a request that failed for good?":
        "每次尝试都返回 529；dreamloop compare 限定了 Claude Code 的重试次数（CLAUDE_CODE_MAX_RETRIES=2），"
        "而且没有回退模型。一个彻底失败的请求，它的结果行叫作什么？",
    "the main model's attempts are bounded as in http_529; what changes with a fallback model is what follows them.":
        "主模型的尝试次数和 http_529 一样有上限；有了回退模型，变的是这些尝试之后发生的事。",
    "count every request that reached the model (retries of the same request too, the probe not), and name the "
    "ending as Claude Code's result line does (terminal_reason).":
        "数出到达模型的每一次请求（同一请求的重试也算，探测请求不算），并按 Claude Code 结果行的叫法"
        "（terminal_reason）说出结束方式。",
    "return a pair (requests, ending) for the scenario named, e.g. (2, 'completed')":
        "对给定名字的场景返回一个二元组 (requests, ending)，例如 (2, 'completed')",
    "the recorded expectations were not found (conformance/ beside the package).":
        "找不到录制的预期（应在包旁边的 conformance/ 里）。",
    "run the chapter from a checkout of the repository (git clone), where conformance/ is.":
        "在仓库的检出目录（git clone）里运行本章，conformance/ 就在那里。",
    "{count} scenarios predicted as Claude Code 2.1.332 ran them.":
        "{count} 个场景都预测得和 Claude Code 2.1.332 的实际运行一致。",
    "predict Claude Code": "预测 Claude Code",
    "predict({name!r}) returned {got}; expected a pair (requests, ending): an int and a str.":
        "predict({name!r}) 返回了 {got}；应当是一个二元组 (requests, ending)：一个 int 和一个 str。",
    "for {name!r} you predicted what dreamloop does; Claude Code 2.1.332 did otherwise.":
        "对于 {name!r}，你预测的是 dreamloop 的做法；Claude Code 2.1.332 的做法不同。",
    "too many": "太多了",
    "too few": "太少了",
    "for {name!r}, a count of {count} requests is {direction}.": "对于 {name!r}，{count} 次请求{direction}。",
    "for {name!r} the request count is right, but Claude Code's run did not end {ending!r}.":
        "对于 {name!r}，请求次数对了，但 Claude Code 的运行并不是以 {ending!r} 结束的。",
    # exercise 2: what each request adds
    "a request resends the whole conversation: what it adds is what comes after the longest run of messages it "
    "shares with the previous request, compared without cache_control (the marker moves). A reminder is a block of "
    "kind 'reminder'; one inside a tool_result is part of that result, not a block.":
        "每次请求都会重发整段对话：它新增的，是它与上一次请求共有的最长一段消息之后的部分；比较时不看 cache_control"
        "（这个标记会移动）。提醒是 kind 为 'reminder' 的块；tool_result 内部的提醒是那个结果的一部分，不是一个块。",
    "return one number per request: the reminder blocks in the messages that request added":
        "每次请求返回一个数：这次请求新增的消息里有几个提醒块",
    "{count} recorded runs: the reminders each request added, found by what it shares with the one before.":
        "{count} 次录制的运行：每次请求新增的提醒块，都是从它与上一次请求的共同部分之后找出来的。",
    "reminders added": "新增的提醒块",
    "for {who} on {name!r} it returned {got}; expected a list of whole numbers.":
        "对于 {who} 在 {name!r} 上的运行，它返回了 {got}；应当是一个整数列表。",
    "for {who} on {name!r} you gave {count} numbers; that run sent {requests} requests.":
        "对于 {who} 在 {name!r} 上的运行，你给出了 {count} 个数；那次运行发送了 {requests} 次请求。",
    "one number per request, the first request included: it adds everything it sends.":
        "每次请求一个数，第一次请求也算：它发送的一切都是新增的。",
    "for {who} on {name!r}, request {number}: {count} is {direction}.":
        "对于 {who} 在 {name!r} 上的运行，第 {number} 次请求：{count} {direction}。",
    "you counted every reminder the request carries; most of them were sent before. Count only the messages this "
    "request added.":
        "你数的是这次请求携带的全部提醒块，其中大多数之前已经发送过。只数这次请求新增的消息。",
    "the cache_control marker moves to the newest message every request: an old message with the marker taken off "
    "is still the same message. Compare messages without it.":
        "每次请求，cache_control 标记都会移到最新的消息上：去掉了标记的旧消息仍是同一条消息。比较消息时不要看它。",
    "a reminder inside a tool_result's content is part of that result (Claude Code 2.1.332 put one in the last "
    "result of each results message, one_tool): count blocks of kind 'reminder' only.":
        "tool_result 内容里的提醒是那个结果的一部分（Claude Code 2.1.332 在每条结果消息的最后一个结果里放了一个，one_tool）："
        "只数 kind 为 'reminder' 的块。",
    "the first request adds everything it sends, the context reminders in the first user message too.":
        "第一次请求发送的一切都是新增的，第一条 user 消息里的上下文提醒块也算。",
    "a request need not keep the previous one's messages: a message that changed is new, even at a place the "
    "previous request had filled (look at how many messages each request sends, and whether they are the same).":
        "一次请求不一定保留上一次请求的消息：变了的消息就是新的，哪怕它所在的位置上一次请求也有消息"
        "（看看每次请求发送了几条消息，它们是否相同）。",
}
