"""The MCP server: four tools (check, critique, refine, undo) over stdio, on the public API.

Each call loads the settings of the project afresh (so an edited pyproject.toml counts), resolves every
path inside the root the server was started in, runs the library in a worker thread (see bridge.py) and
returns concise text plus the JSON report as structured content (see results.py).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from coderefine import api
from coderefine.doors.mcp.bridge import Job, choose_model
from coderefine.doors.mcp.results import ToolOutput, bounded
from coderefine.doors.mcp.tools import INSTRUCTIONS, TOOLS, ToolDef
from coderefine.errors import CoderefineError, MissingKeyError, UndoError, UsageError
from coderefine.project.change import project_root
from coderefine.project.gitio import GitRepo
from coderefine.project.writes import Journal
from coderefine.report.refine import render_refine
from coderefine.report.text import render_check
from coderefine.version import __version__

_BY_NAME = {tool.name: tool for tool in TOOLS}
_TYPES = {"array": list, "boolean": bool, "string": str, "integer": int}


def validate(tool: ToolDef, arguments: Mapping[str, Any]) -> None:
    """Refuse unknown arguments and values of the wrong type, naming the argument."""
    properties: dict[str, Any] = tool.input_schema["properties"]
    for key, value in arguments.items():
        spec = properties.get(key)
        if spec is None:
            known = ", ".join(properties) or "none"
            raise UsageError(f"{tool.name} takes no argument {key!r}; its arguments are: {known}")
        kind = _TYPES[spec["type"]]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise UsageError(f"{tool.name}: {key!r} must be of type {spec['type']}")
        if isinstance(value, list) and not all(isinstance(v, str) and v for v in value):
            raise UsageError(f"{tool.name}: {key!r} must be a list of paths")
        if kind is int and not spec.get("minimum", value) <= value <= spec.get("maximum", value):
            raise UsageError(f"{tool.name}: {key!r} must be between {spec['minimum']} and {spec['maximum']}")


class CoderefineServer:
    """The tools of one project root."""

    def __init__(self, root: Path, environ: Mapping[str, str], model: str | None = None) -> None:
        self.root = root
        self.environ = environ
        self.model = model
        self.jobs: dict[str, Job] = {}
        self._group: anyio.abc.TaskGroup | None = None

    def reports(self) -> Path:
        repo = GitRepo.find(self.root)
        journal = Journal.for_project(project_root(self.root, repo), repo.git_dir if repo else None)
        return journal.folder.parent / "reports"

    def settings(self, **overrides: Any) -> Any:
        return api.load_settings(self.root, environ=self.environ, **overrides)

    def check(self, args: Mapping[str, Any], bridge: Job) -> ToolOutput:
        settings = self.settings()
        bridge.notify("collecting signals: ruff, ruff format, syntax, related tests")
        result = api.check(
            args.get("files", ()),
            root=self.root,
            staged=args.get("staged", False),
            base=args.get("base"),
            settings=settings,
            environ=self.environ,
        )
        data = api.to_data(result, fail_on=settings.fail_on)
        return bounded("check", render_check(result, settings.fail_on), data, self.reports)

    def critique(self, args: Mapping[str, Any], bridge: Job) -> ToolOutput:
        settings = self.settings()
        model = choose_model(bridge, settings, self.environ, self.model)
        bridge.notify("collecting signals, then asking the critic")
        result = api.critique(
            args.get("files", ()),
            intent=args.get("intent"),
            model=model,
            root=self.root,
            staged=args.get("staged", False),
            base=args.get("base"),
            settings=settings,
            environ=self.environ,
        )
        data = {**api.to_data(result), "critique": result.critique.as_data() if result.critique else None}
        data["model"] = model.describe()
        text = _model_line(model.describe()) + render_refine(result, show_diff=False)
        return bounded("critique", text, data, self.reports)

    def refine(self, args: Mapping[str, Any], bridge: Job) -> ToolOutput:
        overrides = {"rounds": args["rounds"]} if "rounds" in args else {}
        settings = self.settings(**overrides)
        model = choose_model(bridge, settings, self.environ, self.model)
        outcome = api.refine(
            args.get("files", ()),
            intent=args.get("intent"),
            model=model,
            write=not args.get("dry_run", True),
            root=self.root,
            staged=args.get("staged", False),
            base=args.get("base"),
            settings=settings,
            environ=self.environ,
            progress=bridge,
            cancel=bridge.cancel,
            on_wait=bridge.notify,
        )
        data = api.to_data(outcome)
        data["model"] = model.describe()
        data["dry_run"] = args.get("dry_run", True)
        not_written = outcome.not_written or ("a dry run (dry_run: true)" if data["dry_run"] else "")
        text = _model_line(model.describe()) + render_refine(
            outcome.result, written=outcome.written, not_written=not_written
        )
        return bounded("refine", text, data, self.reports)

    def undo(self, args: Mapping[str, Any], bridge: Job) -> ToolOutput:
        try:
            result = api.undo(root=self.root, force=args.get("force", False))
        except UndoError as exc:
            raise UndoError(str(exc).replace("use --force", "call undo with force: true")) from exc
        restored = ", ".join(result.restored) or "nothing (the files were already as before)"
        return ToolOutput(
            f"restored {restored}\n", {"entry": result.entry, "restored": list(result.restored)}
        )

    def guarded(self, name: str, arguments: Mapping[str, Any], job: Job) -> ToolOutput:
        """Run a tool in the job's thread; every error becomes a result the agent can read."""
        try:
            output: ToolOutput = getattr(self, name)(arguments, job)
            return output
        except MissingKeyError as exc:
            hint = " (or connect from an MCP client that supports sampling, to use its model)"
            return ToolOutput(f"coderefine: error: {exc}{hint}", {"error": str(exc)}, True)
        except CoderefineError as exc:
            return ToolOutput(f"coderefine: error: {exc}", {"error": str(exc)}, True)
        except Exception as exc:  # a bug: tell the agent, keep serving, log the traceback for the user
            traceback.print_exc(file=sys.stderr)
            message = f"coderefine: internal error (coderefine {__version__}): {type(exc).__name__}: {exc}"
            return ToolOutput(message, {"error": message}, True)

    async def call(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> ToolOutput | tuple[str, str, types.CreateMessageRequestParams]:
        """A tool's output, or a sampling request (job id, key, request) the client must answer first."""
        if params.request_state is not None:
            job = self.jobs.get(params.request_state)
            if job is None:
                return ToolOutput(
                    "coderefine: this call's state is unknown or expired; call the tool again", {}, True
                )
            job.ctx = ctx
            job.answer((params.input_responses or {}).get(job.pending))
        else:
            tool = _BY_NAME.get(params.name)
            if tool is None:
                return ToolOutput(
                    f"unknown tool {params.name!r}; the tools are {', '.join(_BY_NAME)}", {}, True
                )
            arguments = params.arguments or {}
            try:
                validate(tool, arguments)
            except UsageError as exc:
                return ToolOutput(f"coderefine: error: {exc}", {"error": str(exc)}, True)
            job = Job(ctx, lambda job: self.guarded(tool.name, arguments, job))
            self.jobs[job.id] = job
            self.task_group().start_soon(job.run)
        try:
            kind, value = await job.next_event()
        except anyio.get_cancelled_exc_class():
            self.jobs.pop(job.id, None)
            raise
        if kind == "sample":
            key, request = value
            return job.id, key, request
        self.jobs.pop(job.id, None)
        output: ToolOutput = value
        return output

    def task_group(self) -> anyio.abc.TaskGroup:
        if self._group is None:
            raise RuntimeError("the server's task group is not running")
        return self._group

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Jobs run in the server's own task group, so that one can outlive the request that started it."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                for job in self.jobs.values():
                    job.stop()
                group.cancel_scope.cancel()


def _model_line(model: Mapping[str, object]) -> str:
    answered = model.get("answered") or []
    names = (
        ", ".join(str(n) for n in answered) if isinstance(answered, list) and answered else "no model call"
    )
    via = " through the MCP client's sampling" if model.get("source") == "sampling" else ""
    return f"model: {names}{via}\n"


def build_server(root: Path, environ: Mapping[str, str], model: str | None = None) -> Server[Any]:
    tools = CoderefineServer(root, environ, model)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    title=t.title,
                    description=t.description,
                    input_schema=t.input_schema,
                    annotations=types.ToolAnnotations(
                        title=t.title,
                        read_only_hint=t.read_only,
                        destructive_hint=False,
                        open_world_hint=False,
                    ),
                )
                for t in TOOLS
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        output = await tools.call(ctx, params)
        if isinstance(output, tuple):
            job_id, key, request = output
            return types.InputRequiredResult(
                input_requests={key: types.CreateMessageRequest(params=request)}, request_state=job_id
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=output.text)],
            structured_content=output.data,
            is_error=output.is_error,
        )

    @asynccontextmanager
    async def lifespan(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with tools.running():
            yield {}

    return Server(
        "coderefine",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(root: Path, environ: Mapping[str, str] | None = None, model: str | None = None) -> None:
    """Serve the tools over stdin/stdout until the client closes the connection."""
    server = build_server(root, os.environ if environ is None else environ, model)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
