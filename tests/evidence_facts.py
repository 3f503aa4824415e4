"""The registry of evidence (docs/evidence.md): what the recordings show, what the texts say, and which
sentence of the book rests on which.

FACTS: key -> ``Observed`` (one side of one scenario, read from the conformance file and its request
anatomies) or ``Derived`` (a value computed from the recordings, the kept session files or a scenario's script).
QUOTES: key -> ``Quote`` (a few words of a source text) or ``Absent`` (a name neither text holds).
CLAIMS: one entry per claim, locating its sentence in each edition (file, cell id, a fragment) and listing the
keys it rests on. NAMES: names of a TypeScript look that a chapter or docstring may use, with where each comes
from (none of them Claude Code's internals).
"""

from __future__ import annotations

import json

from evidence_registry import (CC, CONV, DL, FOUR, SESSIONS, Absent, Derived, Observed, Quote, Registry, Shipped, chapter,
                               document, every, session_blocks_per_message, session_record_types, session_tool_names,
                               zh_only)

# == quotations: a few words of each text (whitespace is ignored when they are looked for) =====================

QUOTES: dict = {
    # the four-step-loop text (four-step-loop.zh.txt): DreamCoder's queryLoop()
    "four.in_chinese": Quote(FOUR, "模型本身只生成文字"),
    "four.no_title": Quote(FOUR, "English | 简体中文\n模型本身只生成文字"),
    "four.no_title_four": Absent("《四步循环》"),
    "four.no_title_agent_loop": Absent("《执行循环》"),
    "four.dreamcoder": Quote(FOUR, "把每一步对应到 DreamCoder 的 queryLoop()"),
    "four.desktop": Quote(FOUR, "DreamCoder 桌面版先将用户输入经 WebSocket 和 Sidecar 送入 CLI 会话"),
    "four.path": Quote(FOUR, "阅读主线是 QueryEngine.submitMessage() → query() → queryLoop()"),
    "four.files": Quote(FOUR, "src/query.ts"),
    "four.call_model": Quote(FOUR, "生产环境中，productionDeps() 把 callModel 指向 queryModelWithStreaming()"),
    "four.run_tools": Quote(FOUR, "第 3 步的普通和流式工具执行，把结果交回循环"),
    "four.return_reason": Quote(FOUR, "return 给出循环的终止原因"),
    # the conversation-loop text (conversation-loop.zh.txt): Claude Code's conversation loop
    "conv.in_chinese": Quote(CONV, "Claude Code 的对话主循环是一个以 async function* 定义的异步生成器"),
    "conv.title": Quote(CONV, "对话循环\n\n异步生成器\n\nClaude Code 的对话主循环"),
    "conv.memory_file_name": Quote(CONV, "内存文件（CLAUDE.md）"),
    "conv.task_notifications": Quote(CONV, "任务通知等附加信息"),
    "conv.claude_code": Quote(CONV, "Claude Code 的对话主循环"),
    "conv.function_names": Quote(CONV, "理解 queryLoop 函数内部的完整流程"),
    "conv.return_reason": Quote(CONV, "生成器的 return 值即为终止原因"),
    "four.state": Quote(FOUR, "State 还要记住工具上下文、轮数、上下文压缩状态和部分恢复状态"),
    "four.step_one": Quote(FOUR, "模型调用发生在 deps.callModel()"),
    "four.needs_follow_up": Quote(FOUR, "API 响应的 stop_reason === 'tool_use' 并不总是可靠，所以 needsFollowUp 根据实际收到的内容块设置"),
    "four.msg_tool_use_blocks": Quote(FOUR, "const msgToolUseBlocks = message.message.content.filter("),
    "four.two_paths_meet": Quote(FOUR, "两种工具执行路径在 queryLoop() 的同一位置汇合"),
    "four.next_state": Quote(FOUR, "messages: [...messagesForQuery, ...assistantMessages, ...toolResults]"),
    "four.pseudo_code": Quote(FOUR, "这段是为说明结构写的简化代码，不是 DreamCoder 源码"),
    "four.user_context": Quote(FOUR, "最后经 prependUserContext() 附加用户上下文"),
    "four.stream_upward": Quote(FOUR, "deps.callModel() 返回异步消息流。循环逐项向上层输出"),
    "four.yield_to_engine": Quote(FOUR, "yield 把执行中的消息和流式事件交给 QueryEngine"),
    "conv.while_true": Quote(CONV, "queryLoop 是一个 while(true) 无限循环"),
    "conv.stream_events": Quote(CONV, "模型调用函数返回一个异步生成器，逐个产出流式事件"),
    "conv.heartbeat": Quote(CONV, "每一次 yield 就像心跳的一次搏动，将流式事件推向调用方"),
    "four.parallel_order": Quote(FOUR, "可并发的调用还会按完成先后产出结果"),
    "four.run_tools_layers": Quote(FOUR, "普通路径由 runTools() 编排，工具查找、输入校验和权限决定发生在下层"),
    "four.missing_results": Quote(FOUR, "未被恢复逻辑处理的模型错误会调用 yieldMissingToolResultBlocks()，为本轮已经输出的每个 "
                                        "tool_use 生成错误结果"),
    "four.model_error": Quote(FOUR, "产出 API 错误消息，返回 model_error"),
    "four.unknown_tool": Quote(FOUR, "工具名称不存在时，runToolUse() 会生成带原 tool_use.id 的错误结果，让模型在下一轮知道哪次调用失败"),
    "four.pairing": Quote(FOUR, "用 tool_use_id 指回原调用"),
    "four.normalize": Quote(FOUR, "只有转换后的 user 消息进入 toolResults"),
    "four.yield_each": Quote(FOUR, "执行层返回的 update.message 先由循环 yield 给上层"),
    "four.abort_streaming": Quote(FOUR, "如果模型仍在流式输出，循环先消费或补齐已出现工具调用的结果，再返回 aborted_streaming"),
    "four.undoes_nothing": Quote(FOUR, "补齐消息是对记录结构的处理，不会撤销已经发生的文件写入或命令副作用"),
    "four.query_async_generator": Quote(FOUR, "query() 是一个异步生成器"),
    "four.for_await": Quote(FOUR, "上面的 for await 只读取 yield 项，不直接取得返回值"),
    "four.four_arrays": Quote(FOUR, "这一行用到的四个数组职责不同"),
    "four.results_and_attachments": Quote(FOUR, "保存后续模型请求要看到的工具结果和相关附件"),
    "four.checkpoint": Quote(FOUR, "每次模型请求之前都有一个固定的检查点，中断、Hook 和 maxTurns 都在这里判断"),
    "four.three_fields": Quote(FOUR, "用下面三个字段建立新的 State"),
    "four.next_turn_count": Quote(FOUR, "循环在本轮工具执行后计算 nextTurnCount = turnCount + 1"),
    "four.max_turns": Quote(FOUR, "产出 max_turns_reached 附件，返回 max_turns"),
    "four.turn_count_one": Quote(FOUR, "初始 turnCount 是 1"),
    "four.transcript_later": Quote(FOUR, "磁盘 transcript 与模型上下文的关系见第四篇"),
    "conv.phases": Quote(CONV, "阶段5："),
    "conv.phase5": Quote(CONV, "工具执行完毕后，循环执行附件注入（内存文件、文件变更通知、排队命令等）"),
    "conv.claude_md_example": Quote(CONV, "在工具执行期间，用户修改了 CLAUDE.md 文件"),
    "conv.five_kinds": Quote(CONV, "可向外产出五种类型的事件（流式事件、请求开始事件、消息、墓碑消息、工具调用摘要）"),
    "conv.message_kinds": Quote(CONV, "AttachmentMessage：附件消息"),
    "conv.tombstone": Quote(CONV, "当流式回退（streaming fallback）发生时，部分已产出的消息需要被标记为废弃"),
    "conv.summary": Quote(CONV, "在一批工具执行完成后，异步生成的简要摘要，用于在 UI 中折叠展示工具调用结果"),
    "conv.return_terminal": Quote(CONV, "返回类型 Terminal"),
    "conv.destructure": Quote(CONV, "在循环顶部，函数从状态对象中解构出当前迭代所需的变量"),
    "conv.new_state": Quote(CONV, "每次 continue 回到循环顶部时，都会写入一个新的状态对象"),
    "conv.own_module": Quote(CONV, "Terminal 和 Continue 类型定义在独立的模块中"),
    "conv.seven_paths": Quote(CONV, "7. token_budget_continuation"),
    "four.can_use_tool": Quote(FOUR, "QueryEngine.submitMessage() 把本次消息、系统提示、工具上下文和权限函数传给 query()"),
    "four.wrapped_can_use_tool": Quote(FOUR, "canUseTool: wrappedCanUseTool"),
    "four.next_article": Quote(FOUR, "多个工具调用怎样安排顺序，下一篇《代码工具系统》沿这条调用链继续"),
    "four.streaming_executor": Quote(FOUR, "启用流式工具执行时，StreamingToolExecutor 在模型响应尚未结束时就可以接收工具请求并开始执行"),
    "conv.streaming_execution": Quote(CONV, "如果启用了流式工具执行，在收到工具调用块时立即开始执行工具，而不必等待整个响应完成"),
    "four.results_meet": Quote(FOUR, "但交给模型的结果仍在这里汇合"),
    "four.entry": Quote(FOUR, "query() 是对外的入口；内部 queryLoop() 实现四步循环"),
    "four.tool_updates": Quote(FOUR, "const toolUpdates = streamingToolExecutor"),
    "four.remaining_results": Quote(FOUR, "这里取得剩余结果；详细机制见第五篇"),
    "conv.yield_and_collect": Quote(CONV, "每产出一个结果消息，循环就将其 yield 给上层消费者（UI），同时收集到工具结果数组中"),
    "conv.progress": Quote(CONV, "ProgressMessage：工具执行的进度消息，用于实时反馈工具运行状态"),
    "four.abort_endings": Quote(FOUR, "清理或补齐相应工具结果，返回 aborted_streaming 或 aborted_tools"),
    "neither.sibling": Absent("兄弟"),
    "neither.sibling_en": Absent("sibling"),
    "conv.pipeline": Quote(CONV, "压缩手段从轻量到重量排列，每一步都先尝试最小代价的方案"),
    "conv.pipeline_name": Quote(CONV, "这些步骤构成了一个精心设计的”压缩管线”"),
    "conv.stable_order": Quote(CONV, "如果组装顺序不稳定，每次调用生成的 Prompt 字节内容可能不同，导致缓存失效"),
    "conv.blocking": Quote(CONV, "Token 阻断检查：如果 token 数超过硬性限制，直接返回错误消息，不再发起 API 调用"),
    "conv.threshold": Quote(CONV, "如果上下文超过阈值，自动压缩机制会触发"),
    "conv.budget": Quote(CONV, "工具结果预算：对过大的工具结果进行截断或持久化到磁盘"),
    "conv.snip": Quote(CONV, "Snip 压缩：如果启用了历史裁剪功能，会对过长的历史消息进行裁剪"),
    "four.snip": Quote(FOUR, "可选的历史裁剪与自动压缩"),
    "conv.microcompact": Quote(CONV, "Microcompact：在自动压缩之前进行轻量级压缩，利用缓存编辑技术减少 token 消耗"),
    "conv.collapse": Quote(CONV, "它在不丢失信息的情况下将连续消息折叠为紧凑视图"),
    "conv.collapse_first": Quote(CONV, "collapse_drain_retry：上下文折叠的溢出恢复路径。优先于响应式压缩执行"),
    "conv.autocompact": Quote(CONV, "将历史对话摘要为压缩后的消息，然后替换待发送的消息列表"),
    "conv.autocompact_tracking": Quote(CONV, "自动压缩追踪状态"),
    "four.compact_boundary": Quote(FOUR, "每次迭代从 State.messages 取压缩边界之后的消息"),
    "conv.phase2": Quote(CONV, "在调用模型之前，循环执行一系列预处理步骤"),
    "neither.figure_8": Absent("83.5"),
    "neither.figure_200k": Absent("200,000"),
    "neither.figure_64000": Absent("64,000"),
    "neither.version": Absent("2.1."),
    "neither.figure_64000_plain": Absent("64000"),
    "conv.stop_hook_blocking": Quote(CONV, "stop_hook_blocking：Stop hook 返回阻塞错误时，将错误注入消息列表后继续"),
    "conv.stop_hook_active": Quote(CONV, "stop hook 是否激活"),
    "conv.no_tools_exit": Quote(CONV, "如果模型没有请求调用工具，进入终止路径，检查各种退出条件（stop hooks、token budget 等）后返回"),
    "four.stop_hooks_when": Quote(FOUR, "进入停止 hook 等判断"),
    "four.hook_endings": Quote(FOUR, "或返回 stop_hook_prevented、hook_stopped"),
    "four.no_stop_flag": Absent("stop hook 是否激活", (FOUR,)),
    "four.below_run_tool_use": Quote(FOUR, "runTools() 怎样找到 Read 的实现、在哪里校验参数"),
    "four.submit_message": Quote(FOUR, "submitMessage() 准备本次输入、会话状态和权限函数，调用 query()"),
    "conv.escalate": Quote(CONV, "max_output_tokens_escalate：首次截断时尝试提升输出 token 限制，而非注入恢复消息"),
    "conv.resume_three": Quote(CONV, "注入恢复消息后继续循环。恢复消息指导模型从截断处继续。最多重试 3 次"),
    "conv.recovery_rungs": Quote(CONV, "关键的转换路径包括"),
    "four.completed_path": Quote(FOUR, "模型没有提出工具调用时，循环还会检查可恢复的错误、停止 Hook 和可能启用的 token budget 续跑；"
                                       "这些分支都处理完，才会返回 completed"),
    "conv.state_fields": Quote(CONV, "输出 token 恢复计数器、是否已尝试响应式压缩、输出 token 覆盖限制"),
    "conv.next_turn_counts": Quote(CONV, "next_turn：正常的工具调用后继续。消息列表扩展为原始消息加上助手消息和工具结果，turn 计数递增"),
    "four.recovery_not_turns": Quote(FOUR, "模型回退和部分恢复分支也不一定按普通工具轮次计数"),
    "four.collect_messages": Quote(FOUR, "循环逐项向上层输出，同时收集完整的助手消息"),
    "conv.reactive_compact": Quote(CONV, "reactive_compact_retry：上下文过长时，通过响应式压缩恢复。压缩失败则终止循环"),
    "four.fallback_option": Quote(FOUR, "fallbackModel、maxTurns 等参数控制可选分支"),
    "four.retries_own_branch": Quote(FOUR, "模型回退、错误重试和停止 Hook 的续跑也有自己的分支"),
    "conv.system_message": Quote(CONV, "SystemMessage：系统级通知，如权限变更、模型回退提示等"),
    "conv.budget_nudge": Quote(CONV, "Token 预算管理触发的继续，注入一个提示消息提醒模型注意预算"),
    "conv.low_balance": Quote(CONV, "这类似于手机流量套餐的”余额不足提醒”"),
    "conv.streaming_fallback": Quote(CONV, "TombstoneMessage：当流式回退（streaming fallback）发生时"),
    "conv.ten_endings": Quote(CONV, "异常终止：其余七种"),
    "conv.three_named": Quote(CONV, "用户主动终止：aborted_streaming、aborted_tools"),
    "four.endings_table": Quote(FOUR, "或返回 stop_hook_prevented、hook_stopped"),
    "four.max_turns_ending": Quote(FOUR, "产出 max_turns_reached 附件，返回 max_turns"),
    "neither.image": Absent("图片"),
    "neither.image_en": Absent("image"),
    "neither.prompt_too_long": Absent("prompt_too_long"),
    "neither.api_error": Absent("api_error"),
    "neither.malformed": Absent("malformed_tool_use_exhausted"),
    "conv.enabled_snip": Quote(CONV, "如果启用了历史裁剪功能"),
    "four.budget_enabled": Quote(FOUR, "可能启用的 token budget 续跑"),
    "four.signal": Quote(FOUR, "signal 使请求能响应用户取消"),
    "four.abort_two_points": Quote(FOUR, "取消信号在两个时点有不同处理"),
    "four.engine": Quote(FOUR, "submitMessage() 准备本次输入、会话状态和权限函数，调用 query()，消费执行期间产出的消息"),
    "four.transcript": Quote(FOUR, "磁盘 transcript"),
    "conv.queued": Quote(CONV, "附件注入（内存文件、文件变更通知、排队命令等）"),
    "four.thinking_config": Quote(FOUR, "thinkingConfig: toolUseContext.options.thinkingConfig"),
    "conv.memory_attachments": Quote(CONV, "AttachmentMessage：附件消息，承载文件变更通知、内存文件（CLAUDE.md）内容"),
    "four.flowchart": Quote(FOUR, "A[取当前 State] --> B[组织发送给模型的消息]"),
    "conv.cleanup": Quote(CONV, "对于异常终止，系统在返回终止状态之前会执行清理逻辑：取消正在执行的工具、释放资源引用、记录终止原因到日志"),
    "four.tool_use_context": Quote(FOUR, "toolUseContext。后者提供工具集合及执行所需的上下文"),
    "four.local_collectors": Quote(FOUR, "assistantMessages 和 toolResults 是本轮的局部收集器"),
    # <quotes-end>
}


# == what a Derived fact computes ============================================================================

def library_recorded(r) -> tuple[str, bool]:
    """The first recorded scenario, and whether the recording holds every scenario of the library."""
    from dreamloop.compare.scenarios import SCENARIOS

    return r.scenario_names[0], sorted(r.scenario_names) == sorted(s.name for s in SCENARIOS)


def verdicts(r) -> dict:
    """How many scenarios MATCH of how many, and each difference's chapter."""
    scenarios = r.conformance["scenarios"]
    return {"match": sum(1 for v in scenarios.values() if v["match"]), "of": len(scenarios),
            "differ": {k: (v.get("deliberate") or {}).get("chapter") for k, v in scenarios.items() if not v["match"]}}


def kept_run(r, session: str, scenario: str) -> dict:
    """A kept session file as the run of ``scenario`` it is: Claude Code's version, whether its prompt is the
    scenario's, whether it records requests as sent, and how many (its ``api-request`` records) of the requests
    the conformance file counts for Claude Code's side."""
    records = r.session(session)
    prompts = [x["message"]["content"] for x in records if x.get("type") == "user" and
               isinstance((x.get("message") or {}).get("content"), str)]
    recorded = r.side(scenario, CC)
    return {"versions": sorted({x["version"] for x in records if x.get("version")}),
            "prompt": prompts[:1] == [r.scenario(scenario).prompt],
            "request records": {"api-request", "api-request-blob",
            "api-request-shape"} <= set(session_record_types(records)),
            "requests": [sum(1 for x in records if x.get("type") == "api-request"), recorded["requests"]]}


def kept(requests: int, of: int) -> dict:
    """What ``kept_run`` finds for a kept run whose file records ``requests`` of the ``of`` requests the
    conformance file counts."""
    return {"versions": ["2.1.332"], "prompt": True, "request records": True, "requests": [requests, of]}

OLDER_SESSIONS = ("01_fasthooks_c45af7b1_v2.0.76_manual-compact_thinking_parallel.jsonl",
                  "02_claude-code-log_03eb5929_v2.1.42_rewind-branch_thinking_hook-progress.jsonl",
                  "03_spotter_tool-heavy_v2.1.38_interrupts_queue-ops_local-commands.jsonl",
                  "04_sniffly_fed8ce56_v1.0.17_interrupt-for-tool-use_rejected-tools.jsonl",
                  "05_claude-code-viewer_5c0375b4_v1.0.108_inline-sidechain-task.jsonl",
                  "07_claude-code-log_ef958aa1_v2.1.114_attachments_agent-teams.jsonl",
                  "08_claude-code-log_ef958aa1_subagent-a4ca7529859c158c2_v2.1.114.jsonl")
S01, S02, S03, S04, S05, S07, S08 = OLDER_SESSIONS
S09 = "09_dreamloop-compare_max_tokens_always_v2.1.332_scrubbed.jsonl"
S10 = "10_dreamloop-compare_prompt_too_long_after_tools_v2.1.332_scrubbed.jsonl"
S11 = "11_dreamloop-compare_hook_stop_exit_2_once_v2.1.332_scrubbed.jsonl"
S12 = "12_dreamloop-compare-probe_agent_foreground_v2.1.332_scrubbed.jsonl"
S12_AGENT = "12_dreamloop-compare-probe_agent_foreground_v2.1.332_scrubbed/subagents/agent-ad23fca827b57f574.jsonl"


def background_tools(r, session: str) -> dict:
    """In a session file's first request shape: whether its ``Bash`` takes ``run_in_background``, and which of
    ``TaskOutput`` / ``TaskStop`` its tools hold."""
    shape = next(x["shape"] for x in r.session(session) if x.get("type") == "api-request-shape")
    tools = {t["name"]: t for t in shape.get("tools", [])}
    return {"run_in_background": "run_in_background" in tools["Bash"]["input_schema"].get("properties", {}),
            "offered": sorted({"TaskOutput", "TaskStop"} & set(tools))}


def holds_requests(r, session: str) -> bool:
    """Whether a session file holds a request as sent: a system prompt or tool definitions anywhere in it."""
    records = r.session(session)
    text = "\n".join(json.dumps(x) for x in records)
    return "api-request-shape" in session_record_types(records) or '"input_schema"' in text


def agent_tool_shape(r, session: str) -> dict:
    """The ``Agent`` tool's input shape in a session file's first ``api-request-shape`` record: its fields in
    order, which are required, whether others are allowed, the ``model`` field's names."""
    shapes = [x for x in r.session(session) if x.get("type") == "api-request-shape"]
    schema = next(t for t in shapes[0]["shape"]["tools"] if t["name"] == "Agent")["input_schema"]
    return {"properties": list(schema["properties"]), "required": schema.get("required"),
            "additionalProperties": schema.get("additionalProperties"),
            "model": schema["properties"]["model"].get("enum")}


def sidechain_layout(r, session: str, agent_file: str) -> dict:
    """Where a 2.1.332 session file's sub-agent transcript is and how it links to the parent's ``Agent`` call:
    its path beside the session file, what every record of it carries, its first record, the companion
    ``.meta.json``'s ``toolUseId`` and the parent's result's ``toolUseResult.agentId`` (each against the others)."""
    parent, child = r.session(session), r.session(agent_file)
    agent_id = agent_file.rsplit("agent-", 1)[1].removesuffix(".jsonl")
    meta = json.loads((SESSIONS / agent_file.replace(".jsonl", ".meta.json")).read_text(encoding="utf-8"))
    call = next(b for x in parent if x.get("type") == "assistant" for b in x["message"]["content"]
                if b.get("type") == "tool_use" and b.get("name") == "Agent")
    result = next(x for x in parent if x.get("type") == "user" and isinstance(x["message"]["content"], list)
                  and any(b.get("tool_use_id") == call["id"] for b in x["message"]["content"]))
    chained = [x for x in child if x.get("uuid")]
    return {"path": agent_file.replace(session.removesuffix(".jsonl"), "<session>").replace(agent_id, "<agentId>"),
            "chained records all isSidechain": all(x.get("isSidechain") is True for x in chained),
            "every record's agentId is the file's": all(x.get("agentId") == agent_id for x in child),
            "sessionId is the parent's": {x.get("sessionId") for x in child} == {parent[0].get("sessionId")},
            "first": [chained[0]["type"], chained[0]["parentUuid"], chained[0]["message"]["content"] == call["input"]["prompt"]],
            "meta toolUseId is the call's": meta.get("toolUseId") == call["id"],
            "meta": sorted(k for k in meta if k in ("agentType", "description", "toolUseId", "finished")),
            "parent's result names the agent": result["toolUseResult"].get("agentId") == agent_id}


