"""Chinese for chapter 11's checks (``dreamloop/exercises/ch11.py``): the real loop, Claude Code beside dreamloop.

Terms: 场景 (scenario), 请求 (request), 提醒块 (reminder block), 录制的预期 (the recorded expectations),
终止原因 (ending, ``terminal_reason``).
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
        "（terminal_reason）说出终止原因。",
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
        "第一次请求发送的一切都是新增的，第一条用户消息里的上下文提醒块也算。",
    "a request need not keep the previous one's messages: a message that changed is new, even at a place the "
    "previous request had filled (look at how many messages each request sends, and whether they are the same).":
        "一次请求不一定保留上一次请求的消息：变了的消息就是新的，哪怕它所在的位置上一次请求也有消息"
        "（看看每次请求发送了几条消息，它们是否相同）。",
    "recorded: Claude Code {version}, {count} scenarios; the Claude Code cells run":
        "录制的是 Claude Code {version}，共 {count} 个场景；Claude Code 的单元格会运行",
    "recorded: Claude Code {version}, {count} scenarios; the Claude Code cells skip":
        "录制的是 Claude Code {version}，共 {count} 个场景；Claude Code 的单元格跳过",
    "{count} scenarios; the first six:": "{count} 个场景；前六个：",
    "{name}: prompt {prompt!r}, model {model}": "{name}：提示词 {prompt!r}，模型 {model}",
    "script turn {number}: {kinds} · stop_reason {reason}": "脚本第 {number} 轮：{kinds} · stop_reason {reason}",
    "dreamloop ended {reason} after {count} requests": "dreamloop 在 {count} 次请求后以 {reason} 结束",
    "request {number}: {messages} messages, max_tokens {max_tokens}, fields {fields}":
        "第 {number} 次请求：{messages} 条消息，max_tokens {max_tokens}，字段 {fields}",
    "request {number} adds": "第 {number} 次请求新增",
    "as recorded:": "与录制的一致：",
    "Claude Code {version} ended {reason} after {count} requests; as recorded: {same}":
        "Claude Code {version} 在 {count} 次请求后以 {reason} 结束；与录制的一致：{same}",
    "Claude Code cell skipped: install it (make conformance) and start Jupyter with DREAMLOOP_CLAUDE_CODE=1 to "
    "run it; the chapter goes on from the recorded runs.":
        "Claude Code 的单元格已跳过：要运行它，先安装（make conformance），再用 DREAMLOOP_CLAUDE_CODE=1 启动 Jupyter；本章接着用录制的运行讲下去。",
    "request {number}: max_tokens {max_tokens}, {tools} tools, system blocks {system}, context reminders "
    "{context}, cache_control on {marks}, reminders inside results {inside}":
        "第 {number} 次请求：max_tokens {max_tokens}，{tools} 个工具，系统提示块 {system}，上下文提醒块 {context}，cache_control 在 "
        "{marks}，结果里的提醒块 {inside}",
    "fields only Claude Code sends:": "只有 Claude Code 发送的字段：",
    "the message after the Read:": "Read 之后的那条消息：",
    "{count} inside": "内含 {count} 个提醒块",
    "{loop}: ended {reason}; max_tokens of each request: {limits}":
        "{loop}：以 {reason} 结束；每次请求的 max_tokens：{limits}",
    "Claude Code request {number}: one user message; past its {context} context reminders:":
        "Claude Code 第 {number} 次请求：一条用户消息；跳过开头 {context} 个上下文提醒块之后：",
    "Claude Code ended {theirs} | dreamloop ended {ours}": "Claude Code 的结束 {theirs} | dreamloop 的结束 {ours}",
    "{count} req{probe} -> {ending}": "{count} 次请求{probe} -> {ending}",
    "? (you predict it: exercise 1)": "?（由你预测：练习 1）",
    "scenario": "场景",
    "verdict": "结论",
    "  (deliberate: {chapter})": "  （有意为之：{chapter}）",
    "{matched} of the {shown} rows shown MATCH; {hidden} rows wait for exercise 1":
        "显示的 {shown} 行里有 {matched} 行 MATCH；还有 {hidden} 行等着练习 1",
    "the texts' loop": "原文的循环",
    "Claude Code 2.1.332 as observed": "观察到的 Claude Code 2.1.332",
    "a text answer, no tool": "一个文本回答，不用工具",
    "one Read, then the answer": "一次 Read，接着回答",
    "a Read, an Edit, then the answer": "一次 Read、一次 Edit，然后回答",
    "two Reads in one response": "一个响应里两次 Read",
    "parallel: a Read, a Read of a missing file, an unknown tool": "并行：一次 Read、一次读不存在文件的 Read、一个未知工具",
    "a Read whose input lacks file_path": "输入缺少 file_path 的 Read",
    "a failing Bash call beside a running Bash call and a Read": "一个失败的 Bash 调用，旁边是一个正在运行的 Bash 调用和一次 Read",
    "a failing Bash call, then an Edit waiting its turn": "一个失败的 Bash 调用，之后是一个排队等候的 Edit",
    "a text answer cut by max_tokens once": "一个文本回答被 max_tokens 截断一次",
    "every answer cut by max_tokens": "每个回答都被 max_tokens 截断",
    "max_tokens cuts inside an Edit's JSON": "max_tokens 截断在 Edit 的 JSON 中间",
    "max_tokens cuts an answer after a thinking block": "max_tokens 在一个 thinking 块之后截断回答",
    "HTTP 529 on every request, no fallback model": "每次请求都是 HTTP 529，没有回退模型",
    "HTTP 529 from the main model; a fallback model answers": "主模型返回 HTTP 529；回退模型作答",
    "HTTP 404 (an unknown model) from the main model; a fallback model answers": "主模型返回 HTTP 404（未知模型）；回退模型作答",
    "HTTP 429 with retry-after, then the answer": "带 retry-after 的 HTTP 429，然后是回答",
    "HTTP 500 once, then the answer": "一次 HTTP 500，然后是回答",
    "an overloaded_error event while the first text streams": "第一段文本流式输出时出现 overloaded_error 事件",
    "an overloaded_error event inside a tool_use, after a finished text":
        "一段文本结束之后，在 tool_use 里面出现 overloaded_error 事件",
    "an overloaded_error event after a complete tool_use block": "一个完整的 tool_use 块之后出现 overloaded_error 事件",
    "the connection drops while text streams": "文本流式输出时连接断开",
    "the connection drops inside a tool_use": "在 tool_use 里面连接断开",
    "the connection drops after a complete tool_use block": "一个完整的 tool_use 块之后连接断开",
    "'prompt is too long' once, then the answer": "一次 'prompt is too long'，然后是回答",
    "'prompt is too long' on every request": "每次请求都是 'prompt is too long'",
    "'prompt is too long' for ever after three tool turns": "三轮工具之后一直是 'prompt is too long'",
    "stop_reason tool_use with no tool_use block, every time": "stop_reason 是 tool_use 却没有 tool_use 块，每次都这样",
    "an answer that is one empty text block": "回答是一个空的文本块",
    "a model that never stops calling tools, --max-turns 2": "一个不停调用工具的模型，--max-turns 2",
    "a PreToolUse hook blocks an Edit of the file just read (exit 2)": "一个 PreToolUse Hook 阻止对刚读过的文件的 Edit（exit 2）",
    "a PreToolUse hook denies an Edit of the file just read (JSON)": "一个 PreToolUse Hook 拒绝对刚读过的文件的 Edit（JSON）",
    "a PreToolUse hook points the Read at another file": "一个 PreToolUse Hook 让 Read 改读另一个文件",
    "a PostToolUse hook adds context to a Read's result": "一个 PostToolUse Hook 给 Read 的结果加上上下文",
    "a Stop hook blocks the first end (exit 2), then lets it end": "一个停止 hook 阻止第一次结束（exit 2），然后让它结束",
    "a signed thinking block before a tool call, sent back with its signature": "工具调用之前有一个带签名的 thinking 块，连同签名一起送回",
    "a text answer with an Opus model (Claude Code probes first)": "用 Opus 模型的一个文本回答（Claude Code 会先发探测请求）",
    "a workspace with a CLAUDE.md: one Read, then the answer": "一个有 CLAUDE.md 的工作区：一次 Read，然后回答",
    "config.py (read) and CLAUDE.md change on disk between turns": "config.py（读过的）和 CLAUDE.md 在两轮之间被改动",
    "parallel calls that finish in another order than called (a command waiting 2 s, a Read, a command waiting 1 s)":
        "并行的调用按与调用不同的顺序完成（一个等 2 秒的命令、一次 Read、一个等 1 秒的命令）",
    "HTTP 429 on every request to the main model; a fallback model is set": "发给主模型的每次请求都是 HTTP 429；设置了回退模型",
    "HTTP 529 from claude-opus-5-5; claude-sonnet-4-5, the fallback model, answers: each model's max_tokens":
        "claude-opus-5-5 返回 HTTP 529；回退模型 claude-sonnet-4-5 作答：每个模型的 max_tokens",
    "claude-opus-5-5's stream breaks before a block is complete: the max_tokens of the request sent again":
        "claude-opus-5-5 的流在任何内容块完成之前断开：重新发送的请求的 max_tokens",
    "the connection drops in a text after a Bash call that counts its runs has run":
        "一个记录自己执行次数的 Bash 调用执行完之后，连接在一段文本里断开",
    "the connection drops while a slow Bash call that counts its runs still runs":
        "一个记录自己执行次数的慢 Bash 调用还在运行时，连接断开",
    "a content block of a type no SDK knows, between a text and a Read": "一个任何 SDK 都不认识的类型的内容块，位于一段文本和一次 Read 之间",
    "the model reports 990,000 input tokens after a tool call (usage only)":
        "一次工具调用之后，模型报告 990,000 个输入 token（只有 usage 里的数字）",
    "HTTP 400 'Could not process image' on the first request": "第一次请求得到 HTTP 400 'Could not process image'",
    "an Agent call (run_in_background not given): the child reads a file and answers":
        "一个 Agent 调用（没有给出 run_in_background）：子智能体读一个文件，然后回答",
    "two Agent calls in one response; the second child ends about 4 s after the first":
        "一个回答里有两个 Agent 调用；第二个子智能体比第一个晚大约 4 秒结束",
    "a Bash call with run_in_background ends while a foreground command waits 2 s":
        "一个带 run_in_background 的 Bash 调用在一个前台命令等待 2 秒期间结束",
    "a Bash call with run_in_background (3 s) ends after the model has answered":
        "一个带 run_in_background 的 Bash 调用（3 秒）在模型回答之后才结束",
    "a Read of config.py; a person adds a line to it (the old text kept); an Edit of it":
        "一次 Read config.py；有人往里加了一行（原来的文字还在）；然后对它做 Edit",
    "a Read of config.py; a person adds a line; an Edit, then a Write of it":
        "一次 Read config.py；有人加了一行；然后对它先做 Edit，再做 Write",
    "an Edit of config.py, which the model never read": "对模型从未读过的 config.py 做 Edit",
    "a CLAUDE.md whose line @docs/style.md imports another file: one Read, then the answer":
        "一个 CLAUDE.md，其中一行 @docs/style.md 导入另一个文件：一次 Read，接着回答",
    "a CLAUDE.md in the subfolder pkg: two Reads of pkg/helpers.py, then the answer":
        "子文件夹 pkg 里有一个 CLAUDE.md：两次 Read pkg/helpers.py，接着回答",
    "a Read of config.py; a person adds a line to it; a Write of it":
        "一次 Read config.py；有人往里加了一行；然后对它做 Write",
    "a Write of settings.py, a file that does not exist yet": "Write settings.py，一个还不存在的文件",
    "a Write of config.py, which the model never read": "对模型从未读过的 config.py 做 Write",
}
