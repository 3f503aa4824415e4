"""Chinese for chapter 12's checks (``dreamloop/exercises/ch12.py``) and the labels its cells print: the loop
inside the loop.

Terms (``notebooks/zh/glossary.md``): 子智能体 (sub-agent), 父循环 (the parent), 后台命令 (a background command),
任务通知 (a task notification: the conversation-loop text's own word), 请求 (request).
"""

TEXTS = {
    # exercise 1: whose request
    "a request resends its whole conversation; a sub-agent's conversation is its own, and what tells one "
    "conversation from another is how it begins.":
        "每次请求都会重发整段对话；子智能体的对话是它自己的，区分两段对话的，是它们怎样开头。",
    "return one entry per request: 'parent', or the prompt of the sub-agent that sent it":
        "每次请求返回一项：'parent'，或者发出这次请求的子智能体的提示词",
    "the run with one sub-agent": "有一个子智能体的那次运行",
    "the run with two sub-agents": "有两个子智能体的那次运行",
    "on {run} it returned {got}; expected a list of strings.": "在{run}上，它返回了 {got}；应当是一个字符串列表。",
    "on {run} you gave {count} entries; the server received {requests} requests.":
        "在{run}上，你给出了 {count} 项；服务收到的请求是 {requests} 次。",
    "one entry per request, the parent's and the sub-agents' alike.": "每次请求一项，父循环的和子智能体的都算。",
    "on {run}, request {number} was not sent by {said!r}.": "在{run}上，第 {number} 次请求不是 {said!r} 发出的。",
    "{count} requests of two runs, each given to the loop that sent it.":
        "两次运行的 {count} 次请求，每一次都归给了发出它的循环。",
    "whose request": "谁的请求",
    "the parent's request after an Agent call carries that call's input, its prompt included, and the sub-agent's "
    "answer: a prompt somewhere in a request does not make it the sub-agent's. Look at how the conversation begins.":
        "Agent 调用之后父循环的请求带着这次调用的输入（包括提示词）和子智能体的回答：请求里某处出现了提示词，"
        "并不说明它是子智能体的。看对话怎样开头。",
    "a sub-agent's later requests end with its own tool_result, not with its prompt; what every request of one "
    "conversation shares is its first message.":
        "子智能体后来的请求以它自己的 tool_result 结尾，而不是以提示词结尾；同一段对话的每次请求都相同的，是第一条消息。",
    "sub-agents started in one response run side by side: their requests interleave, so their order says nothing "
    "about whose they are. Match each request to the prompt its conversation begins with.":
        "同一个响应里启动的子智能体并排运行：它们的请求互相穿插，所以请求的先后说明不了是谁的。"
        "按每次请求的对话开头的那条提示词去对应。",
    # exercise 2: notified at
    "a background call's own result names its task id at once, when the command starts; the notification comes "
    "later, once, as a text that says the task ended (inside the last tool_result when the task ended while tools "
    "ran, else a reminder of its own), and every later request resends it.":
        "后台调用自己的结果在命令启动时就立即给出任务 id；任务通知晚些才来，只来一次，是一段说任务已经结束的文字"
        "（任务在工具运行期间结束时，它在最后一个 tool_result 里面，否则是一个单独的提醒）；之后的每次请求都会重发它。",
    "return the number of the first request that carries the task's notification, or None":
        "返回第一次带着这个任务的任务通知的请求的编号，或者 None",
    "the run where the command ends during another call": "命令在另一个调用进行时结束的那次运行",
    "the run where the model waits for the command": "模型等着命令结束的那次运行",
    "the run with two commands": "有两个命令的那次运行",
    "the run where the model names the task before it ends": "模型在任务结束前就提到它的那次运行",
    "the run with one command, asked about a task it never started": "只有一个命令、却问它从没启动过的任务的那次运行",
    "in that request the words are the model's own (an assistant message names the task); the notification is "
    "what the loop tells the model, in a user message: inside a tool_result or a reminder of its own.":
        "那次请求里的这段话是模型自己说的（是一条助手消息提到了这个任务）；任务通知是循环告诉模型的，"
        "在一条用户消息里：在 tool_result 里面，或者是一个单独的提醒。",
    "on {run} it returned {got}; expected a request number (an int) or None.":
        "在{run}上，它返回了 {got}；应当是一个请求编号（int）或者 None。",
    "on {run}, for {task}: no request carries that task's notification, but you said {got}.":
        "在{run}上，对 {task}：没有哪次请求带着这个任务的任务通知，你却说是 {got}。",
    "a task the run never started has no notification: say None.": "运行从没启动过的任务没有任务通知：返回 None。",
    "on {run}, for {task}: you found no request carrying its notification.":
        "在{run}上，对 {task}：你没有找到带着它的任务通知的请求。",
    "the notification is a text in the messages a request sends (look at every text, a text block's and the text "
    "inside each tool_result), and requests count from 1.":
        "任务通知是请求所发消息里的一段文字（每段文字都要看：text 块里的，以及每个 tool_result 里面的），而且请求从 1 开始数。",
    "on {run}, for {task}: request {got} is too early.": "在{run}上，对 {task}：第 {got} 次请求太早了。",
    "on {run}, for {task}: request {got} is too late.": "在{run}上，对 {task}：第 {got} 次请求太晚了。",
    "once delivered, a notification stays in the conversation, so every later request carries it again: the task "
    "was told of in the first of them.":
        "任务通知一旦送达就留在对话里，之后的每次请求都会再带上它：告诉模型这件事的，是其中的第一次。",
    "{count} runs: each notification found in the request that first told the model.":
        "{count} 次运行：每条任务通知都找到了第一次告诉模型的那次请求。",
    "notified at": "任务通知在哪次请求",
    "that request names the task id, but in the Bash call's own result, sent when the command started; the "
    "notification is the text that says the task ended.":
        "那次请求确实提到了任务 id，但那是 Bash 调用自己的结果，在命令启动时发出；任务通知是说任务已经结束的那段文字。",
    "requests count from 1, as the chapter counts them: the first request is number 1.":
        "请求从 1 开始数，和本章的数法一样：第一次请求是第 1 次。",
    # the chapter's cells
    "the workspace holds {names}": "工作区里有 {names}",
    "request {number}: begins {first!r}, {count} messages, tools {tools}":
        "第 {number} 次请求：以 {first!r} 开头，{count} 条消息，工具 {tools}",
    "the parent ended {reason}; its last answer: {answer!r}": "父循环以 {reason} 结束；它最后的回答：{answer!r}",
    "child": "子智能体",
    "parent": "父循环",
    "request {number} ({who}): {count} messages, {tools} tools, Agent offered: {agent}":
        "第 {number} 次请求（{who}）：{count} 条消息，{tools} 个工具，提供了 Agent：{agent}",
    "parent: {reason} after {turns} turns; child: {child_reason} after {child_turns} turns":
        "父循环：{turns} 轮后 {reason}；子智能体：{child_turns} 轮后 {child_reason}",
    "the parent's history: {kinds}": "父循环的历史：{kinds}",
    "the child's history:  {kinds}": "子智能体的历史：{kinds}",
    "the Agent call's result: {content!r}": "Agent 调用的结果：{content!r}",
    "is_error": "is_error",
    "ok": "正常",
    "children started: {count}; the parent ended {reason}": "启动的子智能体：{count} 个；父循环以 {reason} 结束",
    "child {prompt!r}: {count} requests, tools {tools}": "子智能体 {prompt!r}：{count} 次请求，工具 {tools}",
    "parent: {count} requests; the results message answers {ids}": "父循环：{count} 次请求；结果消息回答了 {ids}",
    "children: {endings}": "子智能体的结束：{endings}",
    "request {number}: {count} messages; carries bash_1's notification: {carried}":
        "第 {number} 次请求：{count} 条消息；带着 bash_1 的任务通知：{carried}",
    "the background call's result: {content!r}": "后台调用的结果：{content!r}",
    "the notification: {task_id} {status}, exit code {code}; {lines} lines of text":
        "任务通知：{task_id} {status}，退出码 {code}；文字共 {lines} 行",
    "ended {reason}": "以 {reason} 结束",
    "notification: {task_id} {status}": "任务通知：{task_id} {status}",
    "ended {reason}; commands still running: {running}": "以 {reason} 结束；仍在运行的命令：{running}",
    "recorded Agent fields: {fields}; required {required}": "录制的 Agent 字段：{fields}；必填 {required}",
    "dreamloop's Agent:     the same fields: {same}; the same types: {types}":
        "dreamloop 的 Agent：字段相同：{same}；类型相同：{types}",
    "recorded Bash takes run_in_background: {flag}; TaskOutput or TaskStop offered: {offered}":
        "录制的 Bash 接受 run_in_background：{flag}；提供了 TaskOutput 或 TaskStop：{offered}",
    "requests: {parent} of the parent's, {child} of the child's": "请求：父循环的 {parent} 次，子智能体的 {child} 次",
    "on in chapter 12: {switches}": "第 12 章打开的开关：{switches}",
    "on in dreamloop run, of these two: {switches}": "这两个开关里，dreamloop run 打开的：{switches}",
    # the untouched exercises
    "'parent' or the prompt of the sub-agent that sent it, per request":
        "每次请求：'parent'，或者发出它的子智能体的提示词",
    "the number of the first request that carries the notification, or None":
        "第一次带着任务通知的请求的编号，或者 None",
}