def session_versions(r) -> list[str]:
    """The Claude Code versions of the kept session files, oldest and newest."""
    found = set()
    for name in (*OLDER_SESSIONS, S09, S10, S11):
        found |= {x["version"] for x in r.session(name) if x.get("version")}
    ordered = sorted(found, key=lambda v: tuple(int(p) for p in v.split(".")))
    return [ordered[0], ordered[-1]]


def calls(r, scenario: str, turn: int = 1) -> list:
    """The tool calls of turn ``turn`` (1-based) of a scenario's script: ``[name, sorted input keys]`` each;
    with the turn's fault (``stream_error``, ``disconnect``) last when it has one."""
    answer = r.script(scenario)[turn - 1]
    found = [[name, keys] for kind, name, keys in answer["blocks"] if kind == "tool_use"]
    return found + ([answer["fault"]] if answer["fault"] else [])


def order_free(r, *names: str) -> list[bool]:
    """Whether the recording keeps each scenario's tool_result ids as a set (``Scenario.order_free``)."""
    return [r.scenario(name).order_free for name in names]
def interrupt_marker(r, session: str) -> dict:
    """In a session file: the ``is_error`` flags of the tool_result records just before the first user text that
    opens with "[Request interrupted", and whether that text is there."""
    records = r.session(session)
    for index, record in enumerate(records):
        content = (record.get("message") or {}).get("content")
        if record.get("type") == "user" and isinstance(content, list) and content and \
                content[0].get("type") == "text" and content[0].get("text", "").startswith("[Request interrupted"):
            flags = []
            for before in reversed(records[:index]):
                blocks = (before.get("message") or {}).get("content")
                if before.get("type") != "user" or not isinstance(blocks,
                              list) or blocks[0].get("type") != "tool_result":
                    break
                flags.insert(0, bool(blocks[0].get("is_error")))
            return {"marker": True, "results before it, is_error": flags}
    return {"marker": False}


def one_block_per_record(r, session: str) -> dict:
    """Whether every assistant record of a session file holds one content block, and the most records one
    response (``message.id``) spans."""
    records = [x for x in r.session(session) if x.get("type") == "assistant" and not x.get("isApiErrorMessage")]
    return {"one block each": all(len(x["message"]["content"]) == 1 for x in records),
            "most records for one response": max(session_blocks_per_message(records))}


def lines_are_records(r, session: str) -> bool:
    """Whether each line of a session file is one JSON object."""
    from evidence_registry import SESSIONS

    lines = [line for line in (SESSIONS / session).read_text(encoding="utf-8").splitlines() if line.strip()]
    return all(isinstance(json.loads(line), dict) for line in lines)


def request_counts_that_differ(r) -> dict:
    """Each scenario whose two sides sent a different number of requests: ``[Claude Code's, dreamloop's]``."""
    found = {}
    for name in r.scenario_names:
        cc, dl = r.side(name, CC)["requests"], r.side(name, DL)["requests"]
        if cc != dl:
            found[name] = [cc, dl]
    return found
def stop_hook_sequence(r, session: str) -> list[str]:
    """A session file's answers, meta user messages (feedback) and ``stop_hook_summary`` records, in order."""
    found = []
    for record in r.session(session):
        if record.get("type") == "assistant" and not record.get("isApiErrorMessage"):
            found.append("answer")
        elif record.get("type") == "user" and record.get("isMeta"):
            found.append("feedback")
        elif record.get("type") == "system" and record.get("subtype") == "stop_hook_summary":
            found.append("stop_hook_summary")
    return found
def api_error_message(r, session: str) -> list[str]:
    """A session file's assistant records, in order: ``answer`` or ``API error message`` (``isApiErrorMessage``)."""
    return ["API error message" if x.get("isApiErrorMessage") else "answer" for x in r.session(session)
            if x.get("type") == "assistant"]
def harness_retries(r) -> bool:
    """Whether ``dreamloop compare`` gives Claude Code ``CLAUDE_CODE_MAX_RETRIES=2`` (the harness's bound)."""
    from evidence_registry import ROOT

    return '"CLAUDE_CODE_MAX_RETRIES": "2"' in (ROOT / "dreamloop" / "compare" / "sides.py").read_text(encoding="utf-8")


def has_thinking(r, scenario: str) -> bool:
    """Whether any answer of a scenario's script holds a thinking block."""
    return any(b[0] == "thinking" for turn in r.script(scenario) for b in turn["blocks"])
def harness_flags(r) -> bool:
    """Whether ``dreamloop compare`` passes a scenario's fallback model and turn limit to both sides as
    ``--fallback-model`` and ``--max-turns``."""
    from evidence_registry import ROOT

    source = (ROOT / "dreamloop" / "compare" / "sides.py").read_text(encoding="utf-8")
    return '"--fallback-model"' in source and '"--max-turns"' in source
def main_thread_calls(r, session: str) -> int:
    """The model calls of a session file's main thread: distinct ``message.id``s of its assistant records (not a
    sidechain's, not a synthetic API error)."""
    seen = []
    for record in r.session(session):
        if record.get("type") == "assistant" and not record.get("isSidechain") and not record.get("isApiErrorMessage"):
            message_id = (record.get("message") or {}).get("id")
            if message_id and message_id not in seen:
                seen.append(message_id)
    return len(seen)


def first_response_blocks(r, session: str) -> list[str]:
    """The block types of a session file's first model response, one per record it spans."""
    records = [x for x in r.session(session) if x.get("type") == "assistant"]
    first = records[0]["message"]["id"]
    return [x["message"]["content"][0]["type"] for x in records if x["message"]["id"] == first]


def request_records(r, session: str) -> dict:
    """What a 2.1.332 session file's request records hold: the shape's parts, whether every message blob is named
    by a hash, and each api-request's keys of note."""
    records = r.session(session)
    shapes = [x for x in records if x.get("type") == "api-request-shape"]
    blobs = [x for x in records if x.get("type") == "api-request-blob"]
    requests = [x for x in records if x.get("type") == "api-request"]
    return {"shape": sorted(shapes[0]["shape"]), "blobs named by hash": all(x.get("hash") for x in blobs),
            "params": sorted({"model", "max_tokens", "thinking"} & set(requests[0]["params"])),
            "every request": all({"cacheControl", "requestDigest", "keep", "tail"} <= set(x) for x in requests),
            "later requests extend a base": all("base" in x for x in requests[1:])}
def attachments_before_first_request(r, session: str) -> list[str]:
    """The attachment kinds a session file records before its first ``api-request``, sorted."""
    found = set()
    for record in r.session(session):
        if record.get("type") == "api-request":
            break
        if record.get("type") == "attachment":
            found.add(record["attachment"]["type"])
    return sorted(found)


def contexts(r) -> dict:
    """Claude Code's leading reminders per scenario: how many, as the set of counts and the scenarios with
    other than eight; and how many distinct hashes the first one has across the anatomies' scenarios."""
    counts = {name: r.side(name, CC)["context"] for name in r.scenario_names}
    firsts = {v[CC]["requests"][0]["messages"][0]["blocks"][0]["hash"] for v in r.anatomy["scenarios"].values()}
    return {"counts": sorted(set(counts.values())), "not eight": {k: v for k, v in counts.items() if v != 8},
            "first hashes": len(firsts), "of": len(r.anatomy["scenarios"])}
