"""Chinese for the widgets' fixed labels, the loop's flowchart and the run printer (``dreamloop/widgets/``,
``dreamloop/diagram.py``, ``dreamloop/render.py``).

The flowchart's boxes follow the source text's own flowchart (取当前 State, 调用模型并消费流式响应, ...).
Field and pane names (``turn_count``, ``messages_for_query``, ...) stay as they are: they are the code's names.
"""

TEXTS = {
    # the flowchart (diagram.py)
    "1. take the current State": "1. 取当前 State",
    "2. messages_for_query (context pipeline)": "2. 组织 messages_for_query（压缩管线）",
    "3. call the model, stream the response": "3. 调用模型并消费流式响应",
    "tool_use received?": "收到 tool_use？",
    "stop checks": "停止检查",
    "4. run tools, collect tool_result": "4. 执行工具并收集 tool_result",
    "abort, hook stop, max_turns?": "中断、hook 停止或轮数限制？",
    "5. new State: turn_count + 1": "5. 新的 State：turn_count + 1",
    "Terminal (the reason)": "Terminal（终止原因）",
    "no": "否",
    "yes": "是",
    "end": "结束",
    "a stop hook blocks": "停止 hook 阻断",
    "continue": "继续",
    "queryLoop(): one iteration": "queryLoop()：一次迭代",
    # AskPrompt
    "No question yet.": "还没有问题。",
    "Allow": "允许",
    "Deny": "拒绝",
    "Allow {tool}?": "允许 {tool} 吗？",
    "permission": "权限",
    "waiting for your answer…": "等待你的回答…",
    "auto-answered: {answer}": "已自动回答：{answer}",
    "no answer within {seconds:g} s: denied": "{seconds:g} 秒内没有回答：已拒绝",
    "cancelled (the run was stopped)": "已取消（运行被停止）",
    "allowed": "已允许",
    "denied": "已拒绝",
    "answers:": "回答：",
    # the stored snapshot (static.py)
    "a snapshot stored with the notebook; run the cell for the live widget":
        "随笔记本保存的快照；运行这个单元格即可看到可交互的组件",
    # messages as HTML (html.py)
    "… ({count} more characters)": "…（还有 {count} 个字符）",
    "for {tool}": "回应 {tool}",
    "for an unknown call": "回应一个未知的调用",
    "(hidden: only its signature was kept)": "（已隐藏：只保留了它的签名）",
    "(encrypted)": "（已加密）",
    "withdrawn: {uuid}": "已撤回：{uuid}",
    "(sent to the model)": "（会发给模型）",
    "(UI only)": "（只在界面显示）",
    # StateInspector
    "checkpoint": "检查点",
    "checkpoint {index} (numbered 0 to {last})": "检查点 {index}（编号 0 至 {last}）",
    "sub-agent": "子智能体",
    "open the child run": "打开子运行",
    "back to the parent run": "回到父运行",
    "started, no end recorded": "已开始，没有记录结束",
    "stopped ({reason})": "已停止（{reason}）",
    "stopped ({reason}): {note}": "已停止（{reason}）：{note}",
    "stopped by a TaskStop call": "被一次 TaskStop 调用停止",
    "stopped because the parent's run ended": "因父运行结束而停止",
    "stopped when the parent's wait for its notification ran out": "父运行等待它的任务通知超时，因而停止",
    "stopped when the parent was stopped ({reason})": "父运行被停止时随之停止（{reason}）",
    "{reason}, {count} turns": "{reason}，{count} 轮",
    "the child run of the call {call} (checkpoint {index} of the parent)":
        "调用 {call} 的子运行（父运行的检查点 {index}）",
    "sub-agent runs started here (open_child shows one):": "这里启动的子智能体运行（open_child 打开其中一个）：",
    "State.messages as the iteration began": "本次迭代开始时的 State.messages",
    "what phase 2 (the context pipeline) handed to the model call": "阶段 2（压缩管线）交给模型调用的消息",
    "phase 3: the model's response(s) this turn": "阶段 3：本轮模型的响应",
    "phase 4: the tool_result messages this turn": "阶段 4：本轮的 tool_result 消息",
    "phase 5 and notices: queued input, max_turns_reached, hook records, stop hook feedback":
        "阶段 5 与通知：排队的输入、max_turns_reached、hook 记录、停止 hook 的反馈",
    "No checkpoint yet: the first is taken after turn 1's tools ran (or when the loop ends).":
        "还没有检查点：第一个检查点在第 1 轮的工具执行完后记录（或在循环结束时）。",
    " (the same as State.messages: no context stage changed them)": "（与 State.messages 相同：没有压缩管线的哪一步改动它们）",
    " (differs from State.messages: a context stage changed them)": "（与 State.messages 不同：压缩管线的某一步改动了它们）",
    " (the conversation messages only: the file holds no system prompt and no tool definitions)":
        "（只有对话消息：文件里没有系统提示词，也没有工具定义）",
    " (the request's messages as sent, recorded in the file, with the reminders Claude Code added)":
        "（请求实际发出的消息，取自文件的记录，含 Claude Code 加入的提醒）",
    "request as sent (line {line}): model {model}, max_tokens {max_tokens}, system prompt {blocks} block(s), "
    "{tools} tool(s), {messages} message(s) with {reminders} <system-reminder> block(s); cache_control at {cache}":
        "实际发出的请求（第 {line} 行）：模型 {model}，max_tokens {max_tokens}，系统提示词 {blocks} 块，"
        "{tools} 个工具，{messages} 条消息，其中 {reminders} 个 <system-reminder> 块；cache_control 位于 {cache}",
    "digest checked": "摘要已核对",
    "digest differs": "摘要不符",
    "tools (description length):": "工具（描述长度）：",
    "other fields:": "其他字段：",
    "then": "之后",
    "continue: {reason}": "继续：{reason}",
    "{count} message": "{count} 条消息",
    "{count} messages": "{count} 条消息",
    ", {count} new": "，{count} 条新增",
    "… {count} earlier messages not shown (StateInspector(trace, max_messages=None) shows all)":
        "… 更早的 {count} 条消息未显示（StateInspector(trace, max_messages=None) 会全部显示）",
    "(none)": "（无）",
    "new": "新",
    "None (the first iteration)": "None（第一次迭代）",
    "the model is answering a stop hook's feedback (the meta user message marked new in messages)":
        "模型正在回应停止 hook 的反馈（messages 中标为“新”的那条 meta 用户消息）",
    "changed: nothing before this (the loop's first State)": "变化：此前没有检查点（这是循环的第一个 State）",
    "changed: {changes}": "变化：{changes}",
    "→ continue: next transition={reason} (the next State has {count} messages)":
        "→ 继续：下一个 transition={reason}（下一个 State 有 {count} 条消息）",
    "the file ends here (no Terminal recorded)": "文件到此结束（没有记录 Terminal）",
    "the run is still going (refresh() to re-read)": "运行仍在进行（调用 refresh() 重新读取）",
    "notes:": "备注：",
    "Claude Code session {name} (Claude Code {versions}) · branch {branch}{sidechain} of {branches}":
        "Claude Code 会话 {name}（Claude Code {versions}）· 分支 {branch}{sidechain}，共 {branches} 个分支",
    " (a sidechain)": "（旁支）",
    "imported: {kind}": "导入自：{kind}",
    "{delta:+d} message": "{delta:+d} 条消息",
    "{delta:+d} messages": "{delta:+d} 条消息",
    ", ": "，",
    # LiveView
    "waiting for a run": "等待运行",
    "Stop": "停止",
    "Stopping…": "正在停止…",
    "Fire the run's abort signal": "触发这次运行的中断信号",
    "● running": "● 运行中",
    "ended": "已结束",
    "ended with {error}": "以 {error} 结束",
    "phase: {phase}": "阶段：{phase}",
    "stopping (abort signal fired)": "正在停止（已触发中断信号）",
    "running…": "运行中…",
    "streaming…": "流式输出中…",
    "streamed before the end (blocks that never finished are not kept)": "结束前已流式输出的内容（未完成的块不会保留）",
    "→ user message with 1 tool_result block (call order) goes back to the model":
        "→ 含 1 个 tool_result 块的用户消息（按调用顺序）交回模型",
    "→ user message with {count} tool_result blocks (call order) goes back to the model":
        "→ 含 {count} 个 tool_result 块的用户消息（按调用顺序）交回模型",
    "… {count} earlier turns (StateInspector(run.trace) shows every one)":
        "… 更早的 {count} 轮（StateInspector(run.trace) 会显示每一轮）",
    # Timeline
    "no turns yet": "还没有轮次",
    "turn {n}: model": "第 {n} 轮：模型",
    " {seconds:.2f} s": " {seconds:.2f} 秒",
    " (interrupted)": "（中断）",
    " (is_error)": "（is_error）",
    ", no tools": "，无工具",
    ", tools: ": "，工具：",
    ", then ": "，然后 ",
    " in parallel": " 并行",
    " ({notes})": "（{notes}）",
    "{count} is_error": "{count} 个 is_error",
    "interrupted": "中断",
    "started while the model streamed": "在模型流式输出时开始",
    "{count} started while the model streamed": "{count} 个在模型流式输出时开始",
    "total": "总计",
    "No checkpoint yet.": "还没有检查点。",
    "turn {n} model": "第 {n} 轮 模型",
    "the stream ended here": "流式输出在此结束",
    "seconds since the run started": "自运行开始的秒数",
    "model streaming": "模型流式输出",
    "tool running": "工具运行",
    "is_error / interrupted": "is_error / 中断",
    # StateInspector: what a context stage wrote (chapter 06)
    "origin: queued input": "来源：排队的输入",
    "{stage} wrote this: unfold the {count} original message": "{stage} 写下了这一条：展开那 {count} 条原始消息",
    "{stage} wrote this: unfold the {count} original messages": "{stage} 写下了这一条：展开那 {count} 条原始消息",
    "… {count} more": "… 还有 {count} 条",
    "context: {tokens:,} tokens sent of a {window:,}-token window": "上下文：在 {window:,} token 的窗口里发送了 {tokens:,} 个 token",
    " · no stage changed anything": " · 没有哪一步改动任何东西",
    # ContextMeter (chapter 06)
    " (window {window:,})": "（窗口 {window:,}）",
    "turn {n}: {tokens:,} tokens sent": "第 {n} 轮：发送了 {tokens:,} 个 token",
    "{count} fold staged": "{count} 个折叠已暂存",
    "{count} folds staged": "{count} 个折叠已暂存",
    "cache read {read:,}, written {written:,}": "缓存读取 {read:,}，写入 {written:,}",
    "stopped: {reason} (nothing sent)": "已停止：{reason}（什么也没发送）",
    "ended: {reason}": "已结束：{reason}",
    "all requests: {sent:,} input tokens; cache read {read:,}, written {written:,}, uncached {uncached:,}":
        "全部请求：输入 {sent:,} 个 token；缓存读取 {read:,}，写入 {written:,}，未缓存 {uncached:,}",
    "the checkpoint the inspector shows": "检查器显示的检查点",
    "turn {n}: {stage} saved {saved:,} tokens": "第 {n} 轮：{stage} 省下了 {saved:,} 个 token",
    "cache read": "缓存读取",
    "cache write": "缓存写入",
    "uncached": "未缓存",
    "turn {n}: {what} {value:,} tokens": "第 {n} 轮：{what} {value:,} 个 token",
    "tokens per request": "每次请求的 token 数",
    "sent": "已发送",
    "input by cache status": "按缓存状态划分的输入",
    "read": "读取",
    "written": "写入",
    "turn_count below": "下方为 turn_count",
    # recovery in the widgets (live.py, inspector.py): what a tombstone withdrew, the counters, a fallback
    "withdrawn with its response (a tombstone): its effects may remain": "已随它的响应一起被撤回（墓碑消息）：它的副作用可能仍在",
    "withdrawn by a tombstone ({reason})": "已被墓碑消息撤回（{reason}）",
    "withdrawn by a tombstone ({reason}): no request carries it": "已被墓碑消息撤回（{reason}）：任何请求都不会再带上它",
    "tombstoned": "已撤回",
    "counters:": "计数器：",
    "model": "模型",
    " {seconds:.3f} s": " {seconds:.3f} 秒",
    "{seconds:g} s": "{seconds:g} 秒",
    "→ continue: next transition={reason} (the next State has {count} messages, rewritten by the recovery)":
        "→ 继续：下一个 transition={reason}（下一个 State 有 {count} 条消息，已被恢复分支改写）",
    "falling back to {model}": "模型回退到 {model}",
    "overloaded: asking again {count}/{limit}": "过载：再次请求 {count}/{limit}",
    # a transition's detail, as the loop names it for the UI (recovery.py)
    "escalating max_tokens to {limit:,}": "max_tokens 提升到 {limit:,}",
    "resuming {attempt}/{limit}": "输出截断恢复 {attempt}/{limit}",
    "the stream broke; resuming": "流断开了；续写",
    "asking again {attempt}/{limit}": "再请求一次 {attempt}/{limit}",
    "draining {count} staged collapse": "提交 {count} 个暂存的上下文折叠",
    "draining {count} staged collapses": "提交 {count} 个暂存的上下文折叠",
    "compacting the conversation, then retrying": "响应式压缩对话，然后重试",
    "{percent}% of the {total:,}-token budget used": "已用掉 {total:,} token 预算的 {percent}%",
    # the Switchboard (switchboard.py) and what each switch turns on (QueryParams' field descriptions, query.py)
    "switch": "开关",
    "chapter": "章",
    "turns on": "打开什么",
    "off": "关",
    "on": "开",
    "each tool call starts as soon as its tool_use block is complete": "每个工具调用在它的 tool_use 块完整时立即开始",
    "the results of parallel calls go back in the order the calls finished": "并行调用的结果按调用完成的顺序交回",
    "a Bash call that ran and failed cancels the calls beside and after it": "一个执行了并且失败了的 Bash 调用会取消它旁边和后面的调用",
    "the context pipeline: seven stages, light to heavy, before each request": "压缩管线：每次请求前，从轻到重的七个步骤",
    "hook events: around each tool call, at the stop checks, before a compaction":
        "Hook 事件：每个工具调用前后、停止检查时、压缩之前",
    "escalate and resume after max_tokens; collapse drain and reactive compaction after prompt is too long":
        "max_tokens 截断后提升输出上限并恢复；提示词过长时先提交上下文折叠，再做响应式压缩",
    "each model's output limit as Claude Code 2.1.332 sent it, at most 64,000 on a request sent again without "
    "streaming":
        "每个模型的输出上限按 Claude Code 2.1.332 发送的来；不用流式重发的请求最多 64,000",
    "after repeated overloads another model takes over; what was shown is tombstoned":
        "多次过载后换另一个模型接手（模型回退）；已展示的内容用墓碑消息撤回",
    "a turn that ends under budget goes on, until diminishing returns": "未用完预算就结束的一轮会续跑，直到收益递减",
    'ran ✓{took}':
        '已执行 ✓{took}',
    'ran ✗{took}':
        '已执行 ✗{took}',
    'cut short ✗{took}':
        '被中途打断 ✗{took}',
    'never started ✗':
        '从未开始 ✗',
    # CompareView (chapter 11)
    "{count} ch": "{count} 字符",
    "+{count} reminder inside": "内含 {count} 个提醒",
    "request": "请求",
    "ending: {reason}": "结束：{reason}",
    "none": "无",
    "{count} tools": "{count} 个工具",
    "request {number} of {count}": "第 {number} 次请求，共 {count} 次",
    " · {turns} turns": " · {turns} 轮",
    "fields": "字段",
    "request {number}: the same under the MATCH rule": "第 {number} 次请求：按 MATCH 规则相同",
    "no request {number}: this side sent {count}": "没有第 {number} 次请求：这一方只发送了 {count} 次",
    "the workspace's CLAUDE.md files open the first user message": "工作区的 CLAUDE.md 文件放在第一条用户消息的开头",
    "Write and Edit refuse a file the model has not read as it is now": "模型没有读过某文件当前的样子时，Write 和 Edit 拒绝改它",
    "phase 5 tells the model when a file it read, or a CLAUDE.md, changed on disk":
        "阶段 5 告诉模型：它读过的文件或某个 CLAUDE.md 在磁盘上变了",
    "a short summary of each batch of tool calls, yielded in the next iteration": "每批工具调用的简短摘要，在下一次迭代中产出",
    "the system prompt says where the agent works: directory, platform, git, the date":
        "系统提示词说明智能体在哪里工作：目录、平台、是否 git 仓库、日期",
    "the Agent tool: a task runs in a nested loop with its own State and tools":
        "Agent 工具：一项任务在嵌套的循环里运行，有它自己的 State 和工具",
    "a Bash command may run in the background; phase 5 says when it ended, once":
        "Bash 命令可以在后台运行；它结束时，阶段 5 告知一次",
    "stopped while streaming": "流式输出时被停止",
    # the run printer (render.py): its one sentence; its field names stay as they are
    "({kind}: a block type this version does not know, kept as received)":
        "（{kind}：这个版本不认识的块类型，按收到的原样保留）",
    # the run printer's shortened result (render.py _preview)
    '… ({count} more lines)': '…（还有 {count} 行）',
    # the inspector's attachment origins (widgets/inspector.py, attachment_origin)
    "memory file {path}": "记忆文件 {path}",
    "changed file {path}": "变了的文件 {path}",
    "queued input": "排队的输入",
    "hook {event} ({name})": "hook {event}（{name}）",
    "hook {event}": "hook {event}",
    "background task {task}": "后台任务 {task}",
    "the loop (max_turns)": "循环本身（max_turns）",
    "from: {origin}": "来自：{origin}",
}
