"""Chinese for chapter 06's checks (``dreamloop/exercises/ch06.py``)."""

TEXTS = {
    "F8, keep 4": "F8，保留 4 条",
    "F8, keep 5": "F8，保留 5 条",
    "F8, keep 2": "F8，保留 2 条",
    "parallel calls, keep 3": "并行调用，保留 3 条",
    "parallel calls, keep 5": "并行调用，保留 5 条",
    "parallel calls, keep 7": "并行调用，保留 7 条",
    "parallel calls, keep 8": "并行调用，保留 8 条",
    "the kept tail starts with the result of {id} but its tool_use is in the summarised part: the API would reject "
    "it (unexpected tool_use_id).":
        "保留下来的尾部以 {id} 的结果开头，而它的 tool_use 却在被摘要的部分里：API 会拒绝它（unexpected tool_use_id）。",
    "the summarised part ends on a tool_use whose result is in the tail: a call without its answer.":
        "被摘要的部分以一个 tool_use 结尾，它的结果却在尾部里：一个没有回应的调用。",
    "for '{case}' it returned {value}; expected an index (int).": "对于“{case}”，它返回了 {value}；应当是一个序号（int）。",
    "it is not an index of the list.": "它不是这个列表的序号。",
    "for '{case}' (keep_recent={keep}) the cut is {cut}: {problem}": "对于“{case}”（keep_recent={keep}），切点是 {cut}：{problem}",
    "safe compaction cut": "安全的压缩切点",
    "take options.thresholds(options.context_window): stages that are off have None; the first stage, in pipeline "
    "order, whose threshold tokens is strictly over, acts first.":
        "取 options.thresholds(options.context_window)：关闭的步骤为 None；按管线顺序，token 数严格超过其阈值的"
        "第一步最先动手。",
    "return the name of the first stage, in pipeline order, whose threshold the request is over (None when it is "
    "over none).":
        "按管线顺序，返回请求超过其阈值的最前面那一步的名字（一个都没超过时返回 None）。",
    "which stage acts first": "哪一步最先动手",
    "six reads, keep 3": "六次读取，保留 3 条",
    "six reads, keep 0 (F16: the last two turns stay anyway)": "六次读取，保留 0 条（F16：最后两轮无论如何都保留）",
    "six reads, two already cleared, keep 2": "六次读取，两次已清除，保留 2 条",
    "five reads, turn 2 read two files at once, keep 2": "五次读取，第 2 轮同时读了两个文件，保留 2 条",
    "five reads, turn 4 read two files at once, keep 3": "五次读取，第 4 轮同时读了两个文件，保留 3 条",
    "two reads, keep 0": "两次读取，保留 0 条",
    "return the tool_use ids whose old results microcompact would clear; the last two turns' results always stay.":
        "返回 microcompact 会清除其旧结果的 tool_use id；最后两轮的结果总是保留。",
    "for '{case}' it returned {value}; expected a list of tool_use ids.":
        "对于“{case}”，它返回了 {value}；应当是一个 tool_use id 列表。",
    " {ids} must stay: the model may still need what it just read (F16).":
        "{ids} 必须保留：模型可能还需要它刚读到的内容（F16）。",
    " {ids} is already cleared.": "{ids} 已经清除过了。",
    " {ids} are already cleared.": "{ids} 都已经清除过了。",
    "what microcompact may clear": "microcompact 可以清除什么",
    'return the index where the kept tail starts: count the newest keep_recent messages the model is sent, and never start the tail with a result whose call would be summarised.':
        '返回保留尾部的起始下标：数出最新的 keep_recent 条会发给模型的消息，并且绝不让尾部以一个其调用会被摘要掉的结果开头。',
    'nothing before it is sent to the model (only notices): there is nothing to summarise there.':
        '它之前没有任何会发给模型的消息（只有通知）：那里没有可摘要的内容。',
    'the tail keeps {kept} message(s) the model is sent, fewer than keep_recent (a notice is not sent, so it does not count).':
        '尾部只保留了 {kept} 条会发给模型的消息，少于 keep_recent（通知不会发给模型，所以不算数）。',
    'the tail keeps {kept} messages the model is sent: more than keep_recent needs (an attachment the model reads counts as one).':
        '尾部保留了 {kept} 条会发给模型的消息：比 keep_recent 需要的多（模型会读到的附件也算一条）。',
    'every cut keeps each tool_result with its tool_use, on nine histories (F8 among them).':
        '在九段历史上（包括 F8），每次切分都让每个 tool_result 和它的 tool_use 待在一起。',
    'the request is over at least one threshold of a stage that is on.':
        '请求至少超过了一个已开启步骤的阈值。',
    '{stage} is not a stage a threshold triggers.':
        '{stage} 不是由阈值触发的步骤。',
    '{stage} is off in these options.':
        '在这组选项里 {stage} 是关闭的。',
    "{stage}'s threshold is {limit:,}: a stage acts only when the context is *over* it.":
        '{stage} 的阈值是 {limit:,}：只有上下文*超过*阈值时，这一步才会动手。',
    '{stage} is over its threshold, but a lighter stage that is on is over its own too, and the pipeline runs light to heavy.':
        '{stage} 确实超过了它的阈值，但还有一个更轻的、已开启的步骤也超过了自己的阈值，而管线是由轻到重运行的。',
    'with {tokens:,} tokens (stages on: {on}; window {window:,}) you said {got!r}: {why}':
        '在 {tokens:,} 个 token 时（开启的步骤：{on}；窗口 {window:,}），你的回答是 {got!r}：{why}',
    "{count} predictions match the pipeline's thresholds (off stages skipped, lightest first, strictly over).":
        '{count} 个预测都与管线的阈值相符（跳过关闭的步骤，最轻的优先，严格超过）。',
    "five reads, turn 2's result only 'ok', keep 2":
        "五次读取，第 2 轮的结果只有 'ok'，保留 2",
    "five reads, one of turn 1's two results already cleared, keep 2":
        '五次读取，第 1 轮的两个结果中有一个已被清除，保留 2',
    'count tool-result user messages from the end: the newest max(keep_recent, 2) of them are kept (the current and previous turn always); a result in an older message may be cleared unless its content already is {cleared!r} or it is no longer than that marker (clearing it would save nothing).':
        '从末尾往前数带 tool_result 的用户消息：最新的 max(keep_recent, 2) 条保留（当前轮和上一轮总是保留）；更早消息里的结果可以清除，除非它的内容已经是 {cleared!r}，或者它并不比这个标记长（清除它什么也省不下）。',
    ' {ids}: too short for clearing to save anything.':
        ' {ids}：太短了，清除它什么也省不下。',
    ' You left out {count} old result(s) that clearing would shrink.':
        ' 你漏掉了 {count} 个清除后能变小的旧结果。',
    "for '{case}' you would clear {got}:{extra}":
        "对于 '{case}'，你会清除 {got}：{extra}",
    "eight histories: old results cleared, short and cleared ones left, the last two turns' results always kept (F16).":
        '八段历史：旧结果被清除，过短的和已清除的留着不动，最近两轮的结果总是保留（F16）。',
    'a queued prompt, keep 4':
        '一条排队的提示，保留 4',
    'a notice first, keep 4':
        '开头是一条通知，保留 4',
    'walk back from the end counting the messages the model is sent (user and assistant messages, and an attachment it reads, such as a queued prompt; not system notices) until keep_recent are counted; if the message there is a tool_result message, move back to the assistant message that made the call, so the pair stays together in the tail; if nothing the model is sent is left before the cut, there is nothing to summarise.':
        '从末尾往回走，数会发给模型的消息（用户消息和助手消息，以及模型会读到的附件，比如排队的提示；系统通知不算），直到数满 keep_recent 条；如果那里是一条 tool_result 消息，就退回到发出这次调用的助手消息，让这一对留在尾部；如果切点之前已没有任何会发给模型的消息，就没有可摘要的内容。',
    # what the chapter's own cells print (notebooks/06_context_pipeline.ipynb, through tr)
    # (padded by display width: each number starts in the column the English puts it in)
    "estimate of the request body:    {tokens}": "请求体的估算：                   {tokens}",
    "usage.input_tokens in the reply: {tokens}": "回复里的 usage.input_tokens：    {tokens}",
    "{reason:15} cache read {read:6,}, written {written:6,}, prefix broken {broke} times":
        "{reason:15} 缓存读取 {read:6,}，写入 {written:6,}，前缀被打断 {broke} 次",
    "in batches:     {cache}": "分批清除：{cache}",
    "every turn:     {cache}": "每轮清除：{cache}",
    "the summarising request: system = {system} · tools: {tools} · script item {item}":
        "写摘要的请求：system = {system} · tools：{tools} · 脚本第 {item} 项",
    "input tokens per request:": "每次请求的输入 token 数：",
    "the whole history: {tokens} tokens in {count} messages": "整段历史：{count} 条消息，共 {tokens} 个 token",
    "one tool-result message:": "一条工具结果消息：",
    "before: {before} tokens; after: {after} tokens": "之前：{before} 个 token；之后：{after} 个 token",
    "· first changed message:": "· 第一条被改动的消息：",
    "same request as the small version:": "与小版本的请求相同：",
    "acted at turns {shown:26} saved {saved:5,} tokens → {reason} at turn {turn}":
        "起作用的轮次 {shown:26} 省下 {saved:5,} 个 token → 第 {turn} 轮 {reason}",
    "staged, not yet committed, at the end:": "结束时已暂存、尚未提交的：",
    "system and user context byte-identical on every request:": "每次请求的系统上下文和用户上下文逐字节相同：",
    "the next request starts with:": "下一次请求的开头：",
    "requests sent: {count} · last turn: {turn}": "发出的请求：{count} 次 · 最后一轮：{turn}",
    "transcript: {count} messages, the huge log in it: {found}": "transcript：{count} 条消息，其中有那份巨大的日志：{found}",
    "last State: {count} messages, the huge log in it: {found}": "最后的 State：{count} 条消息，其中有那份巨大的日志：{found}",
    "a resumed session sends:": "续接的会话发送：",
    "… {count} messages": "… 共 {count} 条消息",
}
