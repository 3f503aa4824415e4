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
        "每个 tool_use 都需要在紧接着的那条 user 消息里得到它的 tool_result。",
    "the tool_result blocks must come first in the user message; text goes after them.":
        "tool_result 块必须排在 user 消息的最前面；文本放在它们后面。",
    "don't send empty text blocks.": "不要发送空的文本块。",
    "don't send a message with empty content.": "不要发送 content 为空的消息。",
    "expected a function, got {kind} {value}.": "需要一个函数，收到的是 {kind} {value}。",
    "pass the function itself: check(...)({name}) without calling it first.":
        "传入函数本身：check(...)({name})，不要先调用它。",
    "{what} built a {model} that pydantic refused: {error}": "{what} 构造的 {model} 被 pydantic 拒绝了：{error}",
    "{field} got {value} ({reason})": "{field} 收到了 {value}（{reason}）",
    "{field} takes a dl.{kind}, not a {given}: build one, dl.{kind}(...), as the chapter does.":
        "{field} 要的是 dl.{kind}，不是 {given}：像本章那样构造一个 dl.{kind}(...)。",
}
