"""Chinese for the checks of chapters 07 and 07b (``dreamloop/exercises/ch07.py``)."""

TEXTS = {
    "run the project's tests in the workspace the input names; while they fail, block with the failures and the "
    "line '{task}' as the reason; once they pass, have no opinion.":
        "在输入指明的工作区里运行项目的测试；测试失败时阻断，把失败信息和单独一行 '{task}' 作为原因；"
        "测试通过后，不表态。",
    "a stop hook blocks while the test run fails (its reason is the model's feedback) and has no opinion once it "
    "passes; the run happens in the workspace the input names.":
        "停止 hook 在测试失败时阻断（它的原因就是给模型的反馈），测试通过后不表态；测试在输入指明的工作区里运行。",
    "your hook raised or returned something that is not a decision: {error}":
        "你的 hook 抛出了异常，或返回了不是决定的东西：{error}",
    "a hook answers with its event's decision model, a dict shaped like its JSON, or None.":
        "hook 的回答是它所属事件的决定模型、形如其 JSON 的字典，或 None。",
    "the loop ended `completed` while test_value still failed: your hook never blocked.":
        "test_value 仍然失败，循环却以 `completed` 结束了：你的 hook 从未阻断。",
    "a stop hook with no opinion lets the loop end; it has to block while the tests fail.":
        "不表态的停止 hook 会让循环结束；测试失败时它必须阻断。",
    "your hook prevented continuation (continue_=False): the run ended instead of going on.":
        "你的 hook 阻止了继续（continue_=False）：运行结束了，而不是继续下去。",
    "continue_=False ends the run; a block sends the reason to the model and the loop goes on.":
        "continue_=False 会结束运行；阻断（block）则把原因发给模型，循环继续。",
    "the tests pass, yet your hook blocked {count} times until the runaway guard ended the run: it never lets the "
    "loop end.":
        "测试已经通过，你的 hook 却阻断了 {count} 次，直到防失控保护结束了运行：它从不让循环结束。",
    "decide from how the test run ended, run in the workspace the input names; once it succeeds, the hook has no "
    "opinion.":
        "根据测试运行的结果做决定，测试要在输入指明的工作区里运行；测试成功后，hook 不表态。",
    "the agent could not act on your feedback ({said!r}); the runaway guard ended the run.":
        "智能体无法根据你的反馈行动（{said!r}）；防失控保护结束了运行。",
    "the offline agent understands a task on a line of its own: end the reason with the line '{task}'.":
        "离线智能体只理解单独成行的任务：在原因的最后加上一行 '{task}'。",
    "the runaway guard ended the run after {count} blocks.": "阻断 {count} 次后，防失控保护结束了运行。",
    "the run ended {reason} with the tests passing.": "运行以 {reason} 结束，测试通过。",
    "the run ended {reason} with the tests failing.": "运行以 {reason} 结束，测试失败。",
    "tests-must-pass stop hook": "测试必须通过的停止 hook",
    "your hook raised NotImplementedError({error!r}): the exercise is not done yet.":
        "你的 hook 抛出了 NotImplementedError({error!r})：这道练习还没有做。",
    "deny a Bash command that runs rm recursively, with a reason; have no opinion on anything else.":
        "拒绝递归执行 rm 的 Bash 命令，并给出原因；对其他一切不表态。",
    "for {command!r} it returned {returned}; a pre_tool_use hook returns PreToolUseDecision(...), a dict shaped "
    "like its JSON, or None.":
        "对于 {command!r}：它返回了 {returned}；pre_tool_use hook 应当返回 PreToolUseDecision(...)、形如其 JSON 的 "
        "dict，或 None。",
    " (only type 'command' runs)": "（只有 type 为 'command' 的 hook 会运行）",
    "a hook answers with its event's decision model (PreToolUseDecision); dl.Deny is can_use_tool's answer, not a "
    "hook's.":
        "hook 用它所属事件的决定模型回答（PreToolUseDecision）；dl.Deny 是 can_use_tool 的回答，不是 hook 的。",
    "for {command!r} your hook raised {kind}: {error}": "对于 {command!r}，你的 hook 抛出了 {kind}：{error}",
    "{command!r} was not denied (decision={decision!r}).": "{command!r} 没有被拒绝（decision={decision!r}）。",
    "{command!r} was denied without a reason: the model reads only the reason.":
        "{command!r} 被拒绝了，却没有原因：模型只读得到原因。",
    'give reason="..." saying what is not allowed, so the model can do something else.':
        '给出 reason="..."，说明什么是不允许的，模型才能换一种做法。',
    "{command!r} was denied, but it deletes nothing recursively.": "{command!r} 被拒绝了，但它并不递归删除任何东西。",
    "deny only a recursive rm; for anything else return None (no opinion), so the normal permission decision "
    "applies.":
        "只拒绝递归的 rm；其他情况返回 None（不表态），让正常的权限决定生效。",
    "{command!r} got decision={decision!r}; expected None (no opinion).":
        "{command!r} 得到的是 decision={decision!r}；应当是 None（不表态）。",
    "return None for commands you don't deny: 'allow' would skip the permission prompt.":
        "对你不拒绝的命令返回 None：'allow' 会跳过权限询问。",
    "in the loop the results were {results}.": "在循环里，结果是 {results}。",
    "{denied} recursive rm denied with a reason, {allowed} other commands left alone; in the loop the denied call "
    "got its is_error result ({content!r}), the other ran.":
        "{denied} 条递归 rm 被拒绝并附有原因，{allowed} 条其他命令不受影响；在循环里，被拒绝的调用得到了它的 "
        "is_error 结果（{content!r}），另一个调用照常执行。",
    "no recursive rm hook": "禁止递归 rm 的 hook",
    'a settings file is {"hooks": {EVENT: [{"matcher": ..., "hooks": [{"type": "command", "command": ...}]}]}}; '
    "the command gets the event as JSON on stdin.":
        '设置文件的形状是 {"hooks": {EVENT: [{"matcher": ..., "hooks": [{"type": "command", "command": ...}]}]}}；'
        "命令从 stdin 以 JSON 形式收到事件。",
    "that is not JSON ({error}).": "这不是 JSON（{error}）。",
    "expected the settings as a dict (or JSON text), got {kind}.": "设置应当是字典（或 JSON 文本），收到的是 {kind}。",
    "your settings: {error}": "你的设置：{error}",
    "these would not run: {hooks}": "这些不会运行：{hooks}",
    'use the event name PreToolUse and "type": "command".': '使用事件名 PreToolUse 和 "type": "command"。',
    "your settings have no PreToolUse hook yet: the exercise is not done yet.":
        "你的设置里还没有 PreToolUse hook：这道练习还没有做。",
    "add to PreToolUse one entry whose matcher names the Bash tool and whose hook is a command that reads the event "
    "on stdin and blocks a git push, saying why.":
        "在 PreToolUse 下加一项：它的 matcher 指向 Bash 工具，它的 hook 是一条命令，从 stdin 读取事件，"
        "阻断 git push 并说明原因。",
    "no PreToolUse hook matches the tool name Bash (matchers: {matchers}).":
        "没有 PreToolUse hook 匹配工具名 Bash（matcher：{matchers}）。",
    'matchers are case-sensitive tool names: "Bash".': 'matcher 是区分大小写的工具名："Bash"。',
    "for {command!r} your command exited {code}: a non-blocking error, so the call would still run.":
        "对于 {command!r}，你的命令以 {code} 退出：这是非阻断错误，调用仍会执行。",
    "block with exit 2 (any other non-zero exit code fails open).": "用退出码 2 阻断（其他非零退出码都会放行）。",
    "{command!r} was not blocked (exit code {code}, stdout {stdout!r}).":
        "{command!r} 没有被阻断（退出码 {code}，stdout {stdout!r}）。",
    "the event arrives as JSON on stdin, never as arguments: the command must read its standard input to see the "
    "tool's input.":
        "事件以 JSON 形式从 stdin 到达，从不作为命令行参数：命令必须读取标准输入，才能看到工具的输入。",
    "{command!r} was blocked, but with nothing on stderr: the model is told no reason.":
        "{command!r} 被阻断了，但 stderr 上什么也没有：模型得不到任何原因。",
    "with exit code 2 the model reads only stderr: write the reason there.": "退出码为 2 时，模型只读 stderr：把原因写在那里。",
    "for {command!r} your hook failed: {error}": "对于 {command!r}，你的 hook 失败了：{error}",
    "exit 0 when there is nothing to block.": "没有需要阻断的东西时，以 0 退出。",
    "settings-file hook": "设置文件里的 hook",
    'your hook blocked {count} time(s) ({said!r}), the agent fixed value, and the loop ended completed with the tests passing; on {scenarios} other projects it decided from their tests.':
        '你的 hook 阻断了 {count} 次（{said!r}），智能体修正了 value，循环以 completed 结束，测试通过；在另外 {scenarios} 个项目上，它也是根据测试结果做的决定。',
    'retries set to 0 as well, and the model already answering a block':
        'retries 也被设成 0、模型正在回应一次阻断',
    'every test passing':
        '测试全部通过',
    'value already 2, but the greeting broken':
        'value 已经是 2、但问候语坏了',
    'on a project with {what}, your hook raised or returned something that is not a decision: {error}':
        '在一个{what}的项目上，你的 hook 抛出了异常，或返回了不是决定的东西：{error}',
    'on a project with {what}, your hook still blocked.':
        '在一个{what}的项目上，你的 hook 仍然阻断了。',
    'on a project with {what}, a test fails, yet your hook let the loop end{active}.':
        '在一个{what}的项目上，有测试失败，你的 hook 却让循环结束了{active}。',
    ' (stop_hook_active=True)':
        '（stop_hook_active=True）',
    'block whenever the test run fails, also while stop_hook_active is True: the runaway guard bounds the blocks, and the model must keep working until the tests pass.':
        '只要测试运行失败就阻断，stop_hook_active 为 True 时也一样：阻断的次数由防失控保护来限定，模型必须一直干到测试通过。',
    'decide from running the tests in the workspace the input names, not from what a file says.':
        '根据在输入指明的工作区里运行测试的结果做决定，而不是根据某个文件里写了什么。',
    'on a project with {what}, your reason does not name the failing test ({test}): the model reads only the reason.':
        '在一个{what}的项目上，你的原因没有指出失败的测试（{test}）：模型只读得到原因。',
    'put the failing lines of the test run in the reason (unittest writes them to stderr).':
        '把测试运行中失败的那些行放进原因（unittest 把它们写到 stderr）。',
    "on a project with {what}, your reason does not end with the line '{task}'.":
        "在一个{what}的项目上，你的原因没有以单独一行 '{task}' 结尾。",
    'a recursive rm can be spelt -rf, -fr, -r -f, -R or --recursive, can follow ; && | or a newline, sit inside ( ), $( ) or backticks, and run under sudo, env or xargs: look at each command of the line, past its wrappers, and at every flag its rm gets.':
        '递归的 rm 可以写成 -rf、-fr、-r -f、-R 或 --recursive，可以跟在 ; && | 或换行后面，可以藏在 ( )、$( ) 或反引号里，也可以由 sudo、env 或 xargs 来运行：逐一查看这行里的每条命令，越过这些包装命令，再看它的 rm 收到的每个选项。',
    '{command!r} was not blocked: it is a git push too.':
        '{command!r} 没有被阻断：它也是一次 git push。',
    'block any git push: forced or not, wherever it is on the line, however many spaces are between git and push.':
        '阻断任何 git push：不论是否强制推送，不论它在这行的什么位置，也不论 git 和 push 之间隔了几个空格。',
    '{command!r} was blocked too, and it is no git push.':
        '{command!r} 也被阻断了，可它并不是 git push。',
    'exit 0 unless the command holds git push (git, then push, as words).':
        '除非命令里有 git push（先是 git，再是 push，各自成词），否则以 0 退出。',
    '{pushes} pushes blocked by exit 2 ({reason!r}), {count} other commands let through.':
        '{pushes} 次推送被 exit 2 阻断（{reason!r}），{count} 条其他命令被放行。',
    # what the chapters' own cells print (notebooks/07_hooks.ipynb, 07b_command_hooks.ipynb, through tr)
    'tests:': '测试：',
    'model calls:': '模型调用次数：',
    'requests sent: {count}': '发出的请求：{count} 次',
}
