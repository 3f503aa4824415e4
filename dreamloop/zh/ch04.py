"""Chinese for chapter 04's checks (``dreamloop/exercises/ch04.py``)."""

TEXTS = {
    "word_count is still None: the exercise is not done yet.": "word_count 仍然是 None：这道练习还没有做。",
    "write the input as a pydantic model (its fields are the tool's input), then turn a counting function into a "
    "tool with @dl.tool(...), as section 1 does for count_lines.":
        "把输入写成一个 pydantic 模型（它的字段就是工具的输入），再像第 1 节处理 count_lines 那样，"
        "用 @dl.tool(...) 把一个计数函数变成工具。",
    "expected a tool (made with @dl.tool or a BaseTool subclass), got {kind}.":
        "需要一个工具（用 @dl.tool 或 BaseTool 子类构造），收到的是 {kind}。",
    "@dl.tool(InputModel, ...) on a function returns the tool: pass that, not the function or its input model.":
        "把 @dl.tool(InputModel, ...) 加在函数上，得到的就是工具：传入它，而不是函数本身或它的输入模型。",
    "the tool is named {name!r}; expected 'WordCount'.": "工具的名字是 {name!r}；应当是 'WordCount'。",
    "the name defaults to the function's; the model calls the tool by the name you give it.":
        "名字默认取函数名；模型按你给的名字调用工具。",
    "input_schema properties are {props}; expected text (string) and unique (boolean).":
        "input_schema 的 properties 是 {props}；应当是 text（string）和 unique（boolean）。",
    "the schema comes from the input model's fields and their types.": "schema 来自输入模型的字段及其类型。",
    "input_schema required is {required}; expected ['text'] (unique has a default).":
        "input_schema 的 required 是 {required}；应当是 ['text']（unique 有默认值）。",
    "a field with a default is optional, one without is required: text must be given, unique defaults to False.":
        "有默认值的字段是可选的，没有默认值的是必填的：text 必须给出，unique 默认为 False。",
    "the tool is not read-only and concurrency-safe.": "这个工具不是只读且并发安全的。",
    "counting words changes nothing: say so when you make the tool (read-only), and it may run beside other calls.":
        "数单词不会改变任何东西：构造工具时把这一点说出来（只读），它就可以和其他调用一起运行。",
    "count the words of text (split on whitespace) and return the count as text.":
        "数出 text 里的单词（按空白切分），把个数作为文本返回。",
    "with unique, count each distinct word once.": "设置 unique 时，每个不同的单词只数一次。",
    "split on any run of whitespace (spaces, newlines), not on single spaces.":
        "按任意连续空白（空格、换行）切分，而不是按单个空格切分。",
    "WordCount({input}) failed: {content}": "WordCount({input}) 失败了：{content}",
    "the function raised; the loop turned that into an is_error result. {idea}":
        "函数抛出了异常；循环把它变成了一个 is_error 结果。{idea}",
    "WordCount({input}) should be an InputValidationError result, got {content}.":
        "WordCount({input}) 应当得到一个 InputValidationError 结果，实际是 {content}。",
    "bad input is caught by the input model before your function runs: keep text required and unique a bool.":
        "错误的输入在你的函数运行之前就被输入模型拦下：保持 text 必填、unique 为 bool。",
    "WordCount({input}) returned {got!r}, which is not the count.": "WordCount({input}) 返回了 {got!r}，这不是正确的计数。",
    "schema from pydantic, read-only and concurrency-safe, 3 right answers, 2 bad inputs as is_error results.":
        "schema 来自 pydantic，只读且并发安全，3 个答案正确，2 个错误输入得到 is_error 结果。",
    "WordCount tool": "WordCount 工具",
    "a call whose tool is unknown, or whose input does not validate, is never safe: it runs alone.":
        "工具未知或输入校验不通过的调用，永远不算并发安全：它单独运行。",
    "every call is in exactly one batch.": "每个调用恰好属于一个批次。",
    "one read": "一次读取",
    "R R W R": "读、读、写、读",
    "batches follow the calls in order: consecutive safe calls share a batch, an unsafe call runs alone, and a safe "
    "call after it starts a new batch.":
        "批次按调用的顺序排列：连续的并发安全调用共用一个批次，不安全的调用单独运行，它后面的安全调用开始一个新批次。",
    "a call that is not concurrency-safe runs alone, even next to another one like it.":
        "不是并发安全的调用单独运行，哪怕旁边是一个同类的调用。",
    "two edits": "两次编辑",
    "Bash depends on the command": "Bash 取决于命令",
    "safety depends on the input, not only the tool: ask the tool about this call's parsed input.":
        "是否安全取决于输入，而不只是工具：拿这次调用解析后的输入去问工具。",
    "unknown tool between reads": "两次读取之间有一个未知工具",
    "invalid input": "无效输入",
    "return the calls split into batches, in order (a list of lists of tool_use ids): consecutive concurrency-safe "
    "calls together, every other call alone.":
        "按顺序把调用分成批次返回（由 tool_use id 列表组成的列表）：连续的并发安全调用放在一起，其他调用各自单独。",
    "for '{case}' it returned {value}; expected a list of lists.": "对于“{case}”，它返回了 {value}；应当是由列表组成的列表。",
    "return a list of batches, each batch a list of tool_use ids.": "返回批次列表，每个批次是一个 tool_use id 列表。",
    "for '{case}' your batches are {got}, not the ones partition_tool_calls makes.":
        "对于“{case}”，你的批次是 {got}，与 partition_tool_calls 分出的批次不同。",
    "{count} cases, the same batches as partition_tool_calls (input decides, not just the name).":
        "{count} 种情况，批次与 partition_tool_calls 相同（由输入决定，而不只看工具名）。",
    "partition tool calls": "划分工具调用",
    "return dl.Allow() for the project's test command in Bash; for every other call, the decision the tool itself "
    "would make.":
        "对 Bash 中项目的测试命令返回 dl.Allow()；其他每个调用，返回工具自己会做出的决定。",
    "for any call that is not the test command, don't decide yourself: return the tool's own decision (await its "
    "check_permissions on the validated input); it knows the mode and the workspace.":
        "不是测试命令的调用，不要自己做决定：返回工具自己的决定（对校验后的输入 await 它的 check_permissions）；"
        "它知道当前模式和工作区。",
    "the test command starts with 'python -m unittest' or 'python3 -m unittest': allow it.":
        "测试命令以 'python -m unittest' 或 'python3 -m unittest' 开头：允许它。",
    "python3 as well as python: both start the test command.": "python3 和 python 一样：两者都能启动测试命令。",
    "a command that starts right can chain another: refuse any shell syntax (; | & $ ` < >) before you allow.":
        "开头正确的命令也可能串上另一条命令：允许之前，先拒绝任何 shell 语法（; | & $ ` < >）。",
    "for {call} it returned {value}; expected Allow(), Deny(reason) or Ask(reason).":
        "对于 {call}，它返回了 {value}；应当是 Allow()、Deny(reason) 或 Ask(reason)。",
    "return a decision; a check_permissions call is a coroutine: await it.":
        "返回一个决定；check_permissions 调用是协程：要 await 它。",
    "every call needs one of the three decisions.": "每个调用都需要三种决定之一。",
    "{count} calls, the same Allow / Ask / Deny as dreamloop's allow_test_commands().":
        "{count} 个调用，Allow / Ask / Deny 与 dreamloop 的 allow_test_commands() 一致。",
    "for {call} in permission mode {mode} you decided {got}: that is not this call's decision.":
        '对于 {call}，在权限模式 {mode} 下你的决定是 {got}：这不是这个调用该得的决定。',
    'for {call} in permission mode {mode} you allowed it without asking.':
        '对于 {call}，在权限模式 {mode} 下你不经询问就允许了它。',
    'a line break starts a second command as surely as ; does: refuse line breaks too.':
        '换行和 ; 一样，都会开始第二条命令：换行也要拒绝。',
    "'python -m unittest_helpers' runs another module (one the model may have just written): the prefix must be the whole command or be followed by a space.":
        "'python -m unittest_helpers' 运行的是另一个模块（可能正是模型刚写出来的）：前缀要么就是整条命令，要么后面紧跟一个空格。",
    "the command must start with the test command; holding 'unittest' somewhere is not enough.":
        "命令必须以测试命令开头；只是在某处含有 'unittest' 还不够。",
    # what the chapter's own cells print (notebooks/04_tools.ipynb, through tr); the code pads the two order
    # labels to 22 characters, so both Chinese labels have 8 (they line up)
    'finished in the order:': '工具完成的顺序：',
    'sent to the model as:': '发给模型的顺序：',
    # the built-in tools' Ask reasons (dreamloop/tools/permissions.py ASK_REASONS), as the AskPrompt shows them;
    # the reason itself stays English (with nobody to ask, it goes to the model)
    "{tool} wants to change {path}": "{tool} 要修改 {path}",
    "Bash wants to run: {command}": "Bash 要运行：{command}",
    "{tool} wants to run with {input}": "{tool} 要以 {input} 为输入运行",
}
