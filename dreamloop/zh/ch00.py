"""Chinese for chapter 00's checks (``dreamloop/exercises/ch00.py``)."""

TEXTS = {
    "setup": "环境检查",
    "{package} {version} is older than {needed}": "{package} {version} 低于 {needed}",
    " (buttons won't work while a cell runs)": "（单元格运行期间按钮不会响应）",
    "; ": "；",
    ".": "。",
    "run `make venv` (or pip install -e '.[lab,test]') in the repo.":
        "在仓库里运行 `make venv`（或 pip install -e '.[lab,test]'）。",
    "reinstall the package: pip install -e .": "重新安装这个包：pip install -e .",
    "the offline Messages API did not answer.": "离线的 Messages API 没有应答。",
    "anthropic SDK, ipywidgets and the offline Messages API all work (no network, no key).":
        "anthropic SDK、ipywidgets 和离线 Messages API 都能正常工作（不需要网络，也不需要密钥）。",
    "hello script": "问候脚本",
    "a script is a list of turns, one per request the model will get; dl.reply(...) makes a turn from what the "
    "model says.":
        "脚本是一个由轮组成的列表，模型每收到一次请求就用掉一轮；dl.reply(...) 用模型要说的话构造一轮。",
    "a turn with a tool_use makes the loop call the model again; a greeting needs no tool.":
        "带 tool_use 的一轮会让循环再次请求模型；打招呼不需要工具。",
    "the loop asked the model a second time and your script had no turn for it.":
        "循环第二次请求了模型，而你的脚本没有为它准备一轮。",
    "the first turn asks for a tool ({tools}), so the loop went round again.":
        "第一轮请求了工具（{tools}），所以循环又转了一圈。",
    "the model's answer was {answer!r}, not 'Hello, loop!'.": "模型的回答是 {answer!r}，不是 'Hello, loop!'。",
    "the text of the turn is what the model says, character for character (one text block).":
        "这一轮的文本就是模型说的话，一个字符都不差（一个文本块）。",
    "the run ended {reason} after {requests} requests; expected completed after 1.":
        "这次运行在 {requests} 次请求后以 {reason} 结束；应当在 1 次请求后以 completed 结束。",
    "one turn with text only: no tool_use, so the loop stops after the first request.":
        "只有文本的一轮：没有 tool_use，所以循环在第一次请求后就停下。",
    "one request, the model said 'Hello, loop!', Terminal completed at turn_count=1.":
        "一次请求，模型说了 'Hello, loop!'，Terminal 为 completed，turn_count=1。",
    "tool script": "工具脚本",
    "a script is a list of turns, one per request: here two. In turn 1 the model calls the built-in Read tool (a "
    "tool_use block, made with dl.tool_use, inside dl.reply); in turn 2 it answers in words.":
        "脚本是一个由轮组成的列表，每次请求用掉一轮：这里是两轮。第 1 轮模型调用内置的 Read 工具"
        "（用 dl.tool_use 构造一个 tool_use 块，放进 dl.reply）；第 2 轮模型用文字回答。",
    "exactly two turns: one with the tool_use, then one answer without any tool_use (a script that runs out of "
    "turns ends the run with model_error).":
        "恰好两轮：一轮带 tool_use，然后一轮不带任何 tool_use 的回答（脚本的轮用完时，运行以 model_error 结束）。",
    "the loop asked the model more often than your script has turns.": "循环请求模型的次数多于你的脚本的轮数。",
    "the first response asked for no tool_use: the model answered without reading the file.":
        "第一次响应没有请求 tool_use：模型没读文件就回答了。",
    "turn 1 must call Read: put a tool_use block (dl.tool_use) in the first dl.reply.":
        "第 1 轮必须调用 Read：在第一个 dl.reply 里放一个 tool_use 块（dl.tool_use）。",
    "the first response asked for {name}({input}); the built-in tool is called 'Read'.":
        "第一次响应请求的是 {name}({input})；内置工具的名字是 'Read'。",
    "tool names are exact (case too): the API only knows the names the loop sent in its tool definitions.":
        "工具名必须完全一致（大小写也算）：API 只认识循环在工具定义里发过去的名字。",
    "the first response asked for Read({input}); expected file_path 'config.py'.":
        "第一次响应请求的是 Read({input})；file_path 应当是 'config.py'。",
    "the tool's input is a dict whose keys are its input schema's fields: Read takes file_path.":
        "工具的输入是一个字典，键就是它输入 schema 里的字段：Read 接收 file_path。",
    "a tool_result came back with is_error: {content}": "返回的 tool_result 带有 is_error：{content}",
    "the loop answered your call with an error the model would have to read; fix the call.":
        "循环用一个错误回应了你的调用，模型只能读到这个错误；请修正这次调用。",
    "the run ended {reason} at turn_count={turn_count}; expected completed at turn_count=2.":
        "这次运行在 turn_count={turn_count} 时以 {reason} 结束；应当在 turn_count=2 时以 completed 结束。",
    "the final answer {said!r} does not say that value is 1.": "最终回答 {said!r} 没有说出 value 是 1。",
    "the answer should state what the tool_result showed, naming value and its number (a 1 somewhere in the text "
    "is not enough).":
        "回答应当说出 tool_result 里看到的内容，点明 value 和它的数值（文本里随便出现一个 1 还不够）。",
    "Read(config.py) ran, its tool_result went back, and the answer came at turn_count=2.":
        "Read(config.py) 执行了，它的 tool_result 交回了模型，回答在 turn_count=2 时到来。",
    "the script is still None: the exercise is not done yet.": "脚本仍然是 None：这道练习还没有做。",
    "you passed one Turn, not a script.": "你传入的是一个 Turn，而不是脚本。",
    "a script is a list of turns, even when it has one.": "脚本是由轮组成的列表，哪怕只有一轮。",
    "expected a non-empty list of turns, got {kind} {value}.": "需要一个非空的轮列表，收到的是 {kind} {value}。",
    "every item must be a Turn; found {kind}.": "每一项都必须是 Turn；发现了 {kind}。",
    "dl.text and dl.tool_use make content blocks; dl.reply(...) puts blocks into a Turn.":
        "dl.text 和 dl.tool_use 构造内容块；dl.reply(...) 把内容块装进一个 Turn。",
}
