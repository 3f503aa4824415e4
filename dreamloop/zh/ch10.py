"""Chinese for chapter 10's checks (``dreamloop/exercises/ch10.py``)."""

TEXTS = {
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
}
