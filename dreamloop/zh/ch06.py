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
    "walk back from the end counting user and assistant messages (not system notices) until keep_recent are "
    "counted; if the message there is a tool_result message, move back to the assistant message that made the "
    "call, so the pair stays together in the tail.":
        "从末尾往回走，数 user 和 assistant 消息（不数系统通知），直到数满 keep_recent 条；如果停下的地方是一条 "
        "tool_result 消息，就再退到发出这次调用的那条 assistant 消息，让这一对在尾部里待在一起。",
    "return the index where the kept tail starts: count the newest keep_recent user and assistant messages, and "
    "never start the tail with a result whose call would be summarised.":
        "返回保留的尾部开始的序号：数出最新的 keep_recent 条 user 和 assistant 消息，并且绝不让尾部以一个"
        "其调用会被摘要掉的结果开头。",
    "for '{case}' it returned {value}; expected an index (int).": "对于“{case}”，它返回了 {value}；应当是一个序号（int）。",
    "it is not an index of the list.": "它不是这个列表的序号。",
    "for '{case}' (keep_recent={keep}) the cut is {cut}: {problem}": "对于“{case}”（keep_recent={keep}），切点是 {cut}：{problem}",
    "for '{case}' (keep_recent={keep}) the cut is {cut}, keeping {kept} user/assistant message(s); the pipeline "
    "cuts at {right}.":
        "对于“{case}”（keep_recent={keep}），切点是 {cut}，保留了 {kept} 条 user/assistant 消息；管线的切点是 {right}。",
    "every cut keeps each tool_result with its tool_use, on seven histories (F8 among them).":
        "在七段历史上（包括 F8），每个切点都让每个 tool_result 和它的 tool_use 待在一起。",
    "safe compaction cut": "安全的压缩切点",
    "take options.thresholds(options.context_window): stages that are off have None; the first stage, in pipeline "
    "order, whose threshold tokens is strictly over, acts first.":
        "取 options.thresholds(options.context_window)：关闭的阶段为 None；按管线顺序，token 数严格超过其阈值的"
        "第一个阶段最先动手。",
    "return the name of the first stage, in pipeline order, whose threshold the request is over (None when it is "
    "over none).":
        "按管线顺序，返回请求超过其阈值的第一个阶段的名字（一个都没超过时返回 None）。",
    " No threshold is crossed (a stage acts only when the context is *over* its threshold).":
        "没有越过任何阈值（只有上下文*超过*阶段的阈值时，这个阶段才会动手）。",
    " {stage} is off in these options.": "{stage} 在这组选项里是关闭的。",
    "with {tokens:,} tokens (stages on: {on}; window {window:,}) you said {got!r}; the pipeline's first stage to act "
    "is {expected!r}.{why}":
        "在 {tokens:,} 个 token 时（打开的阶段：{on}；窗口 {window:,}），你的回答是 {got!r}；管线里最先动手的阶段"
        "是 {expected!r}。{why}",
    "14 predictions match the pipeline's thresholds (off stages skipped, lightest first, strictly over).":
        "14 个预测都与管线的阈值一致（跳过关闭的阶段，从轻到重，严格超过）。",
    "which stage acts first": "哪个阶段最先动手",
    "six reads, keep 3": "六次读取，保留 3 条",
    "six reads, keep 0 (F16: the last two turns stay anyway)": "六次读取，保留 0 条（F16：最后两轮无论如何都保留）",
    "six reads, two already cleared, keep 2": "六次读取，两次已清除，保留 2 条",
    "five reads, turn 2 read two files at once, keep 2": "五次读取，第 2 轮同时读了两个文件，保留 2 条",
    "five reads, turn 4 read two files at once, keep 3": "五次读取，第 4 轮同时读了两个文件，保留 3 条",
    "two reads, keep 0": "两次读取，保留 0 条",
    "count tool-result user messages from the end: the newest max(keep_recent, 2) of them are kept (the current and "
    "previous turn always); every result in an older message whose content is not already {cleared!r} may be "
    "cleared.":
        "从末尾数装着工具结果的 user 消息：最新的 max(keep_recent, 2) 条保留（当前轮和上一轮总是保留）；"
        "更早的消息里，内容还不是 {cleared!r} 的每个结果都可以清除。",
    "return the tool_use ids whose old results microcompact would clear; the last two turns' results always stay.":
        "返回 microcompact 会清除其旧结果的 tool_use id；最后两轮的结果总是保留。",
    "for '{case}' it returned {value}; expected a list of tool_use ids.":
        "对于“{case}”，它返回了 {value}；应当是一个 tool_use id 列表。",
    " {ids} must stay: the model may still need what it just read (F16).":
        "{ids} 必须保留：模型可能还需要它刚读到的内容（F16）。",
    " {ids} is already cleared.": "{ids} 已经清除过了。",
    " {ids} are already cleared.": "{ids} 都已经清除过了。",
    "for '{case}' you would clear {got}; microcompact clears {expected}.{extra}":
        "对于“{case}”，你会清除 {got}；microcompact 清除的是 {expected}。{extra}",
    "six histories: old results cleared, the last two turns' results always kept (F16).":
        "六段历史：旧的结果被清除，最后两轮的结果总是保留（F16）。",
    "what microcompact may clear": "microcompact 可以清除什么",
}
