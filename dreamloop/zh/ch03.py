"""Chinese for the checks of chapters 03, 03b and 03c (``dreamloop/exercises/ch03.py``), what chapters 03b and
03c's cells print, and the places ``dreamloop/desk.py`` names."""

TEXTS = {
    "a Read, then the answer": "一次 Read，然后回答",
    "a model that never stops, max_turns=2": "永不停止的模型，max_turns=2",
    "the API fails on the second request": "API 在第二次请求时出错",
    "iterate the run to its end with async for, keep the last assistant message you see, then return its text and "
    "the run's Terminal reason.":
        "用 async for 把这次运行迭代到底，记住看到的最后一条助手消息，然后返回它的文本和这次运行的 Terminal 原因。",
    "an async generator has no return value: the Terminal is on the run object, readable once the async for loop "
    "has ended.":
        "Python 的异步生成器没有返回值：Terminal 在运行对象上，async for 循环结束后就能读到。",
    "for '{case}' it returned {value}; expected a pair (text, reason).":
        "对于“{case}”，它返回了 {value}；应当是一个二元组 (text, reason)。",
    "return two things: the text (a str) and the reason (a str).": "返回两样东西：文本（str）和原因（str）。",
    "for '{case}' the reason is {got!r}, but the run did not end that way.":
        "对于“{case}”，原因是 {got!r}，但这次运行并不是这样结束的。",
    "a run can end in several ways (completed, max_turns, model_error, ...): read the reason from run.terminal "
    "after the async for loop, don't assume one.":
        "一次运行有多种终止原因（completed、max_turns、model_error……）：在 async for 循环之后从 run.terminal "
        "读取原因，不要想当然。",
    "for '{case}' the text is {got!r}, which is not what the last assistant message says.":
        "对于“{case}”，文本是 {got!r}，这不是最后一条助手消息说的内容。",
    "the LAST assistant message of the run, whatever it asked for (it may still ask for tools when max_turns or an "
    "error ends the run); its text blocks only.":
        "是这次运行的【最后一条】助手消息，不管它请求了什么（max_turns 或错误结束运行时，它可能仍在请求工具）；"
        "只取它的文本块。",
    "{count} runs read to the end; terminal reasons {reasons}.": "{count} 次运行都读到了结尾；终止原因依次为 {reasons}。",
    "last answer and Terminal": "最后的回答与 Terminal",
    "build and return the dl.State the loop starts its next turn with (messages, turn_count, transition).":
        "构造并返回循环开始下一轮时使用的 dl.State（messages、turn_count、transition）。",
    "after turn_count={turn_count}": "在 turn_count={turn_count} 之后",
    "{where} it returned {kind}; expected a State.": "{where}，它返回了 {kind}；应当是一个 State。",
    "the loop carries a State from turn to turn: return dl.State(...) with its fields.":
        "循环在轮与轮之间传递一个 State：返回带有各个字段的 dl.State(...)。",
    "the model must see its own call before the result: keep this turn's assistant messages.":
        "模型必须先看到自己提出的调用，再看到结果：保留这一轮的助手消息。",
    "the order matters: the model must see its call before the result (what was sent, what came back, then the "
    "results).":
        "顺序很重要：模型必须先看到调用，再看到结果（先是发出去的，再是返回的，最后是工具结果）。",
    "the next turn starts from everything the model saw this turn, plus what this turn added.":
        "下一轮从模型这一轮看到的全部消息开始，再加上这一轮新增的消息。",
    "{where} the new messages are {got}, not the ones queryLoop() starts its next turn with.":
        "{where}，新的消息是 {got}，不是 queryLoop() 开始下一轮时用的那些。",
    "{where} turn_count is {got}, not the next turn's.": "{where}，turn_count 是 {got}，不是下一轮的。",
    "turn_count goes up by one each time a batch of tool results is handed on.":
        "每交出一批工具结果，turn_count 加一。",
    "{where} transition is {got}: it does not say why the loop went round again.":
        "{where}，transition 是 {got}：它没有说明循环为什么又转了一圈。",
    "transition records why the loop went round again (a dl.Continue with a reason); tools ran and their results "
    "go back: that reason is next_turn.":
        "transition 记录循环为什么又转了一圈（一个带 reason 的 dl.Continue）；工具执行完、结果要交回模型：这个原因就是 next_turn。",
    "when the context pipeline left a message out of messages_for_query, your next State still has it.":
        "压缩管线已经把一条消息排除在 messages_for_query 之外，你的下一个 State 里却还有它。",
    "build the next State from what the model saw this turn (messages_for_query), not from state.messages: the "
    "pipeline may have shortened it.":
        "用模型这一轮看到的消息（messages_for_query）构造下一个 State，而不是用 state.messages：管线可能已经把它缩短了。",
    "{count} transitions, each the same State queryLoop() built (messages, turn_count, transition).":
        "{count} 次转换，每一次都与 queryLoop() 构造的 State 相同（messages、turn_count、transition）。",
    "next State": "下一个 State",
    "return a tuple (requests, tool_batches, reason, turn_count) for a run of the loop with this max_turns and a "
    "model that calls a tool tool_turns times before it answers.":
        "对这样一次运行返回元组 (requests, tool_batches, reason, turn_count)：循环设置了这个 max_turns，"
        "模型先调用 tool_turns 次工具再回答。",
    "{call} returned {value}; expected (requests, tool_batches, reason, turn_count).":
        "{call} 返回了 {value}；应当是 (requests, tool_batches, reason, turn_count)。",
    "four values, in that order; reason is the Terminal's reason, a string.":
        "四个值，按这个顺序；reason 是 Terminal 的原因，一个字符串。",
    "the limit only matters while the model keeps asking for tools: a model that stops asking before the limit "
    "ends the run the ordinary way.":
        "只有模型一直在请求工具时，这个上限才起作用：在达到上限之前就不再请求工具的模型，会以普通的方式结束运行。",
    "max_turns is checked after the tools ran and before the next request: a model that would have answered on "
    "that next request never gets asked.":
        "max_turns 在工具执行之后、下一次请求之前检查：本来会在下一次请求时回答的模型，根本不会被请求。",
    "count the requests the loop sends and the batches of tools it runs: each turn the loop starts sends one "
    "request, and its tools run before any check on max_turns.":
        "数一数循环发出的请求和执行的工具批次：循环开始的每一轮都发出一次请求，而这一轮的工具会在检查 max_turns 之前执行。",
    "turn_count in the Terminal: completed keeps the turn it ended in; max_turns carries the turn the loop refused "
    "to start (like the max_turns_reached attachment).":
        "Terminal 里的 turn_count：completed 保留结束时所在的轮；max_turns 带的是循环拒绝开始的那一轮"
        "（与 max_turns_reached 附件相同）。",
    "{call}: you predicted {got}; the run differs in {fields}.": "{call}：你预测的是 {got}；实际运行在 {fields} 上不同。",
    "your predictions match the loop on all {count} runs, e.g. predict(3, 3) = {example}: the answer one request "
    "away never came.":
        "你的预测在全部 {count} 次运行上都与循环一致，例如 predict(3, 3) = {example}：只差一次请求的回答始终没有到来。",
    # memory files and phase 5's attachments
    "memory files": "记忆文件",
    "return the paths of the memory files (CLAUDE.md, CLAUDE.local.md) the run sends, in the order it sends them.":
        "返回这次运行发送的记忆文件（CLAUDE.md、CLAUDE.local.md）的路径，按发送的顺序。",
    "{call} returned {value}; expected a list of paths.": "{call} 返回了 {value}；应当是一个路径列表。",
    "return a list of strings, each a path as written in the set you were given.":
        "返回一个字符串列表，每个路径的写法与给你的集合里一致。",
    "the order is the order of authority: the farthest instructions first (the user's own), then folder by folder "
    "towards the workspace, so the nearest come last.":
        "顺序就是权威的顺序：最远的说明在前（用户自己的），然后逐个文件夹走向工作区，最近的放在最后。",
    "the lookup goes up from the workspace only as far as the repository root (the nearest folder up that holds "
    ".git); outside a git repository only the workspace's own folder is read.":
        "查找从工作区往上，只到仓库根目录（往上最近的、含有 .git 的文件夹）为止；不在 git 仓库里时只读工作区自己的文件夹。",
    "in each folder the shared CLAUDE.md comes first, then the private CLAUDE.local.md.":
        "每个文件夹里，先是共享的 CLAUDE.md，再是私人的 CLAUDE.local.md。",
    "each folder can hold two memory files: the shared one and the private .local one.":
        "每个文件夹可以有两个记忆文件：共享的那个和私人的 .local 那个。",
    "the user's own memory file (in the home folder's .claude) counts too.":
        "用户自己的记忆文件（主目录的 .claude 里）也算。",
    "in a git repository every folder from the root down to the workspace counts.":
        "在 git 仓库里，从根目录到工作区之间的每个文件夹都算。",
    "six disks, each with the memory files a run sends, in its order.": "六块磁盘，每块都给出了一次运行发送的记忆文件，顺序也对。",
    "next attachments": "下一批附件",
    "return the list of (type, what) pairs phase 5 attaches after this turn: ('changed_file', file name) and "
    "('queued_command', text), in the order the loop attaches them.":
        "返回阶段 5 在这一轮之后附加的 (type, what) 列表：('changed_file', 文件名) 和 ('queued_command', 文本)，"
        "按循环附加它们的顺序。",
    "{call} returned {value}; expected a list of (type, what) pairs.": "{call} 返回了 {value}；应当是 (type, what) 二元组的列表。",
    "a list of pairs, each ('changed_file', name) or ('queued_command', text).":
        "一个二元组列表，每个是 ('changed_file', 名字) 或 ('queued_command', 文本)。",
    "the order: first the files, in the order the model first read them, then the queued input, in the order it was "
    "typed.":
        "顺序：先是文件，按模型第一次读它们的顺序；然后是排队的输入，按输入的顺序。",
    "a notice is for a change the model has not seen: a file it read, edited or wrote in this very turn needs none "
    "(its own change, or a read that already shows the change).":
        "通知是给模型没看到的变化的：这一轮里它读过、改过或写过的文件不需要通知（那是它自己的修改，或者读到的已经是新内容）。",
    "only files the model read earlier are watched: a change to any other file is not the model's concern.":
        "只有模型之前读过的文件才被关注：其他文件的变化与模型无关。",
    "every file read in an earlier turn and changed by someone else since gets a notice, and queued input follows "
    "the notices.":
        "之前某一轮读过、之后被别人改过的每个文件都会得到一条通知，排队的输入跟在通知后面。",
    "{call} = {got}: {difference}.": "{call} = {got}：{difference}。",
    "seven turns, each with the attachments phase 5 added, in its order.": "七轮，每一轮都给出了阶段 5 加上的附件，顺序也对。",
    "{count} of them should not be there": "其中 {count} 项不该出现",
    "{count} more belong": "还缺 {count} 项",
    "the right ones, in another order": "项目对了，但顺序不同",
    "one of them twice": "其中有一项出现了两次",
    # what chapter 03's own cells print (notebooks/03_query_loop.ipynb, through tr); "终止原因：" and "转换原因："
    # have the same width, so the two lists line up as the English ones do
    "answers {ids}": "回应 {ids}",
    "checkpoint {index}: turn_count={turn_count} transition={began:9} | messages_for_query={query} "
    "assistant_messages={assistant} tool_results={results} | then {ended}":
        "检查点 {index}：turn_count={turn_count} transition={began:9} | messages_for_query={query} "
        "assistant_messages={assistant} tool_results={results} | 之后 {ended}",
    "Terminal turn_count: {terminal} | the last State's turn_count: {state}":
        "Terminal 的 turn_count：{terminal} | 最后一个 State 的 turn_count：{state}",
    "Terminal reasons:   {reasons}": "终止原因：{reasons}",
    "transition reasons: {reasons}": "转换原因：{reasons}",
    "{reason} at turn_count {turn}": "{reason}，此时 turn_count 为 {turn}",
    "phases lit:": "依次亮起的阶段：",
    # what chapters 03b and 03c's own cells print (notebooks/03b_between_turns.ipynb, 03c_notices_and_queued_input.ipynb, through tr)
    "leading reminder": "开头的提醒块",
    "after the Stop:": "停止之后：",
    "request of checkpoint": "带上它的请求：检查点",
    "still queued:": "仍在排队：",
    "inside a tool_result": "在 tool_result 里",
    "message {number}, block {block}": "第 {number} 条消息的第 {block} 块",
    "request {number}": "第 {number} 次请求",
    "request 1, its first user message:": "第 1 次请求的第一条用户消息：",
    "request 3, its last user message:": "第 3 次请求的最后一条用户消息：",
    "yielded:": "产出的：",
    "files named:": "点了名的文件：",
    "| with their changed lines:": "| 附上改动行的：",
    "| characters in all:": "| 共计字符：",
    "(budget {budget:,})": "（预算 {budget:,}）",
    "the last one:": "最后一条：",
    "with no budget:": "没有预算时：",
    "characters": "个字符",
    "the run took under a second:": "这次运行用时不到一秒：",
    "notices:": "通知：",
    "the request after the compaction, its first message, block by block:": "压缩之后那次请求的第一条消息，逐块：",
    "where the request is, word for word, in each request:": "这条请求一字不差地出现在每次请求的哪里：",
}
