"""Chinese for chapter 02's checks (``dreamloop/exercises/ch02.py``)."""

TEXTS = {
    "for '{case}' it returned a list of {count} items; expected one user message.":
        "对于“{case}”，它返回了一个有 {count} 项的列表；应当是一条用户消息。",
    'all the results go back together in ONE user message: {"role": "user", "content": [...]}.':
        '所有结果一起放进【一条】用户消息交回：{"role": "user", "content": [...]}。',
    "for '{case}' it returned {value}; expected a user message {shape}.":
        "对于“{case}”，它返回了 {value}；应当是一条用户消息 {shape}。",
    "tool results travel in a user message whose content is a list of tool_result blocks.":
        "工具结果放在一条用户消息里交回，它的 content 是由 tool_result 块组成的列表。",
    "for '{case}' the message starts with a {kind!r} block.": "对于“{case}”，这条消息以 {kind!r} 块开头。",
    "the tool_result blocks come first in the message; anything else goes after them.":
        "tool_result 块排在消息最前面；其他内容都放在它们后面。",
    "the calls fix the order: answer them in the order of tool_uses, whatever order the results came in.":
        "顺序由调用决定：无论结果按什么顺序到达，都按 tool_uses 的顺序回应。",
    "every tool_use needs a tool_result with its id, also the calls that failed or never ran: a missing one is a "
    "400 on the next request.":
        "每个 tool_use 都需要一个带有其 id 的 tool_result，失败的和根本没执行的调用也不例外：缺一个，下一次请求就是 400。",
    "one tool_result per tool_use, each with the id of its call (tool_use_id).":
        "每个 tool_use 对应一个 tool_result，各自带上所回应调用的 id（tool_use_id）。",
    "for '{case}' the tool_result ids are {ids}; the calls were {expected}.":
        "对于“{case}”，tool_result 的 id 是 {ids}；调用是 {expected}。",
    "for '{case}' the result of {id} has is_error={got}; expected {expected}.":
        "对于“{case}”，{id} 的结果 is_error={got}；应当是 {expected}。",
    "for '{case}' the error result of {id} has no text.": "对于“{case}”，{id} 的错误结果没有文字。",
    "say what went wrong: the model reads the error and can correct its call.":
        "说明哪里出了错：模型会读到这个错误，并据此修正它的调用。",
    "for '{case}' the content of {id} is {got}; expected {expected}.":
        "对于“{case}”，{id} 的 content 是 {got}；应当是 {expected}。",
    "a result that arrived is kept as it is: its content is what the tool returned.":
        "已经到达的结果原样保留：它的 content 就是工具返回的内容。",
    "for '{case}' the offline API would answer 400: {problem}": "对于“{case}”，离线 API 会返回 400：{problem}",
    "the API's own rule for the pairing is in the 400's words above.": "关于配对，API 自己的规则就写在上面那条 400 里。",
    "return one user message that answers every call with a tool_result (its tool_use_id, in call order); a call "
    "that fails is answered too, as an error result.":
        "返回一条用户消息，用 tool_result 回应每一个调用（带上它的 tool_use_id，按调用顺序）；"
        "失败的调用也要回应，作为错误结果。",
    "a failure is a result, not an exception: an unknown tool or a function that raises gets a tool_result with "
    "is_error set to True and a text saying what went wrong.":
        "失败也是一种结果，而不是异常：未知的工具、抛出异常的函数，都得到一个 is_error 为 True 的 tool_result，"
        "并附上说明错误的文字。",
    "one call": "一个调用",
    "two calls": "两个调用",
    "same tool twice, ids out of order": "同一个工具两次，id 乱序",
    "unknown tool": "未知工具",
    "tool raises": "工具抛出异常",
    "{count} cases: every tool_use answered by id, in call order, failures as is_error results.":
        "{count} 种情况：每个 tool_use 都按 id、按调用顺序得到回应，失败的作为 is_error 结果。",
    "answer every tool_use": "回应每个 tool_use",
    "return one user message with an answer for every call in tool_uses: the result that arrived, or an error "
    "result saying it was interrupted.":
        "返回一条用户消息，为 tool_uses 里的每个调用给出回应：已经到达的结果，或者一个说明调用被中断的错误结果。",
    "the second one never finished": "第二个从未完成",
    "all finished, in completion order 3, 1, 2": "全部完成，完成顺序为 3、1、2",
    "none finished": "一个都没完成",
    "one call, finished with an error": "一个调用，以错误结束",
    "a call that never finished gets an error result (is_error True) saying so; a result that did arrive is kept "
    "as it came, error or not.":
        "从未完成的调用得到一个说明这一点的错误结果（is_error 为 True）；已经到达的结果原样保留，无论是不是错误。",
    "{count} cases: every call answered in call order, dangling ones as is_error results.":
        "{count} 种情况：每个调用都按调用顺序得到回应，悬空的调用作为 is_error 结果。",
    "close dangling tool_use": "补齐悬空的 tool_use",
    # what the chapter's own cells print (notebooks/02_tool_use_and_tool_result.ipynb, through tr)
    "accepted": "已接受",
    "script turns used: {used} of {count} requests": "用掉的脚本轮次：{used} 个，共 {count} 次请求",
    "kept as": "保存为",
    "sent back as": "发回为",
    "after a load": "载入后",
}
