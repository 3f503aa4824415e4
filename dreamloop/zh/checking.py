"""Chinese for what every exercise check says (``dreamloop/exercises/_checking.py``)."""

TEXTS = {
    "✅ {title}: {summary}": "✅ {title}：{summary}",
    "❌ {title}: {problem}\n   Hint: {hint}": "❌ {title}：{problem}\n   提示：{hint}",
    "interrupted before the check finished.": "检查还没结束就被中断了。",
    "run the cell again.": "重新运行这个单元格。",
    "the check could not run your answer ({kind}: {error}).": "检查无法运行你的答案（{kind}: {error}）。",
    "make sure the cell that defines your answer ran without errors, then run this one again.":
        "先确认定义答案的那个单元格运行时没有报错，再重新运行这个单元格。",
    "your code did not finish within {timeout:g} s.": "你的代码在 {timeout:g} 秒内没有结束。",
    "look for a loop that never ends (a while True without a return, or one that never awaits); "
    "if the kernel stays busy, restart it (Kernel → Restart Kernel).":
        "找一找永远不会结束的循环（没有 return 的 while True，或从不 await 的循环）；"
        "如果内核一直忙碌，就重启它（Kernel → Restart Kernel）。",
    "{what} raised NotImplementedError({error!r}): the exercise is not done yet.":
        "{what} 抛出了 NotImplementedError({error!r})：这道练习还没有做。",
    "{what} raised {kind}: {error}": "{what} 抛出了 {kind}：{error}",
    "replace the `raise NotImplementedError(...)` line with your code: {todo}":
        "把 `raise NotImplementedError(...)` 这一行换成你的代码：{todo}",
    "replace the `raise NotImplementedError(...)` line with your code.":
        "把 `raise NotImplementedError(...)` 这一行换成你的代码。",
    "the offline API answered 400 invalid_request_error: {message}":
        "离线 API 返回了 400 invalid_request_error：{message}",
    "the model was asked more often than the script has turns: the loop did not stop when a response had no "
    "tool_use.":
        "请求模型的次数多于脚本的轮数：响应里没有 tool_use 时，循环没有停下。",
    "a tool_result must answer a tool_use of the message just before it: append the assistant message (the "
    "response's content) before the results.":
        "tool_result 必须回应紧挨在它前面那条消息里的 tool_use：先追加助手消息（响应的 content），再追加工具结果。",
    "every tool_use needs its tool_result in the very next user message.":
        "每个 tool_use 都需要在紧接着的那条用户消息里得到它的 tool_result。",
    "the tool_result blocks must come first in the user message; text goes after them.":
        "tool_result 块必须排在用户消息的最前面；文本放在它们后面。",
    "don't send empty text blocks.": "不要发送空的文本块。",
    "don't send a message with empty content.": "不要发送 content 为空的消息。",
    "expected a function, got {kind} {value}.": "需要一个函数，收到的是 {kind} {value}。",
    "pass the function itself: check(...)({name}) without calling it first.":
        "传入函数本身：check(...)({name})，不要先调用它。",
    "{what} built a {model} that pydantic refused: {error}": "{what} 构造的 {model} 被 pydantic 拒绝了：{error}",
    "{field} got {value} ({reason})": "{field} 收到了 {value}（{reason}）",
    "{field} takes a dl.{kind}, not a {given}: build one, dl.{kind}(...), as the chapter does.":
        "{field} 要的是 dl.{kind}，不是 {given}：像本章那样构造一个 dl.{kind}(...)。",
    "return the tool_use blocks of response.content": "返回 response.content 里的 tool_use 块",
    "call the model, find tool_use, run tools, append, repeat": "请求模型，找出 tool_use，执行工具，追加消息，再来一遍",
    "one tool_result per call; failures become is_error results": "每个调用一个 tool_result；失败变成 is_error 结果",
    "answer every call, in call order": "回答每一个调用，按调用的顺序",
    "async for over the run, then run.terminal": "用 async for 遍历这次运行，然后读 run.terminal",
    "return dl.State(messages=..., turn_count=..., transition=...)":
        "返回 dl.State(messages=..., turn_count=..., transition=...)",
    "return (requests, tool_batches, reason, turn_count)": "返回 (requests, tool_batches, reason, turn_count)",
    "return the memory files, in the order they are sent": "返回记忆文件，按发送的顺序",
    "return the (type, what) pairs phase 5 attaches": "返回阶段 5 附加的 (type, what) 二元组",
    "return a list of batches, each a list of tool_use ids": "返回批次列表，每个批次是一个 tool_use id 列表",
    "Allow the test command; otherwise the tool's own decision": "测试命令就 Allow；其他情况交给工具自己的决定",
    "return the names of the queued calls that may start now": "返回现在可以开始的排队调用的名字",
    "return {'role': 'user', 'content': [...]}": "返回 {'role': 'user', 'content': [...]}",
    "return the index where the kept tail starts": "返回保留的尾部开始处的下标",
    "the first threshold-triggered stage that acts, or None": "第一个由阈值触发并起作用的步骤，或 None",
    "the tool_use ids of the results to clear": "要清除的结果对应的 tool_use id",
    "block while the tests fail, None when they pass": "测试失败时阻止，通过时返回 None",
    "deny a recursive rm, None for anything else": "拒绝递归的 rm，其他情况返回 None",
    "escalate once, then resume at most 3 times": "先提升一次上限，然后最多恢复 3 次",
    "the ids a failed attempt withdraws": "一次失败的尝试要撤回的 id",
    "True to go on, False to stop": "继续返回 True，停止返回 False",
    "the phase where the loop decides it": "循环在哪一步作出这个决定",
    "a script whose run goes through those transitions, then ends completed":
        "一个脚本：它的运行依次经过这些转换路径，然后以 completed 结束",
    "the switches explained by this chapter": "到这一章为止讲过的开关",
    "split the calls left without a result into saved and lost": "把没有结果的调用分成已保存的和丢失的",
    "find the first checkpoint whose run was interrupted": "找出第一个运行被中断的检查点",
    "count the main thread's model calls": "数出主线程的模型调用次数",
    "Claude Code's (requests, ending) on this scenario": "Claude Code 在这个场景上的 (requests, ending)",
    "one count per request: the reminders it added": "每次请求一个数：它新增的提醒块",
}
