"""Chinese for the checks of chapters 10 and 10b (``dreamloop/exercises/ch10.py``)."""

TEXTS = {
    # chapter 10: what a resume answers
    "killed mid-batch (section 1)": "在批次中途被结束（第 1 节）",
    "the calls finished out of call order": "调用完成的先后与调用顺序不同",
    "killed in the second turn": "在第二轮被结束",
    "killed after the results message": "在结果消息写入之后被结束",
    "every call finished, no results message": "每个调用都完成了，但没有结果消息",
    "resumed once, then killed again": "恢复过一次，然后又被结束",
    "a resume answers the calls of the last assistant message that no results message answers: a call with a "
    "finished-call record (a progress record) gets the result saved there, any other an is_error result; both in "
    "the order of the calls.":
        "恢复时回应的，是最后一条助手消息里还没有任何结果消息回应的调用：有“调用已完成”记录（一条 progress "
        "记录）的调用，得到那里保存的结果，其余的得到一个 is_error 结果；两者都按调用的顺序。",
    "find the calls the crash left without a results message and split them into those whose result was saved when "
    "they finished and those that get an is_error result; return (saved, lost), each in call order":
        "找出崩溃后没有结果消息的调用，把它们分成两组：完成时结果已经保存下来的，和要得到 is_error 结果的；"
        "返回 (saved, lost)，每组都按调用顺序",
    "{count} crashed transcripts: every call left without a result answered as a resume answers it, saved or "
    "is_error, in call order.":
        "读完 {count} 个崩溃留下的 transcript：每个没有结果的调用都按恢复时的方式得到回应，"
        "保存下来的结果或 is_error，按调用顺序。",
    "what a resume answers": "恢复时回应什么",
    "for '{case}' it returned {value}; expected a pair of lists (saved, lost).":
        "对于“{case}”，它返回了 {value}；应当是两个列表组成的二元组 (saved, lost)。",
    "for '{case}' you answered {call}, but a results message in the file already answers it.":
        "对于“{case}”，你回应了 {call}，但文件里已经有一条结果消息回应了它。",
    "only the calls of the last assistant message that no user message answers yet are left dangling; a call an "
    "earlier results message answered is history, whatever records it has.":
        "只有最后一条助手消息里、还没有任何用户消息回应的调用才是悬空的；"
        "之前的结果消息已经回应过的调用属于历史，不管它还有什么记录。",
    "for '{case}' you answered {call}, which is not a call in that transcript.":
        "对于“{case}”，你回应了 {call}，但它不是这个 transcript 里的调用。",
    "answer with the ids of the tool_use blocks (their id field), nothing else.":
        "用 tool_use 块的 id（它们的 id 字段）来回答，不要用别的。",
    "for '{case}' you answered {call} with a saved result, but it never finished: no result of it was saved.":
        "对于“{case}”，你用保存下来的结果回应了 {call}，但它从来没有完成：它的结果没有被保存过。",
    "a result is saved only when its call finished: the finished-call (progress) record that names it. A call "
    "without one gets an is_error result, since it may have had effects.":
        "只有调用完成了，它的结果才会被保存：保存在写着它的“调用已完成”（progress）记录里。"
        "没有这种记录的调用得到一个 is_error 结果，因为它可能已经产生了副作用。",
    "for '{case}' you gave {call} an is_error result, but it finished and its result was saved.":
        "对于“{case}”，你给了 {call} 一个 is_error 结果，但它已经完成，结果也保存下来了。",
    "each call that finished has a record of its own, written the moment it finished, before any results message: "
    "a resume sends that saved result.":
        "每个完成了的调用都有一条自己的记录，在它完成的那一刻写入，早于任何结果消息：恢复时发送的就是这个保存下来的结果。",
    "for '{case}' a call is answered more than once.": "对于“{case}”，有一个调用被回应了不止一次。",
    "each dangling call gets exactly one answer, in one of the two lists.":
        "每个悬空的调用恰好得到一个回应，放在两个列表中的一个里。",
    "for '{case}' {count} call(s) left without a result have no answer.":
        "对于“{case}”，有 {count} 个没有结果的调用没有得到回应。",
    "every tool_use block of the last assistant message that no results message answers needs an answer: the API "
    "refuses a request with one unanswered.":
        "最后一条助手消息里，每个还没有结果消息回应的 tool_use 块都需要一个回应：只要有一个没有回应，API 就会拒绝这次请求。",
    "for '{case}' the right calls in another order.": "对于“{case}”，调用是对的，顺序不对。",
    "a resume answers in call order: the order of the tool_use blocks in the assistant message, not the order the "
    "calls finished in.":
        "恢复时按调用顺序回应：也就是助手消息里 tool_use 块的顺序，而不是调用完成的先后。",
    # chapter 10b: the interrupted call, how many model calls
    "tool errors, no interrupt (like 01)": "工具出错，没有中断（类似 01）",
    "rejected at the prompt, then interrupted (like 04)": "在询问时被拒绝，然后中断（类似 04）",
    "interrupted after the tools finished (like 03)": "工具结束之后才中断（类似 03）",
    "interrupted while the answer streamed": "回答流式输出时中断",
    "results that say interrupted (like 06)": "结果本身写着已中断（类似 06）",
    "the interrupted call is the checkpoint whose run ended right there (its Terminal says aborted); the calls that "
    "did not run are the is_error results among that checkpoint's tool results.":
        "被中断的那次调用，就是运行恰好在此结束的检查点（它的 Terminal 写着 aborted）；没有执行的调用，"
        "就是该检查点的工具结果中 is_error 的那些。",
    "go through the checkpoints, find the first whose run the person interrupted, and return its index with the "
    "ids of its calls that did not run; return None when nobody interrupted":
        "逐个查看检查点，找到第一个被人中断了运行的检查点，返回它的序号和其中没有执行的调用的 id；没有人中断时返回 None",
    "{count} sessions read: the interrupted call and the calls that did not run, or None.":
        "读完 {count} 个会话：找出被中断的调用和没有执行的调用，或者 None。",
    "the interrupted call": "被中断的调用",
    "for '{case}' you answered {got}; nobody interrupted that session (its runs all ended completed).":
        "对于“{case}”，你的回答是 {got}；这个会话没有人中断（它的运行都以 completed 结束）。",
    "an is_error result is not an interrupt: a failed command is a result the model reads. Look at each "
    "checkpoint's terminal, not at the results.":
        "is_error 结果不等于中断：失败的命令也是模型要读的结果。看每个检查点的 terminal，而不是看结果。",
    "for '{case}' it returned {value}; expected a pair (index, not_run).":
        "对于“{case}”，它返回了 {value}；应当是一个二元组 (index, not_run)。",
    "the checkpoint after the interrupt (its messages_for_query holds the marker)":
        "中断之后的那个检查点（它的 messages_for_query 里有中断标记）",
    "parallel calls, one record per block (1.0/2.0)": "并行调用，每个内容块一条记录（1.0/2.0）",
    "results between the blocks of one response (2.1.x)": "结果夹在同一响应的内容块之间（2.1.x）",
    "an inline subagent (isSidechain)": "内联的子智能体（isSidechain）",
    "one response written twice": "同一响应写了两遍",
    "one response is one message.id, however many records it was written in and whatever sits between them; a "
    "subagent's records are marked isSidechain.":
        "一次响应就是一个 message.id，不管它被写成多少条记录、记录之间夹着什么；子智能体的记录标有 isSidechain。",
    "count the model calls of the main thread: the responses, not the records they were written in":
        "数出主线程的模型调用次数：数响应，而不是数写下它们的记录",
    "for '{case}' it returned {value}; expected a whole number.": "对于“{case}”，它返回了 {value}；应当是一个整数。",
    "return how many model calls there are: an int.": "返回模型调用的次数：一个 int。",
    "{count} files counted ({listed} model calls): by message.id, main thread only.":
        "数完 {count} 个文件（分别有 {listed} 次模型调用）：按 message.id 计数，只算主线程。",
    "model calls": "模型调用次数",
    "you counted records: Claude Code writes each content block of a response as its own record, all with the same "
    "message.id.":
        "你数的是记录：Claude Code 把一次响应的每个内容块写成单独的一条记录，它们的 message.id 都相同。",
    "records with isSidechain: true are a subagent's own conversation, never the main thread's calls.":
        "isSidechain: true 的记录是子智能体自己的对话，从来不是主线程的调用。",
    "tool_result records can sit between the blocks of one response (2.1.x runs tools while the response streams), "
    "so runs of adjacent assistant records are not responses.":
        "tool_result 记录可能夹在同一响应的内容块之间（2.1.x 在响应流式输出期间就执行工具），"
        "所以相邻的 assistant 记录连成的一段并不等于一次响应。",
    'a failed command, then two interrupts':
        '一条失败的命令，然后两次中断',
    "for '{case}' you answered None, but the person did interrupt a run in that session.":
        "对于 '{case}'，你的回答是 None，但这个会话里确实有人中断了一次运行。",
    'checkpoint {index}, an interrupted run, but not the first one':
        '检查点 {index}，一次被中断的运行，但不是第一次',
    'checkpoint {index}, whose run the person did not interrupt':
        '检查点 {index}，它的运行并没有被人中断',
    "for '{case}' you found {said}.":
        "对于 '{case}'，你找到的是{said}。",
    "the interrupted call is the one whose run ended there (its checkpoint's Terminal says aborted); the first such checkpoint. Give its position among the checkpoints (its index), not its turn_count.":
        '被中断的调用，是运行就在那里结束的那一次（它的检查点的 Terminal 写着 aborted）；要第一个这样的检查点。给出它在检查点中的位置（它的序号），而不是它的 turn_count。',
    '{ids} did run (its result is not is_error, or it belongs to another run).':
        '{ids} 确实执行了（它的结果不是 is_error，或者它属于另一次运行）。',
    'the right calls in another order.':
        '调用是对的，顺序不对。',
    '{count} call(s) that did not run are missing.':
        '漏掉了 {count} 个没有执行的调用。',
    "for '{case}' the calls that did not run are {got}: {problem}":
        "对于 '{case}'，你给出的没有执行的调用是 {got}：{problem}",
    'a call whose result is not is_error did run (git add ran before the person stopped the rest): only the calls with an is_error result in that checkpoint did not, in the order of the calls.':
        '结果不是 is_error 的调用确实执行了（git add 在用户停下其余调用之前就已执行）：只有那个检查点里结果为 is_error 的调用没有执行，按调用顺序排列。',
    'two responses that say the same, and a subagent':
        '两次说了同样的话的响应，外加一个子智能体',
    "for '{case}' you counted {got}: {more_or_fewer} than the model calls on the main thread.":
        "对于 '{case}'，你数出了 {got}：比主线程上的模型调用{more_or_fewer}。",
    'more':
        '多',
    'fewer':
        '少',
    "responses without text, and a subagent's response in two records": "没有文本的响应，以及一个分成两条记录写下的子智能体响应",
    "a response need not say anything: one that holds only tool_use blocks is a model call too.":
        "响应不一定说话：只含 tool_use 块的响应也是一次模型调用。",
    "a subagent's response can be written in several records too: leave its records out, rather than taking "
    "their number off.":
        "子智能体的响应同样可能分成几条记录写下：把这些记录排除掉，而不是减去它们的条数。",
    # the notes of an imported session's checkpoints (dreamloop/claude_code.py NOTES), shown through tr_note
    "the file goes on with {count} user record(s) and no model call: {text}":
        "文件在这之后还有 {count} 条用户记录，但没有模型调用：{text}",
    "then request {id} (line {line}, {count} messages) was sent and got no response: {ending}":
        "之后发出了请求 {id}（第 {line} 行，{count} 条消息），没有得到响应：{ending}",
    "{tool} call {id}: its subagent's conversation is sidechain branch {tip} in this file "
    "({count} model calls; open it with branch={branch})":
        "{tool} 调用 {id}：它的子智能体的对话是本文件里的旁支分支 {tip}（{count} 次模型调用；"
        "用 branch={branch} 打开）",
    "{tool} call {id}: its subagent's conversation is its side chain {path} ({count} model calls), "
    "nested under the call: trace.children[{key}]":
        "{tool} 调用 {id}：它的子智能体的对话在旁支文件 {path} 里（{count} 次模型调用），"
        "嵌套在这个调用之下：trace.children[{key}]",
    "{tool} call {id}: its subagent's conversation is in its own file, agent-{agent}.jsonl":
        "{tool} 调用 {id}：它的子智能体的对话在单独的文件 agent-{agent}.jsonl 里",
    "Claude Code wrote a synthetic API-error message here ({error}) and went on with the same prompt":
        "Claude Code 在这里写下了一条合成的 API 错误消息（{error}），然后接着处理同一条提示词",
    "the tools had finished: the person interrupted the next request while it was streaming, before any of its "
    "response was written (so that call has no checkpoint)":
        "工具已经执行完：用户在下一次请求流式输出时中断了它，当时响应还一个字都没有写下（所以那次调用没有检查点）",
    "Claude Code's max_turns_reached record: turn {turn} was not started (Terminal max_turns)":
        "Claude Code 的 max_turns_reached 记录：第 {turn} 轮没有开始（Terminal max_turns）",
    "the run ended here with Claude Code's synthetic API-error message: {error} (Terminal {reason})":
        "运行在这里结束，Claude Code 写下了一条合成的 API 错误消息：{error}（Terminal {reason}）",
    "Claude Code asked the model to resume (a message it wrote itself, of the same prompt, e.g. after a stream "
    "cut): the next checkpoint goes on with this run, at the same turn (none of the source's transition reasons "
    "names this)":
        "Claude Code 让模型接着往下写（一条它自己写的消息，属于同一条提示词，例如在流被截断之后）："
        "下一个检查点继续这次运行，仍在同一轮（原文的转换原因里没有一个对应这种情况）",
    "the person interrupted here: {marker}": "用户在这里中断：{marker}",
    "the next call continues the same prompt: {detail}": "下一次调用接着处理同一条提示词：{detail}",
    "the file ends after this call's tool results: the run was still going, or Claude Code stopped, when the "
    "file was last written (no Terminal)":
        "文件在这次调用的工具结果之后就结束了：最后一次写入文件时，运行还没有结束，或者 Claude Code 停了下来（没有 Terminal）",
    "model call {number}: {model}, message {id}, {count} record(s) in the file (line {line})":
        "第 {number} 次模型调用：{model}，消息 {id}，在文件里占 {count} 条记录（第 {line} 行）",
    "model call {number}: {model}, message {id}, {count} record(s) in the file (lines {first}–{last})":
        "第 {number} 次模型调用：{model}，消息 {id}，在文件里占 {count} 条记录（第 {first}–{last} 行）",
    "usage: input {total} tokens ({new} new, {read} cache read, {written} cache write), output {output}":
        "用量：输入 {total} 个 token（新增 {new}，缓存读取 {read}，缓存写入 {written}），输出 {output}",
    "after {count} compaction(s): messages_for_query starts at the compaction boundary":
        "经过 {count} 次压缩：messages_for_query 从压缩边界开始",
    "{count} thinking block(s) with a signature only: the text was not kept (thinking hidden)":
        "{count} 个只有签名的 thinking 块：文本没有保留（思考内容被隐藏）",
    "{count} content block(s) of type {kind} left out (not an API block the SDK knows)":
        "略去了 {count} 个类型为 {kind} 的内容块（不是 SDK 认识的 API 块）",
    "{tool} call {id} was rejected by the person at the permission prompt":
        "{tool} 调用 {id} 在权限询问时被用户拒绝",
    "synthesized is_error tool_result for {ids}: the file holds no result for it (interrupted or crashed)":
        "为 {ids} 合成了 is_error 的 tool_result：文件里没有它的结果（被中断或崩溃）",
    "UI-only records around this call, not sent to the model: {listed}":
        "这次调用前后只供界面使用、没有发给模型的记录：{listed}",
    "the real API would have rejected this exchange: {rejection}":
        "真实的 API 会拒绝这次往返：{rejection}",
    "attachment records rendered into the next request as <system-reminder> text (sent to the model): {listed}":
        "渲染成 <system-reminder> 文本写进下一次请求的附件记录（发给了模型）：{listed}",
    "attachment records around this call (Claude Code renders some into the next request as reminder text; this "
    "file does not record which): {listed}":
        "这次调用前后的附件记录（Claude Code 会把其中一些渲染成提醒文本写进下一次请求；这个文件没有记下是哪些）：{listed}",
    "the request as sent is recorded (api-request {id}, line {line}): {model}, max_tokens {max_tokens}, system "
    "prompt {blocks} block(s) ({chars} chars), {tools} tool(s), {messages} message(s) with {reminders} "
    "<system-reminder> block(s), cache_control at {cache_control}; its digest matches the recorded one":
        "发出的请求原样记录在案（api-request {id}，第 {line} 行）：{model}，max_tokens {max_tokens}，"
        "系统提示词 {blocks} 个块（{chars} 个字符），{tools} 个工具，{messages} 条消息，含 {reminders} 个提醒块，"
        "cache_control 位于 {cache_control}；digest 与记录的相符",
    "the request as sent is recorded (api-request {id}, line {line}): {model}, max_tokens {max_tokens}, system "
    "prompt {blocks} block(s) ({chars} chars), {tools} tool(s), {messages} message(s) with {reminders} "
    "<system-reminder> block(s), cache_control at {cache_control}; its digest does NOT match the recorded one":
        "发出的请求原样记录在案（api-request {id}，第 {line} 行）：{model}，max_tokens {max_tokens}，"
        "系统提示词 {blocks} 个块（{chars} 个字符），{tools} 个工具，{messages} 条消息，含 {reminders} 个提醒块，"
        "cache_control 位于 {cache_control}；digest 与记录的并不相符",
    "the request as sent is recorded (api-request {id}, line {line}): {model}, max_tokens {max_tokens}, system "
    "prompt {blocks} block(s) ({chars} chars), {tools} tool(s), {messages} message(s) with {reminders} "
    "<system-reminder> block(s), cache_control at {cache_control}; no digest recorded":
        "发出的请求原样记录在案（api-request {id}，第 {line} 行）：{model}，max_tokens {max_tokens}，"
        "系统提示词 {blocks} 个块（{chars} 个字符），{tools} 个工具，{messages} 条消息，含 {reminders} 个提醒块，"
        "cache_control 位于 {cache_control}；没有记录 digest",
    "{count} message(s) of that request are not in the file: {ids}":
        "那次请求里有 {count} 条消息不在文件中：{ids}",
    # what the chapter's own cells print (notebooks/10_sessions.ipynb, through tr)
    "requests: {count} | the last one sent {messages} messages: both prompts and everything between":
        "请求：{count} 次 | 最后一次发送了 {messages} 条消息：两个提示词和它们之间的一切",
    "queued while the loop runs:": "循环运行时排进队列的：",
    "phase 5 drained it:": "阶段 5 把它取出：",
    "checkpoints in the last run's trace:": "上一次运行的 trace 里的检查点：",
    "{count} messages read back from the transcript": "从 transcript 读回 {count} 条消息",
    "{count} messages in the first request after resuming; the first:":
        "续接会话后的第一次请求里有 {count} 条消息；第一条：",
    "finished calls the session had seen:": "会话见过的已完成调用：",
    "← a second resume would repair nothing": "← 再续接一次，没有什么可修复的",
    "recorded {count} exchanges to {path}": "录制了 {count} 次往返，写入 {path}",
    "Live cell skipped: start Jupyter with DREAMLOOP_LIVE=1 and ANTHROPIC_API_KEY set to run it.":
        "跳过了连真实 API 的单元格：要运行它，请在设置了 DREAMLOOP_LIVE=1 和 ANTHROPIC_API_KEY 的环境里启动 Jupyter。",
    "exchange {index}: request with {messages} messages → {status}, {events} SSE events":
        "往返 {index}：请求带 {messages} 条消息 → {status}，{events} 个 SSE 事件",
    "the key in the file?": "密钥在文件里吗？",
    "identical events:": "事件完全相同：",
    "| first difference:": "| 第一处不同：",
    "config.py in the replay's workspace:": "回放的工作区里的 config.py：",
    "config.py now:": "现在的 config.py：",
    # what chapter 10b's own cells print (notebooks/10b_claude_code_sessions.ipynb, through tr); ' (default)'
    # is as wide as the ten spaces of a branch without it, in Chinese too
    'line {number:2}  {type:9}  message.id …{id:6}  {kinds}':
        '第 {number:2} 行  {type:9}  message.id …{id:6}  {kinds}',
    'checkpoint {index}: turn_count={turn_count} transition={began:9} messages_for_query={count:2} then {ended}':
        '检查点 {index}：turn_count={turn_count} transition={began:9} messages_for_query={count:2}，之后 {ended}',
    'checkpoint {index}: turn_count={turn_count} transition={began:26} request: {messages} messages, '
    '{reminders:2} reminders, digest ok {digest_ok}; then {ended}':
        '检查点 {index}：turn_count={turn_count} transition={began:26} 请求：{messages} 条消息，'
        '{reminders:2} 个提醒块，digest 相符 {digest_ok}；之后 {ended}',
    '{count} result records:': '{count} 条结果记录：',
    'note:': '注：',
    ' (default)': ' （默认） ',
    '{count} model calls, its own first prompt: {prompt}': '{count} 次模型调用，它自己的第一条提示词：{prompt}',
    "{count} model calls in the subagent's own conversation; its first prompt:":
        '子智能体自己的对话里有 {count} 次模型调用；它的第一条提示词：',
    '{valid}/{count} exchanges valid, rejected: {rejected}': '{valid}/{count} 次往返有效，被拒绝的：{rejected}',
    # inspect_transcript's report (dreamloop/transcript.py TranscriptReport.__str__); a repair notice kept in the
    # transcript stays English
    "{name}: {records} records; {count} loop messages: {shown}": "{name}：{records} 条记录；{count} 条循环消息：{shown}",
    "  tool_use without a results message: {calls}": "  没有结果消息的 tool_use：{calls}",
    "  of those, finished and saved: {saved}": "  其中已完成并保存了结果的：{saved}",
    "  torn last line: line {line}, {size} bytes": "  被撕裂的最后一行：第 {line} 行，{size} 字节",
    "  kept on disk, never sent: {lines}": "  留在磁盘上、从不发送的：{lines}",
    "line {number} ({why})": "第 {number} 行（{why}）",
    "  skipped: {lines}": "  跳过的：{lines}",
    "  repaired by an earlier resume: {notice}": "  之前一次续接会话时已修复：{notice}",
    "  a resume would: {plan}": "  续接会话时会：{plan}",
    "  nothing to repair": "  没有需要修复的",
    "answer {calls} with the results saved when it finished": "用完成时保存的结果回应 {calls}",
    "answer {calls} with the results saved when they finished": "用完成时保存的结果回应 {calls}",
    "answer {calls} with an is_error result (the session ended before it finished)":
        "给 {calls} 一个 is_error 结果（会话在它完成之前就结束了）",
    "answer {calls} with an is_error result (the session ended before they finished)":
        "给 {calls} 一个 is_error 结果（会话在它们完成之前就结束了）",
    "set aside a torn last line (line {line}, {size} bytes)": "把被撕裂的最后一行放到一边（第 {line} 行，{size} 字节）",
    "set aside line {lines} ({why})": "把第 {lines} 行放到一边（{why}）",
    "set aside lines {lines} ({why})": "把第 {lines} 行放到一边（{why}）",
}
