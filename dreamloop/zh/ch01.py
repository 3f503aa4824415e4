"""Chinese for chapter 01's checks (``dreamloop/exercises/ch01.py``)."""

TEXTS = {
    "whether to go round again comes from the tool_use blocks in the content, never from stop_reason: the API's "
    "stop_reason is not always reliable (queryLoop() says so).":
        "要不要再转一圈，看 content 里的 tool_use 块，而不是 stop_reason：API 的 stop_reason 并不总是可靠"
        "（queryLoop() 的源码注释就这么说）。",
    "return the tool_use blocks of response.content, in the order they come.":
        "按出现的顺序返回 response.content 里的 tool_use 块。",
    "text only": "只有文本",
    "text + one tool_use": "文本 + 一个 tool_use",
    "two tool_use blocks": "两个 tool_use 块",
    "text between calls": "调用之间夹着文本",
    "thinking, then a call": "先 thinking，再调用",
    "stop_reason tool_use, no block": "stop_reason 为 tool_use，但没有 tool_use 块",
    "stop_reason end_turn, with a block": "stop_reason 为 end_turn，却带有 tool_use 块",
    "for '{case}' it returned {kind} {value}, not a list.": "对于“{case}”，它返回了 {kind} {value}，不是列表。",
    "return a list (even an empty one) of the blocks.": "返回由内容块组成的列表（空列表也可以）。",
    "for '{case}' it returned {value}: strings, not blocks.": "对于“{case}”，它返回了 {value}：是字符串，不是内容块。",
    "return the blocks themselves: step 3 needs each call's name and input, not only its id.":
        "返回内容块本身：第 3 步需要每个调用的名称和输入，而不只是它的 id。",
    "you returned blocks of type {kinds}: keep only the tool_use ones.":
        "你返回的块类型是 {kinds}：只保留 tool_use 块。",
    "a response can ask for several tools at once: keep every tool_use block, not only one.":
        "一次响应可以同时请求多个工具：保留每一个 tool_use 块，而不只是一个。",
    "keep the tool_use blocks in the order the response has them (results go back in that order).":
        "按响应中的顺序保留 tool_use 块（工具结果也按这个顺序交回）。",
    "for '{case}' it found tool_use ids {ids}; the response has {expected}.":
        "对于“{case}”，它找到的 tool_use id 是 {ids}；响应里实际是 {expected}。",
    "{count} responses, the same tool_use blocks as dreamloop found (stop_reason never decides).":
        "{count} 个响应，找到的 tool_use 块与 dreamloop 找到的一致（从不由 stop_reason 决定）。",
    "find tool_use blocks": "识别 tool_use 块",
    "each call gets one tool_result with its tool_use_id, in the order of the calls.":
        "每个调用得到一个带有其 tool_use_id 的 tool_result，按调用的顺序排列。",
    "one Read": "一次 Read",
    "the four steps, once: call, find tool_use, run it, append both.":
        "四步走一遍：请求模型、识别 tool_use、执行工具、把两者都追加到消息末尾。",
    "two calls in one response": "一次响应里两个调用",
    "two tool turns": "两轮工具调用",
    "keep the whole history: every request carries all earlier messages, then the new ones.":
        "保留完整的历史：每次请求都带上之前的全部消息，再加上新的消息。",
    "no tool at all": "完全不用工具",
    "a response without tool_use ends the loop at once.": "没有 tool_use 的响应会让循环立即结束。",
    "stop_reason tool_use, no tool_use block (F4)": "stop_reason 为 tool_use，但没有 tool_use 块（F4）",
    "stop_reason end_turn, with a tool_use block": "stop_reason 为 end_turn，却带有 tool_use 块",
    "the four steps in a while True: call the model with messages and tools; find the tool_use blocks (none: "
    "return the response); run each into a tool_result; append, and go round.":
        "在 while True 里写出四步：带着消息和工具请求模型；找出 tool_use 块（没有就返回响应）；"
        "把每个调用执行成 tool_result；追加消息，再转一圈。",
    "script '{case}': {problem}": "脚本“{case}”：{problem}",
    "step 2 is also the way out: a response with no tool_use block ends the loop, and it is what the loop "
    "returns.":
        "第 2 步也是出口：没有 tool_use 块的响应会结束循环，循环返回的就是这个响应。",
    "script '{case}', request {n}: the offline API answered 400: {message}":
        "脚本“{case}”，第 {n} 次请求：离线 API 返回了 400：{message}",
    "script '{case}': your loop sent {got} request(s); dreamloop.agent_loop sent {expected}.":
        "脚本“{case}”：你的循环发出了 {got} 次请求；dreamloop.agent_loop 发出了 {expected} 次。",
    "go round again while the response has tool_use blocks.": "只要响应里还有 tool_use 块，就再转一圈。",
    "script '{case}': your loop sent {got} requests; expected {expected}.":
        "脚本“{case}”：你的循环发出了 {got} 次请求；应当是 {expected} 次。",
    "return the response when it has no tool_use block.": "响应里没有 tool_use 块时，就返回这个响应。",
    "script '{case}': your loop returned {value}; expected the last response.":
        "脚本“{case}”：你的循环返回了 {value}；应当返回最后一次响应。",
    "return the model's response itself (the Message) when it asks for no tool.":
        "模型不再请求工具时，返回模型的响应本身（那个 Message）。",
    "{scripts} scripts, {requests} requests, each one the same as dreamloop.agent_loop sent.":
        "{scripts} 个脚本，{requests} 次请求，每一次都与 dreamloop.agent_loop 发出的相同。",
    "four steps": "四步循环",
    "script '{case}', request {n}": "脚本“{case}”，第 {n} 次请求",
    "{where}: the request body was not JSON.": "{where}：请求体不是 JSON。",
    "{where}: tools {got}, not the tools your function was given.": "{where}：tools 是 {got}，不是传给你的函数的那些工具。",
    "send the tool definitions with every request: the model keeps nothing between requests.":
        "每次请求都要带上工具定义：两次请求之间，模型什么也不记得。",
    "append the model's response as an assistant message before the results: the model must see its own call to "
    "make sense of the result.":
        "先把模型的响应作为助手消息追加进去，再追加结果：模型要看到自己提出的调用，才能理解这个结果。",
    "keep the whole history: the model remembers nothing, so every request carries all earlier messages, then this "
    "turn's.":
        "保留完整的历史：模型什么都不记得，所以每次请求都带上之前的全部消息，再加上这一轮的消息。",
    "{where}: message roles {got}, not the conversation dreamloop.agent_loop sent.":
        "{where}：消息的 role 依次是 {got}，与 dreamloop.agent_loop 发送的对话不同。",
    "put the tool_results in the order of the calls, not in any other order.":
        "按调用的顺序排列 tool_result，不要用别的顺序。",
    "{where}, messages[{j}] ({role}): you sent {got}, not what dreamloop.agent_loop sent.":
        "{where}，messages[{j}]（{role}）：你发送的是 {got}，与 dreamloop.agent_loop 发送的不同。",
    # what the chapter's own cells print (notebooks/01_four_step_loop.ipynb, through tr)
    '{count} requests': '{count} 次请求',
}