def blob_hashes(r, session: str) -> bool:
    """Whether each ``api-request-blob`` of a session file is named by the SHA-256 of its message's JSON (sorted
    keys, no spaces)."""
    import hashlib

    blobs = [x for x in r.session(session) if x.get("type") == "api-request-blob"]
    return bool(blobs) and all(
        hashlib.sha256(json.dumps(x["message"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                       .encode("utf-8")).hexdigest() == x["hash"] for x in blobs)


def meta_prompt_ids(r, session: str) -> bool:
    """Whether every meta user record of a session file carries the prompt's own ``promptId``."""
    users = [x for x in r.session(session) if x.get("type") == "user"]
    metas = [x for x in users if x.get("isMeta")]
    return bool(metas) and all(x.get("promptId") == users[0].get("promptId") for x in metas)


def recorded_tool_names(r) -> list[str]:
    """The tool names Claude Code 2.1.332's recorded requests list (sessions 09 to 11), sorted."""
    return sorted({name for s in (S09, S10, S11) for name in session_tool_names(r.session(s))})


HOOK_SCENARIOS = ("hook_pre_tool_use_exit_2", "hook_pre_tool_use_deny", "hook_pre_tool_use_updated_input",
                  "hook_post_tool_use_context", "hook_stop_exit_2_once")


def hook_kinds(r) -> list[str]:
    """The ``type`` of every hook the five hook scenarios give both sides, as a set."""
    return sorted({hook["type"] for name in HOOK_SCENARIOS for entries in r.scenario(name).hooks.values()
                   for entry in entries for hook in entry["hooks"]})
def bash_commands(r, scenario: str, turn: int = 1) -> list[str]:
    """The commands of the Bash calls of turn ``turn`` (1-based) of a scenario's script, the workspace ``/ws``."""
    answer = r.scenario(scenario).script("/ws")[turn - 1]
    return [b["input"]["command"] for b in answer.content or [] if b.get("type") == "tool_use" and b["name"] == "Bash"]


RESULT_REMINDER = "79#5d93cac8"
"""The reminder Claude Code 2.1.332 put inside the last tool_result of a results message (length#hash)."""


def result_reminders(r) -> dict:
    """Over every recorded scenario, Claude Code's requests that carry tool_results: how many, and how many hold
    ``RESULT_REMINDER`` inside their last result (for an order-free scenario, inside one of them)."""
    found = {"requests with results": 0, "the reminder inside the last result": 0}
    for name in r.scenario_names:
        for request in r.side(name, CC)["request"]:
            if not request["results"]:
                continue
            found["requests with results"] += 1
            last = request["results"][-1].removesuffix(":error")
            if f"{last} {RESULT_REMINDER}" in request["inside"] or (
                    r.scenario(name).order_free and RESULT_REMINDER in request["inside"]):
                found["the reminder inside the last result"] += 1
    return found


def marker_files(r, scenario: str) -> dict:
    """For each of a scenario's own texts (``markers``), the workspace files that hold it."""
    defined = r.scenario(scenario)
    return {marker: sorted(name for name, text in defined.files.items() if marker in text)
            for marker in defined.markers}


def hook_reason(r, scenario: str) -> list[str]:
    """A hook scenario's events, and which of its texts its hook commands print."""
    defined = r.scenario(scenario)
    commands = [hook["command"] for entries in defined.hooks.values() for entry in entries for hook in entry["hooks"]]
    return sorted(defined.hooks) + [m for m in defined.markers if any(m in c for c in commands)]


def models(r, scenario: str) -> list:
    """A scenario's main model and fallback model (None when it has none)."""
    defined = r.scenario(scenario)
    return [defined.model, defined.fallback_model]
def session_user_texts(r, session: str, opening: str) -> int:
    """How many user text blocks (or string contents) of a session file open with ``opening``."""
    found = 0
    for record in r.session(session):
        content = (record.get("message") or {}).get("content") if record.get("type") == "user" else None
        texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content or []
                                                           if isinstance(b, dict) and b.get("type") == "text"]
        found += sum(1 for text in texts if text.startswith(opening))
    return found
# <helpers-end>


# == facts: what the recordings show ==========================================================================

FACTS: dict = {
    "plain_answer.cc": Observed("plain_answer", CC, "one streamed request, then completed",
                                {"requests": 1, "request[1].streamed": True, "ending": "completed"}),
    "one_tool.cc": Observed("one_tool", CC, "two streamed requests; the second adds the assistant message (text, "
                            "tool_use) and a user message with its tool_result, not is_error; completed",
                            {"requests": 2, "request[*].streamed": every(True),
                             "request[2].added": "assistant[text, tool_use] user[tool_result]",
                             "request[2].results": ["toolu_fake_0001"], "ending": "completed"}),
    "recording.library": Derived(("plain_answer",), "the conformance file holds every scenario of the library, "
                                 "plain_answer first", library_recorded, ("plain_answer", True)),
    "recording.version": Derived((), "the conformance file is Claude Code 2.1.332's",
                                 lambda r: r.conformance["claude_code"], "2.1.332"),
    "recording.verdicts": Derived(("prompt_too_long_after_tools", "disconnect_after_tool_use", "tool_use_without_block",
                                   "empty_text_block", "edit_after_change_then_write"),
                                  "52 of 59 scenarios MATCH; the seven that differ are labelled with chapters 04, 06, "
                                  "08b, 09 and 12",
                                  verdicts, {"match": 52, "of": 59, "differ": {
                                      "prompt_too_long_after_tools": "06_context_pipeline",
                                      "disconnect_after_tool_use": "08b_fallbacks",
                                      "tool_use_without_block": "09_every_ending",
                                      "empty_text_block": "09_every_ending",
                                      "edit_after_change_then_write": "04_tools",
                                      "sub_agent_call": "12_the_loop_inside_the_loop",
                                      "two_sub_agents": "12_the_loop_inside_the_loop"}}),
    "recording.anatomies": Derived(("max_tokens_once", "stream_error_inside_tool_use", "tool_use_without_block"),
                                   "the request anatomies hold chapter 11's scenarios, both sides",
                                   lambda r: sorted(k for k, v in r.anatomy["scenarios"].items()
                                                    if CC in v and DL in v),
                                   ["hook_post_tool_use_context", "http_500", "max_tokens_once", "one_tool",
                                    "prompt_too_long_once", "stream_error_inside_tool_use", "tool_use_without_block"]),
    "max_tokens_always.cc": Observed("max_tokens_always", CC, "four requests at one max_tokens, each after the first "
                                     "adding the cut answer and one reminder; api_error; num_turns 4",
                                     {"requests": 4, "request[*].max_tokens_change": every("="),
                                      "request[2].added": "assistant[text] user[reminder]",
                                      "request[3].added": "assistant[text] user[reminder]",
                                      "request[4].added": "assistant[text] user[reminder]",
                                      "ending": "api_error", "turns": 4}),
    "max_tokens_always.match": Observed("max_tokens_always", DL, "dreamloop run matches", {"match": True}),
    "http_529_fallback.cc": Observed("http_529_fallback", CC, "three 529s on the main model, then the fallback "
                                     "model answers; completed",
                                     {"request[*].status": [529, 529, 529, 200],
                                      "request[*].model": ["main", "main", "main", "fallback"], "ending": "completed"}),
    "http_529_fallback.match": Observed("http_529_fallback", DL, "dreamloop run matches", {"match": True}),
    "stream_error_before_block.cc": Observed("stream_error_before_block", CC, "an overloaded_error event in a 200 "
                                             "stream, then the same request again without streaming; completed",
                                             {"requests": 2, "request[1].status": 200,
                                              "request[1].error": "overloaded_error", "request[2].streamed": False,
                                              "request[2].added": "nothing", "ending": "completed"}),
    "stream_error_before_block.match": Observed("stream_error_before_block", DL, "dreamloop run matches",
                                                {"match": True}),
    "session09.run": Derived(("max_tokens_always", S09), "session 09 is Claude Code 2.1.332's run of "
                             "max_tokens_always, with each of its 4 requests as sent", lambda r: kept_run(r, S09,
                                                                                              "max_tokens_always"),
                             kept(4, 4)),
    "session10.run": Derived(("prompt_too_long_after_tools", S10), "session 10 is Claude Code 2.1.332's run of "
                             "prompt_too_long_after_tools: it records the 4 requests of the conversation as sent, not "
                             "the 4 it sent after the refusal (8 in the conformance file)",
                             lambda r: kept_run(r, S10, "prompt_too_long_after_tools"), kept(4, 8)),
    "session10.background_tools": Derived(("prompt_too_long_after_tools", S10), "the Bash tool Claude Code 2.1.332 "
                                          "offered takes run_in_background; neither TaskOutput nor TaskStop is offered",
                                          lambda r: background_tools(r, S10),
                                          {"run_in_background": True, "offered": []}),
    "session11.run": Derived(("hook_stop_exit_2_once", S11), "session 11 is Claude Code 2.1.332's run of "
                             "hook_stop_exit_2_once, with each of its 2 requests as sent",
                             lambda r: kept_run(r, S11, "hook_stop_exit_2_once"), kept(2, 2)),
    "sessions.older_hold_no_request": Derived(OLDER_SESSIONS, "the files of Claude Code 1.0.17 to 2.1.114 hold no "
                                              "request as sent (no api-request-shape, no tool definitions)",
                                              lambda r: [holds_requests(r, s) for s in OLDER_SESSIONS],
                                              [False] * len(OLDER_SESSIONS)),
    "sessions.versions": Derived((S04,), "the kept session files span Claude Code 1.0.17 (session 04) to 2.1.332",
                                 lambda r: session_versions(r) + [r.session(S04)[0].get("version")
                                                                  or r.session(S04)[1].get("version")],
                                 ["1.0.17", "2.1.332", "1.0.17"]),
    "plain_answer.cc.context": Observed("plain_answer", CC, "the first user message opens with eight reminders",
                                        {"context": 8}),
    "memory_file.cc.context": Observed("memory_file", CC, "with a CLAUDE.md, nine leading reminders", {"context": 9}),
    "memory_file_imports.cc": Observed("memory_file_imports", CC, "the imported file's words and the @ line both "
                                       "reached the model in the first request's leading reminders",
                                       {"texts": {"answer in one sentence": "request 1 context",
                                                  "@docs/style.md": "request 1 context"}, "requests": 2}),
    "nested_memory_file.cc": Observed("nested_memory_file", CC, "pkg/CLAUDE.md's words reached the model once, in a "
                                      "reminder inside the result of the first Read of a file in pkg, not at the start "
                                      "nor with the second Read", {
                                          "texts": {"snake_case": "request 2 reminder inside result toolu_fake_0001",
                                                    "answer in one sentence": "request 1 context"},
                                          "request[2].inside": ["toolu_fake_0001 129#52e9fba0",
                                                                "toolu_fake_0001 79#5d93cac8"],
                                          "request[3].inside": ["toolu_fake_0002 79#5d93cac8"]}),
    "tool_use_without_block.cc": Observed("tool_use_without_block", CC, "three requests, no tool_result in any; each "
                                          "retry resends the first user message with one more reminder; "
                                          "malformed_tool_use_exhausted",
                                          {"requests": 3, "request[*].results": every([]),
                                           "request[2].added": "user[reminder×8, text, reminder]",
                                           "request[3].added": "user[reminder×8, text, reminder×2]",
                                           "ending": "malformed_tool_use_exhausted"}),
    "parallel_reads.cc": Observed("parallel_reads", CC, "both Reads answered in one user message of the next request",
                                  {"requests": 2, "request[2].added": "assistant[text, tool_use×2] user[tool_result×2]",
                                   "request[2].results": ["toolu_fake_0001", "toolu_fake_0002"]}),
    "missing_and_unknown.script": Derived(("missing_and_unknown",), "the script's calls: a Read, a Read of a missing "
                                          "file, an unknown tool", lambda r: calls(r, "missing_and_unknown"),
                                          [["Read", ["file_path"]], ["Read", ["file_path"]], ["Frobnicate", ["x"]]]),
    "missing_and_unknown.cc": Observed("missing_and_unknown", CC, "the Read's result ordinary, the missing file's and "
                                       "the unknown tool's is_error, all in the next request",
                                       {"request[2].results": ["toolu_fake_0001", "toolu_fake_0002:error",
                                                               "toolu_fake_0003:error"]}),
    "invalid_tool_input.script": Derived(("invalid_tool_input",), "the script's Read has `path`, not `file_path`",
                                         lambda r: calls(r, "invalid_tool_input"), [["Read", ["path"]]]),
    "invalid_tool_input.cc": Observed("invalid_tool_input", CC, "the Read without file_path got an is_error result",
                                      {"request[2].results": ["toolu_fake_0001:error"], "ending": "completed"}),
    "stream_error_after_tool_use.script": Derived(("stream_error_after_tool_use",), "the first answer breaks (an "
                                                  "error event) after its Read block", lambda r: calls(
                                                      r, "stream_error_after_tool_use"),
                                                  [["Read", ["file_path"]], "stream_error"]),
    "stream_error_after_tool_use.cc": Observed("stream_error_after_tool_use", CC, "after the error event, the next "
                                               "request carries the broken answer's call with an ordinary result; "
                                               "three requests; completed",
                                               {"requests": 3, "request[1].error": "overloaded_error",
                                                "request[2].added": "assistant[text, tool_use] user[tool_result]",
                                                "request[2].results": ["toolu_fake_0001"], "ending": "completed"}),
    "stream_error_after_tool_use.match": Observed("stream_error_after_tool_use", DL, "dreamloop run matches",
                                                  {"match": True}),
    "disconnect_after_tool_use.script": Derived(("disconnect_after_tool_use",), "the first answer's connection drops "
                                                "after its Read block", lambda r: calls(r, "disconnect_after_tool_use"),
                                                [["Read", ["file_path"]], "disconnect"]),
    "disconnect_after_tool_use.cc": Observed("disconnect_after_tool_use", CC, "after the drop, the same request again "
                                             "(nothing added); no request answers the dropped call (only the next "
                                             "answer's call, toolu_fake_0002, gets a result); completed",
                                             {"requests": 3, "request[2].added": "nothing",
                                              "request[*].results": [[], [], ["toolu_fake_0002"]],
                                              "ending": "completed"}),
    "disconnect_after_tool_use.label": Derived(("disconnect_after_tool_use",), "the label's reason: in 1 of 3 runs "
                                               "Claude Code 2.1.332 had started the call and its outcome was "
                                               "dreamloop's", lambda r: "in 1 of 3 runs it had" in
                                               r.conformance["scenarios"]["disconnect_after_tool_use"]["deliberate"][
                                                   "reason"], True),
    "disconnect_after_tool_use.differ": Observed("disconnect_after_tool_use", DL, "DIFFER, labelled (chapter 08b): "
                                                 "dreamloop's executor had started the Read and kept it, its result in "
                                                 "the next request", {"match": False, "deliberate": "08b_fallbacks",
                                                                      "request[2].results": ["toolu_fake_0001"]}),
    "http_529.cc": Observed("http_529", CC, "three 529s (the harness allows two retries), no fallback model; api_error",
                            {"request[*].status": [529, 529, 529], "ending": "api_error"}),
    "tool_use_without_block.dl": Observed("tool_use_without_block", DL,
                                          "dreamloop run: three requests, the same ending",
                                          {"requests": 3, "ending": "malformed_tool_use_exhausted"}),
    "max_turns.definition": Derived(("max_turns",), "the scenario gives --max-turns 2; its model never stops calling "
                                    "tools", lambda r: [r.scenario("max_turns").max_turns,
                                                        all(calls(r, "max_turns", n) for n in (1, 2, 3))], [2, True]),
    "max_turns.cc": Observed("max_turns", CC, "two requests, the second carrying the first turn's result; max_turns",
                             {"requests": 2, "request[2].added": "assistant[text, tool_use] user[tool_result]",
                              "ending": "max_turns"}),
    "files_changed_between_turns.cc": Observed("files_changed_between_turns", CC, "the request after the change adds "
                                               "the answer and one tool_result, nothing else; completed",
                                               {"requests": 3,
                                                "request[3].added": "assistant[text, tool_use] user[tool_result]",
                                                "ending": "completed"}),
    "files_changed_between_turns.texts": Observed("files_changed_between_turns", CC, "config.py's new line "
                                                  "('value = 7') and the CLAUDE.md's new words ('two sentences') never "
                                                  "reached the model; both files changed",
                                                  {"texts": {"value = 7": "never", "two sentences": "never"},
                                                   "workspace": "config.py changed, CLAUDE.md changed"}),
    "recording.extra_requests": Derived(("prompt_too_long_after_tools", "empty_text_block"), "the only scenarios where "
                                        "Claude Code sent more requests than dreamloop (which sends no summaries)",
                                        request_counts_that_differ,
                                        {"prompt_too_long_after_tools": [8, 5], "empty_text_block": [2, 1]}),
    "stream_error_inside_tool_use.cc": Observed("stream_error_inside_tool_use", CC, "after the error event inside the "
                                                "tool_use: the finished text back as an assistant message with one "
                                                "reminder after it; then the script's Read; three requests; completed",
                                                {"requests": 3, "request[1].error": "overloaded_error",
                                                 "request[2].added": "assistant[text] user[reminder]",
                                                 "request[3].added": "assistant[text, tool_use] user[tool_result]",
                                                 "request[3].results": ["toolu_fake_0002"], "ending": "completed"}),
    "session04.interrupt": Derived((S04,), "session 04: two rejected calls' is_error results, then the interrupt "
                                   "marker as a user text", lambda r: interrupt_marker(r, S04),
                                   {"marker": True, "results before it, is_error": [False, True, True]}),
    "session10.agent_tool": Derived((S10,), "session 10's requests offer an Agent tool: these input fields, the "
                                    "first two required, no other field, model one of four names",
                                    lambda r: agent_tool_shape(r, S10),
                                    {"properties": ["description", "prompt", "subagent_type", "model", "effort",
                                                    "run_in_background", "isolation"],
                                     "required": ["description", "prompt"], "additionalProperties": False,
                                     "model": ["sonnet", "opus", "haiku", "fable"]}),
    "session12.sidechain": Derived((S12,), "Claude Code 2.1.332 wrote a foreground Agent call's sub-agent "
                                   "transcript to <session>/subagents/agent-<agentId>.jsonl, every record isSidechain "
                                   "with that agentId and the parent's sessionId, the prompt first (no parent); a "
                                   ".meta.json beside it names the call (toolUseId); the parent's result names the agent",
                                   lambda r: sidechain_layout(r, S12, S12_AGENT),
                                   {"path": "<session>/subagents/agent-<agentId>.jsonl",
                                    "chained records all isSidechain": True, "every record's agentId is the file's": True,
                                    "sessionId is the parent's": True, "first": ["user", None, True],
                                    "meta toolUseId is the call's": True,
                                    "meta": ["agentType", "description", "finished", "toolUseId"],
                                    "parent's result names the agent": True}),
    "session10.records": Derived((S10,), "session 10: one JSON record per line; one assistant record per content "
                                 "block, a response spanning two", lambda r: [lines_are_records(r, S10),
                                                                              one_block_per_record(r, S10)],
                                 [True, {"one block each": True, "most records for one response": 2}]),
    "read_then_edit.script": Derived(("read_then_edit",), "the script's second answer is an Edit (after a Read)",
                                     lambda r: [calls(r, "read_then_edit", 1)[0][0], calls(r, "read_then_edit",
                                                2)[0][0]],
                                     ["Read", "Edit"]),
    "write_without_read.cc": Observed("write_without_read", CC, "the Write of config.py, never read, got an "
                                      "is_error result; config.py kept its one line; completed",
                                      {"requests": 2, "request[2].results": ["toolu_fake_0001:error"],
                                       "workspace": "unchanged", "counts": {"config.py": 1}, "ending": "completed"}),
    "edit_without_read.cc": Observed("edit_without_read", CC, "the Edit of config.py, never read, got an is_error "
                                     "result; config.py unchanged; completed",
                                     {"requests": 2, "request[2].results": ["toolu_fake_0001:error"],
                                      "workspace": "unchanged", "ending": "completed"}),
    "write_after_change.cc": Observed("write_after_change", CC, "after a Read and a person's added line, the Write "
                                      "got an is_error result; the person's line survived (2 lines)",
                                      {"requests": 3, "request[3].results": ["toolu_fake_0002:error"],
                                       "counts": {"config.py": 2}, "match": True}),
    "edit_after_change.cc": Observed("edit_after_change", CC, "after a Read and a person's added line (the old text "
                                     "kept), the Edit was applied: an ordinary result, config.py 2 lines",
                                     {"requests": 3, "request[3].results": ["toolu_fake_0002"],
                                      "counts": {"config.py": 2}, "match": True}),
    "edit_after_change_then_write.cc": Observed("edit_after_change_then_write", CC, "after that applied Edit, a Write "
                                                "of the file got an ordinary result: the person's line was lost "
                                                "(1 line); dreamloop refused it (2 lines), labelled deliberate",
                                                {"requests": 4, "request[4].results": ["toolu_fake_0003"],
                                                 "counts": {"config.py": 1}, "match": False,
                                                 "deliberate": "04_tools"}),
    "write_new_file.cc": Observed("write_new_file", CC, "the Write of settings.py, a new file, got an ordinary "
                                  "result; the file has its one line",
                                  {"requests": 2, "request[2].results": ["toolu_fake_0001"],
                                   "counts": {"settings.py": 1}, "match": True}),
    "read_then_edit.cc": Observed("read_then_edit", CC, "the Edit's result is ordinary (not is_error); completed",
                                  {"requests": 3, "request[3].results": ["toolu_fake_0002"], "ending": "completed"}),
    "opus_probe.limit": Observed("opus_probe", CC, "its one request to claude-opus-5-5 asked for 128,000",
                                 {"request[*].max_tokens": [128000], "request[*].streamed": [True]}),
    "default_model.limits": Derived((), "every streamed request of Claude Code's to the main model, in every "
                                    "scenario run on the default model (claude-sonnet-4-5), asked for 32,000",
                                    lambda r: sorted({(r.scenario(name).model, request["max_tokens"])
                                                      for name in r.scenario_names
                                                      if r.scenario(name).model == "claude-sonnet-4-5"
                                                      for request in r.side(name, CC)["request"]
                                                      if request["streamed"] and request["model"] == "main"}),
                                    [("claude-sonnet-4-5", 32000)]),
    "stream_error_before_block.limit": Observed("stream_error_before_block", CC, "32,000 on the streamed request "
                                                "and on the one sent again without streaming",
                                                {"request[*].max_tokens": [32000, 32000],
                                                 "request[*].streamed": [True, False]}),
    "hook_pre_tool_use_deny.definition": Derived(("hook_pre_tool_use_deny",), "its settings file: one PreToolUse "
                                                 "entry, matcher Edit, one command hook with no timeout",
                                                 lambda r: [(event, entry.get("matcher"), [sorted(h) for h in
                                                                                           entry["hooks"]])
                                                            for event, entries in
                                                            r.scenario("hook_pre_tool_use_deny").hooks.items()
                                                            for entry in entries],
                                                 [("PreToolUse", "Edit", [["command", "type"]])]),
    "bash_fails_parallel.definition": Derived(("bash_fails_parallel",), "Bash is allowed (--allowedTools Bash); the "
                                              "calls: a slow Bash, a Bash that exits 3, a Read",
                                              lambda r: [list(r.scenario("bash_fails_parallel").allow),
                                                         [c[0] for c in calls(r, "bash_fails_parallel")]],
                                              [["Bash"], ["Bash", "Bash", "Read"]]),
    "bash_fails_parallel.cc": Observed("bash_fails_parallel", CC, "the slow Bash and the Read ordinary, the failing "
                                       "Bash is_error, all three answered in the next request",
                                       {"request[2].results": ["toolu_fake_0001", "toolu_fake_0002:error",
                                                               "toolu_fake_0003"], "ending": "completed"}),
    "bash_fails_parallel.one_message": Observed("bash_fails_parallel", CC, "the three results went back as one user "
                                                "message", {"request[2].added": "assistant[text, tool_use×3] "
                                                                                "user[tool_result×3]"}),
    "bash_fails_serial.script": Derived(("bash_fails_serial",), "a Read, then one answer with a failing Bash and an "
                                        "Edit after it", lambda r: [[c[0] for c in calls(r, "bash_fails_serial", n)]
                                                                    for n in (1, 2)], [["Read"], ["Bash", "Edit"]]),
    "bash_fails_serial.cc": Observed("bash_fails_serial", CC, "the failing Bash is_error, the Edit after it ordinary",
                                     {"request[3].results": ["toolu_fake_0002:error", "toolu_fake_0003"],
                                      "ending": "completed"}),
    "disconnect_inside_tool_use.script": Derived(("disconnect_inside_tool_use",), "the first answer's connection drops "
                                                 "inside its Read block", lambda r: calls(r,
                                                 "disconnect_inside_tool_use"),
                                                 [["Read", ["file_path"]], "disconnect"]),
    "disconnect_inside_tool_use.cc": Observed("disconnect_inside_tool_use", CC,
                                              "after the drop inside the tool_use, the "
                                              "same request again (nothing added); only the next answer's call gets a "
                                              "result; completed",
                                              {"requests": 3, "request[2].added": "nothing",
                                               "request[*].results": [[], [], ["toolu_fake_0002"]],
                                               "ending": "completed"}),
    "usage_past_the_window.script": Derived(("usage_past_the_window",), "the script's two answers report 990,000 "
                                            "input tokens; the messages themselves stay small (a Read, an answer)",
                                            lambda r: [t.usage["input_tokens"] for t in
                                                       r.scenario("usage_past_the_window").script("/ws")],
                                            [990_000, 990_000]),
    "usage_past_the_window.cc": Observed("usage_past_the_window", CC, "two requests as usual: no summarising request, "
                                         "no refusal; completed",
                                         {"requests": 2, "request[*].model": every("main"),
                                          "request[2].added": "assistant[text, tool_use] user[tool_result]",
                                          "ending": "completed"}),
    "prompt_too_long_after_tools.cc": Observed(
        "prompt_too_long_after_tools", CC, "three tool turns, the fourth request refused; four more requests at "
        "the same max_tokens: a text appended to the last message, then the first message rewritten (one "
        "reminder), then without the oldest round twice, one round left; prompt_too_long",
        {"requests": 8, "request[*].status": [200, 200, 200, 400, 400, 400, 400, 400],
         "request[*].max_tokens_change": every("="), "request[5].added": "user+[text]",
         "request[6].added": "user[reminder, text] assistant[text, tool_use] user[tool_result] assistant[text, "
                             "tool_use] "
                             "user[tool_result] assistant[text, tool_use] user[tool_result, text]",
         "request[7].added": "assistant[text, tool_use] user[tool_result] assistant[text, tool_use] user[tool_result, "
                             "text]",
         "request[8].added": "assistant[text, tool_use] user[tool_result, text]", "ending": "prompt_too_long"}),
    "prompt_too_long_after_tools.cc.first_context": Observed("prompt_too_long_after_tools", CC, "its first message "
                                                             "opened with eight reminders", {"context": 8}),
    "prompt_too_long_after_tools.dl": Observed("prompt_too_long_after_tools", DL, "dreamloop: one summarising request "
                                               "(a lower max_tokens), then prompt_too_long; labelled, chapter 06",
                                               {"requests": 5, "request[5].max_tokens_change": "-",
                                                "ending": "prompt_too_long", "deliberate": "06_context_pipeline"}),
    "one_tool.cc.result_reminder": Observed("one_tool", CC, "its Read's result held one reminder inside, 79 "
                                            "characters", {"request[2].inside": ["toolu_fake_0001 79#5d93cac8"],
                                                           "anatomy.request[2].shape.result_reminders|len": 1}),
    "hook_post_tool_use_context.cc": Observed("hook_post_tool_use_context", CC, "with the PostToolUse hook, the Read's "
                                              "result held two reminders inside, the hook's text in the first", {
                                                  "request[2].inside": ["toolu_fake_0001 127#13bcbf44",
                                                                        "toolu_fake_0001 79#5d93cac8"],
                                                  "texts": {"config.py is generated":
                                                            "request 2 reminder inside result toolu_fake_0001"},
                                                  "anatomy.request[2].shape.result_reminders|len": 2,
                                                  "request[2].added": "assistant[text, tool_use] user[tool_result]"}),
    "hook_stop_exit_2_once.cc": Observed("hook_stop_exit_2_once", CC,
                                         "the answer, then the Stop hook's feedback as one "
                                         "reminder in a user message; the second answer ends it; completed",
                                         {"requests": 2, "request[2].added": "assistant[text] user[reminder]",
                                          "texts": {"run the tests first": "request 2 reminder"},
                                          "ending": "completed"}),
    "session11.stop_hooks": Derived((S11,), "session 11: the answer, the feedback, a stop_hook_summary; the second "
                                    "answer, another stop_hook_summary", lambda r: stop_hook_sequence(r, S11),
                                    ["answer", "feedback", "stop_hook_summary", "answer", "stop_hook_summary"]),
    "hook_pre_tool_use.script": Derived(("hook_pre_tool_use_exit_2", "hook_pre_tool_use_deny"), "the script reads "
                                        "config.py, then Edits it: the hook (matcher Edit) blocks an Edit of a file "
                                        "just read, and prints its reason, 'config.py is frozen'",
                                        lambda r: [[[c[0] for c in calls(r, name, turn)] for turn in (1, 2)]
                                                   + hook_reason(r, name) for name in
                                                   ("hook_pre_tool_use_exit_2", "hook_pre_tool_use_deny")],
                                        [[["Read"], ["Edit"], "PreToolUse", "config.py is frozen"]] * 2),
    "hook_pre_tool_use.cc": Derived(("hook_pre_tool_use_exit_2", "hook_pre_tool_use_deny"), "in both, the Edit got an "
                                    "is_error result in the third request, the hook's reason first reached the model "
                                    "in that result, and config.py was left unchanged",
                                    lambda r: [[r.side(name, CC)["request"][2]["results"], r.side(name, CC)["texts"],
                                                r.side(name, CC)["workspace"]] for name in
                                               ("hook_pre_tool_use_exit_2", "hook_pre_tool_use_deny")],
                                    [[["toolu_fake_0002:error"],
                                      {"config.py is frozen": "request 3 result toolu_fake_0002"}, "unchanged"]] * 2),
    "hook_pre_tool_use_updated_input.cc": Observed("hook_pre_tool_use_updated_input", CC, "the Read the hook pointed "
                                                   "elsewhere got an ordinary result",
                                                   {"request[2].results": ["toolu_fake_0001"], "ending": "completed"}),
    "hook_pre_tool_use_updated_input.texts": Observed("hook_pre_tool_use_updated_input", CC, "config.py's text "
                                                      "('value = 1') never reached the model; greeter.py's "
                                                      "('Hello, {name}') came in the Read's result",
                                                      {"texts": {"value = 1": "never", "Hello, {name}":
                                                                 "request 2 result toolu_fake_0001"}}),
    "hook_pre_tool_use_updated_input.markers": Derived(("hook_pre_tool_use_updated_input",), "'value = 1' is "
                                                       "config.py's text, 'Hello, {name}' greeter.py's",
                                                       lambda r: marker_files(r, "hook_pre_tool_use_updated_input"),
                                                       {"value = 1": ["config.py"], "Hello, {name}": ["greeter.py"]}),
    "max_tokens_once.cc": Observed("max_tokens_once", CC, "the cut answer back as an assistant message and one "
                                   "reminder after it, max_tokens unchanged; completed; num_turns 2",
                                   {"requests": 2, "request[*].max_tokens_change": every("="),
                                    "request[2].added": "assistant[text] user[reminder]", "ending": "completed",
                                    "turns": 2}),
    "max_tokens_once.match": Observed("max_tokens_once", DL, "dreamloop run matches; its turn_count 1",
                                      {"match": True, "turns": 1}),
    "max_tokens_in_tool_json.script": Derived(("max_tokens_in_tool_json",), "a Read, then an answer cut by max_tokens "
                                              "inside its Edit, then the Edit whole",
                                              lambda r: [(t["fault"], [b[1] for b in t["blocks"] if b[1]])
                                                         for t in r.script("max_tokens_in_tool_json")[:3]],
                                              [[None, ["Read"]], ["max_tokens_cut", ["Edit"]], [None, ["Edit"]]]),
    "max_tokens_in_tool_json.cc": Observed("max_tokens_in_tool_json", CC,
                                           "after the cut, its text back without the cut "
                                           "call and one reminder, at the same max_tokens; then the whole Edit",
                                           {"request[*].max_tokens_change": every("="),
                                            "request[3].added": "assistant[text] user[reminder]",
                                            "request[4].results": ["toolu_fake_0003"], "ending": "completed"}),
    "max_tokens_in_tool_json.match": Observed("max_tokens_in_tool_json", DL, "dreamloop run matches", {"match": True}),
    "max_tokens_always.dl_turns": Observed("max_tokens_always", DL, "dreamloop run's turn_count stays 1", {"turns": 1}),
    "session09.api_error": Derived((S09,), "session 09: four answers, then a synthetic API error message",
                                   lambda r: api_error_message(r, S09),
                                   ["answer", "answer", "answer", "answer", "API error message"]),
    "harness.retries": Derived(("http_529", "http_529_fallback"), "dreamloop compare runs Claude Code with "
                               "CLAUDE_CODE_MAX_RETRIES=2 (three attempts a request)", harness_retries, True),
    "http_404_fallback.cc": Observed("http_404_fallback", CC, "a 404 from the main model, then the fallback model at "
                                     "once; completed", {"request[*].status": [404, 200],
                                                         "request[*].model": ["main", "fallback"],
                                                         "ending": "completed"}),
    "http_404_fallback.match": Observed("http_404_fallback", DL, "dreamloop run matches", {"match": True}),
    "http_429_retry_after.definition": Derived(("http_429_retry_after",), "the 429 scenario has no fallback model",
                                               lambda r: r.scenario("http_429_retry_after").fallback_model, None),
    "http_429_retry_after.cc": Observed("http_429_retry_after", CC, "a 429, then the same model again; completed",
                                        {"request[*].status": [429, 200], "request[*].model": ["main", "main"],
                                         "ending": "completed"}),
    "http_529_fallback.no_thinking": Derived(("http_529_fallback",), "no thinking block in http_529_fallback's script",
                                             lambda r: has_thinking(r, "http_529_fallback"), False),
    "stream_error_before_block.limit": Observed("stream_error_before_block", CC, "the non-streaming request at the "
                                                "first attempt's max_tokens, 32,000",
                                                {"request[*].max_tokens": [32000, 32000],
                                                 "request[*].streamed": [True, False]}),
    "stream_error_inside_tool_use.match": Observed("stream_error_inside_tool_use", DL, "dreamloop run matches",
                                                   {"match": True}),
    "disconnect_during_text.cc": Observed("disconnect_during_text", CC, "after the drop during text, the same request "
                                          "again, streaming; completed",
                                          {"requests": 2, "request[2].added": "nothing", "request[2].streamed": True,
                                           "ending": "completed"}),
    "disconnect_streamed_again": Derived(("disconnect_inside_tool_use", "disconnect_after_tool_use"), "after each "
                                         "drop, the same request again, streaming",
                                         lambda r: [[q["streamed"] for q in r.side(n, CC)["request"]]
                                                    for n in ("disconnect_inside_tool_use",
                                                              "disconnect_after_tool_use")],
                                         [[True, True, True], [True, True, True]]),
    "prompt_too_long_once.cc": Observed("prompt_too_long_once", CC, "the first request refused as too long: "
                                        "prompt_too_long at once", {"requests": 1, "request[1].status": 400,
                                                                    "ending": "prompt_too_long"}),
    "image_rejected.cc": Observed("image_rejected", CC, "HTTP 400 'Could not process image' on the first request: "
                                  "image_error", {"requests": 1, "request[1].status": 400, "ending": "image_error"}),
    "image_rejected.match": Observed("image_rejected", DL, "dreamloop run matches", {"match": True}),
    "program.error_names": Shipped(("No such tool available", "InputValidationError"), "Claude Code 2.1.332's program "
                                   "holds the error names dreamloop's tools use for an unknown tool and a bad input"),
    "program.blocking_limit": Shipped(("blocking_limit",), "Claude Code 2.1.332's program holds the ending name "
                                      "blocking_limit (no scenario reaches it)"),
    "http_529_fallback.definition": Derived(("http_529_fallback", "max_turns"), "the scenarios give a fallback model "
                                            "and --max-turns 2, which the harness passes as flags to both sides",
                                            lambda r: [r.scenario("http_529_fallback").fallback_model,
                                                       r.scenario("max_turns").max_turns, harness_flags(r)],
                                            ["claude-haiku-4-5", 2, True]),
    "empty_text_block.script": Derived(("empty_text_block",), "the script's one answer is one empty text block, and "
                                       "there is no second", lambda r: r.script("empty_text_block"),
                                       [{"blocks": [["text", None, []]], "fault": None, "stop_reason": "auto"}]),
    "empty_text_block.cc": Observed("empty_text_block", CC, "asked again; the exhausted script answered 500: api_error",
                                    {"request[*].status": [200, 500], "request[2].error": "api_error",
                                     "ending": "api_error", "deliberate": "09_every_ending"}),
    "session09.envelope": Derived((S09,), "session 09's user and assistant records carry type, uuid, parentUuid, "
                                  "sessionId and the message",
                                  lambda r: all({"type", "uuid", "parentUuid", "sessionId", "message"} <= set(x)
                                                for x in r.session(S09) if x.get("type") in ("user", "assistant")),
                                  True),
    "session09.queue": Derived((S09,), "session 09 records queue operations",
                               lambda r: "queue-operation" in session_record_types(r.session(S09)), True),
    "session03.records": Derived((S03,), "session 03 (Claude Code 2.1.38): one assistant record per content block, "
                                 "and progress, file-history snapshot and queue-operation records",
                                 lambda r: [one_block_per_record(r, S03)["one block each"],
                                            sorted({"progress", "file-history-snapshot", "queue-operation"}
                                                   & set(session_record_types(r.session(S03)))),
                                            r.session(S03)[1].get("version") or r.session(S03)[2].get("version")],
                                 [True, ["file-history-snapshot", "progress", "queue-operation"], "2.1.38"]),
    "one_tool.cc.thinking_field": Derived(("one_tool",), "each of one_tool's requests has a thinking field",
                                          lambda r: ["thinking" in q["fields"] for q in
                                                     r.side("one_tool", CC)["anatomy"]["request"]], [True, True]),
    "session04.prompt": Derived((S04,), "session 04 is Claude Code 1.0.17's 'push to github'",
                                lambda r: [[x["message"]["content"] for x in r.session(S04)
                                            if x.get("type") == "user"][0],
                                           sorted({x.get("version") for x in r.session(S04) if x.get("version")})],
                                ["push to github", ["1.0.17"]]),
    "session04.one_response": Derived((S04,), "session 04's first response is three records: a text and two tool_use",
                                      lambda r: first_response_blocks(r, S04), ["text", "tool_use", "tool_use"]),
    "session09.request_records": Derived((S09,), "session 09's request records: the shape holds the system prompt and "
                                         "tools; blobs named by hash; each request its params (model, max_tokens, "
                                         "thinking), cacheControl, a digest, and from the second on its base",
                                         lambda r: request_records(r, S09),
                                         {"shape": ["system", "tools"], "blobs named by hash": True,
                                          "params": ["max_tokens", "model", "thinking"], "every request": True,
                                          "later requests extend a base": True}),
    "max_tokens_always.cc.context": Observed("max_tokens_always", CC, "eight reminders opened its first message",
                                            {"context": 8}),
    "session09.no_ending": Derived((S09,), "session 09 holds no terminal_reason (the ending is in the run's result "
                                   "line, which the conformance file keeps)",
                                   lambda r: "terminal_reason" in "\n".join(json.dumps(x) for x in r.session(S09)),
                                   False),
    "session01.parallel_compact": Derived((S01,), "session 01 (Claude Code 2.0.76): a response with three tool_use "
                                          "blocks and a compact_boundary", lambda r: [
                                              sorted({x["version"] for x in r.session(S01) if x.get("version")}),
                                              max(sum(1 for y in r.session(S01) if y.get("type") == "assistant" and
                                                      y["message"]["id"] == x["message"]["id"] and
                                                      y["message"]["content"][0]["type"] == "tool_use")
                                                  for x in r.session(S01) if x.get("type") == "assistant"),
                                              "compact_boundary" in [x.get("subtype") for x in r.session(S01)]],
                                          [["2.0.76"], 3, True]),
    "sessions.model_calls": Derived((S01, S05, S07), "main-thread model calls: session 01 12, 05 10, 07 (2.1.114) 17",
                                    lambda r: [main_thread_calls(r, s) for s in (S01, S05, S07)], [12, 10, 17]),
    "one_tool.anatomy": Observed("one_tool", CC, "its requests: fields (three more than dreamloop's), max_tokens "
                                 "32000, three system blocks (74, 62, 28,320 characters; the last two cached), twelve "
                                 "tools; eight leading reminders of 64 to 6,312 characters; cache_control on the "
                                 "newest "
                                 "message each time", {
                                     "anatomy.request[1].fields": ["context_management", "max_tokens", "messages",
                                                                   "metadata", "model", "stream", "system",
                                                                   "thinking", "tools"],
                                     "anatomy.request[*].max_tokens": [32000, 32000],
                                     "anatomy.request[1].system[*].length": [74, 62, 28320],
                                     "anatomy.request[1].system[*].cache": [False, True, True],
                                     "anatomy.request[1].tools.count": 12,
                                     "anatomy.request[1].messages[1].blocks[*].kind": ["reminder"] * 8 + ["text"],
                                     "anatomy.request[1].messages[1].blocks[*].length": [833, 168, 443, 1880, 6312, 86,
                                                                                        64, 582, 27],
                                     "anatomy.request[*].shape.cache_control": [["system", "messages[0]"],
                                                                               ["system", "messages[2]"]]}),
    "one_tool.dl_anatomy": Observed("one_tool", DL,
                                    "dreamloop run: six fields, 32000, two system blocks (422, 134), seven "
                                    "tools, one leading reminder; cache_control on the newest message too", {
                                        "anatomy.request[1].fields|len": 6, "anatomy.request[*].max_tokens": [32000,
                                                                                                            32000],
                                        "anatomy.request[1].system[*].length": [422, 134],
                                        "anatomy.request[1].tools.count": 7, "anatomy.request[1].shape.context": 1,
                                        "anatomy.request[*].shape.cache_control": [["system", "messages[0]"],
                                                                                  ["system", "messages[2]"]]}),
    "one_tool.match": Observed("one_tool", DL, "the row is a MATCH", {"match": True}),
    "contexts": Derived(("opus_probe", "memory_file"), "Claude Code's leading reminders: 7, 8 or 9 (seven in "
                        "opus_probe and the other two Opus scenarios, nine in memory_file, memory_file_imports, nested_memory_file and "
                        "files_changed_between_turns); the first one's hash differs in each of the anatomies' seven "
                        "scenarios", contexts,
                        {"counts": [7, 8, 9], "not eight": {"output_limit_fallback": 7,
                                                            "output_limit_streaming_fallback": 7, "opus_probe": 7,
                                                            "memory_file": 9, "memory_file_imports": 9,
                                                            "nested_memory_file": 9, "files_changed_between_turns": 9},
                         "first hashes": 7, "of": 7}),
    "session11.context_kinds": Derived((S11,), "session 11's attachments before its first request include "
                                       "environment, date, model, tool, agent and skill listings",
                                       lambda r: sorted({"environment", "date", "model", "deferred_tools_delta",
                                                         "agent_listing_delta", "skill_listing"}
                                                        & set(attachments_before_first_request(r, S11))),
                                       ["agent_listing_delta", "date", "deferred_tools_delta", "environment", "model",
                                        "skill_listing"]),
    "max_tokens_once.reminder": Observed("max_tokens_once", CC, "the resume note: one reminder of 220 characters",
                                         {"anatomy.request[2].messages[3].blocks[*].kind": ["reminder"],
                                          "anatomy.request[2].messages[3].blocks[1].length": 220}),
    "tool_use_without_block.anatomy": Observed("tool_use_without_block", CC, "each retry the one user message, its "
                                               "prompt's text one character longer, one more reminder at its end",
                                               {"anatomy.request[1].messages|len": 1,
                                               "anatomy.request[2].messages|len": 1,
                                               "anatomy.request[3].messages|len": 1,
                                                "anatomy.request[1].messages[1].blocks[9].length": 27,
                                                "anatomy.request[2].messages[1].blocks[9].length": 28,
                                                "anatomy.request[3].messages[1].blocks[*].kind|len": 11}),
    "tool_use_without_block.differ": Observed("tool_use_without_block", DL, "DIFFER on the rewritten message, "
                                              "labelled (chapter 09); dreamloop appends",
                                              {"match": False, "deliberate": "09_every_ending",
                                               "request[2].added": "user+[reminder]"}),
    "disconnect_inside_tool_use.requests": Observed("disconnect_inside_tool_use", CC, "three requests, completed",
                                                    {"requests": 3, "ending": "completed"}),
    "http_529_fallback.requests": Observed("http_529_fallback", CC, "four requests, completed",
                                           {"requests": 4, "ending": "completed"}),
    "http_500.cc": Observed("http_500", CC, "a 500, then the same request answered; completed",
                            {"request[*].status": [500, 200], "ending": "completed",
                             "anatomy.retries": 1}),
    "opus_probe.cc": Observed("opus_probe", CC, "with an Opus model: one probe skipped, then the request as usual; "
                              "seven leading reminders", {"probes": 1, "requests": 1, "request[1].added": "user[text]",
                                                          "context": 7, "ending": "completed"}),
    "one_tool.cc.context": Observed("one_tool", CC, "eight leading reminders", {"context": 8}),
    "session09.prompt_ids": Derived((S09,), "session 09's meta user records carry the prompt's own promptId",
                                    lambda r: meta_prompt_ids(r, S09), True),
    "session09.synthetic": Derived((S09,), "session 09's API error message has the model <synthetic>",
                                   lambda r: [x["message"].get("model") for x in r.session(S09)
                                              if x.get("isApiErrorMessage")], ["<synthetic>"]),
    "session09.blob_hashes": Derived((S09,), "session 09's message blobs are named by the SHA-256 of their JSON",
                                     lambda r: blob_hashes(r, S09), True),
    "sessions.tool_names": Derived((S09,), "the tools Claude Code 2.1.332's recorded requests list: Read, Edit, Write "
                                   "among them, no Glob or Grep", lambda r: [
                                       [n for n in ("Read", "Edit", "Write", "Glob", "Grep") if n in
                                        recorded_tool_names(r)], len(recorded_tool_names(r))],
                                   [["Read", "Edit", "Write"], 12]),
    "read_then_edit.inputs": Derived(("read_then_edit",), "the scripted calls: Read(file_path), Edit(file_path, "
                                     "old_string, new_string)", lambda r: [calls(r, "read_then_edit", 1)[0],
                                                                           calls(r, "read_then_edit", 2)[0]],
                                     [["Read", ["file_path"]], ["Edit", ["file_path", "new_string", "old_string"]]]),
    "hooks.command_kind": Derived(HOOK_SCENARIOS, "the five hook scenarios give both sides command hooks",
                                  hook_kinds, ["command"]),
    "hooks.match": Derived(HOOK_SCENARIOS, "dreamloop run matches Claude Code 2.1.332 in the five hook scenarios",
                           lambda r: [r.side(n, DL)["match"] for n in HOOK_SCENARIOS], [True] * 5),
    "one_tool.absolute_path": Derived(("one_tool",), "one_tool's Read names the file by its absolute path in the "
                                      "workspace",
                                      lambda r: r.scenario("one_tool").script("/ws")[0].content[1]["input"],
                                      {"file_path": "/ws/config.py"}),
    # -- what issues 31, 32, 35 and 38 recorded (absolute output limits, texts: lines, counted files)
    "results_in_finishing_order.script": Derived(("results_in_finishing_order",), "one answer with three calls: a "
                                                 "command that waits two seconds, a Read, a command that waits one",
                                                 lambda r: [[c[0] for c in calls(r, "results_in_finishing_order")],
                                                            bash_commands(r, "results_in_finishing_order")],
                                                 [["Bash", "Read", "Bash"], ["sleep 2", "sleep 1"]]),
    "results_in_finishing_order.cc": Observed("results_in_finishing_order", CC, "the three results in one user "
                                              "message, in the order the calls finished: the Read's, the one-second "
                                              "command's, the two-second command's; the reminder inside the last",
                                              {"request[2].added": "assistant[text, tool_use×3] user[tool_result×3]",
                                               "request[2].results": ["toolu_fake_0002", "toolu_fake_0003",
                                                                      "toolu_fake_0001"],
                                               "request[2].inside": ["toolu_fake_0001 79#5d93cac8"],
                                               "ending": "completed"}),
    "results_in_finishing_order.match": Derived(("results_in_finishing_order",), "dreamloop run matches, the ids "
                                                "compared in order (the scenario is not order_free)",
                                                lambda r: [r.side("results_in_finishing_order", DL)["match"],
                                                           r.side("results_in_finishing_order", DL)["request"][1][
                                                               "results"],
                                                           order_free(r, "results_in_finishing_order")],
                                                [True, ["toolu_fake_0002", "toolu_fake_0003", "toolu_fake_0001"],
                                                 [False]]),
    "sub_agent_call.cc": Observed("sub_agent_call", CC, "the Agent call answered in request 2 without the child's "
                                  "answer, which reached the parent as a reminder of request 3 (a message of two "
                                  "reminders); the child's two requests, its first opening with 6 context reminders "
                                  "and offering 8 tools, Agent among them, against the parent's 8 and 12; completed", {
                                      "requests": 3, "request[2].results": ["toolu_agent_1"],
                                      "request[3].added": "assistant[text] user[reminder×2]",
                                      "child.CHILDTASK-1.requests": 2,
                                      "contexts": {"main": 8, "CHILDTASK-1": 6}, "tools": {"main": 12, "CHILDTASK-1": 8},
                                      "agent_offered": {"main": True, "CHILDTASK-1": True},
                                      "texts": {"CHILD-ONE-SAYS value is 1.": "request 3 reminder"},
                                      "ending": "completed"}),
    "sub_agent_call.dl": Observed("sub_agent_call", DL, "dreamloop run: the child's two requests offer 6 tools without "
                                  "Agent, the parent's 7 with it; the child's answer a reminder of request 3, alone", {
                                      "requests": 3, "child.CHILDTASK-1.requests": 2,
                                      "tools": {"main": 7, "CHILDTASK-1": 6},
                                      "agent_offered": {"main": True, "CHILDTASK-1": False},
                                      "request[3].added": "assistant[text] user[reminder]",
                                      "texts": {"CHILD-ONE-SAYS value is 1.": "request 3 reminder"}}),
    "sub_agent_call.differ": Observed("sub_agent_call", CC, "DIFFERs only on request 3's added reminder, labelled "
                                      "with chapter 12", {
                                          "match": False, "deliberate": "12_the_loop_inside_the_loop",
                                          "differences": ["request 3: added assistant[text] user[reminder×2] vs "
                                                          "assistant[text] user[reminder]"]}),
    "two_sub_agents.cc": Observed("two_sub_agents", CC, "both Agent calls answered in request 2; the first child's "
                                  "answer in request 3 (two reminders), the second's in request 4 (one), after the "
                                  "parent had answered; each child two requests; completed", {
                                      "requests": 4, "request[2].results": ["toolu_agent_1", "toolu_agent_2"],
                                      "request[3].added": "assistant[text] user[reminder×2]",
                                      "request[4].added": "assistant[text] user[reminder]",
                                      "child.CHILDTASK-1.requests": 2, "child.CHILDTASK-2.requests": 2,
                                      "texts": {"CHILD-ONE-SAYS value is 1.": "request 3 reminder",
                                                "CHILD-TWO-SAYS greet says hello.": "request 4 reminder"},
                                      "ending": "completed"}),
    "two_sub_agents.differ": Observed("two_sub_agents", CC, "DIFFERs only on request 3's added reminder, labelled "
                                      "with chapter 12", {
                                          "match": False, "deliberate": "12_the_loop_inside_the_loop",
                                          "differences": ["request 3: added assistant[text] user[reminder×2] vs "
                                                          "assistant[text] user[reminder]"]}),
    "background_command_ends_before_next_request.cc": Observed(
        "background_command_ends_before_next_request", CC, "the notification naming the call's description inside "
        "the last (only) tool_result of request 3, no text block beside it; MATCH", {
            "requests": 3, "request[3].added": "assistant[text, tool_use] user[tool_result]",
            "request[3].results": ["toolu_fake_0002"],
            "texts": {"a quick background job": "request 3 reminder inside result toolu_fake_0002"},
            "match": True}),
    "background_command_ends_later.cc": Observed(
        "background_command_ends_later", CC, "after the model's answer, the notification naming the call's "
        "description as a reminder of its own in request 3; MATCH", {
            "requests": 3, "request[3].added": "assistant[text] user[reminder]",
            "texts": {"a slow background job": "request 3 reminder"}, "match": True}),
    "result_reminders": Derived(("one_tool", "hook_pre_tool_use_deny", "results_in_finishing_order"), "every request "
                                "of Claude Code's that carried tool_results, in every scenario (58), held the "
                                "79-character reminder (the same hash) inside its last result (in an order-free "
                                "scenario, whose line lists it without its result, inside one of them)",
                                result_reminders, {"requests with results": 58,
                                                   "the reminder inside the last result": 58}),
    "hook_pre_tool_use_deny.cc": Observed("hook_pre_tool_use_deny", CC, "the denied Edit's result is_error, the "
                                          "reminder inside it too", {"request[3].results": ["toolu_fake_0002:error"],
                                                                     "request[3].inside": [
                                                                         "toolu_fake_0002 79#5d93cac8"]}),
    "http_429_fallback.definition": Derived(("http_429_fallback",), "the 429 scenario with a fallback model set "
                                            "(claude-haiku-4-5, which would answer)",
                                            lambda r: models(r, "http_429_fallback"),
                                            ["claude-sonnet-4-5", "claude-haiku-4-5"]),
    "http_429_fallback.cc": Observed("http_429_fallback", CC, "three 429s from the main model (the harness allows two "
                                     "retries), the fallback model never asked; api_error",
                                     {"request[*].status": [429, 429, 429], "request[*].model": every("main"),
                                      "ending": "api_error"}),
    "http_429_fallback.match": Observed("http_429_fallback", DL, "dreamloop run matches", {"match": True}),
    "output_limit_fallback.definition": Derived(("output_limit_fallback",), "main model claude-opus-5-5, fallback "
                                                "claude-sonnet-4-5", lambda r: models(r, "output_limit_fallback"),
                                                ["claude-opus-5-5", "claude-sonnet-4-5"]),
    "output_limit_fallback.cc": Observed("output_limit_fallback", CC, "one probe skipped; three 529s from the main "
                                         "model at max_tokens 128,000, then the fallback model at 32,000; completed",
                                         {"probes": 1, "request[*].status": [529, 529, 529, 200],
                                          "request[*].model": ["main", "main", "main", "fallback"],
                                          "request[*].max_tokens": [128000, 128000, 128000, 32000],
                                          "ending": "completed"}),
    "output_limit_fallback.match": Observed("output_limit_fallback", DL, "dreamloop run matches, max_tokens "
                                            "included", {"match": True,
                                                         "request[*].max_tokens": [128000, 128000, 128000, 32000]}),
    "one_tool.cc.limit": Derived(("one_tool",), "one_tool's model is claude-sonnet-4-5, and each of Claude Code's "
                                 "requests asked for 32,000", lambda r: [models(r, "one_tool")[0],
                                                                         [q["max_tokens"] for q in
                                                                          r.side("one_tool", CC)["request"]]],
                                 ["claude-sonnet-4-5", [32000, 32000]]),
    "http_529_fallback.limit": Observed("http_529_fallback", CC, "the fallback model's request (claude-haiku-4-5) "
                                        "asked for 32,000", {"request[4].model": "fallback",
                                                             "request[4].max_tokens": 32000}),
    "output_limit_streaming_fallback.definition": Derived(("output_limit_streaming_fallback",), "its model is "
                                                          "claude-opus-5-5; its stream breaks before any block is "
                                                          "complete",
                                                          lambda r: [models(r, "output_limit_streaming_fallback")[0],
                                                                     r.script("output_limit_streaming_fallback")[0][
                                                                         "fault"]],
                                                          ["claude-opus-5-5", "stream_error"]),
    "output_limit_streaming_fallback.cc": Observed("output_limit_streaming_fallback", CC, "the broken streamed request "
                                                   "at 128,000, the same request again without streaming at 64,000",
                                                   {"probes": 1, "request[*].max_tokens": [128000, 64000],
                                                    "request[*].streamed": [True, False],
                                                    "request[1].error": "overloaded_error",
                                                    "request[2].added": "nothing", "ending": "completed"}),
    "output_limit_streaming_fallback.match": Observed("output_limit_streaming_fallback", DL, "dreamloop run matches, "
                                                      "max_tokens included", {"match": True,
                                                                              "request[*].max_tokens": [128000,
                                                                                                        64000]}),
    "disconnect_bash.script": Derived(("disconnect_after_bash_ran", "disconnect_while_bash_runs"), "the first answer: "
                                      "a text, a Bash call that appends a line to count.txt (after sleeping 5 s in "
                                      "disconnect_while_bash_runs), then a text paced at 20 tokens a second in which "
                                      "the connection drops; asked again, the model calls the command under a new id",
                                      lambda r: [[bash_commands(r, n, 1), bash_commands(r, n, 2),
                                                  r.script(n)[0]["fault"], r.scenario(n).counts]
                                                 for n in ("disconnect_after_bash_ran", "disconnect_while_bash_runs")],
                                      [[["echo ran >> /ws/count.txt; wc -l < /ws/count.txt"],
                                        ["echo ran >> /ws/count.txt; wc -l < /ws/count.txt"], "disconnect",
                                        ["count.txt"]],
                                       [["sleep 5; echo ran >> /ws/count.txt; wc -l < /ws/count.txt"],
                                        ["echo ran >> /ws/count.txt; wc -l < /ws/count.txt"], "disconnect",
                                        ["count.txt"]]]),
    "disconnect_bash.cc": Derived(("disconnect_after_bash_ran", "disconnect_while_bash_runs"), "in both, the request "
                                  "after the drop carried the first call and its ordinary result, the next one the "
                                  "second call's; count.txt ended with two lines, one per tool_use id; completed",
                                  lambda r: [[r.side(n, CC)["request"][1]["added"],
                                              [q["results"] for q in r.side(n, CC)["request"]],
                                              r.side(n, CC)["counts"], r.side(n, CC)["ending"]]
                                             for n in ("disconnect_after_bash_ran", "disconnect_while_bash_runs")],
                                  [["assistant[text, tool_use] user[tool_result]",
                                    [[], ["toolu_fake_0001"], ["toolu_fake_0002"]], {"count.txt": 2},
                                    "completed"]] * 2),
    "disconnect_bash.match": Derived(("disconnect_after_bash_ran", "disconnect_while_bash_runs"), "dreamloop run "
                                     "matches in both, count.txt included",
                                     lambda r: [[r.side(n, DL)["match"], r.side(n, DL)["counts"]]
                                                for n in ("disconnect_after_bash_ran", "disconnect_while_bash_runs")],
                                     [[True, {"count.txt": 2}]] * 2),
    "unknown_content_block.cc": Observed("unknown_content_block", CC, "the answer went back with the unknown block in "
                                         "its place, between the text and the Read",
                                         {"request[2].added":
                                          "assistant[text, future_block, tool_use] user[tool_result]",
                                          "ending": "completed"}),
    "unknown_content_block.match": Observed("unknown_content_block", DL, "dreamloop run matches", {"match": True}),
    "session03.interrupt_text": Derived((S03,), "session 03 (Claude Code 2.1.38) holds user texts '[Request "
                                        "interrupted by user]'",
                                        lambda r: [session_user_texts(r, S03, "[Request interrupted by user]"),
                                                   sorted({x["version"] for x in r.session(S03) if x.get("version")})],
                                        [2, ["2.1.38"]]),
    # <facts-end>
}


# == the claims and what each rests on, chapter by chapter ====================================================

WHICH_LOOP = ("recording.verdicts", "one_tool.match", "four.fallback_option", "conv.recovery_rungs")
"""What the "Which loop" cell of every chapter rests on: the recording's verdicts (dreamloop run matches where it
does not differ by a label), and that both texts name a loop whose branches are switched by options."""

CLAIMS: list = [
    # -- README.md
    # -- 00 setup and tour
    chapter("00_setup_and_tour", "c00-00", "as two source texts take it apart (Claude Code's loop",
            "《对话循环》讲的是 Claude Code 的循环", "conv.claude_code", "four.dreamcoder"),
    chapter("00_setup_and_tour", "c00-terms", "The four-step-loop text and the conversation-loop text are in Chinese",
            "两篇原文都是用中文写的", "four.in_chinese", "conv.in_chinese"),
    chapter("00_setup_and_tour", "c00-19", "Each chapter has a table like this one",
            "每一章都有一张这样的表", "four.files", "conv.function_names"),
    chapter("00_setup_and_tour", "c00-19", "| whose loop |", "| 谁的循环 |", "conv.claude_code", "four.dreamcoder"),
    chapter("00_setup_and_tour", "c00-19", "| before the loop |", "| 循环之前 |", "four.desktop"),
    chapter("00_setup_and_tour", "c00-19", "| one input's path |", "| 一次输入的路径 |", "four.path"),
    chapter("00_setup_and_tour", "c00-19", "| the model call |", "| 模型调用 |", "four.call_model", "plain_answer.cc",
            "one_tool.cc"),
    chapter("00_setup_and_tour", "c00-19", "| running the tools |", "| 执行工具 |", "four.run_tools", "one_tool.cc"),
    chapter("00_setup_and_tour", "c00-19", "| the conclusion |", "| 结论 |", "four.return_reason", "conv.return_reason",
            "plain_answer.cc"),
    # -- README.md
    document("README.md", "the loop the conversation-loop text calls `queryLoop()`", "conv.function_names"),
    document("README.md", "What the loop does is held against Claude Code 2.1.332 itself", "recording.library"),
    document("README.md", "Where a chapter, this README or a docstring says what Claude Code", "four.in_chinese",
             "conv.in_chinese"),
    document("README.md", "the whole book is also in Chinese, in the terms of both texts", "four.in_chinese",
             "conv.in_chinese"),
    document("README.md", "`dreamloop run` is the production loop: every branch the package has is on",
             "max_tokens_always.cc", "max_tokens_always.match", "http_529_fallback.cc", "http_529_fallback.match",
             "stream_error_before_block.cc", "stream_error_before_block.match"),
    document("README.md", "`dreamloop compare` runs Claude Code itself (2.1.332 is pinned", "recording.version",
             "recording.library"),
    document("README.md", "Held against Claude Code 2.1.332, dreamloop matches in 52 of", "recording.verdicts",
             "edit_after_change_then_write.cc", "sub_agent_call.differ", "two_sub_agents.differ"),
    document("README.md", "Files up to version 2.1.114 hold neither the system prompt",
             "sessions.older_hold_no_request"),
    document("README.md", "Claude Code 2.1.332 records the requests of the conversation as sent", "session09.run",
             "session10.run", "session11.run"),
    document("README.md", "| `00_setup_and_tour` |", "four.path", "conv.claude_code"),
    document("README.md", "| `10b_claude_code_sessions` |", "sessions.versions"),
    document("README.md", "| `11_the_real_loop` |", "recording.anatomies"),
    document("README.md", "a table of what the source texts say, what Claude Code 2.1.332 did", "four.files",
             "conv.function_names"),
    # -- 01 the four-step loop
    chapter("01_four_step_loop", "c01-00", "In the four-step-loop text the same steps live in `queryLoop()`",
            "在四步循环一文里，同样的四步位于 `queryLoop()`", "four.step_one", "four.needs_follow_up", "four.next_state"),
    chapter("01_four_step_loop", "c01-08", "The four-step-loop text says the same of `queryLoop()`",
            "四步循环一文说 `queryLoop()` 也是这样", "four.needs_follow_up"),
    chapter("01_four_step_loop", "c01-24", "The loop both texts take apart does the same four steps",
            "两篇原文拆解的那个循环做的是同样的四步", "four.yield_to_engine", "conv.heartbeat", "four.state"),
    chapter("01_four_step_loop", "c01-27b", "The four steps as the four-step-loop text finds them",
            "四步循环一文在 `queryLoop()`", "four.dreamcoder", "four.files"),
    chapter("01_four_step_loop", "c01-27b", "| the loop |", "| 循环本身 |", "conv.while_true", "four.pseudo_code"),
    chapter("01_four_step_loop", "c01-27b", "| step 1: call the model |", "| 第 1 步：请求模型 |", "four.call_model",
            "one_tool.cc"),
    chapter("01_four_step_loop", "c01-27b", "| the user context |", "| 用户上下文 |", "four.user_context",
            "plain_answer.cc.context", "memory_file.cc.context"),
    chapter("01_four_step_loop", "c01-27b", "| waiting or streaming |", "| 等待还是流式 |", "four.stream_upward",
            "conv.stream_events", "one_tool.cc"),
    chapter("01_four_step_loop", "c01-27b", "| step 2: find `tool_use` |", "| 第 2 步：识别 `tool_use` |",
            "four.msg_tool_use_blocks", "four.needs_follow_up", "tool_use_without_block.cc"),
    chapter("01_four_step_loop", "c01-27b", "| step 3: run the tools |", "| 第 3 步：执行工具 |", "four.two_paths_meet",
            "one_tool.cc"),
    chapter("01_four_step_loop", "c01-27b", "| step 4: append |", "| 第 4 步：追加 |", "four.next_state", "one_tool.cc"),
    # -- 02 tool_use and tool_result
    chapter("02_tool_use_and_tool_result", "c02-00", "in the four-step-loop text their results come out as they "
            "complete", "四步循环一文里，它们的结果按完成的先后产出", "four.parallel_order"),
    chapter("02_tool_use_and_tool_result", "c02-07", "The package's `run_tools()` (after `runTools()`",
            "包里的 `run_tools()`（对应四步循环一文里的 `runTools()`）", "four.run_tools_layers", "four.unknown_tool"),
    chapter("02_tool_use_and_tool_result", "c02-27", "The four-step-loop text closes such a turn",
            "四步循环一文会给这样的一轮收尾", "four.missing_results", "four.model_error", "http_529.cc"),
    chapter("02_tool_use_and_tool_result", "c02-27", "Claude Code 2.1.332 itself did not end on these two faults",
            "Claude Code 2.1.332 自己遇到这两种故障时并没有结束", "stream_error_after_tool_use.script",
            "stream_error_after_tool_use.cc", "disconnect_after_tool_use.script", "disconnect_after_tool_use.cc"),
    chapter("02_tool_use_and_tool_result", "c02-30b", "What the four-step-loop text says about the pairing",
            "四步循环一文关于配对怎么说", "four.pairing"),
    chapter("02_tool_use_and_tool_result", "c02-30b", "| pairing by id |", "| 按 id 配对 |", "four.pairing",
            "one_tool.cc", "parallel_reads.cc"),
    chapter("02_tool_use_and_tool_result", "c02-30b", "| a call that fails |", "| 失败的调用 |", "four.unknown_tool",
            "missing_and_unknown.script", "missing_and_unknown.cc", "invalid_tool_input.script",
            "invalid_tool_input.cc"),
    chapter("02_tool_use_and_tool_result", "c02-30b", "| how the results are yielded |", "| 结果怎样产出 |",
            "four.yield_each", "four.normalize"),
    chapter("02_tool_use_and_tool_result", "c02-30b", "| the order of the results |", "| 结果的顺序 |",
            "four.parallel_order", "results_in_finishing_order.script", "results_in_finishing_order.cc",
            "results_in_finishing_order.match"),
    chapter("02_tool_use_and_tool_result", "c02-30b", "| a turn that stopped halfway |", "| 中途停下的一轮 |",
            "four.missing_results", "four.abort_streaming", "four.undoes_nothing", "stream_error_after_tool_use.script",
            "stream_error_after_tool_use.cc", "stream_error_after_tool_use.match", "disconnect_after_tool_use.script",
            "disconnect_after_tool_use.cc", "disconnect_after_tool_use.differ", "disconnect_after_tool_use.label"),
    chapter("02_tool_use_and_tool_result", "c02-30b", "| the error texts |", "| 错误文字 |", "program.error_names"),
    # -- 03 queryLoop()
    chapter("03_query_loop", "c03-00", "So the loop both texts take apart, `queryLoop()`, is an **async generator**",
            "所以两篇原文拆解的那个循环 `queryLoop()` 是一个**异步生成器**", "four.query_async_generator",
            "conv.in_chinese"),
    chapter("03_query_loop", "c03-00", "The numbers are the five phases of `dreamloop/query.py`",
            "图中的编号是 `dreamloop/query.py` 的五个阶段", "conv.phases"),
    chapter("03_query_loop", "c03-11", "The conversation-loop text names five kinds of thing",
            "《对话循环》列出了循环产出的五类东西", "conv.five_kinds", "conv.message_kinds", "conv.tombstone",
            "conv.summary"),
    chapter("03_query_loop", "c03-19", "The four-step-loop text names four arrays",
            "四步循环一文点出了一次迭代要用到的四个数组", "four.four_arrays", "four.results_and_attachments",
            "four.local_collectors"),
    chapter("03_query_loop", "c03-19", "They go into the next State right after the tool results",
            "它们紧跟在工具结果之后进入下一个 State", "four.results_and_attachments"),
    chapter("03_query_loop", "c03-19", "The trace keeps one **checkpoint** per iteration",
            "trace 每次迭代保存一个**检查点**", "four.checkpoint"),
    chapter("03_query_loop", "c03-19", "builds the next State from three fields, and so does `query.py`",
            "四步循环一文用三个字段构造下一个 State", "four.three_fields", "four.next_state"),
    chapter("03_query_loop", "c03-25", "`stop_reason` is not trusted for that", "这件事不信任 `stop_reason`",
            "four.needs_follow_up"),
    chapter("03_query_loop", "c03-25", "(Claude Code 2.1.332 sent no `tool_result` either",
            "（Claude Code 2.1.332 同样没有发出 `tool_result`", "tool_use_without_block.cc",
            "tool_use_without_block.dl"),
    chapter("03_query_loop", "c03-29", "has the loop compute `nextTurnCount = turnCount + 1`",
            "四步循环一文让循环在工具执行之后计算", "four.next_turn_count", "four.max_turns"),
    chapter("03_query_loop", "c03-29", "Claude Code 2.1.332 also sent as many requests as its limit",
            "Claude Code 2.1.332 发出的请求次数同样等于它的上限", "max_turns.definition", "max_turns.cc"),
    # -- 03b between turns (issue 33 item 11: chapter 03's phase 5, moved, and what the issue built)
    chapter("03b_between_turns", "c03-p5-intro", "phase 5 of the conversation-loop text **injects attachments**",
            "《对话循环》的阶段 5 会**注入附件**", "conv.phase5", "conv.claude_md_example"),
    chapter("03b_between_turns", "c03-p5-design", "The conversation-loop text names the attachments and the summary",
            "《对话循环》给出了这几种附件和摘要", "conv.phase5", "conv.summary"),
    chapter("03b_between_turns", "c03-p5-design", "as observed by the `dreamloop compare` scenario `memory_file`, opened",
            "在 `dreamloop compare` 的场景 `memory_file` 中观察到", "memory_file.cc.context", "plain_answer.cc.context"),
    chapter("03b_between_turns", "c03-p5-design", "Changed files: in the scenario `files_changed_between_turns`",
            "变了的文件：场景 `files_changed_between_turns`", "files_changed_between_turns.cc",
            "files_changed_between_turns.texts"),
    chapter("03b_between_turns", "c03-p5-design", "Summaries: no scenario shows a summary's request",
            "摘要：没有哪个场景显示过摘要请求", "recording.extra_requests"),
    chapter("03b_between_turns", "c03b-10", "With a line `@docs/style.md` in the workspace's CLAUDE.md",
            "在场景 `memory_file_imports` 中观察到", "memory_file_imports.cc"),
    chapter("03b_between_turns", "c03b-10", "Claude Code 2.1.332 did the same in `nested_memory_file`",
            "在场景 `nested_memory_file` 中观察到", "nested_memory_file.cc"),
    chapter("03b_between_turns", "c03b-20", "| a Write of a file never read |", "| Write 一个从没读过的文件 |",
            "write_without_read.cc"),
    chapter("03b_between_turns", "c03b-20", "| an Edit of a file never read |", "| Edit 一个从没读过的文件 |",
            "edit_without_read.cc"),
    chapter("03b_between_turns", "c03b-20", "| a Read, a person's added line, a Write |", "| Read，用户加了一行，Write |",
            "write_after_change.cc"),
    chapter("03b_between_turns", "c03b-20", "| a Read, a person's added line, an Edit", "| Read，用户加了一行，旧文本仍在的 Edit |",
            "edit_after_change.cc"),
    chapter("03b_between_turns", "c03b-20", "| a Write of a new file |", "| Write 一个新文件 |", "write_new_file.cc"),
    chapter("03b_between_turns", "c03b-20", "| that applied Edit, then a Write of the whole file |",
            "| 上面那次被应用的 Edit 之后，Write 整个文件 |", "edit_after_change_then_write.cc"),
    chapter("03b_between_turns", "c03b-22", "the one deliberate difference from Claude Code 2.1.332",
            "在场景 `edit_after_change_then_write` 中观察到", "edit_after_change_then_write.cc"),
    chapter("03b_between_turns", "c03b-evidence", "| what phase 5 attaches |", "| 阶段 5 附加什么 |", "conv.phase5"),
    chapter("03b_between_turns", "c03b-evidence", "| memory files |", "| 记忆文件 |", "memory_file.cc.context",
            "plain_answer.cc.context"),
    chapter("03b_between_turns", "c03b-evidence", "| `@path` imports |", "| `@path` 导入 |", "memory_file_imports.cc"),
    chapter("03b_between_turns", "c03b-evidence", "| a nested memory file |", "| 子文件夹里的记忆文件 |",
            "nested_memory_file.cc"),
    chapter("03b_between_turns", "c03b-evidence", "| read before write |", "| 先读后写 |", "write_without_read.cc",
            "edit_without_read.cc", "write_after_change.cc", "edit_after_change.cc", "write_new_file.cc",
            "edit_after_change_then_write.cc"),
    # -- 03c between turns, what phase 5 tells the model (03b's second half since the chapter was split)
    chapter("03c_notices_and_queued_input", "c03c-evidence", "| file-change notices |", "| 文件变更通知 |", "conv.phase5",
            "files_changed_between_turns.cc", "files_changed_between_turns.texts"),
    chapter("03c_notices_and_queued_input", "c03c-evidence", "| queued input |", "| 排队的输入 |", "conv.phase5"),
    chapter("03c_notices_and_queued_input", "c03c-evidence", "| tool-use summaries |", "| 工具调用摘要 |", "conv.summary",
            "recording.extra_requests"),
    chapter("03_query_loop", "c03-33", "| `api_error` |", "| `api_error` |", "http_529.cc", "four.model_error"),
    chapter("03_query_loop", "c03-33", "| `malformed_tool_use_exhausted` |", "| `malformed_tool_use_exhausted` |",
            "tool_use_without_block.cc"),
    chapter("03_query_loop", "c03-33", "Each `transition` other than `next_turn` is a path",
            "每一种 `transition` 都是一条由后面的章节", "conv.seven_paths", "stream_error_inside_tool_use.cc",
            "tool_use_without_block.cc"),
    chapter("03_query_loop", "c03-33", "Claude Code 1.0.17's session file", "Claude Code 1.0.17 的会话文件",
            "session04.interrupt"),
    chapter("03_query_loop", "c03-36b", "`queryLoop()` as the two texts describe it", "两篇原文描述的 `queryLoop()`",
            "four.dreamcoder", "conv.function_names"),
    chapter("03_query_loop", "c03-36b", "| an async generator |", "| 异步生成器 |", "four.query_async_generator",
            "four.for_await", "conv.in_chinese", "conv.return_terminal"),
    chapter("03_query_loop", "c03-36b", "| what it yields |", "| 产出什么 |", "conv.five_kinds", "conv.tombstone",
            "session10.records"),
    chapter("03_query_loop", "c03-36b", "| State, Continue, Terminal |", "| State、Continue、Terminal |",
            "conv.while_true", "conv.destructure", "conv.new_state", "conv.own_module", "conv.seven_paths"),
    chapter("03_query_loop", "c03-36b", "| the arrays of one iteration |", "| 一次迭代的数组 |", "four.four_arrays",
            "four.results_and_attachments"),
    chapter("03_query_loop", "c03-36b", "| going round again |", "| 再转一圈 |", "four.needs_follow_up",
            "tool_use_without_block.cc"),
    chapter("03_query_loop", "c03-36b", "| turns and `maxTurns` |", "| 轮数与 `maxTurns` |", "four.turn_count_one",
            "four.next_turn_count", "four.max_turns", "max_turns.definition", "max_turns.cc"),
    chapter("03_query_loop", "c03-36b", "| the checkpoint |", "| 检查点 |", "four.checkpoint"),
    chapter("03_query_loop", "c03-36b", "| the record of a run |", "| 一次运行的记录 |", "four.transcript_later",
            "session10.records"),
    # -- 04 tools
    chapter("04_tools", "c04-00", "The life of one call in `run_tool_use()`", "一个调用在 `run_tool_use()`",
            "four.unknown_tool"),
    chapter("04_tools", "c04-12", "In the four-step-loop text, one permission function is handed in",
            "在四步循环一文里，交进来的是一个权限函数", "four.can_use_tool", "four.wrapped_can_use_tool"),
    chapter("04_tools", "c04-19", "(dreamloop calls this step `partition_tool_calls()`",
            "（dreamloop 把这一步叫作 `partition_tool_calls()`", "four.next_article"),
    chapter("04_tools", "c04-23", "In the four-step-loop text, calls that may run in parallel",
            "在四步循环一文里，可以并行的调用按完成的先后产出结果", "four.parallel_order", "results_in_finishing_order.script",
            "results_in_finishing_order.cc"),
    chapter("04_tools", "c04-26b", "Step 3 as the four-step-loop text describes it", "四步循环一文描述的第 3 步",
            "four.run_tools"),
    chapter("04_tools", "c04-26b", "| where step 3 runs |", "| 第 3 步在哪里执行 |", "four.two_paths_meet",
            "four.run_tools"),
    chapter("04_tools", "c04-26b", "| find, validate, permit |", "| 查找、校验、许可 |", "four.run_tools_layers",
            "four.unknown_tool", "missing_and_unknown.script", "missing_and_unknown.cc", "invalid_tool_input.script",
            "invalid_tool_input.cc"),
    chapter("04_tools", "c04-26b", "| who decides permission |", "| 谁决定权限 |", "four.can_use_tool",
            "four.wrapped_can_use_tool", "read_then_edit.script", "read_then_edit.cc",
            "bash_fails_parallel.definition", "bash_fails_parallel.cc"),
    chapter("04_tools", "c04-26b", "| batches |", "| 批次 |", "four.next_article"),
    chapter("04_tools", "c04-26b", "| the order of the results |", "| 结果的顺序 |", "four.parallel_order",
            "results_in_finishing_order.script", "results_in_finishing_order.cc"),
    chapter("04_tools", "c04-33", "Progress arrives in completion order", "进度按完成顺序到达", "four.parallel_order",
            "results_in_finishing_order.cc"),
    # -- 05 streaming tool execution
    chapter("05_streaming_tools", "23aa6228", "In both texts the `StreamingToolExecutor` takes a call",
            "按两篇原文的描述，`StreamingToolExecutor`", "four.streaming_executor", "conv.streaming_execution"),
    chapter("05_streaming_tools", "23aa6228", "The results still meet the loop at one checkpoint",
            "结果仍然在同一个检查点与循环汇合", "four.results_meet"),
    chapter("05_streaming_tools", "9156dc0e", "Calls that run side by side can fail side by side",
            "dreamloop 为此有一条规则", "neither.sibling", "neither.sibling_en", "bash_fails_parallel.cc",
            "bash_fails_serial.cc"),
    chapter("05_streaming_tools", "9156dc0e", "as observed by the `dreamloop compare` scenarios `bash_fails_parallel`",
            "在 `dreamloop compare` 的场景 `bash_fails_parallel` 和 `bash_fails_serial` 中观察到", "bash_fails_parallel.definition",
            "bash_fails_parallel.cc", "bash_fails_serial.script", "bash_fails_serial.cc"),
    chapter("05_streaming_tools", "ad3b4e9b", "Each point of the chapter, with what the two texts say",
            "本章的每个要点：两篇原文怎么说", "four.dreamcoder", "conv.function_names"),
    chapter("05_streaming_tools", "ad3b4e9b", "| the entry and the loop |", "| 入口与循环 |", "four.entry"),
    chapter("05_streaming_tools", "ad3b4e9b", "| two ways to run tools |", "| 两种执行工具的方式 |", "four.run_tools"),
    chapter("05_streaming_tools", "ad3b4e9b", "| where the two paths meet |", "| 两条路径的汇合点 |", "four.two_paths_meet",
            "four.tool_updates"),
    chapter("05_streaming_tools", "ad3b4e9b", "| when a call starts |", "| 调用何时开始 |", "four.streaming_executor",
            "conv.streaming_execution", "four.remaining_results", "disconnect_inside_tool_use.script",
            "disconnect_inside_tool_use.cc"),
    chapter("05_streaming_tools", "ad3b4e9b", "| results: yielded, then collected |", "| 结果：先产出，再收集 |",
            "four.yield_each", "four.normalize", "four.parallel_order", "conv.yield_and_collect", "parallel_reads.cc",
            "bash_fails_parallel.one_message"),
    chapter("05_streaming_tools", "ad3b4e9b", "| progress while the model is silent |", "| 模型沉默时的进度 |",
            "conv.progress"),
    chapter("05_streaming_tools", "ad3b4e9b", "| the sibling rule", "| 兄弟调用规则",
            "bash_fails_parallel.definition", "bash_fails_parallel.cc", "bash_fails_serial.script",
            "bash_fails_serial.cc"),
    chapter("05_streaming_tools", "ad3b4e9b", "| an interrupt", "| 中断", "four.abort_endings"),
    chapter("05_streaming_tools", "ad3b4e9b", "| a model error after calls started |", "| 调用开始之后的模型错误 |",
            "four.missing_results", "stream_error_after_tool_use.script", "stream_error_after_tool_use.cc",
            "stream_error_after_tool_use.match"),
    chapter("05_streaming_tools", "ad3b4e9b", "| the executor's other parts |", "| 执行器的其他部分 |",
            "four.remaining_results"),
    chapter("05_streaming_tools", "7e7f046b", "Claude Code 2.1.332 was not seen doing it",
            "中没有观察到 Claude Code 2.1.332 这样做", "bash_fails_parallel.cc", "bash_fails_serial.cc"),
    # -- 06 the context pipeline
    zh_only("06_context_pipeline", "8580c7ad", "《对话循环》把这称为“压缩管线”", "conv.pipeline_name"),
    chapter("06_context_pipeline", "ab4339df", "dreamloop's defaults put autocompact at 83.5 %",
            "dreamloop 的默认值是 Autocompact 为 83.5%", "neither.figure_8", "neither.figure_200k",
            "usage_past_the_window.script", "usage_past_the_window.cc"),
    chapter("06_context_pipeline", "343ca284", "The conversation-loop text asks for the base system prompt",
            "《对话循环》要求基础系统提示与动态上下文", "conv.stable_order", "four.user_context"),
    chapter("06_context_pipeline", "26a5f351", "as observed by the `dreamloop compare` scenario "
            "`prompt_too_long_after_tools`, answered the refusal", "被拒绝之后又发了它的普通请求", "prompt_too_long_after_tools.cc",
            "prompt_too_long_after_tools.cc.first_context", "prompt_too_long_after_tools.dl"),
    chapter("06_context_pipeline", "d3021ecc", "Still over the hard limit after everything else",
            "如果其他一切都做完之后仍然超过硬性上限", "conv.blocking"),
    zh_only("06_context_pipeline", "d3021ecc", "（当自动压缩和第 08b 章的响应式压缩都打开时", "conv.blocking", "four.snip"),
    chapter("06_context_pipeline", "9f5c7409", "Each point of the chapter, with what the two texts say",
            "本章的每个要点：两篇原文怎么说", "conv.phase2", "four.snip"),
    chapter("06_context_pipeline", "9f5c7409", "| where the history starts |", "| 历史从哪里开始 |",
            "four.compact_boundary"),
    chapter("06_context_pipeline", "9f5c7409", "| the order |", "| 顺序 |", "conv.pipeline", "conv.phase2"),
    chapter("06_context_pipeline", "9f5c7409", "| 1 · tool-result budget |", "| 1 · 工具结果预算 |", "conv.budget"),
    chapter("06_context_pipeline", "9f5c7409", "| 2 · snip |", "| 2 · Snip 压缩 |", "conv.snip", "four.snip"),
    chapter("06_context_pipeline", "9f5c7409", "| 3 · microcompact |", "| 3 · Microcompact |", "conv.microcompact"),
    chapter("06_context_pipeline", "9f5c7409", "| 4 · context collapse |", "| 4 · Context Collapse", "conv.collapse",
            "conv.collapse_first"),
    chapter("06_context_pipeline", "9f5c7409", "| 5 · system prompt |", "| 5 · 系统提示组装 |", "conv.stable_order",
            "four.user_context", "plain_answer.cc.context", "memory_file.cc.context"),
    chapter("06_context_pipeline", "9f5c7409", "| 6 · autocompact |", "| 6 · Autocompact", "conv.autocompact",
            "conv.autocompact_tracking", "prompt_too_long_after_tools.cc",
            "prompt_too_long_after_tools.cc.first_context"),
    chapter("06_context_pipeline", "9f5c7409", "| 7 · blocking limit |", "| 7 · Token 阻断检查 |", "conv.blocking"),
    chapter("06_context_pipeline", "9f5c7409", "| thresholds |", "| 阈值 |", "conv.threshold", "conv.blocking",
            "neither.figure_8", "usage_past_the_window.script", "usage_past_the_window.cc"),
    chapter("06_context_pipeline", "9f5c7409", "| the prompt cache |", "| 提示缓存 |", "conv.stable_order"),
    # -- 07 hooks
    chapter("07_hooks", "c07-00", "These five events, and what each may answer", "这五个事件以及每个事件可以回答什么",
            "hook_post_tool_use_context.cc", "one_tool.cc.result_reminder", "hook_stop_exit_2_once.cc",
            "session11.stop_hooks", "hook_pre_tool_use.cc"),
    chapter("07_hooks", "c07-00", "That last one is a branch of `queryLoop()` itself", "最后这一种是 `queryLoop()` 本身的一个分支",
            "conv.stop_hook_blocking"),
    chapter("07_hooks", "c07-05", "In the conversation-loop text it is one of `queryLoop()`'s continue paths",
            "在《对话循环》里，它是 `queryLoop()` 的继续路径之一", "conv.stop_hook_blocking"),
    chapter("07_hooks", "c07-06", "Claude Code 2.1.332 answered a `PreToolUse` hook's exit 2",
            "Claude Code 2.1.332 对 `PreToolUse` hook 的退出码 2", "hook_pre_tool_use.script", "hook_pre_tool_use.cc",
            "hooks.match"),
    chapter("07_hooks", "c07-12", "That is where Claude Code 2.1.332 puts the feedback", "Claude Code 2.1.332 也把反馈放在这里",
            "hook_stop_exit_2_once.cc", "session11.stop_hooks"),
    zh_only("07_hooks", "c07-14", "从阻断开始，`stop_hook_active` 一直为 True", "conv.stop_hook_active", "four.no_stop_flag"),
    chapter("07_hooks", "c07-34", "The conversation-loop text's answer is a flag in the State",
            "《对话循环》的对策是 State 里的一个标志", "conv.stop_hook_active"),
    zh_only("07_hooks", "c07-34", "dreamloop 另加了自己的一道保护（两篇原文里都没有）", "conv.stop_hook_active",
            "four.no_stop_flag"),
    chapter("07_hooks", "c07-39", "Each point of the chapter, with what the two texts say", "本章的每个要点：两篇原文怎么说",
            "four.stop_hooks_when", "conv.stop_hook_blocking"),
    chapter("07_hooks", "c07-39", "| when the stop hooks run |", "| 停止 hook 何时运行 |", "four.stop_hooks_when",
            "four.needs_follow_up", "conv.no_tools_exit", "hook_stop_exit_2_once.cc", "session11.stop_hooks"),
    chapter("07_hooks", "c07-39", "| a stop hook's block |", "| 停止 hook 的阻断 |", "conv.stop_hook_blocking",
            "conv.stop_hook_active", "hook_stop_exit_2_once.cc"),
    chapter("07_hooks", "c07-39", "| a hook prevents the stop |", "| hook 阻止停下之后的继续 |", "four.hook_endings"),
    chapter("07_hooks", "c07-39", "| a hook stops the loop while tools run |", "| 工具运行期间 hook 停止循环 |",
            "four.hook_endings"),
    chapter("07_hooks", "c07-39", "| command hooks |", "| 命令 hook |", "hook_stop_exit_2_once.cc",
            "session11.stop_hooks",
            "hook_pre_tool_use.script", "hook_pre_tool_use.cc"),
    chapter("07_hooks", "c07-39", "| records |", "| 记录 |", "session11.stop_hooks"),
    chapter("07_hooks", "c07-39", "| the runaway guard |", "| 防失控保护 |", "conv.stop_hook_active"),
    # -- 07b command hooks
    chapter("07b_command_hooks", "c07-32", "where Claude Code 2.1.332 put it too (as observed by",
            "Claude Code 2.1.332 也把它放在那里", "hook_post_tool_use_context.cc", "one_tool.cc.result_reminder"),
    chapter("07b_command_hooks", "c07b-39", "Each point of the chapter, with what the two texts say",
            "本章的每个要点：两篇原文怎么说", "four.submit_message", "conv.phase2"),
    chapter("07b_command_hooks", "c07b-39", "| `pre_tool_use` |", "| `pre_tool_use` |", "four.below_run_tool_use",
            "four.run_tools_layers", "hook_pre_tool_use.script", "hook_pre_tool_use.cc",
            "hook_pre_tool_use_updated_input.cc", "hook_pre_tool_use_updated_input.texts",
            "hook_pre_tool_use_updated_input.markers"),
    chapter("07b_command_hooks", "c07b-39", "| `post_tool_use` |", "| `post_tool_use` |",
            "hook_post_tool_use_context.cc", "one_tool.cc.result_reminder"),
    chapter("07b_command_hooks", "c07b-39", "| prompt hooks |", "| 提示词 hook |", "four.submit_message"),
    chapter("07b_command_hooks", "c07b-39", "| which hooks run |", "| 哪些 hook 会运行 |", "hook_post_tool_use_context.cc",
            "hook_stop_exit_2_once.cc", "session11.stop_hooks", "hook_pre_tool_use_deny.cc",
            "hook_pre_tool_use.script"),
    # -- 08 recovery
    chapter("08_recovery", "87393b69", "Its branch is a switch, off by default", "它的分支是一个开关，默认关闭",
            "conv.recovery_rungs", "conv.escalate"),
    chapter("08_recovery", "87393b69", "watched on the same scripts with `dreamloop compare`, sometimes recovered",
            "在 `dreamloop compare` 用同样脚本运行的场景中观察到", "conv.escalate", "max_tokens_always.cc"),
    chapter("08_recovery", "87393b69", "`dreamloop run` follows what the binary did", "`dreamloop run` 照 Claude Code 2.1.332 实际的做法来",
            "conv.escalate", "max_tokens_always.match", "max_tokens_once.match", "max_tokens_in_tool_json.match"),
    chapter("08_recovery", "c65147a2", "This rung is the conversation-loop text's", "这一级来自《对话循环》",
            "conv.escalate", "neither.figure_64000", "neither.figure_64000_plain"),
    chapter("08_recovery", "c65147a2", "as observed by the `dreamloop compare` scenarios `max_tokens_once` and",
            "的场景 `max_tokens_once` 和 `max_tokens_in_tool_json` 中观察到，Claude Code 2.1.332", "max_tokens_once.cc",
            "max_tokens_in_tool_json.script", "max_tokens_in_tool_json.cc"),
    chapter("08_recovery", "c65147a2", "By the conversation-loop text's account", "按《对话循环》的说法",
            "conv.escalate", "conv.resume_three"),
    zh_only("08_recovery", "c65147a2", "恢复次数用完之后运行怎样结束，两篇原文都没有说", "conv.resume_three",
            "four.completed_path"),
    chapter("08_recovery", "c65147a2", "`RecoveryOptions()` then shows the withheld error",
            "这时 `RecoveryOptions()` 把暂扣的错误", "four.completed_path"),
    chapter("08_recovery", "548922b9", "**As Claude Code 2.1.332 did it**", "**Claude Code 2.1.332 的做法**",
            "max_tokens_always.cc", "max_tokens_always.match"),
    chapter("08_recovery", "a88552e0", "| where recovery happens |", "| 恢复发生在哪里 |", "four.files",
            "conv.recovery_rungs", "conv.new_state", "conv.state_fields"),
    chapter("08_recovery", "a88552e0", "| `turn_count` in a recovery pass |", "| 恢复时的 `turn_count` |",
            "conv.next_turn_counts", "four.recovery_not_turns", "max_tokens_always.cc", "max_tokens_always.dl_turns"),
    chapter("08_recovery", "a88552e0", "| one response, one message |", "| 一个响应，一条消息 |", "four.collect_messages"),
    chapter("08_recovery", "a88552e0", "| a recoverable error |", "| 可恢复的错误 |", "four.completed_path",
            "max_tokens_always.cc", "session09.run", "session09.api_error"),
    chapter("08_recovery", "a88552e0", "| the first `max_tokens` cut: escalate |", "| 第一次 `max_tokens` 截断：提升上限 |",
            "conv.escalate", "neither.figure_64000", "max_tokens_once.cc", "max_tokens_in_tool_json.script",
            "max_tokens_in_tool_json.cc"),
    chapter("08_recovery", "a88552e0", "| later cuts: resume |", "| 之后的截断：截断恢复 |", "conv.resume_three",
            "max_tokens_always.cc"),
    chapter("08_recovery", "a88552e0", "| cuts that outlast the resumes |", "| 截断次数超过恢复上限 |",
            "max_tokens_always.cc", "max_tokens_always.match"),
    chapter("08_recovery", "a88552e0", "Five requests at most for a model that always writes too much",
            "一个总是写得太多的模型最多花五次请求", "conv.escalate", "conv.resume_three", "max_tokens_always.cc"),
    # -- 08b fallbacks
    chapter("08b_fallbacks", "8b0a7c31", "Where the conversation-loop text leaves a step open",
            "《对话循环》没有说清的步骤", "conv.streaming_fallback", "stream_error_before_block.cc"),
    chapter("08b_fallbacks", "395de9bf", "(Claude Code 2.1.332 sent four more requests",
            "（Claude Code 2.1.332 在放弃之前又发了四个请求", "prompt_too_long_after_tools.cc"),
    zh_only("08b_fallbacks", "1d86b8b6", "循环自己给每一次过载计数", "four.retries_own_branch", "conv.system_message"),
    chapter("08b_fallbacks", "1d86b8b6", "as observed by the\n`dreamloop compare` scenario `http_529_fallback`",
            "`http_529_fallback` 中观察到", "http_529_fallback.cc", "http_529_fallback.match", "harness.retries",
            "http_404_fallback.cc", "http_404_fallback.match"),
    chapter("08b_fallbacks", "1d86b8b6", "The conversation-loop text ties tombstones to the *streaming* fallback",
            "《对话循环》把墓碑消息和*流式*回退联系在一起", "conv.tombstone"),
    chapter("08b_fallbacks", "5a09283b", "Every row ends `api_error`", "每一行都以 `api_error` 结束", "http_529.cc",
            "four.model_error"),
    chapter("08b_fallbacks", "9b45de25", "The conversation-loop text names a branch for this",
            "《对话循环》为此列出了一个分支", "conv.streaming_fallback", "conv.tombstone"),
    chapter("08b_fallbacks", "9b45de25", "Claude Code 2.1.332 did this in nine `dreamloop compare` scenarios",
            "Claude Code 2.1.332 在 `dreamloop compare` 的九个场景里是这样做的", "stream_error_before_block.cc"),
    chapter("08b_fallbacks", "9b45de25", "| an error event before any block was complete |", "| 任何内容块完成之前出现错误事件 |",
            "stream_error_before_block.cc", "stream_error_before_block.limit",
            "output_limit_streaming_fallback.definition", "output_limit_streaming_fallback.cc",
            "output_limit_streaming_fallback.match"),
    chapter("08b_fallbacks", "9b45de25", "| an error event inside a tool_use, after a complete text |",
            "| 一段完整文本之后、在 tool_use 内部出现错误事件 |", "stream_error_inside_tool_use.cc"),
    chapter("08b_fallbacks", "9b45de25", "| an error event after a complete tool_use |",
            "| 一个完整的 tool_use 之后出现错误事件 |", "stream_error_after_tool_use.script",
            "stream_error_after_tool_use.cc"),
    chapter("08b_fallbacks", "9b45de25", "| a dropped connection, no call of the response started |",
            "| 连接断开，响应里没有调用已经开始 |", "disconnect_during_text.cc", "disconnect_inside_tool_use.script",
            "disconnect_inside_tool_use.cc", "disconnect_after_tool_use.script", "disconnect_after_tool_use.cc",
            "disconnect_streamed_again"),
    chapter("08b_fallbacks", "91123e21", "The conversation-loop text likens the nudge to a low-balance",
            "《对话循环》把这条提示比作“余额不足提醒”", "conv.budget_nudge", "conv.low_balance"),
    chapter("08b_fallbacks", "40983504", "`dreamloop run` recovers as Claude Code 2.1.332 was observed to",
            "`dreamloop run` 按观察到的 Claude Code 2.1.332 的方式恢复", "max_tokens_always.cc",
            "max_tokens_always.match", "tool_use_without_block.cc", "tool_use_without_block.dl"),
    chapter("08b_fallbacks", "40983504", "Each rung can be turned off", "每一级都可以关掉", "conv.escalate",
            "output_limit_fallback.cc", "output_limit_fallback.match"),
    chapter("08b_fallbacks", "8b9f3a53", "| a prompt too long |", "| 提示词过长 |", "conv.collapse_first",
            "conv.reactive_compact", "prompt_too_long_after_tools.cc", "prompt_too_long_once.cc"),
    chapter("08b_fallbacks", "8b9f3a53", "| overloads, and the fallback model |", "| 过载与回退模型 |", "four.fallback_option",
            "four.retries_own_branch", "conv.system_message", "http_529_fallback.cc", "harness.retries", "http_529.cc",
            "http_404_fallback.cc", "http_429_retry_after.definition", "http_429_retry_after.cc",
            "http_429_fallback.definition", "http_429_fallback.cc", "http_429_fallback.match"),
    chapter("08b_fallbacks", "8b9f3a53", "| what the fallback model is sent |", "| 发给回退模型的内容 |",
            "http_529_fallback.no_thinking"),
    chapter("08b_fallbacks", "8b9f3a53", "| tombstones |", "| 墓碑消息 |", "conv.tombstone"),
    chapter("08b_fallbacks", "8b9f3a53", "| the streaming fallback |", "| 流式回退 |", "conv.streaming_fallback",
            "conv.tombstone", "stream_error_before_block.cc", "stream_error_inside_tool_use.cc",
            "stream_error_after_tool_use.cc", "disconnect_during_text.cc", "disconnect_inside_tool_use.cc",
            "disconnect_after_tool_use.cc", "output_limit_streaming_fallback.cc"),
    chapter("08b_fallbacks", "8b9f3a53", "| an API error that ends the run |", "| 结束运行的 API 错误 |",
            "four.missing_results", "four.model_error", "http_529.cc", "max_tokens_always.cc"),
    chapter("08b_fallbacks", "8b9f3a53", "| the token budget |", "| Token 预算 |", "conv.budget_nudge"),
    # -- 09 every ending
    chapter("09_every_ending", "111f4e17", "The conversation-loop text counts **ten** ways the loop ends",
            "《对话循环》数出循环结束的**十**种方式", "conv.ten_endings", "conv.seven_paths"),
    chapter("09_every_ending", "111f4e17", "Of the ten endings it names three", "十种结束里它只写出了三种的名字",
            "conv.three_named", "four.endings_table", "four.max_turns_ending", "four.model_error"),
    chapter("09_every_ending", "111f4e17", "The names of the other three come from Claude Code 2.1.332",
            "剩下三种的名字来自 Claude Code 2.1.332", "prompt_too_long_once.cc", "image_rejected.cc", "neither.image",
            "neither.prompt_too_long",
            "neither.image_en", "program.blocking_limit", "conv.blocking"),
    chapter("09_every_ending", "111f4e17", "Claude Code 2.1.332 also reports two endings beyond the ten",
            "还报告十种之外的两种结束", "http_529.cc", "tool_use_without_block.cc", "stream_error_inside_tool_use.cc",
            "stream_error_inside_tool_use.match"),
    chapter("09_every_ending", "3a026871", "The four-step-loop text calls every unrecovered model error",
            "四步循环一文把所有未恢复的模型错误都叫作", "four.model_error", "four.missing_results"),
    chapter("09_every_ending", "3a026871", "No `dreamloop compare` scenario made Claude Code 2.1.332 end so",
            "Claude Code 2.1.332 从没有以这个名字结束", "http_529.cc", "disconnect_during_text.cc"),
    chapter("09_every_ending", "ba1c976c", "Claude Code 2.1.332 reports this name", "Claude Code 2.1.332 报告的是这个名字",
            "http_529.cc", "max_tokens_always.cc", "four.model_error"),
    chapter("09_every_ending", "e2f1434d", "as observed by the scenario `tool_use_without_block`",
            "在场景 `tool_use_without_block` 中观察到，Claude Code 2.1.332 把", "tool_use_without_block.cc", "tool_use_without_block.dl"),
    chapter("09_every_ending", "df678432", "A cut after the escalation", "提升上限之后的截断", "max_tokens_once.cc"),
    chapter("09_every_ending", "452b45b6", "| the endings |", "| 各种结束 |", "four.files", "conv.ten_endings",
            "conv.three_named", "four.endings_table", "four.max_turns_ending", "max_turns.cc",
            "prompt_too_long_once.cc",
            "http_529.cc", "image_rejected.cc", "image_rejected.match", "tool_use_without_block.cc",
            "program.blocking_limit"),
    chapter("09_every_ending", "452b45b6", "| the ways round again |", "| 再转一圈的方式 |", "conv.seven_paths",
            "conv.new_state", "stream_error_inside_tool_use.cc", "tool_use_without_block.cc"),
    chapter("09_every_ending", "452b45b6", "| what turns a branch on |", "| 什么打开一个分支 |", "conv.streaming_execution",
            "conv.enabled_snip", "four.snip", "four.budget_enabled", "four.fallback_option",
            "http_529_fallback.definition", "http_529_fallback.cc", "max_turns.cc"),
    chapter("09_every_ending", "452b45b6", "| the abort signal |", "| 中断信号 |", "four.checkpoint", "four.signal",
            "four.abort_two_points"),
    chapter("09_every_ending", "452b45b6", "| when `max_tokens` recovery runs out |", "| `max_tokens` 恢复用尽 |",
            "max_tokens_always.cc"),
    chapter("09_every_ending", "452b45b6", "| `api_error`, `malformed_tool_use_exhausted` |",
            "| `api_error`、`malformed_tool_use_exhausted` |", "four.model_error", "neither.api_error",
            "neither.malformed",
            "http_529.cc", "tool_use_without_block.cc"),
    chapter("09_every_ending", "452b45b6", "| `hook_stopped` from a `pre_compact` hook |",
            "| `pre_compact` hook 造成的 `hook_stopped` |", "four.hook_endings"),
    chapter("09_every_ending", "452b45b6", "| an answer that is one empty text block |", "| 只有一个空文本块的回答 |",
            "empty_text_block.script", "empty_text_block.cc"),
    chapter("09_every_ending", "452b45b6", "* The ten endings the conversation-loop text counts",
            "* 《对话循环》数出的十种结束", "conv.ten_endings", "four.endings_table", "conv.seven_paths", "http_529.cc",
            "tool_use_without_block.cc", "program.blocking_limit"),
    # -- 10 sessions
    chapter("10_sessions", "c10-00", "The four-step-loop text calls it `QueryEngine`", "四步循环一文把它叫作 `QueryEngine`",
            "four.engine", "four.transcript", "conv.queued"),
    chapter("10_sessions", "c10-02", "In the four-step-loop text the path is", "在四步循环一文里，路径是", "four.path",
            "four.engine"),
    chapter("10_sessions", "c10-04", "Input typed during a run does not interrupt anything", "运行期间输入的内容不会打断任何东西",
            "conv.queued"),
    chapter("10_sessions", "c10-08", "shaped like the session files Claude Code 2.1.332 writes", "引擎在每条",
            "session09.run", "session09.envelope"),
    chapter("10_sessions", "c10-47", "| the session layer |", "| 会话层 |", "four.engine", "four.path"),
    chapter("10_sessions", "c10-47", "| queued input |", "| 排队的输入 |", "conv.queued", "session09.queue"),
    chapter("10_sessions", "c10-47", "| the model call |", "| 模型调用 |", "four.call_model", "four.thinking_config",
            "one_tool.cc.thinking_field"),
    chapter("10_sessions", "c10-47", "| the transcript |", "| transcript |", "four.transcript", "session03.records"),
    chapter("10_sessions", "c10-47", "| calls left without a result |", "| 没有结果的调用 |", "four.missing_results"),
    chapter("10_sessions", "c10-47", "Next: **10b", "下一章：**10b", "sessions.versions"),
    # -- 10b Claude Code's session files
    chapter("10b_claude_code_sessions", "c10-17", "First, by hand: session 04", "先手", "session04.prompt"),
    chapter("10b_claude_code_sessions", "c10-19", "**One response is several records**", "**一次",
            "session04.one_response"),
    chapter("10b_claude_code_sessions", "c10-23", "Its header also says what this file does not hold", "它的标题",
            "sessions.older_hold_no_request", "sessions.versions"),
    chapter("10b_claude_code_sessions", "c10-23", "2.1.332 does record the requests of the conversation as sent",
            "Claude Code 2.1.332 则会把对话里的请求", "session09.run", "session10.run", "session11.run"),
    chapter("10b_claude_code_sessions", "c10-25", "Each rejected call still got a `tool_result`", "每个",
            "session04.interrupt"),
    chapter("10b_claude_code_sessions", "c10-24a", "Claude Code 2.1.332 writes each request of the conversation",
            "Claude Code 2.1.332 在发出对话里的每次请求时", "session09.run", "session10.run", "session11.run",
            "session09.request_records"),
    chapter("10b_claude_code_sessions", "c10-24a", "So an import can show **the request as sent**",
            "所以导入时可以显示**实际发出的请求**", "max_tokens_always.cc.context", "session09.run"),
    chapter("10b_claude_code_sessions", "c10-24a", "Session 09 is `dreamloop compare`'s scenario `max_tokens_always`",
            "会话 09 是 `dreamloop compare` 的场景 `max_tokens_always`", "session09.run", "max_tokens_always.cc"),
    chapter("10b_claude_code_sessions", "c10-24a", "answered each cut with a \"resume\" reminder",
            "Claude Code 2.1.332 对每次截断都回以一条", "max_tokens_always.cc", "session09.api_error",
            "session09.no_ending"),
    chapter("10b_claude_code_sessions", "c10-27", "Session 01 (Claude Code 2.0.76", "会话 01",
            "session01.parallel_compact"),
    chapter("10b_claude_code_sessions", "c10-45", "Then try yours on the real files", "然后在真", "sessions.model_calls"),
    chapter("10b_claude_code_sessions", "c10b-50", "| after a compaction |", "| 压缩之后 |", "four.compact_boundary",
            "session01.parallel_compact"),
    chapter("10b_claude_code_sessions", "c10b-50", "| what a session file holds |", "| 会话文件里有什么 |",
            "sessions.older_hold_no_request", "session09.run", "session10.run", "session11.run",
            "session09.request_records"),
    chapter("10b_claude_code_sessions", "c10b-50", "| turns, transitions, endings |", "| 轮数、转换、结束 |",
            "four.turn_count_one", "conv.own_module", "session09.no_ending", "max_tokens_always.cc"),
    chapter("10b_claude_code_sessions", "c10b-50", "* An interrupt is in the file as what follows the call",
            "* 中断在文件里表现为调用之后的内容", "session04.interrupt"),
    chapter("10b_claude_code_sessions", "c10b-50", "* Up to 2.1.114 the file lacks the system prompt",
            "* 到 2.1.114 为止，文件里没有系统提示词", "sessions.older_hold_no_request", "session09.run",
            "session09.api_error"),
    zh_only("02_tool_use_and_tool_result", "c02-27", "dreamloop 的循环在恢复分支关闭时", "four.missing_results",
            "http_529.cc"),
    zh_only("00_setup_and_tour", "c00-terms", "本书中文版沿用两篇原文对循环各部分的叫法", "four.in_chinese", "conv.in_chinese"),
    zh_only("00_setup_and_tour", "c00-terms", "第二篇的第一行就是它的标题《对话循环》", "conv.title"),
    zh_only("00_setup_and_tour", "c00-terms", "第一篇没有标题，开头只有一行语言切换", "four.no_title", "four.no_title_four",
            "four.no_title_agent_loop"),
    zh_only("03b_between_turns", "c03-p5-intro", "《对话循环》称为内存文件", "conv.memory_file_name"),
    chapter("11_the_real_loop", "c11-34", "This chapter ran Claude Code 2.1.332 with `dreamloop compare`",
            "本章用 `dreamloop compare` 运行的是 Claude Code 2.1.332", "one_tool.cc"),
    # -- 11 the real loop
    chapter("11_the_real_loop", "c11-00", "Every chapter so far said what the loop does from both texts",
            "到目前为止，每一章讲循环做了什么", "four.dreamcoder", "conv.claude_code", "neither.version"),
    chapter("11_the_real_loop", "c11-00", "**Learning goal:** after this chapter you can read a request",
            "**学习目标：** 学完这一章，你能把一次请求读成一个形状", "one_tool.anatomy", "one_tool.dl_anatomy"),
    chapter("11_the_real_loop", "c11-10", "The package's version is `request_shapes`", "包里的版本是 `request_shapes`",
            "one_tool.anatomy"),
    chapter("11_the_real_loop", "c11-18", "What Claude Code 2.1.332 sent, as observed by",
            "场景 `one_tool` 中观察到，Claude Code 2.1.332 发送了这些", "one_tool.anatomy", "one_tool.dl_anatomy",
            "one_tool.cc.result_reminder"),
    chapter("11_the_real_loop", "c11-18", "* **The context.**", "第一条用户消息在提示词自己的文本块之前",
            "session11.context_kinds", "one_tool.anatomy"),
    chapter("11_the_real_loop", "c11-18", "did not send the same ones in every scenario", "并不是在每个场景里都发送同样的这些块",
            "contexts", "plain_answer.cc.context"),
    chapter("11_the_real_loop", "c11-18", "* **Reminders inside a result.**",
            "Claude Code 2.1.332 在 `tool_result` 的内容里附带了一个提醒", "one_tool.cc.result_reminder", "result_reminders",
            "hook_pre_tool_use_deny.cc", "results_in_finishing_order.cc"),
    chapter("11_the_real_loop", "c11-18", "Between the two turns of `one_tool`, then", "所以在 `one_tool` 的两轮之间",
            "one_tool.cc", "one_tool.match"),
    chapter("11_the_real_loop", "c11-20", "(as observed by `hook_post_tool_use_context`) puts",
            "在场景 `hook_post_tool_use_context` 中观察到", "hook_post_tool_use_context.cc", "one_tool.cc.result_reminder"),
    chapter("11_the_real_loop", "c11-22", "Claude Code 2.1.332, as observed by `max_tokens_once`: request 2",
            "在场景 `max_tokens_once` 中观察到", "max_tokens_once.cc", "max_tokens_once.reminder",
            "max_tokens_once.match"),
    chapter("11_the_real_loop", "c11-22", "The conversation-loop text's way, which `dl.RecoveryOptions()` keeps",
            "《对话循环》的做法由 `dl.RecoveryOptions()` 保留", "conv.escalate", "conv.resume_three"),
    chapter("11_the_real_loop", "c11-22", "Both end `completed`; Claude Code 2.1.332's `num_turns`",
            "两方都以 `completed` 结束", "max_tokens_once.cc", "max_tokens_once.match"),
    chapter("11_the_real_loop", "c11-22", "In the State inspector, the same script run here",
            "State 检查器里是同一份脚本", "max_tokens_once.cc", "max_tokens_once.match"),
    chapter("11_the_real_loop", "c11-22", "The texts' loop (`dl.texts_loop()`, the conversation-loop text's way)",
            "原文的循环（`dl.texts_loop()`，《对话循环》的做法）", "conv.escalate", "conv.tombstone"),
    chapter("11_the_real_loop", "c11-26", "Claude Code 2.1.332, as observed by `stream_error_inside_tool_use`: it kept",
            "在场景 `stream_error_inside_tool_use` 中观察到", "stream_error_inside_tool_use.cc",
            "stream_error_inside_tool_use.match"),
    chapter("11_the_real_loop", "c11-26", "The conversation-loop text ties the streaming fallback to tombstones",
            "《对话循环》把流式回退和墓碑消息联系在一起", "conv.tombstone", "stream_error_inside_tool_use.cc"),
    chapter("11_the_real_loop", "c11-28", "Claude Code 2.1.332, as observed by `tool_use_without_block`: the response",
            "在场景 `tool_use_without_block` 中观察到，Claude Code 2.1.332 从不", "tool_use_without_block.cc"),
    chapter("11_the_real_loop", "c11-28", "Each retry resends the one user message, rewritten",
            "每次重试都重发那唯一一条用户消息", "tool_use_without_block.anatomy", "tool_use_without_block.cc",
            "neither.malformed"),
    chapter("11_the_real_loop", "c11-28", "The row still DIFFERs on a detail, labelled deliberate",
            "这一行在一个细节上仍是 DIFFER", "tool_use_without_block.cc", "tool_use_without_block.differ"),
    chapter("11_the_real_loop", "c11-28", "The whole table, from the recording", "完整的表，来自录制的结果",
            "max_tokens_always.cc", "disconnect_inside_tool_use.requests", "http_529.cc", "http_529_fallback.requests"),
    chapter("11_the_real_loop", "c11-30", "The seven DIFFERs are labelled", "七个 DIFFER 都有标签",
            "recording.verdicts", "edit_after_change_then_write.cc", "sub_agent_call.differ", "two_sub_agents.differ"),
    chapter("11_the_real_loop", "c11-30", "The loop now follows the observation", "现在循环跟随观察", "conv.escalate",
            "four.model_error"),
    chapter("11_the_real_loop", "c11-30", "**Exercise 1: predict the other loop.**", "写出 `predict(name)`",
            "max_tokens_always.cc", "disconnect_inside_tool_use.requests", "http_529.cc", "harness.retries",
            "http_529_fallback.requests"),
    chapter("11_the_real_loop", "c11-34", "The loop this book follows is the one both texts describe",
            "本书跟随的循环就是两篇原文描述的那个", "four.dreamcoder", "conv.claude_code", "neither.version"),
    chapter("11_the_real_loop", "c11-34", "| the loop |", "| 循环本身 |", "four.path", "one_tool.cc"),
    chapter("11_the_real_loop", "c11-34", "| a cut answer (`max_tokens`) |", "| 被截断的回答（`max_tokens`） |",
            "conv.escalate", "conv.resume_three", "max_tokens_once.cc", "max_tokens_once.match",
            "neither.figure_64000"),
    chapter("11_the_real_loop", "c11-34", "| a prompt too long |", "| 提示过长 |", "conv.reactive_compact",
            "prompt_too_long_after_tools.cc", "prompt_too_long_after_tools.dl"),
    chapter("11_the_real_loop", "c11-34", "| an error event inside a streamed `tool_use` |",
            "| 流式 `tool_use` 中途的错误事件 |", "conv.streaming_fallback", "conv.tombstone",
            "stream_error_inside_tool_use.cc", "stream_error_inside_tool_use.match"),
    chapter("11_the_real_loop", "c11-34", "| HTTP errors |", "| HTTP 错误 |", "four.retries_own_branch",
            "four.recovery_not_turns", "harness.retries", "http_500.cc", "http_429_retry_after.cc"),
    chapter("11_the_real_loop", "c11-34", "| system prompt, tools, context |", "| 系统提示词、工具、上下文 |",
            "conv.stable_order", "conv.memory_attachments", "one_tool.anatomy", "one_tool.dl_anatomy"),
    chapter("11_the_real_loop", "c11-34", "| `stop_reason: tool_use` without a `tool_use` block |",
            "| stop_reason 是 `tool_use`", "four.needs_follow_up", "four.completed_path", "neither.malformed",
            "tool_use_without_block.cc", "tool_use_without_block.differ"),
    chapter("11_the_real_loop", "c11-34", "* Around its loop Claude Code 2.1.332 sends", "* 在循环之外，Claude Code 2.1.332",
            "one_tool.anatomy", "one_tool.dl_anatomy", "one_tool.match"),
    chapter("11_the_real_loop", "c11-34", "Claude Code 2.1.332's `num_turns` is 2 on `max_tokens_once`",
            "2. 在 `max_tokens_once` 上", "max_tokens_once.cc", "max_tokens_once.match"),
    chapter("11_the_real_loop", "c11-34", "After an error event inside a `tool_use` (`stream_error_inside_tool_use`)",
            "3. 在 `tool_use` 中途出现错误事件后", "stream_error_inside_tool_use.cc"),
    # -- docstrings of the package
    document("dreamloop/compare/shapes.py", "A reminder's length and short hash",
             "background_command_ends_before_next_request.cc", "nested_memory_file.cc"),
    document("dreamloop/messages.py", "An attachment's `placement` that sends",
             "background_command_ends_before_next_request.cc"),
    document("dreamloop/presets.py", "A command that ends before the next request is told of",
             "background_command_ends_before_next_request.cc", "background_command_ends_later.cc"),
    document("dreamloop/presets.py", "the `Agent` tool is offered (Claude Code", "sub_agent_call.cc",
             "sub_agent_call.dl", "two_sub_agents.cc"),
    document("dreamloop/subagents.py", "a call that does not give `run_in_background` runs in the background",
             "sub_agent_call.cc"),
    document("dreamloop/tasks.py", "it follows a results message at phase 5",
             "background_command_ends_before_next_request.cc", "background_command_ends_later.cc"),
    document("dreamloop/tools/bash.py", "the call's, which its notification names",
             "background_command_ends_before_next_request.cc"),
    document("dreamloop/__init__.py", "(`queryLoop()` of both texts)", "four.dreamcoder", "conv.function_names"),
    document("dreamloop/subagents.py", "The tool's name and input fields", "session10.agent_tool"),
    document("dreamloop/subagents.py", "The form of the `agentId` Claude Code 2.1.332 wrote", "session12.sidechain"),
    document("dreamloop/transcript.py", "as Claude Code 2.1.332 wrote a foreground", "session12.sidechain"),
    document("dreamloop/claude_code.py", "(the layout Claude Code 2.1.332 wrote,", "session12.sidechain"),
    document("dreamloop/attachments.py", "The conversation-loop text's phase 5 injects attachments", "conv.phase5"),
    document("dreamloop/claude_code.py", "the files it is tested on were written by Claude Code 1.0.17 to 2.1.332",
             "sessions.versions"),
    document("dreamloop/claude_code.py", "A file that records the requests as sent (Claude Code 2.1.332's did",
             "session09.run", "session09.api_error"),
    document("dreamloop/claude_code.py", "A file of Claude Code 1.0.17 to 2.1.114", "sessions.older_hold_no_request",
             "session09.run", "session10.run", "session11.run"),
    document("dreamloop/claude_code.py", "A run ends at an interrupt, at a synthetic API-error message",
             "session09.api_error", "session09.run"),
    document("dreamloop/claude_code.py", "Between the two calls the file holds either nothing", "session09.prompt_ids",
             "session09.run"),
    document("dreamloop/claude_code.py", "A message written locally, not by a model", "session09.synthetic",
             "session09.run"),
    document("dreamloop/claude_code.py", "The requests the file records as sent, by id, in file order",
             "sessions.older_hold_no_request", "session09.run"),
    document("dreamloop/claude_code_requests.py", "The requests a session file records, rebuilt as sent",
             "session09.run"),
    document("dreamloop/claude_code_requests.py", "Claude Code 2.1.332 wrote each request it sent into the session",
             "session09.run", "session10.run", "session11.run", "session09.request_records", "session09.blob_hashes"),
    document("dreamloop/cleanup.py", "The conversation-loop text: before an abnormal Terminal", "conv.cleanup"),
    document("dreamloop/cli.py", "`sample DIR` copies that project to DIR", "max_tokens_once.cc",
             "max_tokens_once.match",
             "tool_use_without_block.cc", "tool_use_without_block.dl", "conv.escalate", "four.needs_follow_up"),
    document("dreamloop/compare/scenarios.py", "A `Scenario` is what a learner would type", "one_tool.cc",
             "one_tool.absolute_path"),
    document("dreamloop/compare/shapes.py", "Reminders *inside* a tool_result's content", "one_tool.cc.result_reminder",
             "hook_post_tool_use_context.cc", "result_reminders", "results_in_finishing_order.cc"),
    document("dreamloop/compare/shapes.py", "* the same number of requests reach the model", "opus_probe.cc"),
    document("dreamloop/compare/shapes.py", "The first user message's leading reminder blocks", "one_tool.cc.context",
             "contexts"),
    document("dreamloop/compare/shapes.py", "The probe: with an Opus model", "opus_probe.cc"),
    document("dreamloop/compare/shapes.py", "`extends`: the blocks were appended", "prompt_too_long_after_tools.cc"),
    document("dreamloop/compare/shapes.py", "The probe of Claude Code 2.1.332 (`opus_probe`)", "opus_probe.cc"),
    document("dreamloop/context/__init__.py", "Before every request the loop trims what it sends", "conv.pipeline",
             "conv.pipeline_name"),
    document("dreamloop/context/autocompact.py", "Stage 6, autocompact", "conv.autocompact"),
    document("dreamloop/context/autocompact.py", "`messages_after_compact_boundary` is where every later request",
             "four.compact_boundary"),
    document("dreamloop/context/autocompact.py", "The tail never starts with a `tool_result` message", "four.pairing"),
    document("dreamloop/context/blocking.py", "Stage 7, the blocking limit", "conv.blocking"),
    document("dreamloop/context/budget.py", "Stage 1, the tool-result budget", "conv.budget"),
    document("dreamloop/context/collapse.py", "Stage 4, context collapse", "conv.collapse"),
    document("dreamloop/context/memory.py", "With a `CLAUDE.md` in the workspace, Claude Code 2.1.332",
             "memory_file.cc.context", "plain_answer.cc.context"),
    document("dreamloop/context/microcompact.py", "Stage 3, microcompact", "conv.microcompact"),
    document("dreamloop/context/options.py", "The fractions (0.835, 0.885) are dreamloop's defaults",
             "usage_past_the_window.script", "usage_past_the_window.cc"),
    document("dreamloop/context/snip.py", "Stage 2, snip", "conv.snip"),
    document("dreamloop/context/system_prompt.py", "The order is the texts'", "conv.stable_order", "four.user_context"),
    document("dreamloop/context/system_prompt.py", "The form is dreamloop's design", "one_tool.cc.context"),
    document("dreamloop/context/system_prompt.py", "The user context as the first message's text", "four.user_context"),
    document("dreamloop/diagram.py", "The loop's flowchart as SVG", "four.flowchart"),
    document("dreamloop/exercises/ch02.py", "Check `fn(tool_uses, results) -> user message`", "four.missing_results"),
    document("dreamloop/exercises/ch11.py", "`(requests, ending)` of `side`", "opus_probe.cc"),
    document("dreamloop/exercises/ch11.py", "Check `fn(name) -> (requests, ending)`", "max_tokens_always.cc"),
    document("dreamloop/hooks.py", "Owns the five hook events", "hooks.command_kind"),
    document("dreamloop/hooks.py", "Command hooks follow Claude Code's hooks reference", "hooks.match",
             "hook_pre_tool_use.script"),
    document("dreamloop/hooks.py", "`in_tool_result`: the lines also went inside", "hook_post_tool_use_context.cc"),
    document("dreamloop/hooks.py", "The meta user message a blocking stop hook sends", "hook_stop_exit_2_once.cc"),
    document("dreamloop/hooks.py", "The end-of-turn stop hooks, decided", "conv.no_tools_exit"),
    document("dreamloop/messages.py", "Mirrors the conversation-loop text's `TombstoneMessage`", "conv.tombstone"),
    document("dreamloop/model.py", "This is `deps.callModel()` of the four-step-loop text's", "four.step_one",
             "four.stream_upward"),
    document("dreamloop/model.py", "The SDK retries 429 and 5xx itself, but not 529", "http_529_fallback.cc",
             "harness.retries"),
    document("dreamloop/query.py", "query(): the production agent loop", "four.dreamcoder", "conv.function_names"),
    document("dreamloop/query.py", "One `while True`, five phases", "conv.while_true", "conv.phases"),
    document("dreamloop/query.py", "* `max_tokens`: output limit per request", "one_tool.anatomy",
             "one_tool.dl_anatomy"),
    document("dreamloop/query.py", "* `results_as_finished` (chapter 04)", "four.parallel_order",
             "results_in_finishing_order.script", "results_in_finishing_order.cc", "results_in_finishing_order.match"),
    document("dreamloop/query.py", "* `sibling_rule` (chapter 05)", "bash_fails_parallel.cc", "bash_fails_serial.cc"),
    document("dreamloop/query.py", "The one place the loop builds the next State", "conv.new_state"),
    document("dreamloop/query.py", "A `MaxTokensCut` when the response stopped", "four.needs_follow_up"),
    document("dreamloop/query.py", "A response still cut at `max_tokens` after the recovery", "four.completed_path",
             "max_tokens_always.cc"),
    document("dreamloop/query.py", "Both paths meet here, as in the four-step-loop text", "four.two_paths_meet"),
    document("dreamloop/endings.py", "`delivered`: the results message was already yielded", "four.checkpoint"),
    document("dreamloop/endings.py", "As the four-step-loop text has it, every dangling tool_use",
             "four.missing_results"),
    document("dreamloop/query.py", "`stop_reason` says `tool_use` but no tool_use block came",
             "tool_use_without_block.cc"),
    document("dreamloop/recovery.py", "`text` as a `<system-reminder>` block", "max_tokens_once.cc",
             "hook_stop_exit_2_once.cc"),
    document("dreamloop/recovery.py", "`RecoveryOptions()` is the loop of both texts", "conv.recovery_rungs",
             "four.completed_path", "max_tokens_once.cc", "max_tokens_always.cc", "tool_use_without_block.cc",
             "recording.verdicts"),
    document("dreamloop/recovery.py", "* `max_output_tokens_escalate`: the first", "conv.escalate",
             "neither.figure_64000", "max_tokens_once.cc"),
    document("dreamloop/recovery.py", "* `max_output_tokens_recovery`: after that", "conv.resume_three"),
    document("dreamloop/recovery.py", "* `overloads_before_fallback`", "http_529_fallback.cc", "harness.retries"),
    document("dreamloop/recovery.py", "* `streaming_fallback` (the conversation-loop text's branch", "conv.tombstone",
             "stream_error_before_block.cc", "stream_error_before_block.limit", "output_limit_streaming_fallback.cc"),
    document("dreamloop/recovery.py", "* `max_tokens_exhausted`", "four.completed_path", "max_tokens_always.cc"),
    document("dreamloop/recovery.py", "* `malformed_tool_use_retries`", "tool_use_without_block.cc"),
    document("dreamloop/recovery.py", "A turn that ends under `completion_threshold`", "conv.budget_nudge"),
    document("dreamloop/recovery.py", "`overloads`: overloaded attempts in a row so far", "http_529.cc",
             "harness.retries"),
    document("dreamloop/recovery.py", "A broken stream, with `streaming_fallback` on", "disconnect_during_text.cc",
             "stream_error_after_tool_use.cc", "stream_error_inside_tool_use.cc", "stream_error_before_block.cc"),
    document("dreamloop/recovery.py", "`stop_hook_active` is set by `stop_hook_blocking`", "conv.stop_hook_active"),
    document("dreamloop/state.py", "`turn_count` is the State's turn when it ended", "four.next_turn_count"),
    document("dreamloop/state.py", "Compaction's bookkeeping", "conv.autocompact_tracking"),
    document("dreamloop/state.py", "The conversation-loop text names the fields in Chinese only", "conv.state_fields"),
    document("dreamloop/state.py", "* `pending_tool_use_summary`", "conv.summary"),
    document("dreamloop/state.py", "* `stop_hook_blocks`", "conv.state_fields"),
    document("dreamloop/state.py", "* `token_budget_tracking`", "conv.state_fields"),
    document("dreamloop/summaries.py", "The conversation-loop text: after a batch of tools", "conv.summary"),
    document("dreamloop/tools/base.py", "Everything a tool call may need besides its input", "four.tool_use_context"),
    document("dreamloop/tools/cancellation.py", "Owns the texts of the `is_error` results", "bash_fails_parallel.cc",
             "bash_fails_serial.cc"),
    document("dreamloop/tools/cancellation.py", "True when the tool is Bash", "bash_fails_parallel.definition",
             "bash_fails_parallel.cc"),
    document("dreamloop/tools/files.py", "Read, Edit and Write are named and shaped as Claude Code 2.1.332's",
             "sessions.tool_names", "session09.run", "read_then_edit.inputs", "read_then_edit.cc"),
    document("dreamloop/tools/orchestration.py", "Running the tool calls of one assistant message", "four.run_tools"),
    document("dreamloop/tools/orchestration.py", "Split calls into batches, in order", "four.next_article"),
    document("dreamloop/tools/orchestration.py", "Last, with `context.results_as_finished`", "four.parallel_order"),
    document("dreamloop/tools/orchestration.py", "The four-step-loop text's `runToolUse()`", "four.unknown_tool"),
    document("dreamloop/tools/orchestration.py", "The result with what a `post_tool_use` hook tells the model",
             "hook_post_tool_use_context.cc", "nested_memory_file.cc"),
    document("dreamloop/context/memory.py", "With a line `@docs/style.md` in the workspace's CLAUDE.md",
             "memory_file_imports.cc"),
    document("dreamloop/attachments.py", "`nested_memory(tool, input)` is the tool calls' `result_note`",
             "nested_memory_file.cc"),
    document("dreamloop/tools/orchestration.py", "`results` maps `tool_use_id`", "four.missing_results"),
    document("dreamloop/tools/permissions.py", "Decide whether one validated call may run", "four.can_use_tool"),
    document("dreamloop/tools/streaming.py", "`StreamingToolExecutor`: tool calls that start",
             "four.streaming_executor"),
    document("dreamloop/tools/streaming.py", "Mirrors the `StreamingToolExecutor`", "four.streaming_executor"),
    document("dreamloop/trace.py", "* `request`: the request as sent, when the trace was imported", "session09.run"),
    document("dreamloop/widgets/compare.py", "Reads what `dreamloop.compare.anatomy` keeps", "recording.anatomies",
             "one_tool.anatomy"),
    document("dreamloop/widgets/inspector.py", "A checkpoint imported with the request it was sent", "session09.run"),
    # -- notebooks/zh/README.md (the Chinese edition's README)
    document("notebooks/zh/README.md", "也就是《对话循环》称为 `queryLoop()` 的那个循环", "conv.function_names"),
    document("notebooks/zh/README.md", "为读过两篇原文（四步循环一文与《对话循环》）的读者而译", "four.in_chinese", "conv.in_chinese"),
    document("notebooks/zh/README.md", "| [00 · 准备工作与导览]", "four.path", "conv.claude_code"),
    document("notebooks/zh/README.md", "| [10b · Claude Code 自己的会话文件", "sessions.versions"),
    document("notebooks/zh/README.md", "| [11 · 真实的循环]", "recording.anatomies"),
    document("notebooks/zh/README.md", "对照表每章有且只有一张：两篇原文怎么说", "four.files", "conv.function_names"),

    # -- after issues 31, 32, 35, 36, 37, 38 and 39: the README
    document("README.md", "Two sets of switches have a name", "recording.verdicts", "one_tool.match",
             "four.fallback_option", "conv.recovery_rungs"),

    # -- 02 (issue 38: a block of a type no SDK knows)
    chapter("02_tool_use_and_tool_result", "c02-unknown", "The four-step-loop text decides whether to go on",
            "四步循环一文根据找到的 `tool_use` 块决定是否继续", "four.needs_follow_up"),
    chapter("02_tool_use_and_tool_result", "c02-unknown", "Claude Code 2.1.332 sent such a block back in its place",
            "Claude Code 2.1.332 也把这样的块在原位发了回去", "unknown_content_block.cc", "unknown_content_block.match"),

    # -- 05 (issue 32: a call that started is kept)
    chapter("05_streaming_tools", "ad3b4e9b", "| a call that started, then the stream broke |", "| 调用开始之后流断开 |",
            "disconnect_bash.script", "disconnect_bash.cc", "disconnect_bash.match"),
    chapter("05_streaming_tools", "7e7f046b", "* A call that started runs once", "* 已经开始的调用只执行一次",
            "disconnect_bash.script", "disconnect_bash.cc"),

    # -- 08b (issues 31 and 32: each model's output limit, a call that started)
    chapter("08b_fallbacks", "9b45de25", "| a dropped connection in the text after a Bash block",
            "| 连接在一个 Bash 块之后的文本里断开", "disconnect_bash.script", "disconnect_bash.cc"),
    chapter("08b_fallbacks", "9b45de25", "`RecoveryOptions(streaming_fallback=True)` does the same",
            "`RecoveryOptions(streaming_fallback=True)` 也这样做", "output_limit_streaming_fallback.cc",
            "stream_error_before_block.limit"),
    chapter("08b_fallbacks", "8b3c0a01", "Claude Code 2.1.332 did the same where the connection dropped",
            "Claude Code 2.1.332 也是这样做的：下一次请求带上了这个调用", "disconnect_bash.script", "disconnect_bash.cc",
            "disconnect_bash.match"),
    chapter("08b_fallbacks", "8b3c0a01", "Where the connection dropped right at the end of\nthe block",
            "连接恰好在内容块结束时断开时", "disconnect_after_tool_use.script", "disconnect_after_tool_use.cc",
            "disconnect_after_tool_use.differ", "disconnect_after_tool_use.label"),
    chapter("08b_fallbacks", "8b5e0a11", "Claude Code 2.1.332 sent 128,000 to `claude-opus-5-5`",
            "Claude Code 2.1.332 发给 `claude-opus-5-5` 的是 128,000", "output_limit_fallback.definition",
            "output_limit_fallback.cc", "one_tool.cc.limit", "http_529_fallback.limit", "http_529_fallback.definition"),
    chapter("08b_fallbacks", "8b9f3a53", "| a call that had started when the stream broke |", "| 流断开时一个调用已经开始 |",
            "disconnect_bash.script", "disconnect_bash.cc", "disconnect_bash.match", "disconnect_after_tool_use.script",
            "disconnect_after_tool_use.cc", "disconnect_after_tool_use.differ"),
    chapter("08b_fallbacks", "8b9f3a53", "| each model's output limit |", "| 每个模型的输出上限 |",
            "output_limit_fallback.definition", "output_limit_fallback.cc", "output_limit_fallback.match",
            "one_tool.cc.limit", "http_529_fallback.limit", "http_529_fallback.definition",
            "output_limit_streaming_fallback.cc"),

    # -- 11 (issue 31: absolute output limits, reminders inside results)
    chapter("11_the_real_loop", "c11-18", "Both ask for `max_tokens` 32000", "两方的 `max_tokens` 都是 32000",
            "one_tool.cc.limit", "one_tool.dl_anatomy", "output_limit_fallback.cc", "output_limit_fallback.match"),
    # -- every chapter's "Which loop" cell (issue 35), both editions
    chapter("00_setup_and_tour", "00-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("01_four_step_loop", "01-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("02_tool_use_and_tool_result", "02-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("03_query_loop", "03-which-loop", "**Which loop.** The book runs two loops", "本书运行两个循环，名字都是 dreamloop 的命名",
            *WHICH_LOOP),
    chapter("03b_between_turns", "03b-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("03c_notices_and_queued_input", "03c-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("04_tools", "04-which-loop", "**Which loop.** The book runs two loops", "本书运行两个循环，名字都是 dreamloop 的命名",
            *WHICH_LOOP),
    chapter("05_streaming_tools", "05-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("06_context_pipeline", "06-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("07_hooks", "07-which-loop", "**Which loop.** The book runs two loops", "本书运行两个循环，名字都是 dreamloop 的命名",
            *WHICH_LOOP),
    chapter("07b_command_hooks", "07b-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("08_recovery", "08-which-loop", "**Which loop.** The book runs two loops", "本书运行两个循环，名字都是 dreamloop 的命名",
            *WHICH_LOOP),
    chapter("08b_fallbacks", "08b-which-loop", "**Which loop.** The book runs two loops", "本书运行两个循环，名字都是 dreamloop 的命名",
            *WHICH_LOOP),
    chapter("09_every_ending", "09-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("10_sessions", "10-which-loop", "**Which loop.** The book runs two loops", "本书运行两个循环，名字都是 dreamloop 的命名",
            *WHICH_LOOP),
    chapter("10b_claude_code_sessions", "10b-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("11_the_real_loop", "11-which-loop", "**Which loop.** The book runs two loops",
            "本书运行两个循环，名字都是 dreamloop 的命名", *WHICH_LOOP),
    chapter("12_the_loop_inside_the_loop", "c12-00", "The conversation-loop text lists task notifications",
            "《对话循环》把任务通知列为", "conv.task_notifications"),
    chapter("12_the_loop_inside_the_loop", "c12-04", "`QueryParams(sub_agents=True)` offers the model the `Agent` tool",
            "给模型提供 `Agent` 工具", "session10.agent_tool"),
    chapter("12_the_loop_inside_the_loop", "c12-18", "Claude Code 2.1.332's session file",
            "Claude Code 2.1.332 的会话文件", "session10.run"),
    chapter("12_the_loop_inside_the_loop", "c12-26", "| task notifications |", "| 任务通知 |", "conv.task_notifications",
            "background_command_ends_before_next_request.cc", "background_command_ends_later.cc"),
    chapter("12_the_loop_inside_the_loop", "c12-26", "| an `Agent` call without `run_in_background` |",
            "| 不给 `run_in_background` 的 `Agent` 调用 |", "sub_agent_call.cc", "sub_agent_call.dl"),
    chapter("12_the_loop_inside_the_loop", "c12-26", "| several `Agent` calls in one response |",
            "| 一个响应里的几个 `Agent` 调用 |", "two_sub_agents.cc", "two_sub_agents.differ"),
    chapter("12_the_loop_inside_the_loop", "12-which-loop", "`dreamloop run` turns both on, and there an `Agent` call",
            "`dreamloop run` 两个都打开", "sub_agent_call.cc", "sub_agent_call.dl"),
    chapter("12_the_loop_inside_the_loop", "c12-14", "A notification taken after the",
            "工具运行之后取到的任务通知放在下一次请求", "background_command_ends_before_next_request.cc"),
    chapter("12_the_loop_inside_the_loop", "c12-16", "Claude Code 2.1.332 did the same in",
            "在场景 `background_command_ends_later` 中观察到", "background_command_ends_later.cc"),
    chapter("12_the_loop_inside_the_loop", "c12-17a", "`SubAgents(background_by_default=True)` runs a call",
            "`SubAgents(background_by_default=True)` 让不给", "sub_agent_call.cc", "sub_agent_call.dl"),
    chapter("12_the_loop_inside_the_loop", "c12-19a", "Four `dreamloop compare` scenarios (chapter 11)",
            "四个 `dreamloop compare` 场景", "sub_agent_call.cc", "two_sub_agents.cc",
            "background_command_ends_before_next_request.cc", "background_command_ends_later.cc"),
    chapter("12_the_loop_inside_the_loop", "c12-19a", "* In `sub_agent_call`, Claude Code 2.1.332 ran an",
            "把一个不给 `run_in_background` 的 `Agent` 调用放在后台运行", "sub_agent_call.cc"),
    chapter("12_the_loop_inside_the_loop", "c12-19a", "the child's first request of Claude Code 2.1.332 opened",
            "的子智能体的第一次请求在提示词前面", "sub_agent_call.cc", "sub_agent_call.dl"),
    chapter("12_the_loop_inside_the_loop", "c12-19a", "* In `two_sub_agents`, each child's answer",
            "在场景 `two_sub_agents` 中观察到，Claude Code 2.1.332 的每个子智能体", "two_sub_agents.cc"),
    chapter("12_the_loop_inside_the_loop", "c12-19a", "put a reminder of its own before the first",
            "在第一条任务通知前面放了一个它自己的提醒块", "sub_agent_call.differ", "two_sub_agents.differ"),
    chapter("12_the_loop_inside_the_loop", "c12-19a", "* In `background_command_ends_before_next_request`, the notification",
            "Claude Code 2.1.332 把一个在前台命令运行期间结束的命令", "background_command_ends_before_next_request.cc",
            "background_command_ends_later.cc"),
    chapter("12_the_loop_inside_the_loop", "c12-26", "| the `Agent` tool's input |", "| `Agent` 工具的输入 |",
            "session10.agent_tool"),
    chapter("12_the_loop_inside_the_loop", "c12-26", "| background commands |", "| 后台命令 |",
            "session10.background_tools"),
    chapter("08_recovery", "08-which-loop", "This chapter runs the first, with its recovery branch on as both texts",
            "本章运行第一个，打开它的恢复分支", "conv.escalate", "four.completed_path"),
    chapter("08b_fallbacks", "08b-which-loop", "This chapter runs the first, with the recovery branches",
            "本章运行第一个，按两篇原文给出的样子打开恢复分支", "conv.collapse_first", "four.fallback_option",
            "conv.budget_nudge"),

    # -- docstrings that issues 31, 32, 35 and 39 added
    document("dreamloop/__init__.py", "dl.texts_loop(messages=\"hi\", model=model, workspace=folder)",
             "four.fallback_option", "conv.recovery_rungs"),
    document("dreamloop/endings.py", "* one `tool_result` for every call still without one", "four.missing_results"),
    document("dreamloop/endings.py", "The words are dreamloop's own; Claude Code 2.1.38 also wrote",
             "session03.interrupt_text"),
    document("dreamloop/endings.py", "The Terminal of an unrecovered model error", "prompt_too_long_once.cc",
             "image_rejected.cc", "http_529.cc", "four.model_error"),
    document("dreamloop/fake_api/api.py", "`GET /v1/models/{id}`: the SDK's `ModelInfo`", "output_limit_fallback.cc",
             "output_limit_fallback.definition", "http_529_fallback.limit", "http_529_fallback.definition"),
    # -- attribute docstrings (a string after an assignment), read as claims since the sample read of issue 30
    document("dreamloop/cleanup.py", "The conversation-loop text counts seven abnormal endings", "conv.ten_endings",
             "four.max_turns_ending", "four.model_error", "four.hook_endings"),
    document("dreamloop/cleanup.py", "The other two are the endings Claude Code 2.1.332 reported", "http_529.cc",
             "tool_use_without_block.cc"),
    document("dreamloop/cli.py", "`run` turns on all but the escalation", "max_tokens_once.cc"),
    document("dreamloop/compare/scenarios.py", "An Opus model name", "opus_probe.cc"),
    document("dreamloop/output_limit.py", "Tokens, by model name, that Claude Code 2.1.332 sent", "opus_probe.limit",
             "output_limit_fallback.cc", "output_limit_fallback.definition", "output_limit_streaming_fallback.cc",
             "one_tool.cc.limit", "default_model.limits", "http_529_fallback.limit", "http_529_fallback.definition"),
    document("dreamloop/output_limit.py", "Tokens: the most Claude Code 2.1.332 asked for",
             "output_limit_streaming_fallback.cc", "stream_error_before_block.cc", "stream_error_before_block.limit"),
    document("dreamloop/presets.py", "The name of the loop both texts describe", "conv.function_names",
             "four.dreamcoder"),
    document("dreamloop/presets.py", "The name of the loop as `dreamloop compare` saw", "one_tool.match",
             "recording.verdicts"),
    document("dreamloop/recovery.py", "The note of `max_output_tokens_recovery`", "conv.resume_three",
             "max_tokens_once.cc"),
    document("dreamloop/state.py", "* `model_error`: a model call that failed", "four.model_error"),
    document("dreamloop/state.py", "* `api_error`: an API error response ended the run", "http_529.cc",
             "max_tokens_always.cc"),
    document("dreamloop/state.py", "* `malformed_tool_use_exhausted`: `stop_reason` kept saying",
             "tool_use_without_block.cc"),
    document("dreamloop/widgets/inspector.py", "What each pane holds", "four.four_arrays", "four.local_collectors"),
    document("dreamloop/hook_settings.py", "Claude Code 2.1.332 ran to the same outcome in `hook_pre_tool_use_deny`",
             "hook_pre_tool_use_deny.definition", "hook_pre_tool_use.cc", "hook_pre_tool_use_deny.cc", "hooks.match"),
    document("dreamloop/output_limit.py", "the figures Claude Code 2.1.332 sent (`output_limit_fallback`",
             "output_limit_fallback.cc", "output_limit_fallback.definition", "output_limit_streaming_fallback.cc"),
    document("dreamloop/output_limit.py", "The `max_tokens` (tokens) of a request to `model`",
             "output_limit_fallback.cc", "output_limit_fallback.definition", "output_limit_streaming_fallback.cc",
             "output_limit_streaming_fallback.definition"),
    document("dreamloop/presets.py", "The two loops the book runs, each by dreamloop's name for it", "one_tool.match",
             "four.fallback_option", "conv.recovery_rungs"),
    document("dreamloop/presets.py", "`texts_loop()` turns on every branch both texts name", "one_tool.match",
             "recording.verdicts", "four.fallback_option", "conv.recovery_rungs"),
    document("dreamloop/presets.py", "`dl.QueryParams(...)` with its own defaults is the loop of both texts",
             "four.fallback_option", "conv.recovery_rungs"),
    document("dreamloop/presets.py", "The recovery branches as Claude Code 2.1.332 ran them", "max_tokens_once.cc",
             "max_tokens_always.cc", "tool_use_without_block.cc", "stream_error_inside_tool_use.cc"),
    document("dreamloop/presets.py", "* `streaming_tool_execution`: on (the conversation-loop text's branch;",
             "conv.streaming_execution", "disconnect_bash.script", "disconnect_bash.cc", "disconnect_bash.match"),
    document("dreamloop/presets.py", "* `results_as_finished`: on, the results of parallel calls",
             "results_in_finishing_order.script", "results_in_finishing_order.cc", "results_in_finishing_order.match"),
    document("dreamloop/presets.py", "* `max_tokens`: None and `observed_output_limits` on", "output_limit_fallback.cc",
             "output_limit_fallback.definition", "one_tool.cc.limit", "http_529_fallback.limit",
             "http_529_fallback.definition", "output_limit_streaming_fallback.cc"),
    document("dreamloop/presets.py", "* `system_prompt`: dreamloop's own words", "one_tool.cc.context",
             "memory_file.cc.context"),
    document("dreamloop/presets.py", "* `file_state`: on: Write and Edit refuse", "write_without_read.cc",
             "edit_without_read.cc", "write_after_change.cc", "write_new_file.cc", "edit_after_change.cc",
             "edit_after_change_then_write.cc"),
    document("dreamloop/tools/file_state.py", "as Claude Code 2.1.332 did", "edit_after_change.cc",
             "edit_after_change_then_write.cc"),
    document("dreamloop/presets.py", "* `changed_files`: off", "files_changed_between_turns.texts",
             "files_changed_between_turns.cc"),
    document("dreamloop/presets.py", "* `background_tasks`: on (the `Bash` tool of the requests",
             "session10.run", "session10.background_tools"),
    document("dreamloop/presets.py", "The `QueryParams` fields of the texts' loop", "four.fallback_option",
             "conv.recovery_rungs"),
    document("dreamloop/presets.py", "* `streaming_tool_execution`: on (the conversation-loop text's streaming",
             "conv.streaming_execution", "four.streaming_executor"),
    document("dreamloop/presets.py", "* `results_as_finished`: on: calls that may run in parallel",
             "four.parallel_order"),
    document("dreamloop/presets.py", "* `background_tasks`: on (the conversation-loop text's attachments",
             "conv.task_notifications"),
    document("dreamloop/presets.py", "* `context`: every stage on and prompt caching (the conversation-loop",
             "conv.pipeline"),
    document("dreamloop/presets.py", "* `hooks`: on, with no hook (the conversation-loop text's stop hooks)",
             "conv.stop_hook_blocking"),
    document("dreamloop/presets.py", "* `recovery`: `RecoveryOptions()`: escalate before resuming", "conv.escalate",
             "conv.resume_three", "four.completed_path", "four.needs_follow_up"),
    document("dreamloop/presets.py", "* `system_prompt`: none (the texts give no words)", "conv.stable_order",
             "conv.memory_attachments"),
    document("dreamloop/presets.py", "* `changed_files` and `tool_use_summaries` on", "conv.phase5", "conv.summary"),
    document("dreamloop/query.py", "* `observed_output_limits` (chapter 08b)", "output_limit_fallback.cc",
             "output_limit_fallback.definition", "http_529_fallback.limit", "output_limit_streaming_fallback.cc",
             "http_529_fallback.definition"),
    document("dreamloop/recovery.py", "An attempt a call of which had started (`calls_started`)",
             "disconnect_bash.script", "disconnect_bash.cc"),
    # <claims-end>
]

NAMES: dict[str, str] = {
    "anyOf": "JSON Schema (a pydantic model's schema)",
    "toolUseId": "the field of a sub-agent's .meta.json Claude Code 2.1.332 wrote (session 12's side chain)",
    "allowedTools": "the `claude -p` flag `--allowedTools` that `dreamloop compare` passes (compare/sides.py)",
    "assertEqual": "Python's unittest", "assertFalse": "Python's unittest", "assertIsNone": "Python's unittest",
    "assertTrue": "Python's unittest",
    "commsOverSubshells": "ipykernel's setting for comm messages on a subshell",
    "innerHTML": "the DOM",
    "inToolResult": "a key of dreamloop's own hook records (hooks.py)",
    "systemMessage": "a field of the hooks protocol's JSON output (the published hooks reference), as dreamloop reads "
                     "it",
    "xNN": "dreamloop's notation for a control character (\\xNN)",
}

REGISTRY = Registry(FACTS, QUOTES, CLAIMS, NAMES)
